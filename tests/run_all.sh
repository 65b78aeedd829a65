#!/usr/bin/env bash
# Sets up and runs every test: native suite (all backends; Vulkan on lavapipe with the
# validation layer), every forced CPU ISA, the sanitized suites, the fuzzers, the aarch64
# suite under qemu, and the wasm/npm package in Node and Chromium.
# Usage: tests/run_all.sh [stage...]   (stages: native tf litert isa asan tsan fuzz aarch64 web; default all)
#   native   Release build in build/, every ctest group, Vulkan with validation; install consumers
#   tf       TensorFlow 2.21 in a venv (build-tf/venv), `pip install ./tf` (the gradrt_tf kernel
#            library), pytest tf/tests: conformance against TF's own kernels, the CLI, the hostile
#            cases, TF's depthwise test class (uses build/gradrt and build/tests/gradrt_tests)
#   litert   gradrt_litert on the stock LiteRT of ai-edge-litert 2.3.0 (venv build-litert/venv, no TF):
#            models converted by TF 2.21 in build-tf/venv (litert/tests/models.py, cached in
#            build-litert/models) train and match TF's own training step by step; the C example
#            litert/examples/train_on_device.c on x86-64 and, cross-built, on aarch64 under qemu
#   isa      the cpu groups and the backend harness's cpu variants again with each forced ISA
#            (GRADRT_CPU_ISA; GRADRT_TEST_VARIANTS=cpu leaves vulkan out)
#   asan     ASan + UBSan + LSan build in build-asan, every ctest group
#   tsan     ThreadSanitizer build in build-tsan (-DGRADRT_SANITIZE=thread, Vulkan and CLI off),
#            the threads:*, cpu:* and backends:* cases with halt_on_error=1 (a few minutes on 2 cores)
#   fuzz     the libFuzzer targets, FUZZ_SECONDS (30) each, $JOBS at once
#   aarch64  cross build in build-aarch64 (litert's library flags), the suite under qemu
#   web      wasm builds and the npm package tests (Node, Chromium; the cpu micro-kernel testers in Node)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${JOBS:-2}
stages=("$@")
((${#stages[@]})) || stages=(native tf litert isa asan tsan fuzz aarch64 web)

bash tests/setup.sh

# Each stage's wall time goes into the summary at the end (CI has 90 minutes for all of them).
times=() t_stage=$SECONDS name_stage=
stage() {
  [[ -n $name_stage ]] && times+=("$(printf '%5ds  %s' $((SECONDS - t_stage)) "$name_stage")")
  t_stage=$SECONDS name_stage=${2:-}
  printf '\n==== %s (%s)\n' "$1" "$(date +%T)"
}
# Sanitizer builds: -O1 -g1 everywhere (ASan's advice; line tables are enough for its reports).
# At RelWithDebInfo's -O2 -g the ASan build alone took 16 of CI's minutes on 2 cores.
san_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
# Their ISA units on x86-64: no sse4_2 (the isa stage runs it, and x86-64 CPUs without AVX2 are the rare case).
san_isas=(); [[ $(uname -m) == x86_64 ]] && san_isas=("-DGRADRT_SIMD_ISAS=avx512;avx2")

# ccache (tests/setup.sh installs it): the tf stage's core build (tf/build_backend, Release, -fPIC) then
# takes the native build's SIMD units from the cache, so the native build is position-independent too.
launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
native_flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
build() {  # build DIR [-S SRC] [-T TARGET] [cmake args...]
  local dir=$1 src=. target=(); shift
  if [[ ${1:-} == -S ]]; then src=$2; shift 2; fi
  if [[ ${1:-} == -T ]]; then target=(--target "$2"); shift 2; fi
  cmake -S "$src" -B "$dir" -G Ninja "${launcher[@]}" "$@" >/dev/null
  cmake --build "$dir" -j "$jobs" "${target[@]}"
}

for s in "${stages[@]}"; do
  case $s in
    native)
      stage "native suite: reference, cpu, vulkan (lavapipe + Khronos validation)" native
      build build "${native_flags[@]}"
      GRADRT_VULKAN_VALIDATION=1 ctest --test-dir build --output-on-failure -j "$jobs"
      echo "-- find_package(gradrt) after install, and add_subdirectory"
      cmake --install build --prefix build/install >/dev/null
      build build/consumer-installed -S tests/consumer -DCMAKE_PREFIX_PATH="$root/build/install"
      build/consumer-installed/consumer
      # (the add_subdirectory build compiles the library again, with the native flags: ccache hits)
      build build/consumer-subdir -S tests/consumer "${native_flags[@]}" -DGRADRT_SOURCE_DIR="$root" -DGRADRT_VULKAN=OFF
      build/consumer-subdir/consumer
      ;;
    tf)
      stage "TensorFlow: gradrt_tf kernel library against TensorFlow 2.21" tf
      if [[ ! -x build/gradrt || ! -x build/tests/gradrt_tests ]]; then  # normally from the native stage
        cmake -S . -B build -G Ninja "${launcher[@]}" "${native_flags[@]}" >/dev/null
        cmake --build build -j "$jobs" --target gradrt_cli gradrt_tests
      fi
      [[ -x build-tf/venv/bin/python ]] || python3 -m venv build-tf/venv
      build-tf/venv/bin/python -m pip install -q tensorflow-cpu==2.21.0 tf-keras==2.21.0 pytest pytest-xdist
      JOBS=$jobs build-tf/venv/bin/python -m pip install -q ./tf
      # oneDNN off (TF's side: its Eigen kernels; gradrt serves the plain ops): every test. Then TF's
      # default, oneDNN on (TF's side: oneDNN; gradrt serves the _MklNative forms): every 4th conformance
      # case and the contract (test_onednn.py, in the first pass, runs its own oneDNN children; TF's depthwise
      # test class skips its gradient tests under oneDNN, b/120545219). The first pass in $jobs processes
      # (pytest-xdist): one test keeps about one core busy.
      TF_ENABLE_ONEDNN_OPTS=0 GRADRT_TF_REQUIRE_CLI=1 build-tf/venv/bin/python -m pytest -q -p no:cacheprovider \
        -n "$jobs" tf/tests
      TF_ENABLE_ONEDNN_OPTS=1 GRADRT_TF_CASE_STRIDE=4 build-tf/venv/bin/python -m pytest -q -p no:cacheprovider \
        tf/tests/test_conformance.py tf/tests/test_plugin.py
      ;;
    litert)
      stage "LiteRT: training on stock LiteRT (ai-edge-litert 2.3.0) with gradrt_litert, against TF 2.21" litert
      # TensorFlow only converts the models and computes the expected values, in its own venv
      [[ -x build-tf/venv/bin/python ]] || python3 -m venv build-tf/venv
      build-tf/venv/bin/python -m pip install -q tensorflow-cpu==2.21.0
      build-tf/venv/bin/python litert/tests/models.py build-litert/models
      [[ -x build-litert/venv/bin/python ]] || python3 -m venv build-litert/venv
      build-litert/venv/bin/python -m pip install -q ai-edge-litert==2.3.0 pytest
      JOBS=$jobs build-litert/venv/bin/python -m pip install -q ./litert
      JOBS=$jobs PYTHON=build-litert/venv/bin/python bash litert/tests/build_aarch64.sh build-litert/aarch64/run
      GRADRT_LITERT_MODELS=build-litert/models GRADRT_LITERT_AARCH64_DIR=build-litert/aarch64/run \
        GRADRT_LITERT_REQUIRE_AARCH64=1 build-litert/venv/bin/python -m pytest -q -p no:cacheprovider litert/tests
      ;;
    isa)
      stage "cpu backend with every forced ISA" isa
      for isa in avx2 sse4_2 scalar; do
        echo "-- GRADRT_CPU_ISA=$isa"
        GRADRT_CPU_ISA=$isa GRADRT_TEST_VARIANTS=cpu build/tests/gradrt_tests \
          --test-case='cpu:*,backends:*,sweep:*,golden:*,gradcheck:*' --no-version | tail -3
      done
      ;;
    asan)
      stage "AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer" asan
      build build-asan "${san_flags[@]}" "${san_isas[@]}" -DGRADRT_SANITIZE=ON
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        ctest --test-dir build-asan --output-on-failure -j "$jobs"
      ;;
    tsan)
      stage "ThreadSanitizer: the thread pool and the cpu kernels" tsan
      # The single-threaded micro-kernel case is left out (ASan runs it; no thread in it), and the rest
      # runs as two processes at once (each keeps ~1.2 cores busy).
      build build-tsan -T gradrt_tests "${san_flags[@]}" "${san_isas[@]}" -DGRADRT_SANITIZE=thread -DGRADRT_VULKAN=OFF \
        -DGRADRT_CLI=OFF
      tsan_run() {  # tsan_run LOG CASES EXCLUDED
        TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" build-tsan/tests/gradrt_tests \
          --no-version --test-case="$2" --test-case-exclude="cpu: non-GEMM micro-kernels*,$3" >"$1" 2>&1
      }
      heavy='cpu: the input gradient*,cpu: conv*'
      tsan_run build-tsan/a.log "$heavy" '' & pid=$!
      rc=0; tsan_run build-tsan/b.log 'threads:*,cpu:*,backends:*' "$heavy" || rc=$?
      wait $pid || rc=$?
      tail -n 3 build-tsan/a.log build-tsan/b.log; ((rc == 0)) || { cat build-tsan/a.log build-tsan/b.log; exit 1; }
      ;;
    fuzz)
      stage "libFuzzer targets (${FUZZ_SECONDS:-30} s each)" fuzz
      bash tests/fuzz/run_fuzzers.sh "${FUZZ_SECONDS:-30}"
      ;;
    aarch64)
      stage "aarch64 cross build, suite under qemu" aarch64
      # with the flags of litert's aarch64 library (litert/tests/build_aarch64.sh): the library it ships,
      # and ccache gives the litert stage's compile of it back
      build build-aarch64 -DCMAKE_BUILD_TYPE=Release -DGRADRT_LITERT=ON -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
      ctest --test-dir build-aarch64 --output-on-failure -j "$jobs"
      ;;
    web)
      stage "wasm builds and the npm package in Node and Chromium" web
      (cd web && npm ci --no-audit --no-fund && npm run build && npm test)
      ;;
    *) echo "unknown stage $s" >&2; exit 2 ;;
  esac
done
stage "all stages passed: ${stages[*]}"
printf '%s\n' "${times[@]}" "$(printf '%5ds  total' "$SECONDS")"
((${#launcher[@]})) && ccache -s | grep -E '^(Cacheable|  Hits|  Misses)' || true
