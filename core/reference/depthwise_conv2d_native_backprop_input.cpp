// dx[n,iy,ix,c] = sum_m sum_{(oy,ky): oy*sh - pt + ky*dh = iy} sum_{(ox,kx): ...} dy[n,oy,ox,c*M+m] * w[ky,kx,c,m]
#include "reference.h"

namespace gradrt::ref {

template <class T>
void depthwise_conv2d_native_backprop_input(const ConvParams& p, const T* w, const T* dy, T* dx) {
  const int64_t M = p.depth_multiplier;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t iy = 0; iy < p.in_h; ++iy)
      for (int64_t ix = 0; ix < p.in_w; ++ix)
        for (int64_t c = 0; c < p.in_c; ++c) {
          double acc = 0;
          for (int64_t ky = 0; ky < p.filter_h; ++ky) {
            const int64_t ty = iy + p.pad_top - ky * p.dilation_h;
            if (ty < 0 || ty % p.stride_h) continue;
            const int64_t oy = ty / p.stride_h;
            if (oy >= p.out_h) continue;
            for (int64_t kx = 0; kx < p.filter_w; ++kx) {
              const int64_t tx = ix + p.pad_left - kx * p.dilation_w;
              if (tx < 0 || tx % p.stride_w) continue;
              const int64_t ox = tx / p.stride_w;
              if (ox >= p.out_w) continue;
              for (int64_t m = 0; m < M; ++m)
                acc += double(dy[((n * p.out_h + oy) * p.out_w + ox) * p.out_c + c * M + m]) *
                       double(w[((ky * p.filter_w + kx) * p.in_c + c) * M + m]);
            }
          }
          dx[((n * p.in_h + iy) * p.in_w + ix) * p.in_c + c] = T(acc);
        }
}

template void depthwise_conv2d_native_backprop_input<float>(const ConvParams&, const float*, const float*, float*);
template void depthwise_conv2d_native_backprop_input<double>(const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::ref
