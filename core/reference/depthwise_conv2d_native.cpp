// DepthwiseConv2dNative and its two gradients, as the grouped conv they are: filter
// [FH, FW, C, M] read as HWIO [FH, FW, 1, C*M] with groups = C, so output channel
// oc = c*M + m is group c (out_per_group = M) and reads input channel c alone:
//   y[n,oy,ox,c*M+m] = sum_{ky,kx} x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw, c] * w[ky,kx,c,m]
// The conv loops (conv2d*.cpp) then compute exactly the depthwise formulas of ops.md §4.
#include "reference.h"

namespace gradrt::ref {

namespace {
ConvParams as_grouped(const ConvParams& p) {
  ConvParams q = p;  // depthwise kernels read only in_c and depth_multiplier of the channel fields
  q.filter_in_c = 1;
  q.out_c = p.in_c * p.depth_multiplier;
  q.groups = p.in_c > 0 ? p.in_c : 1;
  return q;
}
}  // namespace

template <class T>
void depthwise_conv2d_native(const ConvParams& p, const T* x, const T* w, T* y) {
  conv2d(as_grouped(p), x, w, y);
}
template <class T>
void depthwise_conv2d_native_backprop_input(const ConvParams& p, const T* w, const T* dy, T* dx) {
  conv2d_backprop_input(as_grouped(p), w, dy, dx);
}
template <class T>
void depthwise_conv2d_native_backprop_filter(const ConvParams& p, const T* x, const T* dy, T* dw) {
  conv2d_backprop_filter(as_grouped(p), x, dy, dw);
}

#define GRADRT_INSTANTIATE(T)                                                                             \
  template void depthwise_conv2d_native<T>(const ConvParams&, const T*, const T*, T*);                  \
  template void depthwise_conv2d_native_backprop_input<T>(const ConvParams&, const T*, const T*, T*);   \
  template void depthwise_conv2d_native_backprop_filter<T>(const ConvParams&, const T*, const T*, T*);
GRADRT_INSTANTIATE(float)
GRADRT_INSTANTIATE(double)
#undef GRADRT_INSTANTIATE

}  // namespace gradrt::ref
