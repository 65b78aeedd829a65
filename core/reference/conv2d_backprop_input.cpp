// Conv2DBackpropInput, the adjoint of conv2d: dx[n,iy,ix,c] gathers every (oy,ky) with
// iy = oy*sh - pt + ky*dh, i.e. oy = (iy + pt - ky*dh) / sh when that divides exactly and
// lands in [0, out_h); same for columns; oc runs over the output channels of c's group.
#include "reference.h"

namespace gradrt::ref {

template <class T>
void conv2d_backprop_input(const ConvParams& p, const T* w, const T* dy, T* dx) {
  const int64_t out_per_group = p.out_c / p.groups;
  for_each_4d(p.batch, p.in_h, p.in_w, p.in_c, [&](int64_t n, int64_t iy, int64_t ix, int64_t c) {
    const int64_t g = c / p.filter_in_c, f = c % p.filter_in_c;
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
        for (int64_t oc = g * out_per_group; oc < (g + 1) * out_per_group; ++oc)
          acc += double(dy[p.y_at(n, oy, ox, oc)]) * double(w[p.w_at(ky, kx, f, oc)]);
      }
    }
    dx[p.x_at(n, iy, ix, c)] = T(acc);
  });
}

GRADRT_REF_INSTANTIATE_CONV(conv2d_backprop_input)

}  // namespace gradrt::ref
