// Conv2D: y[n,oy,ox,oc] = sum_{ky,kx,f} x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw, g(oc)*fin + f] * w[ky,kx,f,oc]
#include "reference.h"

namespace gradrt::ref {

template <class T>
void conv2d(const ConvParams& p, const T* x, const T* w, T* y) {
  const int64_t out_per_group = p.out_c / p.groups;
  for_each_4d(p.batch, p.out_h, p.out_w, p.out_c, [&](int64_t n, int64_t oy, int64_t ox, int64_t oc) {
    const int64_t c0 = oc / out_per_group * p.filter_in_c;
    double acc = 0;
    for (int64_t ky = 0; ky < p.filter_h; ++ky) {
      const int64_t iy = p.in_row(oy, ky);
      if (iy < 0 || iy >= p.in_h) continue;
      for (int64_t kx = 0; kx < p.filter_w; ++kx) {
        const int64_t ix = p.in_col(ox, kx);
        if (ix < 0 || ix >= p.in_w) continue;
        for (int64_t f = 0; f < p.filter_in_c; ++f)
          acc += double(x[p.x_at(n, iy, ix, c0 + f)]) * double(w[p.w_at(ky, kx, f, oc)]);
      }
    }
    y[p.y_at(n, oy, ox, oc)] = T(acc);
  });
}

GRADRT_REF_INSTANTIATE_CONV(conv2d)

}  // namespace gradrt::ref
