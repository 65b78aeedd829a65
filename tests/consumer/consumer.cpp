// Runs TF's testConv2D2x2Depth1ValidBackpropInput through the installed library; exit 0 when
// the result is TF's 1, 4, 4, 3, 10, 8.
#include <gradrt/gradrt.h>

#include <cstdio>

int main() {
  const int sizes[4] = {1, 2, 3, 1};
  const float w[4] = {1, 2, 3, 4}, dy[2] = {1, 2}, want[6] = {1, 4, 4, 3, 10, 8};
  gradrt::Tensor dx;
  gradrt::Status s = gradrt::conv2d_backprop_input(
      {gradrt::DType::int32, {4}, sizes}, {gradrt::DType::float32, {2, 2, 1, 1}, w},
      {gradrt::DType::float32, {1, 1, 2, 1}, dy}, gradrt::ConvAttrs().Strides({1, 1, 1, 1}).Padding("VALID"), &dx);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.to_string().c_str());
    return 1;
  }
  for (int i = 0; i < 6; ++i)
    if (dx.data_as<float>()[i] != want[i]) {
      std::fprintf(stderr, "dx[%d] = %g, want %g\n", i, dx.data_as<float>()[i], want[i]);
      return 1;
    }
  std::printf("consumer: gradrt %s via CMake works\n", gradrt::version());
  return 0;
}
