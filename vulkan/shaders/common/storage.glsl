// How the op's float tensors are stored in their buffers. Included right after real.glsl (its
// #extension must come before any declaration). Two forms:
//   default:           `stored` = real, `stored4` = real4; LOAD/STORE are the identity.
//   -DGRADRT_F16:      the `_f16` variant (cmake/gradrt_shaders.cmake builds it for every shader
//                      that names GRADRT_F16): IEEE binary16 bits in 16-bit storage
//                      (GL_EXT_shader_16bit_storage; Context::kernel refuses it on a device
//                      without storageBuffer16BitAccess), real = float. Values are widened on
//                      load and rounded once on store; everything in between is float32
//                      (the contract's half rule: half types accumulate in float32).
// Only the buffers declared `stored`/`stored4` change; float32 operands (batch norm's scale,
// mean, variance and sums, partial sums) stay `real`.
// The conversions are integer code, not float16_t casts: the float16 arithmetic types need
// shaderFloat16 (16-bit storage alone does not give them), a cast's rounding mode is the
// driver's choice (RTE or RTZ) and half subnormals may be flushed. These are exact both ways and
// round to nearest even as core/half.h's half_bits does: the same bits as core's conversion.
#ifdef GRADRT_F16
#extension GL_EXT_shader_16bit_storage : require
#define stored uint16_t
#define stored4 u16vec4

// binary16 bits -> float, exact (subnormals normalised in integers; inf/NaN kept).
float half_to_float(uint h) {
  const uint sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 31u) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
  if (e != 0u) return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0u) return uintBitsToFloat(sign);
  // m * 2^-24 with its top bit at b (0..9): exponent b - 24 (biased b + 103), the bits below b
  // shifted up to the top of the 23-bit mantissa.
  const int b = findMSB(m);
  return uintBitsToFloat(sign | (uint(b + 103) << 23) | ((m << uint(23 - b)) & 0x7fffffu));
}

// float -> binary16 bits, round to nearest even (core/half.h half_bits, in integers).
uint float_to_half(float f) {
  const uint x = floatBitsToUint(f), sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u);  // inf, NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: inf
  if (a < 0x38800000u) {                        // below 2^-14: a half subnormal (or zero)
    // value = mant * 2^(e - 150) (mant with its implicit bit); in units of 2^-24 that is
    // mant >> (126 - e), rounded on the bits shifted out. e < 102 is below 2^-25: zero.
    const uint e = a >> 23;
    if (e < 102u) return sign;
    const uint mant = (a & 0x7fffffu) | 0x800000u, shift = 126u - e;  // 14..24
    uint h = mant >> shift;
    const uint rest = mant & ((1u << shift) - 1u), half_ulp = 1u << (shift - 1u);
    if (rest > half_ulp || (rest == half_ulp && (h & 1u) != 0u)) ++h;
    return sign | h;
  }
  uint h = (((a >> 23) - 112u) << 10) | ((a & 0x7fffffu) >> 13);
  const uint rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0u)) ++h;  // a carry may bump the exponent: correct
  return sign | h;
}

#define LOAD(v) half_to_float(uint(v))
#define LOAD4(v) load4_half(uvec4(v))
#define STORE(v) uint16_t(float_to_half(v))
// (16-bit values only at the buffer access itself: a function returning u16vec4 would need the
// Int16 capability, which 16-bit storage does not give.)
#define STORE4(v) u16vec4(store4_bits(v))
vec4 load4_half(uvec4 h) { return vec4(half_to_float(h.x), half_to_float(h.y), half_to_float(h.z), half_to_float(h.w)); }
uvec4 store4_bits(vec4 f) { return uvec4(float_to_half(f.x), float_to_half(f.y), float_to_half(f.z), float_to_half(f.w)); }
#else
#define stored real
#define stored4 real4
#define LOAD(v) (v)
#define LOAD4(v) (v)
#define STORE(v) (v)
#define STORE4(v) (v)
#endif
