// Conv2DBackpropFilter: dw[ky,kx,f,oc] = sum_{n,oy,ox} dy[n,oy,ox,oc] * x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw, g(oc)*fin + f]
#include "reference.h"

namespace gradrt::ref {

template <class T>
void conv2d_backprop_filter(const ConvParams& p, const T* x, const T* dy, T* dw) {
  const int64_t out_per_group = p.out_c / p.groups;
  for_each_4d(p.filter_h, p.filter_w, p.filter_in_c, p.out_c, [&](int64_t ky, int64_t kx, int64_t f, int64_t oc) {
    const int64_t c = oc / out_per_group * p.filter_in_c + f;
    double acc = 0;
    for (int64_t n = 0; n < p.batch; ++n)
      for (int64_t oy = 0; oy < p.out_h; ++oy) {
        const int64_t iy = p.in_row(oy, ky);
        if (iy < 0 || iy >= p.in_h) continue;
        for (int64_t ox = 0; ox < p.out_w; ++ox) {
          const int64_t ix = p.in_col(ox, kx);
          if (ix < 0 || ix >= p.in_w) continue;
          acc += double(dy[p.y_at(n, oy, ox, oc)]) * double(x[p.x_at(n, iy, ix, c)]);
        }
      }
    dw[p.w_at(ky, kx, f, oc)] = T(acc);
  });
}

GRADRT_REF_INSTANTIATE_CONV(conv2d_backprop_filter)

}  // namespace gradrt::ref
