// FractionalAvgPool and its gradient over the cells that FracPoolParams defines (ops.md §5.5, 5.10).
// Floats average in double; integers sum in T (wrapping, as TF's int sum does) and divide
// truncating toward zero. The gradient spreads dy/count over each cell into a double
// buffer and rounds once (truncating for integers), as TF does.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "reference.h"

namespace gradrt::ref {

// Integers accumulate in the unsigned type of T so that overflow wraps (defined) as TF's does.
template <class T, bool = std::is_integral_v<T>>
struct Accumulator { using type = double; };
template <class T>
struct Accumulator<T, true> { using type = std::make_unsigned_t<T>; };

template <class T>
void fractional_avg_pool(const FracPoolParams& p, const T* x, T* y) {
  using Acc = typename Accumulator<T>::type;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t r = 0; r < p.out_h; ++r)
      for (int64_t c = 0; c < p.out_w; ++c) {
        const int64_t rs = p.row_start(r), re = p.row_end(r), cs = p.col_start(c), ce = p.col_end(c);
        const int64_t count = (re - rs + 1) * (ce - cs + 1);
        for (int64_t d = 0; d < p.channels; ++d) {
          Acc sum = 0;
          for (int64_t i = rs; i <= re; ++i)
            for (int64_t j = cs; j <= ce; ++j) sum += Acc(x[((n * p.in_h + i) * p.in_w + j) * p.channels + d]);
          T out;
          if constexpr (std::is_integral_v<T>) out = count > 0 ? T(T(sum) / T(count)) : T(0);
          else out = count > 0 ? T(sum / double(count)) : T(0);
          y[((n * p.out_h + r) * p.out_w + c) * p.channels + d] = out;
        }
      }
}

// double -> T. Integers truncate toward zero as TF's cast does, and saturate where the sum of
// overlapping cells leaves T's range (a plain conversion would be undefined behaviour).
template <class T>
T to_output(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (!(v > -9223372036854775808.0)) return std::numeric_limits<T>::min();  // also NaN
    if (v >= 9223372036854775808.0) return std::numeric_limits<T>::max();
    const int64_t t = static_cast<int64_t>(v);
    if (t > int64_t{std::numeric_limits<T>::max()}) return std::numeric_limits<T>::max();
    if (t < int64_t{std::numeric_limits<T>::min()}) return std::numeric_limits<T>::min();
    return static_cast<T>(t);
  } else {
    return T(v);
  }
}

template <class T>
void fractional_avg_pool_grad(const FracPoolParams& p, const T* dy, T* dx) {
  std::vector<double> buf(static_cast<std::size_t>(p.batch * p.in_h * p.in_w * p.channels), 0.0);
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t r = 0; r < p.out_h; ++r)
      for (int64_t c = 0; c < p.out_w; ++c) {
        const int64_t rs = p.row_start(r), re = p.row_end(r), cs = p.col_start(c), ce = p.col_end(c);
        const int64_t count = (re - rs + 1) * (ce - cs + 1);
        if (count <= 0) continue;
        for (int64_t d = 0; d < p.channels; ++d) {
          const double g = double(dy[((n * p.out_h + r) * p.out_w + c) * p.channels + d]) / double(count);
          for (int64_t i = rs; i <= re; ++i)
            for (int64_t j = cs; j <= ce; ++j) buf[((n * p.in_h + i) * p.in_w + j) * p.channels + d] += g;
        }
      }
  for (std::size_t i = 0; i < buf.size(); ++i) dx[i] = to_output<T>(buf[i]);
}

#define GRADRT_INSTANTIATE(T)                                                          \
  template void fractional_avg_pool<T>(const FracPoolParams&, const T*, T*);           \
  template void fractional_avg_pool_grad<T>(const FracPoolParams&, const T*, T*);
GRADRT_INSTANTIATE(float)
GRADRT_INSTANTIATE(double)
GRADRT_INSTANTIATE(int32_t)
GRADRT_INSTANTIATE(int64_t)
#undef GRADRT_INSTANTIATE

}  // namespace gradrt::ref
