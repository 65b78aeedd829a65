#!/bin/bash
# One prepared run on a lent GPU machine (about 2.5 minutes on an H100): gradrt's Vulkan backend
# there against PyTorch's cuDNN on the same shapes, and the A/B of the shader sets. Build HERE
# first, then pack what that machine lacks:
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGRADRT_BENCH=ON
#   nice -n 10 cmake --build build -j2 --target gradrt_cli gradrt_tests vulkan_bench gradrt_step
#   bash tests/gpu_bundle.sh                  # -> build-gpu/ (binaries, loader, layer, NVIDIA ICD)
# and on the GPU machine, with build-gpu carried:
#   bash bench/gpu_step.sh                    # writes to $OUT (default /tmp/gpu_step)
# Steps: (1) the Vulkan tests with the validation layer, (2) gradrt_step for both models at
# batch 8 and 32 on vulkan, (2b) the A/B: gradrt_step on vulkan in each configuration of
# AB_SETS, AB_ROUNDS (default 3) rounds interleaved:
#   v1      GRADRT_VULKAN_SHADERS=v1: the scalar session-9 depthwise/batch-norm shaders
#   v4      GRADRT_VULKAN_SHADERS=v4: session 10's vec4 shaders
#   v5      the default shader set: v4 plus session 11's depthwise filter gradient _v5 and conv
#           filter gradient tiles fitted to M x N (NOTES "Vulkan")
#   v5spin  v5 with the polling fence wait (the default on a real GPU; the others block)
#   in-X    v5spin with GRADRT_VULKAN_INPUT=X (a Conv2DBackpropInput variant, step 1i), e.g. in-blocked
# (4) bench/cudnn_step.py (torch + cuDNN, float32 with TF32 off and on), then THE A/B table
# (bench/shader_ab.py: per op and configuration GPU ms, % of BANDWIDTH_GBPS, v4/x, cuDNN fp32 ms
# and cuDNN/best; per step GPU ms, wall ms, wall/GPU), (2') gradrt_step on cpu, (3) vulkan_bench
# per op with v4 and v5 (the default; v5 adds the float16-storage rows "... f16" of the conv,
# depthwise and batch-norm gradients next to their float32 rows: GPU ms and MB moved), (3f)
# vulkan_bench --only f16 again (just the float32 and float16 rows of the same shapes, one run:
# the four conv shapes' input and filter gradients, the depthwise and batch-norm gradients),
# (5) the final table with the cpu rows.
# (1i) right after the tests: Conv2DBackpropInput's variants (GRADRT_VULKAN_INPUT: base pad fit large
# big split blocked bigblocked phase, vulkan/ops/conv2d_backprop_input.cpp) swept by `vulkan_bench --only input` (INPUT_ROUNDS
# rounds, default 3, interleaved; GPU ms per variant and shape, bits vs base), then bench/input_sweep.py
# puts cuDNN's float32 time next to each row (files: $OUT/input_sweep.jsonl). About 30 s on an H200.
# For a short run: AB_SETS=v5spin AB_ROUNDS=1 SKIP_VBENCH=1 (the sweep and the cuDNN tables stay).
# Files (few: the device tool returns at most 8): $OUT/log.txt (everything printed, every
# table), gpu_step.json, step.jsonl (step 2), ab_steps.jsonl (every A/B run; its "shaders" and
# "wait" fields name the configuration); scratch goes to $OUT/../gpu_step_work.
# A dry run without build-gpu/ (here, on lavapipe) uses build/ and small settings:
#   BATCHES=1 STEPS=1 AB_ROUNDS=1 SKIP_VBENCH=1 INPUT_ROUNDS=1 INPUT_REPEAT=1 INPUT_BATCH_DIV=8 \
#     bash bench/gpu_step.sh   # no torch: no cuDNN columns
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_step}
WORK="$OUT/../gpu_step_work"
mkdir -p "$OUT" "$WORK"
# Everything printed also goes to $OUT/log.txt (unless stdout already is that file).
LOG=$(realpath -m "$OUT/log.txt")
[ "$(readlink -f /proc/$$/fd/1)" = "$LOG" ] || exec > >(tee "$LOG") 2>&1
BATCHES=${BATCHES:-"8 32"}
STEPS=${STEPS:-10}
AB_SETS=${AB_SETS:-"v1 v4 v5 v5spin"}
AB_ROUNDS=${AB_ROUNDS:-3}
BANDWIDTH_GBPS=${BANDWIDTH_GBPS:-3350}
if [ -f build-gpu/env.sh ]; then
  . build-gpu/env.sh
  TESTS=build-gpu/gradrt_tests VBENCH=build-gpu/vulkan_bench STEP=build-gpu/gradrt_step CLI=build-gpu/gradrt
else
  TESTS=build/tests/gradrt_tests VBENCH=build/bench/vulkan_bench STEP=build/gradrt_step CLI=build/gradrt
fi
t0=$(date +%s)
say() { echo "== [$(( $(date +%s) - t0 )) s] $*"; }
# Steps start only while under BUDGET seconds (default 200), so the run ends within ~3.5 minutes;
# the most wanted numbers come first (the vulkan steps and the A/B, then cuDNN, cpu, the per-op bench).
left() { [ $(( $(date +%s) - t0 )) -lt "${BUDGET:-200}" ] || { say "skipped (over budget): $*"; false; }; }
step() {  # step BACKEND MODEL BATCH
  timeout 60 "$STEP" --backend "$1" --model "$2" --batch "$3" --steps "$STEPS" --json >> "$OUT/step.jsonl" \
    2> "$WORK/step_err.txt" || { echo "gradrt_step $*: failed"; cat "$WORK/step_err.txt"; }
}
ab_env() {  # the environment of one A/B configuration
  case "$1" in
    v1) echo GRADRT_VULKAN_SHADERS=v1 GRADRT_VULKAN_WAIT=block ;;
    v4) echo GRADRT_VULKAN_SHADERS=v4 GRADRT_VULKAN_WAIT=block ;;
    v5) echo GRADRT_VULKAN_SHADERS=v5 GRADRT_VULKAN_WAIT=block ;;
    v5spin) echo GRADRT_VULKAN_SHADERS=v5 GRADRT_VULKAN_WAIT=spin ;;
    in-*) echo GRADRT_VULKAN_SHADERS=v5 GRADRT_VULKAN_WAIT=spin GRADRT_VULKAN_INPUT="${1#in-}" ;;  # e.g. in-blocked
    *) echo "unknown A/B set $1" >&2; echo GRADRT_AB_UNKNOWN=1 ;;
  esac
}

say "device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null
"$CLI" devices 2>&1 | head -20

say "(1) Vulkan tests with the validation layer (default: v5 and the polling wait here; then v4, blocking)"
GRADRT_VULKAN_VALIDATION=1 timeout 60 "$TESTS" --test-case='vulkan:*' 2>&1 | tail -4
GRADRT_VULKAN_VALIDATION=1 GRADRT_VULKAN_SHADERS=v4 GRADRT_VULKAN_WAIT=block timeout 60 "$TESTS" --test-case='vulkan:*' 2>&1 |
  tail -4

say "(1i) Conv2DBackpropInput variants: vulkan_bench --only input, ${INPUT_ROUNDS:-3} rounds, then cuDNN next to them"
timeout 120 "$VBENCH" --only input --rounds "${INPUT_ROUNDS:-3}" --repeat "${INPUT_REPEAT:-10}" \
  --batch-div "${INPUT_BATCH_DIV:-1}" --json "$OUT/input_sweep.jsonl" 2>&1
[ -s "$OUT/input_sweep.jsonl" ] && timeout 90 python3 bench/input_sweep.py "$OUT/input_sweep.jsonl" 2>&1

say "(2) gradrt_step on vulkan"
: > "$OUT/step.jsonl"
for model in mobilenet_block resnet_block; do
  for batch in $BATCHES; do left "gradrt_step vulkan $model $batch" && step vulkan $model "$batch"; done
done
cut -c1-400 "$OUT/step.jsonl"

say "(2b) A/B of $AB_SETS: gradrt_step on vulkan, $AB_ROUNDS rounds interleaved"
for set in $AB_SETS; do : > "$WORK/ab_$set.jsonl"; done
for round in $(seq "$AB_ROUNDS"); do
  for model in mobilenet_block resnet_block; do
    for batch in $BATCHES; do
      left "A/B round $round $model $batch" || break 3
      for set in $AB_SETS; do
        env $(ab_env "$set") timeout 60 "$STEP" --backend vulkan --model $model --batch "$batch" --steps "$STEPS" \
          --json >> "$WORK/ab_$set.jsonl" 2>> "$WORK/step_err.txt" || echo "A/B $set $model $batch: failed"
      done
    done
  done
done
for set in $AB_SETS; do cat "$WORK/ab_$set.jsonl"; done > "$OUT/ab_steps.jsonl"

say "(4) cuDNN on the same shapes (the table with the cpu rows comes last)"
left cudnn_step.py && timeout 120 python3 bench/cudnn_step.py "$OUT/step.jsonl" --out "$OUT/gpu_step.json" 2>&1

say "THE A/B table: per op GPU ms and % of $BANDWIDTH_GBPS GB/s in each configuration, v4/x, cuDNN fp32"
python3 bench/shader_ab.py $(for set in $AB_SETS; do echo "$set=$WORK/ab_$set.jsonl"; done) --base v4 \
  --cudnn "$OUT/gpu_step.json" --bandwidth "$BANDWIDTH_GBPS" 2>&1

say "(2') gradrt_step on cpu"
for model in mobilenet_block resnet_block; do
  for batch in $BATCHES; do left "gradrt_step cpu $model $batch" && step cpu $model "$batch"; done
done

say "(3) vulkan_bench per op: GRADRT_VULKAN_SHADERS=v4, then v5 (the default)"
if [ "${SKIP_VBENCH:-0}" = 1 ]; then echo skipped; else
  for set in v4 v5; do
    left "vulkan_bench $set" || break
    echo "-- GRADRT_VULKAN_SHADERS=$set"
    GRADRT_VULKAN_SHADERS=$set timeout 40 "$VBENCH" --repeat 20 2>&1
  done
fi

say "(3f) float16 storage vs float32: vulkan_bench --only f16 (v5; conv, depthwise, batch-norm gradients)"
if [ "${SKIP_VBENCH:-0}" = 1 ]; then echo skipped; else
  left "vulkan_bench f16" && timeout 60 "$VBENCH" --only f16 --repeat 20 2>&1
fi

say "(5) the table with the cpu rows (cuDNN timings from above, not measured again)"
reuse=()
[ -f "$OUT/gpu_step.json" ] && reuse=(--reuse "$OUT/gpu_step.json")
timeout 60 python3 bench/cudnn_step.py "$OUT/step.jsonl" "${reuse[@]}" --out "$OUT/gpu_step.json" 2>&1
say "done; files in $OUT: $(cd "$OUT" && ls | tr '\n' ' ')"
sleep 1  # lets tee write the last lines before the machine hands $OUT back
