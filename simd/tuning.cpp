// The per-microarchitecture table of the GEMM drivers' tiles (tuning.h) and the cpuid reading
// it is keyed by. Compiled with the baseline flags.
#include "tuning.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace gradrt::simd {

const Tiles& unit_tiles(Isa isa) {
  switch (isa) {
    case Isa::avx512: return tiles::avx512;
    case Isa::avx2: return tiles::avx2;
    case Isa::sse4_2: return tiles::sse4_2;
    case Isa::neon: return tiles::neon;
    case Isa::wasm_simd128: return tiles::wasm_simd128;
    case Isa::scalar: break;
  }
  return tiles::scalar;
}

bool tiles_built(Isa isa, const ConvTuning& t) {
  auto built = [&](GemmTile g) {
    for (const GemmTile& c : unit_tiles(isa).gemm)
      if (c.rows > 0 && c == g) return true;
    return false;
  };
  return built(t.conv2d) && built(t.backprop_input) && built(t.backprop_filter);
}

namespace {

CpuIdent read_ident() {
  CpuIdent id;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return id;
  char vendor[13];
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  vendor[12] = 0;
  id.vendor = vendor;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return id;
  // Display family = base family (bits 8-11), plus the extended family (20-27) when the base is
  // 15; display model = base model (4-7), with the extended model (16-19) as its high nibble
  // when the base family is 6 or 15.
  const int base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
  id.family = base_family == 0xf ? base_family + int((a >> 20) & 0xff) : base_family;
  id.model = base_family == 0x6 || base_family == 0xf ? base_model | int(((a >> 16) & 0xf) << 4) : base_model;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) id.amx = (d >> 24) & 1;
#endif
  return id;
}

bool parse_tile(const char* s, size_t n, GemmTile* out) {
  int r = 0, v = 0;
  char tail = 0;
  std::string t(s, n);
  if (std::sscanf(t.c_str(), "%dx%d%c", &r, &v, &tail) != 2 || r < 1 || v < 1) return false;
  *out = GemmTile{r, v};
  return true;
}

}  // namespace

CpuIdent cpu_ident() {
  static const CpuIdent id = read_ident();
  return id;
}

Microarch microarch_of(const CpuIdent& id) {
  if (id.vendor == "AuthenticAMD") {
    if (id.family == 0x1a) return Microarch::zen5;
    // Zen 4: Genoa / Storm Peak (0x10-0x1f), Raphael (0x60-0x6f), Phoenix (0x70-0x7f),
    // Bergamo / Siena (0xa0-0xaf). Family 0x19's other models are Zen 3 (no AVX-512).
    const int m = id.model;
    if (id.family == 0x19 && ((m >= 0x10 && m <= 0x1f) || (m >= 0x60 && m <= 0x7f) || (m >= 0xa0 && m <= 0xaf)))
      return Microarch::zen4;
  }
  if (id.vendor == "GenuineIntel" && id.family == 6) {
    // Sapphire Rapids 0x8f, Emerald Rapids 0xcf, Granite Rapids 0xad / 0xae.
    if (id.model == 0x8f || id.model == 0xcf || id.model == 0xad || id.model == 0xae)
      return Microarch::sapphire_rapids;
    // A hypervisor may report another model: a 2-vCPU VM of this project's showed model 0xa7
    // (Rocket Lake's number, a client core without AMX) with AMX, AVX512-FP16 and 2 MiB of L2
    // per core. Every CPU with AMX so far is one of the server cores above, and this row's
    // tiles measured better there (bench/results_xeon_spr_vm.txt, session 20).
    if (id.amx) return Microarch::sapphire_rapids;
    // Skylake-SP, Cascade Lake and Cooper Lake share the model number (the stepping tells them apart;
    // the cores, caches and FMA units are the same).
    if (id.model == 0x55) return Microarch::skylake_server;
  }
  return Microarch::unknown;
}

const char* microarch_name(Microarch m) {
  switch (m) {
    case Microarch::zen4: return "zen4";
    case Microarch::zen5: return "zen5";
    case Microarch::sapphire_rapids: return "sapphire_rapids";
    case Microarch::skylake_server: return "skylake_server";
    case Microarch::unknown: break;
  }
  return "unknown";
}

// The table. Every row starts from the unit's default tile; a row lists only what was
// measured better on that microarchitecture (bench/results_*.txt name the CPU of each figure).
ConvTuning conv_tuning(Isa isa, Microarch m) {
  const GemmTile d = unit_tiles(isa).gemm[0];
  ConvTuning t{.conv2d = d, .backprop_input = d, .backprop_filter = d};
  // The defaults (avx512 12x2, filter K 512/256; avx2 6x2) were tuned on Zen 4 / Zen 5 and the
  // AVX2 EPYC in sessions 2-7; the zen4 and zen5 rows below change what was measured better since. The avx2 unit's 4x3 and 12x1 tiles run only where a shape's
  // columns fit them better (Conv2DBackpropInput's fit to dx channels, the filter gradient's
  // narrow output channels) or GRADRT_CPU_TILES names them.
  if (m == Microarch::zen4 && isa == Isa::avx512) {
    // Zen 4 (EPYC Genoa, family 0x19 model 0x11: 32 KiB L1d, 1 MiB L2, AVX-512 on 256-bit pipes;
    // session 31, cli_ab 3 rounds; bench/results_zen4.txt). The input gradient on 6x4: 0.92-0.97x
    // the time of 12x2 on every 3x3 and 1x1 row with 64 or more dx channels, 1 and 2 threads, batch
    // 1 and 8 (Keras 16x16x64->128 s2 0.95x; 32 or fewer dx channels keep 12x2 through the fit).
    // Not the k loop itself: alone (B in L1) every tile runs at 113-116 of 117 GFLOP/s here; in the op
    // the 6x4 loop's half as many dy rows per tile measured better. The filter gradient keeps 12x2
    // (6x4: 0.99-1.04x).
    t.backprop_input = GemmTile{6, 4};
    // No oc blocks (as on the Intel row): 1x1 28x28x256->512 filter gradient at 2 threads 0.72x
    // the time at batch 1, 0.955x at batch 8; 1 thread and the Keras rows 0.98-1.01x.
    t.filter_oc_blocks = false;
    // The filter gradient's next-chunk prefetch with Zen 5's gates: batch-8 3x3 s2 0.96-0.97x, 1x1
    // 256->512 0.97x; batch 1 and the Keras rows 0.98-1.01x.
    t.filter_chunk_prefetch = true;
    t.filter_chunk_prefetch_min_flops = 2048;
    // K slices up to 32 dw tiles: Keras 3x3 16x16x32->32 filter batch 32 0.95x the time at 2
    // threads (1 thread 0.995x), other Keras rows 0.98-1.01x.
    t.filter_split_tiles = 32;
    // The few-c filter gradient's next-segment prefetch (from 2 MiB of dy): batch 32 at 1 thread
    // 0.91-0.98x (3x3 64x64x3->16 s2 0.91x), at 2 threads 0.98-1.02x; batch 1 and 8 below the gate.
    t.filter_few_c_prefetch = true;
  }
  if (m == Microarch::zen4) {
    // Batch-norm sums over whole rows from 24 MiB of input (session 32, cli_ab 3 rounds, 56x56x256):
    // FusedBatchNormGrad batch 8 (51 MB of dy + x) 0.62x the time at 1 thread, 0.71x at 2 (avx2
    // unit 0.89x), batch 4 (25.7 MB) 0.86x / 0.98x; FusedBatchNorm batch 8 0.68x / 0.82x. In the
    // L3 the blocks stay ahead: batch 1, 2 (6.4, 12.8 MB) 1.07-1.16x, FusedBatchNorm batch 4 1.07-1.12x.
    t.bn_whole_rows_bytes = int64_t{24} << 20;
  }
  if (m == Microarch::zen5 && isa == Isa::avx512) {
    // The filter gradient's next-chunk prefetch (as on Sapphire Rapids, x + dy >= 4 MiB, at
    // most 1 MiB ahead) where a chunk's tiles do >= 2048 FLOPs per line prefetched: batch-8 3x3
    // s1 and 1x1 256->512 rows 0.97x the time at 1 thread (s2 0.99x; 2 threads 0.98-1.02x, noisy),
    // batch 1 and the Keras batch-32 rows 0.99-1.01x; ungated, the Keras 1x1 32->32 and 64->64
    // rows (~400 and ~1150 FLOPs per line) took 1.01-1.04x (Zen 5, 1 MiB L2, session 29, cli_ab
    // 5-7 rounds; bench/results_zen5.txt).
    t.filter_chunk_prefetch = true;
    t.filter_chunk_prefetch_min_flops = 2048;
    // The input gradient's dx prefetch and K blocks of 256 (dx / dy >= 4 MiB): 3x3 s1 56x56x64
    // batch 8 0.95x the time at 1 and 2 threads, 1x1 28x28x256->512 batch 8 0.96-0.98x, batch
    // 1 and the Keras batch-32 rows 0.99-1.01x (Zen 5, session 30, cli_ab 5 rounds).
    t.input_prefetch_dx = true;
    t.input_k_block = 256;
    // K slices up to 32 dw tiles (as on Sapphire Rapids): Keras 3x3 16x16x32->32 filter batch 32
    // (27 tiles) 0.94-0.95x the time at 2 threads, 1.01x at 1; other Keras rows 0.99-1.01x (Zen 5,
    // session 30, cli_ab 5 rounds).
    t.filter_split_tiles = 32;
  }
  if (m == Microarch::sapphire_rapids && (isa == Isa::avx512 || isa == Isa::avx2)) {
    // Emerald Rapids (bench/results_xeon_emr.txt): 6x4 (6 broadcasts and 4 vector loads per 24
    // FMAs, against 12 and 2) took 0.92-0.94x the time of 12x2 for the input gradients and
    // 0.89-0.92x for the filter gradients, 1 thread (14x2, then also built: input 0.92-0.93,
    // filter 0.95-1.13; dropped). With 6x4, filter K chunks of 1024 (narrow) and 128 (wide)
    // pixels took 0.98x and 0.97x the time of 512/256.
    // Without the input gradient's dy prefetch: 0.97-0.98x the time (cli_ab, 1 and 2
    // threads, batch 1 and 8, session 10). With the k loops unrolled (session 10) the wide K
    // chunk went back to 256: 1x1 filter gradient 0.92-0.98x the time of 128 (512: 0.99-1.16);
    // the narrow one stays 1024 (512: 1.01, 2048: 1.00-1.58).
    // The avx2 unit there (GRADRT_CPU_ISA=avx2, session 14) keeps its 6x2 tile and K chunks (4x3:
    // 1.14-1.15x the time of 6x2 on the 3x3 filter gradients, 64 and 128 columns padded to 72 and
    // 144; 1x1 256->512 1.01x) and takes the rest of this row, which is about the caches, not the
    // vector width: FusedBatchNormGrad 0.80x the time, input gradients 0.98-0.99x without the dy
    // prefetch (paired CPU time, 1 thread, batch 1; bench/results_xeon_emr.txt "AVX2 on Emerald Rapids").
    if (isa == Isa::avx512) {
      t.backprop_input = t.backprop_filter = GemmTile{6, 4};
      t.filter_k_narrow = 1024, t.filter_k_wide = 256;
      // Filter K slices up to 32 dw tiles (default 16): the Keras 3x3 16x16x32->32 filter gradient
      // at batch 32 (27 tiles of 12x2, 8192 pixels, 8 slices) took 0.84-0.87x the time at 2
      // threads, where each thread had read all of x and dy for its half of the tiles; 1.01x at
      // 1 thread. No other gradrt_bench row has 17-32 tiles (model-0xa7 VM, session 24, cli_ab).
      t.filter_split_tiles = 32;
      // No oc blocks: dy is read in place here (no packing to share out), and the 1x1
      // 28x28x256->512 filter gradient at 2 threads took 0.94-0.95x the time with the threads
      // splitting the row tiles (each reading half of x's channels and all of dy) instead of the
      // oc panels (all of x, half of dy), batch 1 and 8 (1 thread: 1.00); NCHW 7x7x512->512
      // 0.92-0.96x; the other filter rows have one oc block already (model-0xa7 VM, session 25,
      // cli_ab --one-by-one, 5-7 rounds).
      t.filter_oc_blocks = false;
    }
    t.input_prefetch_dy = false;
    // Without the depthwise filter gradient's row prefetch (8 MB and more of x + dy): 0.72-0.82x
    // the time at batch 8, 1 and 2 threads (cli_ab, session 11); forced on at batch 1 it took
    // 1.37-1.48x.
    t.depthwise_filter_prefetch = false;
    // The few-c filter gradient prefetching the next segment's x rows (first pass) and dy (later
    // passes) into L2, dy >= 2 MiB: at batch 32 0.84-0.97x the time at 1 thread and 0.89-0.96x at
    // 2 on the 3x3 and 7x7 rows (the one-pass 3x3x3->16: 0.92x / 1.00x); batch 1 and 8 do not
    // prefetch (model-0xa7 VM, session 26, cli_ab --small-c). Below 2 MiB of dy (an L2 here) the
    // prefetches only cost: 1.02-1.03x the time at batch 1.
    t.filter_few_c_prefetch = true;
    t.filter_few_c_prefetch_bytes = int64_t{2} << 20;
    // The filter gradient's later tiles of a K chunk prefetching the next chunk's x and dy into L2
    // (x + dy >= 4 MiB, at most 1 MiB ahead): Keras 1x1 16x16x64->64 batch 32 0.84x the time at 1
    // thread, 0.95x at 2; 1x1 28x28x256->512 batch 8 0.96x / 0.98x; 3x3 56x56x64->64 s1 batch 8
    // 0.95x / 0.97x; the rest 0.98-1.01x (model-0xa7 VM, session 26, cli_ab 3 rounds). 1.5 MB
    // ahead pushed the chunk being read out of the 2 MiB L2 (3x3 56x56x64->128 s2 batch 8: 1.05x
    // the time; s1, 0.5 MB ahead: 0.95x).
    t.filter_chunk_prefetch = true;
    t.filter_chunk_prefetch_bytes = int64_t{4} << 20;
    t.filter_chunk_prefetch_ahead = int64_t{1} << 20;
    // FusedBatchNormGrad's dx pass last chunk first up to 16 MiB of dy + x: 0.95x the time at
    // batch 1 (56x56x256, 6.4 MB), 1 thread (2 threads: 0.97x); at batch 8 (51 MB) 1.02-1.05x,
    // so not there (cli_ab, session 12).
    t.bn_grad_dx_reverse_bytes = int64_t{16} << 20;
    // At 2 or more threads up to 64 MiB: batch 8 (51 MB) 0.96-0.97x the time at 2 threads
    // (model-0xa7 VM, session 25, cli_ab 7-9 rounds; at 1 thread 1.02x, so 16 MiB stays there).
    t.bn_grad_dx_reverse_bytes_mt = int64_t{64} << 20;
    // Its dx non-temporal from 1 MiB (the default 4 MiB left batch 1's 3.2 MB dx to normal
    // stores, which evict the dy + x lines the reversed pass and the next call reread from L2):
    // 0.84x the time at batch 1 (56x56x256), 1 thread; 256 KiB the same (cli_ab, session 13).
    t.bn_grad_stream_bytes = int64_t{1} << 20;
  }
  if (m == Microarch::skylake_server && isa == Isa::avx512) {
    // Cascade Lake (bench/results_xeon_clx.txt, session 15; paired CPU time, host loaded): 6x4
    // took 0.84-0.94x the time of 12x2 on the input gradients and 0.73-0.91x on the filter
    // gradients of every gradrt_bench conv row, 1 thread, batch 1 and 8. The avx2 unit took
    // 1.24-2.0x the avx512 time on those rows (the AVX-512 clock licence costs less than the
    // width gives). The forward Conv2D (3x3 56x56x64->64) with 6x4: 0.87-0.94x the time, 1 and 2
    // threads, batch 1 and 8.
    t.conv2d = t.backprop_input = t.backprop_filter = GemmTile{6, 4};
    // With 6x4, the filter gradient's wide K chunk (over 128 padded output channels) of 128
    // pixels: 1x1 28x28x256->512 0.90-0.96x the time of 256 (1 and 2 threads, batch 1 and 8;
    // one batch-1 run 1.03; 64: 0.97-1.18). The narrow chunk stays 512 (1024: 0.99-1.45x, 256:
    // 0.96-1.18x on the 3x3 rows).
    t.filter_k_wide = 128;
    // Without the input gradient's dy prefetch (as on Emerald Rapids): 0.88-1.09x the time, 23 of
    // 30 row runs below 1, median 0.97 (4 runs, 1 and 2 threads, batch 1 and 8; the last, 5
    // rounds at a lower load: 0.91-1.03, median 0.965).
    t.input_prefetch_dy = false;
    // Measured and left at the defaults (ties or losses): the depthwise filter prefetch
    // (dwf_pf=0: 0.95x s1, 1.32x s2 at batch 8), FusedBatchNormGrad's reversed dx pass
    // and NT from 1 MiB (0.90-1.08x, 0.94-1.10x: this L2 is 1 MiB), filter K slices, the 1x1
    // streaming input gradient, padded-dy row tiles and the few-c filter path (each off lost:
    // 1.15-1.45x, 1.4-5.8x, 1.01-1.06x, 6-8x).
  }
  return t;
}

// "N" or "N/KIB" (N >= 0; KIB in [0, 2^40], so that KIB << 10 stays in range): *kib = -1 without one.
bool value_and_kib(const std::string& val, int64_t* n, int64_t* kib) {
  long long a = -1, b = -1;
  char tail = 0;
  const int got = std::sscanf(val.c_str(), "%lld/%lld%c", &a, &b, &tail);
  if (got == 2) {
    if (a < 0 || b < 0 || b > (1LL << 40)) return false;
    *n = a, *kib = b;
    return true;
  }
  if (std::sscanf(val.c_str(), "%lld%c", &a, &tail) != 1 || a < 0) return false;
  *n = a, *kib = -1;
  return true;
}

// "KIB" in [0, 2^40] as bytes.
bool kib_bytes(const std::string& val, int64_t* bytes) {
  long long a = -1;
  char tail = 0;
  if (std::sscanf(val.c_str(), "%lld%c", &a, &tail) != 1 || a < 0 || a > (1LL << 40)) return false;
  *bytes = int64_t(a) << 10;
  return true;
}

bool apply_tiles_override(Isa isa, const char* spec, ConvTuning* out) {
  ConvTuning t = *out;
  const char* s = spec;
  while (*s) {
    const char* end = std::strchr(s, ',');
    const size_t n = end ? size_t(end - s) : std::strlen(s);
    const char* eq = static_cast<const char*>(std::memchr(s, '=', n));
    if (!eq) return false;
    const std::string key(s, size_t(eq - s));
    const char* v = eq + 1;
    const size_t vn = n - size_t(v - s);
    if (key == "input") {
      if (!parse_tile(v, vn, &t.backprop_input)) return false;
    } else if (key == "filter") {
      if (!parse_tile(v, vn, &t.backprop_filter)) return false;
    } else if (key == "conv2d") {
      if (!parse_tile(v, vn, &t.conv2d)) return false;
    } else if (key == "filter_k") {
      long long a = 0, b = 0;
      char tail = 0;
      if (std::sscanf(std::string(v, vn).c_str(), "%lld/%lld%c", &a, &b, &tail) != 2 || a < 1 || b < 1) return false;
      t.filter_k_narrow = a, t.filter_k_wide = b;
    } else if (key == "filter_split") {  // K slices: min pixels per slice / max KiB of partials / max dw tiles
      long long a = -1, b = -1, c = -1;
      char tail = 0;
      if (std::sscanf(std::string(v, vn).c_str(), "%lld/%lld/%lld%c", &a, &b, &c, &tail) != 3 || a < 0 || b < 0 || c < 0)
        return false;
      t.filter_split_pixels = a, t.filter_split_kib = b, t.filter_split_tiles = c;
    } else if (key == "filter_oc") {  // Conv2DBackpropFilter's oc blocks per thread
      const std::string val(v, vn);
      if (val != "0" && val != "1") return false;
      t.filter_oc_blocks = val == "1";
    } else if (key == "filter_few_c") {  // the few-input-channel path up to this many channels (0: off)
      long long a = -1;
      char tail = 0;
      if (std::sscanf(std::string(v, vn).c_str(), "%lld%c", &a, &tail) != 1 || a < 0) return false;
      t.filter_few_c_max = a;
    } else if (key == "filter_stack") {  // few-c path: whole filter rows stacked in one tile
      const std::string val(v, vn);
      if (val != "0" && val != "1") return false;
      t.filter_few_c_stack = val == "1";
    } else if (key == "few_c_pf") {  // few-c path: a segment's passes prefetch the next segment
      const std::string val(v, vn);
      if (val != "0" && val != "1") return false;
      t.filter_few_c_prefetch = val == "1";
    } else if (key == "chunk_pf") {  // filter gradient: a K chunk's later tiles prefetch the next one
      // 0 | 1 | 1/FROM_KIB/AHEAD_KIB[/MIN_FLOPS_PER_LINE] (x + dy from which it runs, most KiB ahead)
      long long f[4] = {-1, -1, -1, -1};
      char tail = 0;
      const std::string val(v, vn);
      const int got = std::sscanf(val.c_str(), "%lld/%lld/%lld/%lld%c", &f[0], &f[1], &f[2], &f[3], &tail);
      if ((got != 1 && got != 3 && got != 4) || (f[0] != 0 && f[0] != 1) ||
          val.find_first_not_of("0123456789/") != std::string::npos || val.back() == '/')
        return false;
      t.filter_chunk_prefetch = f[0] == 1;
      if (got >= 3) {
        t.filter_chunk_prefetch_bytes = int64_t(f[1]) << 10;
        t.filter_chunk_prefetch_ahead = int64_t(f[2]) << 10;
      }
      if (got == 4) t.filter_chunk_prefetch_min_flops = f[3];
    } else if (key == "input_stream") {  // the 1x1 streaming input gradient up to this many dx channels (0: off)
      long long a = -1;
      char tail = 0;
      if (std::sscanf(std::string(v, vn).c_str(), "%lld%c", &a, &tail) != 1 || a < 0) return false;
      t.input_stream_max = a;
    } else if (key == "stream_pf") {  // the 1x1 streaming input gradient prefetches the next tile's dy
      const std::string val(v, vn);
      if (val != "0" && val != "1") return false;
      t.input_stream_prefetch = val == "1";
    } else if (key == "input_fit") {
      const std::string val(v, vn);
      if (val != "0" && val != "1") return false;
      t.input_fit_columns = val == "1";
    } else if (key == "input_pad") {
      const std::string val(v, vn);
      if (val != "0" && val != "1") return false;
      t.input_pad_dy = val == "1";
    } else if (key == "input_rows") {  // padded dy: row tiles that drop the border's filter rows
      const std::string val(v, vn);
      if (val != "0" && val != "1") return false;
      t.input_pad_rows = val == "1";
    } else if (key == "input_groups") {  // edge groups: tiles of pixels with the same valid taps
      const std::string val(v, vn);
      if (val != "0" && val != "1") return false;
      t.input_edge_groups = val == "1";
    } else if (key == "input_pf") {
      const std::string val(v, vn);
      if (val != "0" && val != "1") return false;
      t.input_prefetch_dy = val == "1";
    } else if (key == "input_dxpf") {  // 0 | 1 | 1/FROM_KIB (of dx)
      int64_t on = 0, from = -1;
      if (!value_and_kib(std::string(v, vn), &on, &from) || on > 1 || (on == 0 && from >= 0)) return false;
      t.input_prefetch_dx = on == 1;
      if (from >= 0) t.input_prefetch_dx_bytes = from << 10;
    } else if (key == "input_kb") {  // K (0: off) | K/FROM_KIB (of dy)
      int64_t k = 0, from = -1;
      if (!value_and_kib(std::string(v, vn), &k, &from) || k > (int64_t{1} << 30)) return false;
      t.input_k_block = k;
      if (from >= 0) t.input_k_block_bytes = from << 10;
    } else if (key == "bn_rev") {  // FusedBatchNormGrad dx pass last chunk first up to this many KiB of dy + x
      // KIB (any thread count) or KIB/KIB_ON_2_OR_MORE_THREADS
      int64_t a = 0, b = -1;
      if (!value_and_kib(std::string(v, vn), &a, &b) || a > (int64_t{1} << 40)) return false;
      t.bn_grad_dx_reverse_bytes = a << 10;
      t.bn_grad_dx_reverse_bytes_mt = b >= 0 ? b << 10 : -1;
    } else if (key == "bn_stream") {  // FusedBatchNormGrad dx non-temporal from this many KiB (0: never)
      if (!kib_bytes(std::string(v, vn), &t.bn_grad_stream_bytes)) return false;
    } else if (key == "dwx_stream") {  // depthwise input gradient dx non-temporal from this many KiB (0: never)
      if (!kib_bytes(std::string(v, vn), &t.dw_input_stream_bytes)) return false;
    } else if (key == "bn_rows") {  // batch-norm sums over whole rows from this many KiB of input (0: never)
      if (!kib_bytes(std::string(v, vn), &t.bn_whole_rows_bytes)) return false;
    } else if (key == "dwf_pf") {
      const std::string val(v, vn);
      if (val != "0" && val != "1") return false;
      t.depthwise_filter_prefetch = val == "1";
    } else {
      return false;
    }
    s += n;
    if (*s == ',') ++s;
  }
  if (!tiles_built(isa, t)) return false;
  *out = t;
  return true;
}

std::string describe(const ConvTuning& t) {
  const auto kib = [](int64_t bytes) { return std::to_string(bytes >> 10); };
  const std::string min_flops = t.filter_chunk_prefetch_min_flops > 0
                                    ? ", " + std::to_string(t.filter_chunk_prefetch_min_flops) + " FLOP per line"
                                    : "";
  const std::string chunk_pf = t.filter_chunk_prefetch
                                   ? " (next chunk prefetched from " + kib(t.filter_chunk_prefetch_bytes) +
                                         " KiB of x + dy, up to " + kib(t.filter_chunk_prefetch_ahead) + " KiB" +
                                         min_flops + ")"
                                   : "";
  const std::string input_more =
      (t.input_prefetch_dx ? ", input dx prefetch from " + kib(t.input_prefetch_dx_bytes) + " KiB" : std::string()) +
      (t.input_k_block > 0 ? ", input K blocks of " + std::to_string(t.input_k_block) + " from " +
                                 kib(t.input_k_block_bytes) + " KiB of dy"
                           : std::string()) +
      (t.bn_whole_rows_bytes > 0 ? ", batch-norm sums over whole rows from " + kib(t.bn_whole_rows_bytes) + " KiB"
                                 : std::string()) +
      (t.dw_input_stream_bytes > 0 ? ", depthwise input s2 dx NT from " + kib(t.dw_input_stream_bytes) + " KiB"
                                   : std::string());
  const std::string few_c_pf = t.filter_few_c_prefetch
                                   ? " (next segment prefetched from " + kib(t.filter_few_c_prefetch_bytes) + " KiB of dy)"
                                   : "";
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "input %dx%d%s, filter %dx%d, conv2d %dx%d, filter K %lld/%lld%s, filter K slices %lld/%lld/%lld, filter oc blocks %s, input dy prefetch %s, filter few-c to %lld%s%s, "
                "depthwise filter prefetch %s, batch-norm dx NT from %lld KiB, reversed to %lld KiB (%lld on 2+ threads), "
                "input 1x1 stream to %lld (prefetch %s), input edge groups %s, input dy pad %s%s%s",
                t.backprop_input.rows, t.backprop_input.vectors,
                t.input_fit_columns ? " (fit to dx channels)" : "", t.backprop_filter.rows, t.backprop_filter.vectors,
                t.conv2d.rows, t.conv2d.vectors, static_cast<long long>(t.filter_k_narrow),
                static_cast<long long>(t.filter_k_wide), chunk_pf.c_str(),
                static_cast<long long>(t.filter_split_pixels),
                static_cast<long long>(t.filter_split_kib), static_cast<long long>(t.filter_split_tiles), t.filter_oc_blocks ? "on" : "off",
                t.input_prefetch_dy ? "on" : "off",
                static_cast<long long>(t.filter_few_c_max),
                t.filter_few_c_stack ? " (rows stacked)" : "", few_c_pf.c_str(),
                t.depthwise_filter_prefetch ? "on" : "off",
                static_cast<long long>(t.bn_grad_stream_bytes >> 10), static_cast<long long>(t.bn_grad_dx_reverse_bytes >> 10),
                static_cast<long long>(t.bn_reverse_bytes(2) >> 10),
                static_cast<long long>(t.input_stream_max),
                t.input_stream_prefetch ? "on" : "off", t.input_edge_groups ? "on" : "off", t.input_pad_dy ? "on" : "off",
                t.input_pad_dy && t.input_pad_rows ? " (row tiles)" : "", input_more.c_str());
  return buf;
}

}  // namespace gradrt::simd
