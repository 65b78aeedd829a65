// Run-time tile choices of the cpu backend's GEMM drivers (conv2d and its gradients), per
// microarchitecture: the unit of an ISA instantiates a few GEMM tiles (tiles.h Tiles::gemm),
// and the table in tuning.cpp says which one each driver runs on which CPU, keyed by cpuid
// vendor, family and model (as oneDNN's and XNNPACK's per-uarch configs). A CPU the table
// does not know gets the unit's defaults, the tiles measured best on AMD Zen 5 (avx512) and on an
// AVX2-only EPYC (avx2).
//
// GRADRT_CPU_TILES overrides entries for measurements, e.g.
//   GRADRT_CPU_TILES=input=6x4,filter=12x2,conv2d=12x2,filter_k=512/256,filter_split=1024/1024/16,filter_oc=0,input_pf=0,input_dxpf=1/4096,input_kb=256/4096,input_fit=0,input_groups=0,input_pad=0,input_rows=0,filter_few_c=0,filter_stack=0,few_c_pf=1,chunk_pf=1/4096/1024/2048,dwf_pf=1
// (a value naming a tile the ISA's unit has not instantiated is ignored, and `gradrt devices`
// says so).
#pragma once

#include <string>

#include "cpu_isa.h"
#include "tiles.h"

namespace gradrt::simd {

enum class Microarch {
  unknown = 0,
  zen4,            // AMD family 0x19 (Zen 4 models): AVX-512 on 256-bit pipes
  zen5,            // AMD family 0x1a: AVX-512 on 512-bit pipes
  sapphire_rapids, // Intel family 6, Sapphire / Emerald / Granite Rapids (Golden/Raptor/Redwood Cove
                   // server cores): two 512-bit FMA units, 48 KiB L1d, 2 MiB L2
  skylake_server,  // Intel family 6 model 0x55, Skylake-SP / Cascade Lake / Cooper Lake: AVX-512 on
                   // two 512-bit FMA units on most SKUs (ports 0+1 fused, port 5), AVX-512
                   // clock licences, 32 KiB L1d, 1 MiB L2
};

struct CpuIdent {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", "" where there is no cpuid
  int family = 0;      // display family (base + extended)
  int model = 0;       // display model (with the extended model)
  bool amx = false;    // AMX-TILE (cpuid leaf 7 EDX bit 24): only Sapphire Rapids and later server cores
};

// The tile row of an ISA's unit (tiles.h), and whether every tile `t` names is one of its
// instantiated GEMM tiles.
const Tiles& unit_tiles(Isa isa);
bool tiles_built(Isa isa, const ConvTuning& t);

CpuIdent cpu_ident();  // this CPU (cached)
Microarch microarch_of(const CpuIdent& id);
const char* microarch_name(Microarch m);

// The table: tiles and K chunks for `isa` on `m`.
ConvTuning conv_tuning(Isa isa, Microarch m);

// Applies a GRADRT_CPU_TILES value to `t`; false (t unchanged) when it does not parse or
// names a tile the unit of `isa` has not instantiated.
bool apply_tiles_override(Isa isa, const char* spec, ConvTuning* t);

// The choices the cpu backend uses for `isa` here (the table's row for this CPU, with
// GRADRT_CPU_TILES applied to the ISA chosen at start-up). Defined in cpu_backend.cpp.
const ConvTuning& cpu_tuning(Isa isa);
// Tests: uses `t` for `isa` from now on; false (nothing changed) unless tiles_built(isa, t).
// Not thread-safe against kernels running at the same time.
bool set_cpu_tuning(Isa isa, const ConvTuning& t);

// "input 12x2, filter 12x2, conv2d 12x2, filter K 512/256, input dy prefetch on, filter few-c to 4,
// depthwise filter prefetch on" (what `gradrt devices` prints).
std::string describe(const ConvTuning& t);

}  // namespace gradrt::simd
