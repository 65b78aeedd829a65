// Conv2D: y[n,oy,ox,oc] = sum_{ky,kx,f} x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw, g(oc)*fin + f] * w[ky,kx,f,oc]
#include "reference.h"

namespace gradrt::ref {

template <class T>
void conv2d(const ConvParams& p, const T* x, const T* w, T* y) {
  const int64_t out_per_group = p.out_c / p.groups;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t oy = 0; oy < p.out_h; ++oy)
      for (int64_t ox = 0; ox < p.out_w; ++ox)
        for (int64_t oc = 0; oc < p.out_c; ++oc) {
          const int64_t c0 = oc / out_per_group * p.filter_in_c;
          double acc = 0;
          for (int64_t ky = 0; ky < p.filter_h; ++ky) {
            const int64_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
            if (iy < 0 || iy >= p.in_h) continue;
            for (int64_t kx = 0; kx < p.filter_w; ++kx) {
              const int64_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
              if (ix < 0 || ix >= p.in_w) continue;
              for (int64_t f = 0; f < p.filter_in_c; ++f)
                acc += double(x[((n * p.in_h + iy) * p.in_w + ix) * p.in_c + c0 + f]) *
                       double(w[((ky * p.filter_w + kx) * p.filter_in_c + f) * p.out_c + oc]);
            }
          }
          y[((n * p.out_h + oy) * p.out_w + ox) * p.out_c + oc] = T(acc);
        }
}

template void conv2d<float>(const ConvParams&, const float*, const float*, float*);
template void conv2d<double>(const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::ref
