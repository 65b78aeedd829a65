#include "convert.h"

#include <algorithm>
#include <atomic>
#include <type_traits>

#include "half.h"
#include "parallel.h"

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__)) && !defined(__EMSCRIPTEN__)
#define GRADRT_CONVERT_X86 1
#include <immintrin.h>
#else
#define GRADRT_CONVERT_X86 0
#endif

namespace gradrt {
namespace {

// A storage type's codec: S its element; in<T> reads one as the compute type T, out<T>
// writes one back. Each is the scalar rule the public float_to_half & co. define.
struct Half {
  using S = uint16_t;
  template <class T> static T in(S v) { return static_cast<T>(float_from_half(v)); }
  template <class T> static S out(T v) { return half_bits(static_cast<float>(v)); }
};
struct BFloat {
  using S = uint16_t;
  template <class T> static T in(S v) { return static_cast<T>(float_from_bfloat16(v)); }
  template <class T> static S out(T v) { return bfloat16_bits(static_cast<float>(v)); }
};
// float32 storage under T=bfloat16: every value rounded to bfloat16, kept as float.
struct RoundedFloat {
  using S = float;
  static float round(float v) { return float_from_bfloat16(bfloat16_bits(v)); }
  template <class T> static T in(S v) { return static_cast<T>(round(v)); }
  template <class T> static S out(T v) { return round(static_cast<float>(v)); }
};
template <class P>
struct Plain {
  using S = P;
  template <class T> static T in(S v) { return static_cast<T>(v); }
  template <class T> static S out(T v) { return static_cast<S>(v); }
};

// ---- portable loops

template <class C, class T>
void flat_in(const typename C::S* src, int64_t n, T* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = C::template in<T>(src[i]);
}
template <class C, class T>
void flat_out(const T* src, int64_t n, typename C::S* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = C::template out<T>(src[i]);
}

// One tile of a plane: channels [c0, c1) x positions [s0, s1). The channels-first plane
// holds element (c, s) at c * inner + s, the channels-last one at s * channels + c.
template <class C, class T>
void tile_in(const typename C::S* plane, int64_t inner, T* out, int64_t channels, int64_t c0, int64_t c1, int64_t s0,
             int64_t s1) {
  for (int64_t s = s0; s < s1; ++s)
    for (int64_t c = c0; c < c1; ++c) out[s * channels + c] = C::template in<T>(plane[c * inner + s]);
}
template <class C, class T>
void tile_out(const T* in, int64_t channels, typename C::S* plane, int64_t inner, int64_t c0, int64_t c1, int64_t s0,
              int64_t s1) {
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t s = s0; s < s1; ++s) plane[c * inner + s] = C::template out<T>(in[s * channels + c]);
}

// Positions [s0, s1) of one plane, in square tiles small enough that the rows a tile reads
// and writes stay in L1.
constexpr int64_t kTile = 16;
template <class C, class T>
void block_in(const typename C::S* plane, int64_t inner, T* out, int64_t channels, int64_t s0, int64_t s1) {
  for (int64_t sb = s0; sb < s1; sb += kTile)
    for (int64_t cb = 0; cb < channels; cb += kTile)
      tile_in<C>(plane, inner, out, channels, cb, std::min(cb + kTile, channels), sb, std::min(sb + kTile, s1));
}
template <class C, class T>
void block_out(const T* in, int64_t channels, typename C::S* plane, int64_t inner, int64_t s0, int64_t s1) {
  for (int64_t sb = s0; sb < s1; sb += kTile)
    for (int64_t cb = 0; cb < channels; cb += kTile)
      tile_out<C>(in, channels, plane, inner, cb, std::min(cb + kTile, channels), sb, std::min(sb + kTile, s1));
}

// ---- x86-64: 8x8 tiles with AVX2, half <-> float with F16C (chosen at run time)

#if GRADRT_CONVERT_X86
#define GRADRT_TILE_ISA __attribute__((target("avx2,f16c")))

template <class C>
constexpr bool kVectorCodec = std::is_same_v<C, Half> || std::is_same_v<C, BFloat> ||
                              std::is_same_v<C, RoundedFloat> || std::is_same_v<C, Plain<float>>;

// Each 32-bit lane: the bfloat16 bits of the lane's float in its low half, rounded to
// nearest even; a NaN keeps its top bits and gets the quiet bit (bfloat16_bits).
GRADRT_TILE_ISA inline __m256i bfloat16_bits8(__m256 v) {
  const __m256i x = _mm256_castps_si256(v);
  const __m256i hi = _mm256_srli_epi32(x, 16);
  const __m256i bias = _mm256_add_epi32(_mm256_set1_epi32(0x7fff), _mm256_and_si256(hi, _mm256_set1_epi32(1)));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(x, bias), 16);
  const __m256i quiet = _mm256_or_si256(hi, _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}
GRADRT_TILE_ISA inline bool any_nan(__m256 v) { return _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0; }

GRADRT_TILE_ISA inline __m256 load8(Plain<float>, const float* p) { return _mm256_loadu_ps(p); }
GRADRT_TILE_ISA inline __m256 load8(RoundedFloat, const float* p) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(bfloat16_bits8(_mm256_loadu_ps(p)), 16));
}
GRADRT_TILE_ISA inline __m256 load8(BFloat, const uint16_t* p) {
  const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
GRADRT_TILE_ISA inline __m256 load8(Half, const uint16_t* p) {
  __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  if (any_nan(v)) {  // F16C quiets a signalling NaN; the scalar rule keeps its payload as is
    alignas(32) float f[8];
    for (int k = 0; k < 8; ++k) f[k] = float_from_half(p[k]);
    v = _mm256_load_ps(f);
  }
  return v;
}

GRADRT_TILE_ISA inline void store8(Plain<float>, float* p, __m256 v) { _mm256_storeu_ps(p, v); }
GRADRT_TILE_ISA inline void store8(RoundedFloat, float* p, __m256 v) {
  _mm256_storeu_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(bfloat16_bits8(v), 16)));
}
GRADRT_TILE_ISA inline void store8(BFloat, uint16_t* p, __m256 v) {
  const __m256i b = bfloat16_bits8(v);  // < 2^16 per lane: packus keeps it
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(b, b), 0x08);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
}
GRADRT_TILE_ISA inline void store8(Half, uint16_t* p, __m256 v) {
  if (any_nan(v)) {  // F16C keeps NaN payload bits; the scalar rule writes sign | 0x7e00
    alignas(32) float f[8];
    _mm256_store_ps(f, v);
    for (int k = 0; k < 8; ++k) p[k] = half_bits(f[k]);
    return;
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// r[k] lane j -> r[j] lane k.
GRADRT_TILE_ISA inline void transpose8(__m256* r) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

template <class C>
GRADRT_TILE_ISA void vector_flat_in(const typename C::S* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load8(C{}, src + i));
  flat_in<C>(src + i, n - i, dst + i);
}
template <class C>
GRADRT_TILE_ISA void vector_flat_out(const float* src, int64_t n, typename C::S* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) store8(C{}, dst + i, _mm256_loadu_ps(src + i));
  flat_out<C>(src + i, n - i, dst + i);
}

// block_in/out with 8x8 tiles: eight channel rows of 8 positions are loaded (converted),
// transposed in registers and stored as eight position rows of 8 channels. Edges that do
// not fill a tile take the portable tile loops.
constexpr int64_t kSpan = 64;  // positions per pass over the channels
template <class C>
GRADRT_TILE_ISA void vector_block_in(const typename C::S* plane, int64_t inner, float* out, int64_t channels,
                                     int64_t s0, int64_t s1) {
  const int64_t c8 = channels / 8 * 8;
  for (int64_t sb = s0; sb < s1; sb += kSpan) {
    const int64_t se = std::min(sb + kSpan, s1), s8 = sb + (se - sb) / 8 * 8;
    for (int64_t c = 0; c < c8; c += 8)
      for (int64_t s = sb; s < s8; s += 8) {
        __m256 r[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) r[k] = load8(C{}, plane + (c + k) * inner + s);
        transpose8(r);
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) _mm256_storeu_ps(out + (s + k) * channels + c, r[k]);
      }
    if (s8 < se) tile_in<C>(plane, inner, out, channels, 0, c8, s8, se);
    if (c8 < channels) tile_in<C>(plane, inner, out, channels, c8, channels, sb, se);
  }
}
template <class C>
GRADRT_TILE_ISA void vector_block_out(const float* in, int64_t channels, typename C::S* plane, int64_t inner,
                                      int64_t s0, int64_t s1) {
  const int64_t c8 = channels / 8 * 8;
  for (int64_t sb = s0; sb < s1; sb += kSpan) {
    const int64_t se = std::min(sb + kSpan, s1), s8 = sb + (se - sb) / 8 * 8;
    for (int64_t c = 0; c < c8; c += 8)
      for (int64_t s = sb; s < s8; s += 8) {
        __m256 r[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(in + (s + k) * channels + c);
        transpose8(r);
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) store8(C{}, plane + (c + k) * inner + s, r[k]);
      }
    if (s8 < se) tile_out<C>(in, channels, plane, inner, 0, c8, s8, se);
    if (c8 < channels) tile_out<C>(in, channels, plane, inner, c8, channels, sb, se);
  }
}

bool vector_tiles_available() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return yes;
}
#else
template <class C>
constexpr bool kVectorCodec = false;
bool vector_tiles_available() { return false; }
#endif

std::atomic<bool> vector_tiles_enabled{true};

// Whether codec C with compute type T takes the vector tiles on this call.
template <class C, class T>
bool use_vector() {
  if constexpr (std::is_same_v<T, float> && kVectorCodec<C>)
    return vector_tiles_enabled.load(std::memory_order_relaxed) && vector_tiles_available();
  return false;
}

// ---- drivers: the pool splits planes into runs of positions (or flat data into runs)

constexpr int64_t kChunkElements = int64_t{1} << 16;  // per parallel_for chunk
constexpr int64_t kChunkPositions = 256;

template <class F>
void for_runs(const Exec& exec, const ChannelsFirst& cf, F run) {
  const int64_t per_plane = (cf.inner + kChunkPositions - 1) / kChunkPositions;
  const int64_t grain = std::max<int64_t>(1, kChunkElements / std::max<int64_t>(1, kChunkPositions * cf.channels));
  parallel_for(exec, cf.outer * per_plane, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t o = i / per_plane, s0 = i % per_plane * kChunkPositions;
      run(o, s0, std::min(s0 + kChunkPositions, cf.inner));
    }
  });
}

template <class C, class T>
void run_in(const Exec& exec, const typename C::S* src, int64_t n, const ChannelsFirst* cf, T* dst) {
  const bool vec = use_vector<C, T>();
  if (!cf) {
    parallel_for(exec, n, kChunkElements, [&](int64_t b, int64_t e) {
#if GRADRT_CONVERT_X86
      if constexpr (std::is_same_v<T, float> && kVectorCodec<C>)
        if (vec) return vector_flat_in<C>(src + b, e - b, dst + b);
#endif
      flat_in<C>(src + b, e - b, dst + b);
    });
    return;
  }
  const int64_t plane = cf->channels * cf->inner;
  for_runs(exec, *cf, [&](int64_t o, int64_t s0, int64_t s1) {
#if GRADRT_CONVERT_X86
    if constexpr (std::is_same_v<T, float> && kVectorCodec<C>)
      if (vec) return vector_block_in<C>(src + o * plane, cf->inner, dst + o * plane, cf->channels, s0, s1);
#endif
    block_in<C>(src + o * plane, cf->inner, dst + o * plane, cf->channels, s0, s1);
  });
  (void)vec;
}

template <class C, class T>
void run_out(const Exec& exec, const T* src, int64_t n, const ChannelsFirst* cf, typename C::S* dst) {
  const bool vec = use_vector<C, T>();
  if (!cf) {
    parallel_for(exec, n, kChunkElements, [&](int64_t b, int64_t e) {
#if GRADRT_CONVERT_X86
      if constexpr (std::is_same_v<T, float> && kVectorCodec<C>)
        if (vec) return vector_flat_out<C>(src + b, e - b, dst + b);
#endif
      flat_out<C>(src + b, e - b, dst + b);
    });
    return;
  }
  const int64_t plane = cf->channels * cf->inner;
  for_runs(exec, *cf, [&](int64_t o, int64_t s0, int64_t s1) {
#if GRADRT_CONVERT_X86
    if constexpr (std::is_same_v<T, float> && kVectorCodec<C>)
      if (vec) return vector_block_out<C>(src + o * plane, cf->channels, dst + o * plane, cf->inner, s0, s1);
#endif
    block_out<C>(src + o * plane, cf->channels, dst + o * plane, cf->inner, s0, s1);
  });
  (void)vec;
}

}  // namespace

bool set_convert_vector_tiles(bool enabled) {
  vector_tiles_enabled.store(enabled);
  return vector_tiles_available();
}

template <class T>
void convert_in(const Exec& exec, const void* src, DType from, int64_t n, const ChannelsFirst* cf, bool round_bf16,
                T* dst) {
  if (n <= 0) return;
  switch (from) {
    case DType::float16: return run_in<Half>(exec, static_cast<const uint16_t*>(src), n, cf, dst);
    case DType::bfloat16: return run_in<BFloat>(exec, static_cast<const uint16_t*>(src), n, cf, dst);
    case DType::float32:
      if (round_bf16) return run_in<RoundedFloat>(exec, static_cast<const float*>(src), n, cf, dst);
      return run_in<Plain<float>>(exec, static_cast<const float*>(src), n, cf, dst);
    case DType::float64: return run_in<Plain<double>>(exec, static_cast<const double*>(src), n, cf, dst);
    case DType::int32: return run_in<Plain<int32_t>>(exec, static_cast<const int32_t*>(src), n, cf, dst);
    case DType::int64: return run_in<Plain<int64_t>>(exec, static_cast<const int64_t*>(src), n, cf, dst);
  }
}

template <class T>
void convert_out(const Exec& exec, const T* src, void* dst, DType to, int64_t n, const ChannelsFirst* cf,
                 bool round_bf16) {
  if (n <= 0) return;
  switch (to) {
    case DType::float16: return run_out<Half>(exec, src, n, cf, static_cast<uint16_t*>(dst));
    case DType::bfloat16: return run_out<BFloat>(exec, src, n, cf, static_cast<uint16_t*>(dst));
    case DType::float32:
      if (round_bf16) return run_out<RoundedFloat>(exec, src, n, cf, static_cast<float*>(dst));
      return run_out<Plain<float>>(exec, src, n, cf, static_cast<float*>(dst));
    case DType::float64: return run_out<Plain<double>>(exec, src, n, cf, static_cast<double*>(dst));
    case DType::int32: return run_out<Plain<int32_t>>(exec, src, n, cf, static_cast<int32_t*>(dst));
    case DType::int64: return run_out<Plain<int64_t>>(exec, src, n, cf, static_cast<int64_t*>(dst));
  }
}

template void convert_in<float>(const Exec&, const void*, DType, int64_t, const ChannelsFirst*, bool, float*);
template void convert_in<double>(const Exec&, const void*, DType, int64_t, const ChannelsFirst*, bool, double*);
template void convert_out<float>(const Exec&, const float*, void*, DType, int64_t, const ChannelsFirst*, bool);
template void convert_out<double>(const Exec&, const double*, void*, DType, int64_t, const ChannelsFirst*, bool);

}  // namespace gradrt
