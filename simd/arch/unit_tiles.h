// The unit's row of simd/tiles.h as its kTiles (GRADRT_SIMD_NS names both). Included by
// arch_unit.h, and earlier by a unit whose own headers need kTiles before the drivers
// (arch/wasm_simd128.cpp).
#pragma once

#include "../tiles.h"

namespace gradrt::simd::GRADRT_SIMD_NS {
constexpr Tiles kTiles = tiles::GRADRT_SIMD_NS;
}  // namespace gradrt::simd::GRADRT_SIMD_NS
