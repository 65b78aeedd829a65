#!/usr/bin/env bash
# The main job: build gradrt, then compute a conv layer's input and filter gradients
# (3x3, SAME, 28x28x32 -> 64, float32) from the .npy files beside this script on every
# backend this machine can run, printing each result's statistics and the timings.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bash "$root/tests/setup.sh"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build" -j "${JOBS:-2}"
gradrt=$root/build/gradrt
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$gradrt" --version
"$gradrt" devices
attrs=(--attr strides=[1,1,1,1] --attr padding=SAME)
for backend in reference cpu vulkan; do
  if ! "$gradrt" devices | grep -Eq "^$backend +available"; then
    echo "== $backend: not available here, skipped"
    continue
  fi
  repeat=20
  [[ $backend == reference ]] && repeat=2
  echo "== $backend"
  "$gradrt" run Conv2DBackpropInput "${attrs[@]}" --backend "$backend" --repeat "$repeat" \
    --input input_sizes="$here/input_sizes.npy" --input filter="$here/filter.npy" \
    --input out_backprop="$here/out_backprop.npy" --out "$out/$backend/dx"
  "$gradrt" show "$out/$backend/dx/output.npy"
  "$gradrt" run Conv2DBackpropFilter "${attrs[@]}" --backend "$backend" --repeat "$repeat" \
    --input input="$here/input.npy" --input filter_sizes="$here/filter_sizes.npy" \
    --input out_backprop="$here/out_backprop.npy" --out "$out/$backend/dw"
  "$gradrt" show "$out/$backend/dw/output.npy"
done
