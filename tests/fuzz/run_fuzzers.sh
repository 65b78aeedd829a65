#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + libFuzzer) and runs each for a
# bounded time from its seed corpus. Exits non-zero on any finding (crash, leak, UB,
# broken invariant, timeout) or build failure.
#
#   tests/fuzz/run_fuzzers.sh [seconds per target, default 60] [target ...]
#
# Environment: CXX (default clang++-14, else clang++), GRADRT_FUZZ_BUILD (build folder,
# default build-fuzz), GRADRT_FUZZ_JOBS (build parallelism and targets run at once, default 2),
# GRADRT_FUZZ_ARTIFACTS (where crash inputs go, default $GRADRT_FUZZ_BUILD/artifacts),
# GRADRT_FUZZ_ISAS (the cpu backend's ISA units, default scalar; empty: all).
set -euo pipefail

seconds="${1:-60}"
shift || true
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${GRADRT_FUZZ_BUILD:-$root/build-fuzz}"
jobs="${GRADRT_FUZZ_JOBS:-2}"
artifacts="${GRADRT_FUZZ_ARTIFACTS:-$build/artifacts}"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_npy fuzz_json fuzz_run_op fuzz_wasm_abi fuzz_litert_prepare fuzz_litert_node)
  [ -f "$root/wasm/fuzz_abi.cpp" ] && targets+=(fuzz_wasm_decode)
fi

cxx="${CXX:-}"
if [ -z "$cxx" ]; then
  if command -v clang++-14 >/dev/null; then cxx=clang++-14; elif command -v clang++ >/dev/null; then cxx=clang++; else
    echo "run_fuzzers.sh: clang++ not found (libFuzzer needs clang)" >&2; exit 2; fi
fi

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# -O1 -g1 and the scalar ISA unit only: clang with these sanitizers spends 4-8 minutes on each
# SIMD unit at -O2 -g (measured on 2 cores), which fuzzing the parsers and shape checks does not need.
cmake -S "$root/tests/fuzz" -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER="$cxx" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
      -DGRADRT_SIMD_ISAS="${GRADRT_FUZZ_ISAS:-scalar}" >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

mkdir -p "$artifacts"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Each target runs on one core: $jobs of them at once, each for the full time.
fuzz_one() {
  local t=$1 seeds="$root/tests/fuzz/corpus/${1#fuzz_}" work="$build/corpus/${1#fuzz_}" max_len=4096
  mkdir -p "$work"   # grows while fuzzing; the seeds in the repo stay as they are
  [ "$t" = fuzz_litert_prepare ] && max_len=32768  # its seeds are converted models (up to ~19 KB)
  "$build/$t" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -max_len="$max_len" \
    -print_final_stats=1 -artifact_prefix="$artifacts/$t-" "$work" "$seeds" >"$build/$t.log" 2>&1
}
report() {  # report TARGET EXIT-STATUS
  local t=$1 log="$build/$1.log"
  echo "== $t: ${seconds}s from $root/tests/fuzz/corpus/${t#fuzz_}"
  if [ "$2" -eq 0 ]; then
    grep -E "stat::number_of_executed_units|stat::new_units_added" "$log" | sed "s/^/   /"
  else
    status=1
    echo "!! $t found a problem; last lines of $log:" >&2
    tail -n 60 "$log" >&2
    ls "$artifacts"/"$t"-* 2>/dev/null | sed "s/^/   reproducer: /" >&2
  fi
}
status=0
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  batch=("${targets[@]:i:jobs}") pids=()
  for t in "${batch[@]}"; do fuzz_one "$t" & pids+=($!); done
  for k in "${!batch[@]}"; do rc=0; wait "${pids[$k]}" || rc=$?; report "${batch[$k]}" "$rc"; done
done
exit $status
