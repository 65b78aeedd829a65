#!/bin/sh
# Builds gradrt_bench (needs libdnnl-dev), runs it, writes bench/results.txt, bench/results.csv
# and bench/results.svg. Usage: bench/run.sh [build dir] [extra gradrt_bench args]
set -e
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-bench}
[ $# -gt 0 ] && shift
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGRADRT_BENCH=ON -DGRADRT_VULKAN=OFF \
      -DGRADRT_TESTS=OFF -DGRADRT_CLI=OFF > /dev/null
cmake --build "$build" --target gradrt_bench -j2 > /dev/null
"$build/bench/gradrt_bench" --csv="$src/bench/results.csv" "$@" | tee "$src/bench/results.txt"
python3 "$src/bench/plot.py" "$src/bench/results.csv" "$src/bench/results.svg"
echo "wrote bench/results.txt, bench/results.csv, bench/results.svg"
