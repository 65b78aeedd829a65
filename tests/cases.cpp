#include "cases.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace test {

std::vector<int64_t> ConvConfig::input_shape() const {
  return nchw ? std::vector<int64_t>{n, c, h, w} : std::vector<int64_t>{n, h, w, c};
}

std::vector<int64_t> ConvConfig::filter_shape() const {
  return depthwise ? std::vector<int64_t>{fh, fw, c, out_c / c} : std::vector<int64_t>{fh, fw, fin, out_c};
}

gradrt::Attrs ConvConfig::attrs() const {
  using gradrt::AttrValue;
  auto by_format = [&](int64_t hv, int64_t wv) {
    return nchw ? std::vector<int64_t>{1, 1, hv, wv} : std::vector<int64_t>{1, hv, wv, 1};
  };
  gradrt::Attrs a = {{"strides", AttrValue(by_format(sh, sw))},
                     {"dilations", AttrValue(by_format(dh, dw))},
                     {"padding", AttrValue(padding)},
                     {"data_format", AttrValue(nchw ? "NCHW" : "NHWC")}};
  if (padding == "EXPLICIT")
    a["explicit_paddings"] = AttrValue(nchw ? std::vector<int64_t>{0, 0, 0, 0, pt, pb, pl, pr}
                                            : std::vector<int64_t>{0, 0, pt, pb, pl, pr, 0, 0});
  return a;
}

std::string ConvConfig::describe() const {
  std::ostringstream s;
  s << (depthwise ? "depthwise " : "conv ") << (nchw ? "NCHW" : "NHWC") << " x[" << n << "," << h << "," << w << ","
    << c << "] w[" << fh << "," << fw << "," << (depthwise ? c : fin) << "," << (depthwise ? out_c / c : out_c)
    << "] s" << sh << "x" << sw << " d" << dh << "x" << dw << " " << padding;
  if (padding == "EXPLICIT") s << "(" << pt << "," << pb << "," << pl << "," << pr << ")";
  return s.str();
}

namespace {

// Batch, spatial, filter, stride and dilation draws: the part of a random conv both levels
// share. The draw order is fixed (each test's seed depends on it).
struct WindowRanges {
  int64_t n_lo, n_hi, h_lo, h_hi, w_lo, w_hi, f_hi;
};
struct Window {
  int64_t n, h, w, fh, fw, sh, sw, dh, dw;
};
Window draw_window(std::mt19937& rng, const WindowRanges& r) {
  Window v;
  v.n = uniform(rng, r.n_lo, r.n_hi);
  v.h = uniform(rng, r.h_lo, r.h_hi);
  v.w = uniform(rng, r.w_lo, r.w_hi);
  v.fh = uniform(rng, 1, r.f_hi);
  v.fw = uniform(rng, 1, r.f_hi);
  v.sh = uniform(rng, 1, 3);
  v.sw = uniform(rng, 1, 3);
  v.dh = uniform(rng, 1, 2);
  v.dw = uniform(rng, 1, 2);
  return v;
}

}  // namespace

ConvConfig random_conv(std::mt19937& rng, bool depthwise) {
  ConvConfig c;
  c.depthwise = depthwise;
  c.nchw = uniform(rng, 0, 2) == 0;
  const Window v = draw_window(rng, {1, 2, 1, 9, 1, 11, 3});
  c.n = v.n, c.h = v.h, c.w = v.w, c.fh = v.fh, c.fw = v.fw, c.sh = v.sh, c.sw = v.sw, c.dh = v.dh, c.dw = v.dw;
  if (depthwise) {
    c.c = uniform(rng, 1, 9);
    c.out_c = c.c * uniform(rng, 1, 3);
  } else {
    int64_t groups = uniform(rng, 0, 3) == 0 ? 2 : 1;
    c.fin = uniform(rng, 1, 7);
    c.c = c.fin * groups;
    c.out_c = groups * uniform(rng, 1, 9);
  }
  static const char* paddings[] = {"SAME", "VALID", "EXPLICIT"};
  c.padding = paddings[uniform(rng, 0, 2)];
  if (c.padding == "EXPLICIT") {
    c.pt = uniform(rng, 0, 2);
    c.pb = uniform(rng, 0, 2);
    c.pl = uniform(rng, 0, 2);
    c.pr = uniform(rng, 0, 2);
  }
  return c;
}

bool forward_shape(const ConvConfig& cfg, std::vector<int64_t>* out) {
  std::mt19937 rng(1);
  Result r = run(cfg.forward_op(),
                 {{"input", random(DType::float64, cfg.input_shape(), rng)},
                  {"filter", random(DType::float64, cfg.filter_shape(), rng)}},
                 cfg.attrs(), "reference");
  if (!r.status.ok()) return false;
  *out = r.out().shape();
  return true;
}

// ---- kernel level

using gradrt::ConvParams;

double reduction_length(ConvKernel k, const ConvParams& p) {
  switch (k) {
    case ConvKernel::fwd: return double(p.filter_h * p.filter_w * p.filter_in_c);
    case ConvKernel::bwd_input: return double(p.filter_h * p.filter_w * (p.out_c / p.groups));
    case ConvKernel::bwd_filter:
    case ConvKernel::dw_bwd_filter: return double(p.batch * p.out_h * p.out_w);
    case ConvKernel::dw_fwd: return double(p.filter_h * p.filter_w);
    case ConvKernel::dw_bwd_input: return double(p.filter_h * p.filter_w * p.depth_multiplier);
  }
  return 0;
}

ConvParams random_conv_params(std::mt19937& rng, bool depthwise, bool big, int odds) {
  const WindowRanges ranges = big ? WindowRanges{2, 3, 17, 33, 17, 35, 4} : WindowRanges{1, 2, 1, 11, 1, 13, 4};
  for (;;) {
    const Window v = draw_window(rng, ranges);
    ConvParams p;
    p.batch = v.n, p.in_h = v.h, p.in_w = v.w, p.filter_h = v.fh, p.filter_w = v.fw;
    p.stride_h = v.sh, p.stride_w = v.sw, p.dilation_h = v.dh, p.dilation_w = v.dw;
    if (depthwise) {
      p.in_c = big ? uniform(rng, 30, 70) : uniform(rng, 1, 37);
      p.depth_multiplier = uniform(rng, 0, odds - 1) == 0 ? uniform(rng, 2, 3) : 1;
      p.filter_in_c = p.in_c;
      p.out_c = p.in_c * p.depth_multiplier;
    } else {
      p.groups = uniform(rng, 0, odds - 1) == 0 ? uniform(rng, 2, 3) : 1;
      p.filter_in_c = big ? uniform(rng, 9, 45) : uniform(rng, 1, 41);
      p.in_c = p.filter_in_c * p.groups;
      p.out_c = (big ? uniform(rng, 17, 90) : uniform(rng, 1, 45)) * p.groups;
    }
    // eh, ew: the dilated window. Padding on each side below it (more would only add rows
    // of zeros); redraw when even the padded input is smaller than the window.
    const int64_t eh = (p.filter_h - 1) * p.dilation_h + 1, ew = (p.filter_w - 1) * p.dilation_w + 1;
    const int64_t pt = uniform(rng, 0, eh - 1), pb = uniform(rng, 0, eh - 1);
    const int64_t pl = uniform(rng, 0, ew - 1), pr = uniform(rng, 0, ew - 1);
    if (p.in_h + pt + pb < eh || p.in_w + pl + pr < ew) continue;
    p.pad_top = pt;
    p.pad_left = pl;
    p.out_h = (p.in_h + pt + pb - eh) / p.stride_h + 1;
    p.out_w = (p.in_w + pl + pr - ew) / p.stride_w + 1;
    return p;
  }
}

ConvParams same_conv_params(int64_t batch, int64_t in_h, int64_t in_w, int64_t in_c, int64_t out_c, int64_t filter,
                            int64_t stride, int64_t groups, bool depthwise) {
  ConvParams p;
  p.batch = batch;
  p.in_h = in_h;
  p.in_w = in_w;
  p.in_c = in_c;
  p.out_c = out_c;
  p.filter_h = p.filter_w = filter;
  p.stride_h = p.stride_w = stride;
  if (depthwise) {
    p.filter_in_c = in_c;
    p.depth_multiplier = out_c / in_c;
  } else {
    p.groups = groups;
    p.filter_in_c = in_c / groups;
  }
  // TF SAME: out = ceil(in / stride); the total padding, odd or even, puts the extra row at
  // the bottom (right).
  p.out_h = (in_h + stride - 1) / stride;
  p.out_w = (in_w + stride - 1) / stride;
  p.pad_top = std::max<int64_t>((p.out_h - 1) * stride + filter - in_h, 0) / 2;
  p.pad_left = std::max<int64_t>((p.out_w - 1) * stride + filter - in_w, 0) / 2;
  return p;
}

std::vector<ConvParams> empty_conv_params(bool depthwise) {
  ConvParams no_batch = same_conv_params(1, 5, 5, 3, depthwise ? 6 : 4, 3, 1, 1, depthwise);
  no_batch.batch = 0;
  ConvParams no_rows = same_conv_params(2, 0, 4, 3, depthwise ? 3 : 5, 3, 1, 1, depthwise);
  no_rows.pad_top = 1;  // in_h 0: out_h 0 whatever the padding
  return {no_batch, no_rows};
}

std::string describe(const ConvParams& p) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "n%lld %lldx%lldx%lld -> %lldx%lldx%lld f%lldx%lldx%lld g%lld m%lld s%lld,%lld d%lld,%lld p%lld,%lld",
                (long long)p.batch, (long long)p.in_h, (long long)p.in_w, (long long)p.in_c, (long long)p.out_h,
                (long long)p.out_w, (long long)p.out_c, (long long)p.filter_h, (long long)p.filter_w,
                (long long)p.filter_in_c, (long long)p.groups, (long long)p.depth_multiplier, (long long)p.stride_h,
                (long long)p.stride_w, (long long)p.dilation_h, (long long)p.dilation_w, (long long)p.pad_top,
                (long long)p.pad_left);
  return buf;
}

template <class T>
gradrt::Status run_conv(gradrt::Backend* b, ConvKernel k, const ConvParams& p, int threads, const std::vector<T>& x,
                        const std::vector<T>& w, const std::vector<T>& dy, std::vector<T>* out) {
  const gradrt::Exec e{threads};
  // The output, n elements filled with a sentinel a kernel must overwrite.
  auto fresh = [out](int64_t n) {
    out->assign(n, T(-7));
    return out->data();
  };
  switch (k) {
    case ConvKernel::fwd: return b->conv2d(e, p, x.data(), w.data(), fresh(p.y_elements()));
    case ConvKernel::bwd_input: return b->conv2d_backprop_input(e, p, w.data(), dy.data(), fresh(p.x_elements()));
    case ConvKernel::bwd_filter: return b->conv2d_backprop_filter(e, p, x.data(), dy.data(), fresh(p.w_elements()));
    case ConvKernel::dw_fwd: return b->depthwise_conv2d_native(e, p, x.data(), w.data(), fresh(p.y_elements()));
    case ConvKernel::dw_bwd_input:
      return b->depthwise_conv2d_native_backprop_input(e, p, w.data(), dy.data(), fresh(p.x_elements()));
    case ConvKernel::dw_bwd_filter:
      return b->depthwise_conv2d_native_backprop_filter(e, p, x.data(), dy.data(), fresh(p.dw_w_elements()));
  }
  return gradrt::Status(gradrt::Code::Internal, "unknown conv kernel");
}

template <class T>
void check_near(const std::vector<T>& got, const std::vector<T>& want, double k, double scale, double factor,
                const std::string& what) {
  const double eps = std::is_same_v<T, float> ? 1.2e-7 : 2.3e-16;
  const double tol = factor * eps * std::max(1.0, k) * std::max(1.0, scale) + 1e-30;
  REQUIRE(got.size() == want.size());
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(double(got[i]) - double(want[i]));
    if (!(e <= tol)) {  // NaN fails too
      if (!bad) first = i;
      ++bad;
      worst = std::max(worst, e);
    }
  }
  INFO(what << ": " << bad << " bad, first index " << first << " got " << (got.empty() ? 0.0 : double(got[first]))
            << " want " << (want.empty() ? 0.0 : double(want[first])) << " worst " << worst << " tol " << tol);
  CHECK(bad == 0);
}

#define GRADRT_TEST_INSTANTIATE(T)                                                                              \
  template gradrt::Status run_conv<T>(gradrt::Backend*, ConvKernel, const ConvParams&, int, const std::vector<T>&, \
                                      const std::vector<T>&, const std::vector<T>&, std::vector<T>*);              \
  template void check_near<T>(const std::vector<T>&, const std::vector<T>&, double, double, double,              \
                              const std::string&);
GRADRT_TEST_INSTANTIATE(float)
GRADRT_TEST_INSTANTIATE(double)
#undef GRADRT_TEST_INSTANTIATE

std::vector<int64_t> random_seq(std::mt19937& rng, int64_t size, int64_t n, bool dups) {
  std::vector<int64_t> s = {0};
  if (dups) {  // n-1 inner entries anywhere in [0, size], repeats allowed
    for (int64_t i = 1; i < n; ++i) s.push_back(uniform(rng, 0, size));
    std::sort(s.begin(), s.end());
  } else {  // n-1 distinct cuts among 1..size-1
    std::vector<int64_t> cuts;
    for (int64_t i = 1; i < size; ++i) cuts.push_back(i);
    std::shuffle(cuts.begin(), cuts.end(), rng);
    cuts.resize(static_cast<size_t>(n - 1));
    std::sort(cuts.begin(), cuts.end());
    s.insert(s.end(), cuts.begin(), cuts.end());
  }
  s.push_back(size);
  return s;
}

}  // namespace test
