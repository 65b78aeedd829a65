// The scalar type of the tensors: float32, or float64 when compiled with -DGRADRT_F64 (the
// `_f64` variant of every shader; used only on devices with shaderFloat64). Push constants stay
// float32/int32 in both variants.
#ifdef GRADRT_F64
#define real double
#else
#define real float
#endif

// 1/sqrt(v). Vulkan only promises single-precision accuracy for double inversesqrt, so the
// float64 variant divides by a sqrt instead.
real rsqrt_real(real v) {
#ifdef GRADRT_F64
  return 1.0 / sqrt(v);
#else
  return inversesqrt(v);
#endif
}
