#include "cases.h"

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

ConvConfig random_conv(std::mt19937& rng, bool depthwise) {
  ConvConfig c;
  c.depthwise = depthwise;
  c.nchw = uniform(rng, 0, 2) == 0;
  c.n = uniform(rng, 1, 2);
  c.h = uniform(rng, 1, 9);
  c.w = uniform(rng, 1, 11);
  c.fh = uniform(rng, 1, 3);
  c.fw = uniform(rng, 1, 3);
  c.sh = uniform(rng, 1, 3);
  c.sw = uniform(rng, 1, 3);
  c.dh = uniform(rng, 1, 2);
  c.dw = uniform(rng, 1, 2);
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

}  // namespace test
