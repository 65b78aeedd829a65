// Each push-constant block is written once, in a *_push.glsl file next to this one, and read by
// both compilers: a shader sees `layout(push_constant) uniform Name { ... } p;`, C++
// (vulkan/ops/push_constants.h) sees `struct Name { ... };`. Members are int and float only:
// 4 bytes, 4-aligned, so std430 (the push-constant layout) places them where C++ does. A vec or
// uint member does not compile as C++; never use bool (4 bytes in GLSL, 1 in C++).
#ifndef GRADRT_PUSH_BLOCK
#ifdef __cplusplus
#define GRADRT_PUSH_BLOCK(name) struct name
#define GRADRT_PUSH_END
#else
#define GRADRT_PUSH_BLOCK(name) layout(push_constant) uniform name
#define GRADRT_PUSH_END p
#endif
#endif
