// dw[ky,kx,c,m] = sum_{n,oy,ox} dy[n,oy,ox,c*M+m] * x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw, c]
#include "reference.h"

namespace gradrt::ref {

template <class T>
void depthwise_conv2d_native_backprop_filter(const ConvParams& p, const T* x, const T* dy, T* dw) {
  const int64_t M = p.depth_multiplier;
  for (int64_t ky = 0; ky < p.filter_h; ++ky)
    for (int64_t kx = 0; kx < p.filter_w; ++kx)
      for (int64_t c = 0; c < p.in_c; ++c)
        for (int64_t m = 0; m < M; ++m) {
          double acc = 0;
          for (int64_t n = 0; n < p.batch; ++n)
            for (int64_t oy = 0; oy < p.out_h; ++oy) {
              const int64_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
              if (iy < 0 || iy >= p.in_h) continue;
              for (int64_t ox = 0; ox < p.out_w; ++ox) {
                const int64_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
                if (ix < 0 || ix >= p.in_w) continue;
                acc += double(dy[((n * p.out_h + oy) * p.out_w + ox) * p.out_c + c * M + m]) *
                       double(x[((n * p.in_h + iy) * p.in_w + ix) * p.in_c + c]);
              }
            }
          dw[((ky * p.filter_w + kx) * p.in_c + c) * M + m] = T(acc);
        }
}

template void depthwise_conv2d_native_backprop_filter<float>(const ConvParams&, const float*, const float*, float*);
template void depthwise_conv2d_native_backprop_filter<double>(const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::ref
