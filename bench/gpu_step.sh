#!/bin/bash
# One prepared run on a lent GPU machine (< 6 minutes): gradrt's Vulkan backend there against
# PyTorch's cuDNN on the same shapes. Build HERE first, then pack what that machine lacks:
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGRADRT_BENCH=ON
#   nice -n 10 cmake --build build -j2 --target gradrt gradrt_tests vulkan_bench gradrt_step
#   bash tests/gpu_bundle.sh                  # -> build-gpu/ (binaries, loader, layer, NVIDIA ICD)
# and on the GPU machine, with build-gpu carried:
#   bash bench/gpu_step.sh                    # writes to $OUT (default /tmp/gpu_step)
# Steps: (1) the Vulkan tests with the validation layer, (2) gradrt_step for both models at
# batch 8 and 32 on vulkan and cpu, (2b) the shader A/B: gradrt_step on vulkan with the scalar
# session-9 depthwise/batch-norm shaders (GRADRT_VULKAN_SHADERS=v1) and the vec4 ones (default),
# AB_ROUNDS (default 3) interleaved rounds, table by bench/shader_ab.py ($OUT/shader_ab.txt),
# (3) vulkan_bench per op (with an A/B of the conv tiles),
# (4) bench/cudnn_step.py (torch + cuDNN, float32 with TF32 off and on), (5) one table
# ($OUT/table_all.txt); JSON in $OUT/gpu_step.json. About 3 minutes on an H100.
# A dry run without build-gpu/ (here, on lavapipe) uses build/ and small settings:
#   BATCHES=1 STEPS=1 SKIP_VBENCH=1 bash bench/gpu_step.sh   # torch absent: its columns are empty
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_step}
mkdir -p "$OUT"
BATCHES=${BATCHES:-"8 32"}
STEPS=${STEPS:-10}
if [ -f build-gpu/env.sh ]; then
  . build-gpu/env.sh
  TESTS=build-gpu/gradrt_tests VBENCH=build-gpu/vulkan_bench STEP=build-gpu/gradrt_step CLI=build-gpu/gradrt
else
  TESTS=build/tests/gradrt_tests VBENCH=build/bench/vulkan_bench STEP=build/gradrt_step CLI=build/gradrt
fi
t0=$(date +%s)
say() { echo "== [$(( $(date +%s) - t0 )) s] $*"; }
# Steps start only while under BUDGET seconds (default 300), so the run ends well within 6 minutes;
# the most wanted numbers come first (the vulkan steps, then cuDNN, cpu, the per-op bench).
left() { [ $(( $(date +%s) - t0 )) -lt "${BUDGET:-300}" ] || { say "skipped (over budget): $*"; false; }; }
step() {  # step BACKEND MODEL BATCH
  timeout 60 "$STEP" --backend "$1" --model "$2" --batch "$3" --steps "$STEPS" --json >> "$OUT/step.jsonl" \
    2> "$OUT/step_err.txt" || { echo "gradrt_step $*: failed"; cat "$OUT/step_err.txt"; }
}

say "device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | tee "$OUT/gpu.txt"
"$CLI" devices 2>&1 | head -20 | tee "$OUT/devices.txt"

say "(1) Vulkan tests with the validation layer"
GRADRT_VULKAN_VALIDATION=1 timeout 60 "$TESTS" --test-case='vulkan:*' 2>&1 | tail -4 | tee "$OUT/tests.txt"

say "(2) gradrt_step on vulkan"
: > "$OUT/step.jsonl"
for model in mobilenet_block resnet_block; do
  for batch in $BATCHES; do left "gradrt_step vulkan $model $batch" && step vulkan $model "$batch"; done
done
cut -c1-400 "$OUT/step.jsonl"

say "(2b) shader A/B: GRADRT_VULKAN_SHADERS=v1 (scalar) vs default (vec4), rounds interleaved"
: > "$OUT/step_v1.jsonl"; : > "$OUT/step_v4.jsonl"
for round in $(seq "${AB_ROUNDS:-3}"); do
  for model in mobilenet_block resnet_block; do
    for batch in $BATCHES; do
      left "shader A/B round $round $model $batch" || break 3
      GRADRT_VULKAN_SHADERS=v1 timeout 60 "$STEP" --backend vulkan --model $model --batch "$batch" --steps "$STEPS" \
        --json >> "$OUT/step_v1.jsonl" 2>> "$OUT/step_err.txt"
      timeout 60 "$STEP" --backend vulkan --model $model --batch "$batch" --steps "$STEPS" --json \
        >> "$OUT/step_v4.jsonl" 2>> "$OUT/step_err.txt"
    done
  done
done
python3 bench/shader_ab.py "$OUT/step_v1.jsonl" "$OUT/step_v4.jsonl" --bandwidth "${BANDWIDTH_GBPS:-3350}" 2>&1 |
  tee "$OUT/shader_ab.txt"

say "(4, 5) cuDNN on the same shapes, and the table (cpu rows follow in the final table)"
left cudnn_step.py && timeout 120 python3 bench/cudnn_step.py "$OUT/step.jsonl" --out "$OUT/gpu_step.json" 2>&1 | tee "$OUT/table.txt"

say "(2) gradrt_step on cpu"
for model in mobilenet_block resnet_block; do
  for batch in $BATCHES; do left "gradrt_step cpu $model $batch" && step cpu $model "$batch"; done
done

say "(3) vulkan_bench per op: conv tiles as chosen by size, then forced: 128x64 (8x4), 64x64 (4x4), 128x128 (8x8)"
if [ "${SKIP_VBENCH:-0}" = 1 ]; then echo skipped; else
  for tiles in auto large wide big; do
    left "vulkan_bench $tiles" || break
    echo "-- GRADRT_VULKAN_GEMM_TILES=$tiles"
    GRADRT_VULKAN_GEMM_TILES=$tiles timeout 40 "$VBENCH" --repeat 20 2>&1 | tee "$OUT/vulkan_bench_$tiles.txt"
  done
fi

say "the table with the cpu rows (cuDNN timings from above, not measured again)"
reuse=()
[ -f "$OUT/gpu_step.json" ] && reuse=(--reuse "$OUT/gpu_step.json")
timeout 60 python3 bench/cudnn_step.py "$OUT/step.jsonl" "${reuse[@]}" --out "$OUT/gpu_step.json" 2>&1 | tee "$OUT/table_all.txt"
say "done; files in $OUT"
