// Resolved op parameters: what core hands to a kernel after every check has passed.
// Plain structs of int64/float so that every backend (and the Vulkan push-constant
// mirrors) reads the same numbers. Kernels never validate and never fail on these.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

namespace gradrt {

// Convolution geometry, always NHWC (core transposes NCHW tensors around the kernel).
//   x  [batch, in_h, in_w, in_c]        (TF: input)
//   w  [filter_h, filter_w, filter_in_c, out_c]   HWIO   (TF: filter)
//        depthwise: [filter_h, filter_w, in_c, depth_multiplier], out_c = in_c * depth_multiplier
//   y  [batch, out_h, out_w, out_c]     (TF: output of the forward; out_backprop = dy)
// Input row of output row oy and filter row ky: iy = oy*stride_h - pad_top + ky*dilation_h
// (out of range reads 0). Grouped conv: groups = in_c / filter_in_c; output channel oc
// belongs to group oc / (out_c / groups) and reads input channels [g*filter_in_c, (g+1)*filter_in_c).
struct ConvParams {
  int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int64_t out_h = 0, out_w = 0, out_c = 0;
  int64_t filter_h = 0, filter_w = 0, filter_in_c = 0;
  int64_t groups = 1;             // conv only
  int64_t depth_multiplier = 1;   // depthwise only
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;  // bottom/right padding only shapes out_h/out_w

  int64_t x_elements() const { return batch * in_h * in_w * in_c; }
  int64_t y_elements() const { return batch * out_h * out_w * out_c; }
  int64_t w_elements() const { return filter_h * filter_w * filter_in_c * out_c; }
  int64_t dw_w_elements() const { return filter_h * filter_w * in_c * depth_multiplier; }

  // Input row (column) read by output row oy (column ox) through filter row ky (column kx).
  int64_t in_row(int64_t oy, int64_t ky) const { return oy * stride_h - pad_top + ky * dilation_h; }
  int64_t in_col(int64_t ox, int64_t kx) const { return ox * stride_w - pad_left + kx * dilation_w; }
  // Flat x offsets [first, second) of the x rows read under output rows r0 <= r1 (row r: image
  // r / out_h, row r % out_h; r1 in the same image or a later one): from r0's first tap row to r1's
  // last, each clipped to its image, and every x row between (contiguous in NHWC). Empty where
  // the taps fall in the padding only. (The filter gradients' prefetch of their next block.)
  std::pair<int64_t, int64_t> x_rows_under(int64_t r0, int64_t r1) const {
    const int64_t ya = std::clamp<int64_t>(in_row(r0 % out_h, 0), 0, in_h);
    const int64_t yb = std::clamp<int64_t>(in_row(r1 % out_h, filter_h - 1) + 1, 0, in_h);
    const int64_t b = x_at(r0 / out_h, ya, 0, 0), e = x_at(r1 / out_h, yb, 0, 0);
    return {b, std::max(b, e)};
  }
  // Flat offsets: x and y NHWC, w HWIO.
  int64_t x_at(int64_t n, int64_t iy, int64_t ix, int64_t c) const { return ((n * in_h + iy) * in_w + ix) * in_c + c; }
  int64_t y_at(int64_t n, int64_t oy, int64_t ox, int64_t oc) const { return ((n * out_h + oy) * out_w + ox) * out_c + oc; }
  int64_t w_at(int64_t ky, int64_t kx, int64_t f, int64_t oc) const { return ((ky * filter_w + kx) * filter_in_c + f) * out_c + oc; }
};

// Batch norm over channels-last data seen as [rows, channels]; rows = N*H*W (NCHW is
// transposed to this by core). The reserve spaces follow TF's CPU meaning: mean and
// biased variance of the batch.
struct BatchNormParams {
  int64_t rows = 0, channels = 0;
  // FusedBatchNormGrad on the cpu backend only: > 0 when x, dy, dx are channels-first
  // [rows / plane, channels, plane] as given (the op sets it when cpu runs the kernel; every
  // other backend and kernel sees 0, channels last, after the op's transposes).
  int64_t plane = 0;
  float epsilon = 0.0001f;
  float exponential_avg_factor = 1.0f;
  bool is_training = true;
};

// Fractional average pooling, NHWC. row_seq has out_h+1 entries, col_seq out_w+1, each
// non-decreasing within [0, in_h] / [0, in_w]. Cell (r, c) covers rows
// [row_seq[r], min(row_seq[r+1] - (overlapping ? 0 : 1), in_h - 1)] and the same for columns.
struct FracPoolParams {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0, out_h = 0, out_w = 0;
  bool overlapping = false;
  const int64_t* row_seq = nullptr;
  const int64_t* col_seq = nullptr;

  int64_t row_start(int64_t r) const { return row_seq[r]; }
  int64_t row_end(int64_t r) const { return clamp_end(row_seq[r + 1], in_h); }
  int64_t col_start(int64_t c) const { return col_seq[c]; }
  int64_t col_end(int64_t c) const { return clamp_end(col_seq[c + 1], in_w); }

 private:
  int64_t clamp_end(int64_t next, int64_t size) const {
    int64_t e = overlapping ? next : next - 1;
    return e < size - 1 ? e : size - 1;
  }
};

// The relu family, elementwise over n elements of any shape: six = Relu6 / Relu6Grad.
struct ReluParams {
  int64_t n = 0;
  bool six = false;
};

// BiasAdd and BiasAddGrad over channels-last data seen as [rows, channels] (rows = every
// dimension but the channels'; NCHW is transposed to this by core).
struct BiasParams {
  int64_t rows = 0, channels = 0;
};

// Max / average pooling (MaxPool, AvgPool and their gradients), NHWC (core transposes NCHW).
// Window (oy, ox) covers input rows [oy*stride_h - pad_top, +window_h) and columns
// [ox*stride_w - pad_left, +window_w); only its cells inside the input take part: padding is
// never a candidate for the max nor counted in the average (TF's CPU kernels, ops.md).
// Every window has at least one real cell (core checks pad < window for EXPLICIT; SAME and
// VALID guarantee it).
//
// MaxPoolGrad's argmax (TF's SpatialMaxPoolWithArgMaxHelper): the window's real cells in
// row-major order; the first is the candidate, a later cell replaces it only when
// candidate < cell. So ties go to the first, a NaN first cell keeps the gradient, a later NaN
// never takes it, and orig_output does not decide anything. dx of a cell = 0 + the dy of every
// window whose argmax it is, added in (oy, ox) order in T (TF's order, so bit-identical).
struct PoolParams {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0, out_h = 0, out_w = 0;
  int64_t window_h = 1, window_w = 1, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;

  int64_t x_elements() const { return batch * in_h * in_w * channels; }
  int64_t y_elements() const { return batch * out_h * out_w * channels; }
  // The real rows [row_begin(oy), row_end(oy)) of output row oy's windows; columns likewise.
  int64_t row_begin(int64_t oy) const { return max0(oy * stride_h - pad_top); }
  int64_t row_end(int64_t oy) const { return min_(oy * stride_h - pad_top + window_h, in_h); }
  int64_t col_begin(int64_t ox) const { return max0(ox * stride_w - pad_left); }
  int64_t col_end(int64_t ox) const { return min_(ox * stride_w - pad_left + window_w, in_w); }
  // The output rows whose windows contain input row iy: [out_row_begin(iy), out_row_end(iy)).
  // oy contains iy when oy*s - pad <= iy < oy*s - pad + k, i.e. (iy + pad - k) / s < oy <= (iy + pad) / s.
  int64_t out_row_begin(int64_t iy) const { return first_window(iy + pad_top, window_h, stride_h); }
  int64_t out_row_end(int64_t iy) const { return min_((iy + pad_top) / stride_h + 1, out_h); }
  int64_t out_col_begin(int64_t ix) const { return first_window(ix + pad_left, window_w, stride_w); }
  int64_t out_col_end(int64_t ix) const { return min_((ix + pad_left) / stride_w + 1, out_w); }
  // Index of real cell (iy, ix) among window (oy, ox)'s real cells, row-major: what
  // MaxPoolGrad's kernels store as the argmax.
  int64_t cell_index(int64_t oy, int64_t ox, int64_t iy, int64_t ix) const {
    return (iy - row_begin(oy)) * (col_end(ox) - col_begin(ox)) + (ix - col_begin(ox));
  }

 private:
  static int64_t max0(int64_t v) { return v > 0 ? v : 0; }
  static int64_t min_(int64_t a, int64_t b) { return a < b ? a : b; }
  static int64_t first_window(int64_t padded, int64_t k, int64_t s) { return padded < k ? 0 : (padded - k) / s + 1; }
};

}  // namespace gradrt
