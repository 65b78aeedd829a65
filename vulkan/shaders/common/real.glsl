// The scalar type of the tensors: float32, or float64 when compiled with -DGRADRT_F64 (the
// `_f64` variant of every shader; used only on devices with shaderFloat64). Push constants stay
// float32/int32 in both variants. real4: four of them (the `_v4` shaders' 16/32-byte loads).
#ifdef GRADRT_F64
#define real double
#define real4 dvec4
#else
#define real float
#define real4 vec4
#endif

// 1/sqrt(v) for real or real4. Vulkan only promises single-precision accuracy for double
// inversesqrt, so the float64 variant divides by a sqrt instead.
#ifdef GRADRT_F64
#define rsqrt_real(v) (1.0 / sqrt(v))
#else
#define rsqrt_real(v) inversesqrt(v)
#endif
