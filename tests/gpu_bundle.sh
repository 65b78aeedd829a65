#!/bin/sh
# Packs what the tests and vulkan_bench need on a lent GPU machine that has an NVIDIA driver
# but no Vulkan loader (the device tool's machines: Ubuntu, no apt): build-gpu/ holds the test
# binary, the CLI, vulkan_bench, gradrt_step, Debian's loader and validation layer, and an ICD file naming
# libEGL_nvidia.so.0 (the driver's own icd.json names libGLX_nvidia.so.0, which cannot create
# an instance without an X server). Build first:
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGRADRT_BENCH=ON && cmake --build build
# (bench/gpu_step.sh runs the whole GPU check from build-gpu: tests, gradrt_step, cuDNN)
# then, on the GPU machine with build-gpu and build/gradrt carried:
#   . build-gpu/env.sh && GRADRT_VULKAN_VALIDATION=1 build-gpu/gradrt_tests && build-gpu/vulkan_bench
set -eu
cd "$(dirname "$0")/.."
rm -rf build-gpu && mkdir -p build-gpu/layer
cp build/tests/gradrt_tests build/gradrt build/bench/vulkan_bench build/gradrt_step build-gpu/
cp -L /usr/lib/x86_64-linux-gnu/libvulkan.so.1 build-gpu/
cp /usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so build-gpu/layer/
sed 's#"library_path": *"[^"]*"#"library_path": "./libVkLayer_khronos_validation.so"#' \
  /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json > build-gpu/layer/VkLayer_khronos_validation.json
echo '{ "file_format_version": "1.0.1", "ICD": { "library_path": "libEGL_nvidia.so.0", "api_version": "1.3.239" } }' \
  > build-gpu/nvidia_egl_icd.json
cat > build-gpu/env.sh <<'ENV'
# . build-gpu/env.sh from the repository root
G=$PWD/build-gpu
export GRADRT_VULKAN_LIBRARY=$G/libvulkan.so.1 VK_LAYER_PATH=$G/layer VK_ICD_FILENAMES=$G/nvidia_egl_icd.json
ENV
du -sh build-gpu
