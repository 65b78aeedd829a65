// Layout and dtype conversion between the user's tensors and the form kernels compute in
// (float or double, channels last). One dtype dispatch per call, then typed loops: NCHW
// <-> NHWC as a blocked transpose with the dtype conversion fused in (AVX2/F16C 8x8 tiles
// on x86-64 CPUs that have them, portable blocked loops elsewhere), plain conversion as one
// typed pass. Every output element is a function of one input element, so results do not
// depend on the thread count or on which path ran.
#pragma once

#include <cstdint>
#include <new>

#include "backend.h"
#include "gradrt/gradrt.h"

namespace gradrt {

// Channels-first data seen as [outer, channels, inner] (NCHW: outer = N, inner = H*W).
// Kernels want [outer, inner, channels].
struct ChannelsFirst {
  int64_t outer = 0, channels = 0, inner = 0;
};

// n elements of `src` (dtype `from`) into `dst` as T. cf: src is channels-first, dst gets
// channels last. round_bf16: each value rounded to bfloat16 (float32 storage under
// T=bfloat16; applies to float32 sources).
template <class T>
void convert_in(const Exec& exec, const void* src, DType from, int64_t n, const ChannelsFirst* cf, bool round_bf16,
                T* dst);
// The way back: n elements of `src` (channels last when cf) into `dst` of dtype `to`
// (channels-first when cf), rounded to `to` (and to bfloat16 first when round_bf16).
template <class T>
void convert_out(const Exec& exec, const T* src, void* dst, DType to, int64_t n, const ChannelsFirst* cf,
                 bool round_bf16);

// Tests: false makes every call take the portable loops (the x86 tiles are used when the
// CPU has AVX2 and F16C). Returns whether the vector tiles are available here at all.
bool set_convert_vector_tiles(bool enabled);

// Scratch buffers allocated so far, process-wide (tests: a plan run whose operands need no
// conversion allocates none).
uint64_t scratch_allocations();
void note_scratch_allocation();

// An uninitialized compute buffer from the tensor block cache (a conversion writes every
// element, so nothing is zero-filled). Throws std::bad_alloc when the memory is not there.
template <class T>
class Scratch {
 public:
  T* allocate(int64_t n) {
    note_scratch_allocation();
    if (!Tensor::allocate(sizeof(T) == 8 ? DType::float64 : DType::float32, {n}, &t_).ok()) throw std::bad_alloc();
    return t_.data_as<T>();
  }

 private:
  Tensor t_;
};

}  // namespace gradrt
