#include "convert.h"

#include <algorithm>
#include <atomic>
#include <type_traits>
#include <utility>

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

// ---- the two directions

// In: storage C::S (channels first when transposing) to compute T (channels last); Out: the
// reverse. Every loop below is written once over a direction D: `get` converts one element,
// SrcCodec/DstCodec say how 8 floats are read and written (x86).
template <class C, class T>
struct In {
  using Codec = C;
  using Compute = T;
  using Src = typename C::S;
  using Dst = T;
  using SrcCodec = C;
  using DstCodec = Plain<float>;
  static constexpr bool kSrcChannelsFirst = true;
  static Dst get(Src v) { return C::template in<T>(v); }
};
template <class C, class T>
struct Out {
  using Codec = C;
  using Compute = T;
  using Src = T;
  using Dst = typename C::S;
  using SrcCodec = Plain<float>;
  using DstCodec = C;
  static constexpr bool kSrcChannelsFirst = false;
  static Dst get(Src v) { return C::template out<T>(v); }
};

// Each plane is transposed: source element (a, b), at a * src_row + b, lands at
// b * dst_row + a. In: a is the channel and b the position (src_row = inner, dst_row =
// channels); Out: a is the position and b the channel (src_row = channels, dst_row = inner).
template <class D>
std::pair<int64_t, int64_t> rows(const ChannelsFirst& cf) {  // {src_row, dst_row}
  if constexpr (D::kSrcChannelsFirst) return {cf.inner, cf.channels};
  else return {cf.channels, cf.inner};
}
template <class D>
int64_t channels_of(int64_t src_row, int64_t dst_row) {
  return D::kSrcChannelsFirst ? dst_row : src_row;
}
// Channel c, position s as source row a, column b.
struct At {
  int64_t a, b;
};
template <class D>
At at(int64_t c, int64_t s) {
  if constexpr (D::kSrcChannelsFirst) return {c, s};
  else return {s, c};
}

// ---- portable loops

template <class D>
void flat(const typename D::Src* src, int64_t n, typename D::Dst* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = D::get(src[i]);
}

// One tile, walked along the destination's rows.
template <class D>
void tile(const typename D::Src* src, int64_t src_row, typename D::Dst* dst, int64_t dst_row, int64_t c0, int64_t c1,
          int64_t s0, int64_t s1) {
  const At lo = at<D>(c0, s0), hi = at<D>(c1, s1);
  for (int64_t b = lo.b; b < hi.b; ++b)
    for (int64_t a = lo.a; a < hi.a; ++a) dst[b * dst_row + a] = D::get(src[a * src_row + b]);
}

// Positions [s0, s1) of one plane, in square tiles small enough that the rows a tile reads
// and writes stay in L1.
constexpr int64_t kTile = 16;
template <class D>
void block(const typename D::Src* src, int64_t src_row, typename D::Dst* dst, int64_t dst_row, int64_t s0,
           int64_t s1) {
  const int64_t channels = channels_of<D>(src_row, dst_row);
  for (int64_t sb = s0; sb < s1; sb += kTile)
    for (int64_t cb = 0; cb < channels; cb += kTile)
      tile<D>(src, src_row, dst, dst_row, cb, std::min(cb + kTile, channels), sb, std::min(sb + kTile, s1));
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

template <class D>
GRADRT_TILE_ISA void vector_flat(const typename D::Src* src, int64_t n, typename D::Dst* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) store8(typename D::DstCodec{}, dst + i, load8(typename D::SrcCodec{}, src + i));
  flat<D>(src + i, n - i, dst + i);
}

// block with 8x8 tiles: eight source rows of 8 are loaded (converted), transposed in
// registers and stored as eight destination rows of 8 (converted). Edges that do not fill
// a tile take the portable tile loops.
constexpr int64_t kSpan = 64;  // positions per pass over the channels
template <class D>
GRADRT_TILE_ISA void vector_block(const typename D::Src* src, int64_t src_row, typename D::Dst* dst, int64_t dst_row,
                                  int64_t s0, int64_t s1) {
  const int64_t channels = channels_of<D>(src_row, dst_row);
  const int64_t c8 = channels / 8 * 8;
  for (int64_t sb = s0; sb < s1; sb += kSpan) {
    const int64_t se = std::min(sb + kSpan, s1), s8 = sb + (se - sb) / 8 * 8;
    for (int64_t c = 0; c < c8; c += 8)
      for (int64_t s = sb; s < s8; s += 8) {
        const At t = at<D>(c, s);
        __m256 r[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) r[k] = load8(typename D::SrcCodec{}, src + (t.a + k) * src_row + t.b);
        transpose8(r);
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) store8(typename D::DstCodec{}, dst + (t.b + k) * dst_row + t.a, r[k]);
      }
    if (s8 < se) tile<D>(src, src_row, dst, dst_row, 0, c8, s8, se);
    if (c8 < channels) tile<D>(src, src_row, dst, dst_row, c8, channels, sb, se);
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
template <class D> void vector_flat(const typename D::Src*, int64_t, typename D::Dst*);
template <class D>
void vector_block(const typename D::Src*, int64_t, typename D::Dst*, int64_t, int64_t, int64_t);
#endif

template <class D>
constexpr bool kVector = std::is_same_v<typename D::Compute, float> && kVectorCodec<typename D::Codec>;

std::atomic<bool> vector_tiles_enabled{true};

// One run of elements or of a plane's positions, on the vector tiles when `vec`.
template <class D>
void convert_flat(const typename D::Src* s, int64_t n, typename D::Dst* d, bool vec) {
  if constexpr (kVector<D>)
    if (vec) return vector_flat<D>(s, n, d);
  flat<D>(s, n, d);
}
template <class D>
void convert_block(const typename D::Src* s, typename D::Dst* d, const ChannelsFirst& cf, int64_t s0, int64_t s1,
                   bool vec) {
  const auto [src_row, dst_row] = rows<D>(cf);
  if constexpr (kVector<D>)
    if (vec) return vector_block<D>(s, src_row, d, dst_row, s0, s1);
  block<D>(s, src_row, d, dst_row, s0, s1);
}

// The pool splits flat data into runs of elements, planes into runs of positions.
constexpr int64_t kChunkElements = int64_t{1} << 16;  // per parallel_for chunk
constexpr int64_t kChunkPositions = 256;

template <class D>
void run(const Exec& exec, const typename D::Src* src, int64_t n, const ChannelsFirst* cf, typename D::Dst* dst) {
  const bool vec = kVector<D> && vector_tiles_enabled.load(std::memory_order_relaxed) && vector_tiles_available();
  if (!cf) {
    parallel_for(exec, n, kChunkElements, [&](int64_t b, int64_t e) { convert_flat<D>(src + b, e - b, dst + b, vec); });
    return;
  }
  const int64_t plane = cf->channels * cf->inner;
  const int64_t per_plane = (cf->inner + kChunkPositions - 1) / kChunkPositions;
  const int64_t grain = std::max<int64_t>(1, kChunkElements / std::max<int64_t>(1, kChunkPositions * cf->channels));
  parallel_for(exec, cf->outer * per_plane, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t o = i / per_plane, s0 = i % per_plane * kChunkPositions;
      convert_block<D>(src + o * plane, dst + o * plane, *cf, s0, std::min(s0 + kChunkPositions, cf->inner), vec);
    }
  });
}

// One dtype dispatch for either direction: Dir<codec of the `stored` dtype, T>.
template <template <class, class> class Dir, class T>
void run_stored(const Exec& exec, DType stored, bool round_bf16, const void* src, int64_t n, const ChannelsFirst* cf,
                void* dst) {
  if (n <= 0) return;
  const auto go = [&](auto codec) {
    using D = Dir<decltype(codec), T>;
    run<D>(exec, static_cast<const typename D::Src*>(src), n, cf, static_cast<typename D::Dst*>(dst));
  };
  switch (stored) {
    case DType::float16: return go(Half{});
    case DType::bfloat16: return go(BFloat{});
    case DType::float32:
      if (round_bf16) return go(RoundedFloat{});
      return go(Plain<float>{});
    case DType::float64: return go(Plain<double>{});
    case DType::int32: return go(Plain<int32_t>{});
    case DType::int64: return go(Plain<int64_t>{});
  }
}

}  // namespace

namespace {
std::atomic<uint64_t> scratch_count{0};
}  // namespace

uint64_t scratch_allocations() { return scratch_count.load(std::memory_order_relaxed); }
void note_scratch_allocation() { scratch_count.fetch_add(1, std::memory_order_relaxed); }

bool set_convert_vector_tiles(bool enabled) {
  vector_tiles_enabled.store(enabled);
  return vector_tiles_available();
}

template <class T>
void convert_in(const Exec& exec, const void* src, DType from, int64_t n, const ChannelsFirst* cf, bool round_bf16,
                T* dst) {
  run_stored<In, T>(exec, from, round_bf16, src, n, cf, dst);
}

template <class T>
void convert_out(const Exec& exec, const T* src, void* dst, DType to, int64_t n, const ChannelsFirst* cf,
                 bool round_bf16) {
  run_stored<Out, T>(exec, to, round_bf16, src, n, cf, dst);
}

template void convert_in<float>(const Exec&, const void*, DType, int64_t, const ChannelsFirst*, bool, float*);
template void convert_in<double>(const Exec&, const void*, DType, int64_t, const ChannelsFirst*, bool, double*);
template void convert_out<float>(const Exec&, const float*, void*, DType, int64_t, const ChannelsFirst*, bool);
template void convert_out<double>(const Exec&, const double*, void*, DType, int64_t, const ChannelsFirst*, bool);

}  // namespace gradrt
