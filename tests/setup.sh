#!/usr/bin/env bash
# Installs everything gradrt's builds and tests use on a fresh Debian 12 machine (as root).
set -euo pipefail
packages=(cmake ninja-build ccache g++ python3 python3-venv libxsimd-dev doctest-dev
          glslang-tools libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
          g++-aarch64-linux-gnu qemu-user clang libclang-rt-14-dev
          emscripten binaryen chromium
          python3-sklearn)  # digits (web/demo/train, tf/examples), read from the package, never copied
# This machine kind ships Node 20 + npm outside dpkg; Debian's nodejs conflicts with that npm.
command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
