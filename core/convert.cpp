#include "convert.h"

#include <algorithm>
#include <atomic>
#include <type_traits>

#include "half.h"
#include "parallel.h"

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__)) && !defined(__EMSCRIPTEN__)
#define GRADRT_CONVERT_X86 1
#include <cpuid.h>
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
  // F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports has no "f16c".
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __builtin_cpu_supports("avx2") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
  }();
  return yes;
}
#else
template <class C>
constexpr bool kVectorCodec = false;
bool vector_tiles_available() { return false; }
// Never called here (kVectorCodec is false): declared so that the drivers compile unchanged.
template <class C> void vector_flat_in(const typename C::S*, int64_t, float*);
template <class C> void vector_flat_out(const float*, int64_t, typename C::S*);
template <class C> void vector_block_in(const typename C::S*, int64_t, float*, int64_t, int64_t, int64_t);
template <class C> void vector_block_out(const float*, int64_t, typename C::S*, int64_t, int64_t, int64_t);
#endif

template <class C, class T>
constexpr bool kVector = std::is_same_v<T, float> && kVectorCodec<C>;

std::atomic<bool> vector_tiles_enabled{true};

// The two directions as policies of one driver. In: channels-first storage S to
// channels-last compute T; Out: the reverse. `vec`: take the vector tiles.
template <class C, class T>
struct In {
  using Src = typename C::S;
  using Dst = T;
  static void flat(const Src* s, int64_t n, Dst* d, bool vec) {
    if constexpr (kVector<C, T>)
      if (vec) return vector_flat_in<C>(s, n, d);
    flat_in<C>(s, n, d);
  }
  static void block(const Src* s, Dst* d, const ChannelsFirst& cf, int64_t s0, int64_t s1, bool vec) {
    if constexpr (kVector<C, T>)
      if (vec) return vector_block_in<C>(s, cf.inner, d, cf.channels, s0, s1);
    block_in<C>(s, cf.inner, d, cf.channels, s0, s1);
  }
};
template <class C, class T>
struct Out {
  using Src = T;
  using Dst = typename C::S;
  static void flat(const Src* s, int64_t n, Dst* d, bool vec) {
    if constexpr (kVector<C, T>)
      if (vec) return vector_flat_out<C>(s, n, d);
    flat_out<C>(s, n, d);
  }
  static void block(const Src* s, Dst* d, const ChannelsFirst& cf, int64_t s0, int64_t s1, bool vec) {
    if constexpr (kVector<C, T>)
      if (vec) return vector_block_out<C>(s, cf.channels, d, cf.inner, s0, s1);
    block_out<C>(s, cf.channels, d, cf.inner, s0, s1);
  }
};

// The pool splits flat data into runs of elements, planes into runs of positions.
constexpr int64_t kChunkElements = int64_t{1} << 16;  // per parallel_for chunk
constexpr int64_t kChunkPositions = 256;

template <class C, class T, template <class, class> class Dir>
void run(const Exec& exec, const typename Dir<C, T>::Src* src, int64_t n, const ChannelsFirst* cf,
         typename Dir<C, T>::Dst* dst) {
  const bool vec = kVector<C, T> && vector_tiles_enabled.load(std::memory_order_relaxed) && vector_tiles_available();
  if (!cf) {
    parallel_for(exec, n, kChunkElements, [&](int64_t b, int64_t e) { Dir<C, T>::flat(src + b, e - b, dst + b, vec); });
    return;
  }
  const int64_t plane = cf->channels * cf->inner;
  const int64_t per_plane = (cf->inner + kChunkPositions - 1) / kChunkPositions;
  const int64_t grain = std::max<int64_t>(1, kChunkElements / std::max<int64_t>(1, kChunkPositions * cf->channels));
  parallel_for(exec, cf->outer * per_plane, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t o = i / per_plane, s0 = i % per_plane * kChunkPositions;
      Dir<C, T>::block(src + o * plane, dst + o * plane, *cf, s0, std::min(s0 + kChunkPositions, cf->inner), vec);
    }
  });
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
    case DType::float16: return run<Half, T, In>(exec, static_cast<const uint16_t*>(src), n, cf, dst);
    case DType::bfloat16: return run<BFloat, T, In>(exec, static_cast<const uint16_t*>(src), n, cf, dst);
    case DType::float32:
      if (round_bf16) return run<RoundedFloat, T, In>(exec, static_cast<const float*>(src), n, cf, dst);
      return run<Plain<float>, T, In>(exec, static_cast<const float*>(src), n, cf, dst);
    case DType::float64: return run<Plain<double>, T, In>(exec, static_cast<const double*>(src), n, cf, dst);
    case DType::int32: return run<Plain<int32_t>, T, In>(exec, static_cast<const int32_t*>(src), n, cf, dst);
    case DType::int64: return run<Plain<int64_t>, T, In>(exec, static_cast<const int64_t*>(src), n, cf, dst);
  }
}

template <class T>
void convert_out(const Exec& exec, const T* src, void* dst, DType to, int64_t n, const ChannelsFirst* cf,
                 bool round_bf16) {
  if (n <= 0) return;
  switch (to) {
    case DType::float16: return run<Half, T, Out>(exec, src, n, cf, static_cast<uint16_t*>(dst));
    case DType::bfloat16: return run<BFloat, T, Out>(exec, src, n, cf, static_cast<uint16_t*>(dst));
    case DType::float32:
      if (round_bf16) return run<RoundedFloat, T, Out>(exec, src, n, cf, static_cast<float*>(dst));
      return run<Plain<float>, T, Out>(exec, src, n, cf, static_cast<float*>(dst));
    case DType::float64: return run<Plain<double>, T, Out>(exec, src, n, cf, static_cast<double*>(dst));
    case DType::int32: return run<Plain<int32_t>, T, Out>(exec, src, n, cf, static_cast<int32_t*>(dst));
    case DType::int64: return run<Plain<int64_t>, T, Out>(exec, src, n, cf, static_cast<int64_t*>(dst));
  }
}

template void convert_in<float>(const Exec&, const void*, DType, int64_t, const ChannelsFirst*, bool, float*);
template void convert_in<double>(const Exec&, const void*, DType, int64_t, const ChannelsFirst*, bool, double*);
template void convert_out<float>(const Exec&, const float*, void*, DType, int64_t, const ChannelsFirst*, bool);
template void convert_out<double>(const Exec&, const double*, void*, DType, int64_t, const ChannelsFirst*, bool);

}  // namespace gradrt
