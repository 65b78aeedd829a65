#!/usr/bin/env bash
# The aarch64 half of the litert stage's example test: cross-builds libgradrt_litert.so
# (cmake/aarch64-linux-gnu.cmake) and litert/examples/train_on_device.c, and takes the aarch64
# libLiteRt.so out of PyPI's ai-edge-litert==2.3.0 manylinux aarch64 wheel (downloaded once, cached).
# Everything lands in DIR (default build-litert/aarch64/run), which test_litert.py's example test
# runs under qemu-aarch64 -L DIR/sysroot when GRADRT_LITERT_AARCH64_DIR names it.
#   litert/tests/build_aarch64.sh [DIR]     (PYTHON: an interpreter with pip, default python3)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build-litert/aarch64/run}
jobs=${JOBS:-2}
mkdir -p "$out" build-litert/aarch64/wheel

# (ccache when installed: run_all.sh's aarch64 stage configures its test build with the same library
# flags, -DGRADRT_LITERT=ON, so whichever of the two builds second takes the library from the cache)
launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-litert/aarch64/lib -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DGRADRT_LITERT=ON \
  -DGRADRT_TESTS=OFF -DGRADRT_CLI=OFF -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" >/dev/null
cmake --build build-litert/aarch64/lib --target gradrt_litert -j "$jobs"
lib=$(find build-litert/aarch64/lib/ -name libgradrt_litert.so -print -quit)
cp "$lib" "$out/"
aarch64-linux-gnu-gcc -O2 -std=c11 -Wall -Wextra -Werror litert/examples/train_on_device.c -I litert/include \
  -L "$out" -lgradrt_litert -Wl,-rpath,'$ORIGIN' -o "$out/train_on_device"

if [[ ! -f build-litert/aarch64/wheel/libLiteRt.so ]]; then
  ${PYTHON:-python3} -m pip download -q ai-edge-litert==2.3.0 --no-deps --only-binary=:all: \
    --platform manylinux_2_27_aarch64 --python-version 3.11 --implementation cp -d build-litert/aarch64/wheel
  ${PYTHON:-python3} - <<'PY'
import glob, zipfile
wheel = glob.glob("build-litert/aarch64/wheel/ai_edge_litert-2.3.0-*aarch64.whl")[0]
with zipfile.ZipFile(wheel) as z, open("build-litert/aarch64/wheel/libLiteRt.so", "wb") as f:
    f.write(z.read("ai_edge_litert/libLiteRt.so"))
PY
fi
cp build-litert/aarch64/wheel/libLiteRt.so "$out/"

# qemu-user 7.2 (Debian 12) passes the host's /proc/cpuinfo through; LiteRT's cpuinfo finds no Arm
# core in it and crashes in LiteRtCreateCompiledModel (SIGSEGV; a real board is fine). qemu -L PREFIX
# opens PREFIX/<path> when it exists, so a prefix with the cross libraries and an Arm /proc/cpuinfo
# (two Cortex-A72 cores, as a Raspberry Pi 4) fixes that: qemu-aarch64 -L "$out/sysroot" ...
mkdir -p "$out/sysroot/proc"
ln -sfn /usr/aarch64-linux-gnu/lib "$out/sysroot/lib"
for i in 0 1; do
  printf 'processor\t: %d\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\n' "$i"
  printf 'CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\n'
done > "$out/sysroot/proc/cpuinfo"
echo "aarch64 example in $out: $(ls "$out" | tr '\n' ' ')"
