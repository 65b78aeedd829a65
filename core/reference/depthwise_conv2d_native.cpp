// DepthwiseConv2dNative and its two gradients; output channel oc = c*M + m.
//   y[n,oy,ox,c*M+m] = sum_{ky,kx} x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw, c] * w[ky,kx,c,m]
#include "reference.h"

namespace gradrt::ref {

template <class T>
void depthwise_conv2d_native(const ConvParams& p, const T* x, const T* w, T* y) {
  const int64_t M = p.depth_multiplier;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t oy = 0; oy < p.out_h; ++oy)
      for (int64_t ox = 0; ox < p.out_w; ++ox)
        for (int64_t c = 0; c < p.in_c; ++c)
          for (int64_t m = 0; m < M; ++m) {
            double acc = 0;
            for (int64_t ky = 0; ky < p.filter_h; ++ky) {
              const int64_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
              if (iy < 0 || iy >= p.in_h) continue;
              for (int64_t kx = 0; kx < p.filter_w; ++kx) {
                const int64_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
                if (ix < 0 || ix >= p.in_w) continue;
                acc += double(x[((n * p.in_h + iy) * p.in_w + ix) * p.in_c + c]) *
                       double(w[((ky * p.filter_w + kx) * p.in_c + c) * M + m]);
              }
            }
            y[((n * p.out_h + oy) * p.out_w + ox) * p.out_c + c * M + m] = T(acc);
          }
}

template void depthwise_conv2d_native<float>(const ConvParams&, const float*, const float*, float*);
template void depthwise_conv2d_native<double>(const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::ref
