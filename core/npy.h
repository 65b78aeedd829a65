// NumPy .npy files: what the CLI reads and writes.
//
// Reads format 1.0, 2.0 and 3.0, C order, little-endian ('<', or '=' / '|' which mean the
// host's order: every target gradrt builds for is little-endian), dtypes float16, float32,
// float64, int32, int64. Anything else is InvalidArgument with a message naming the problem.
// Writes format 1.0 with the header padded so the data starts on a 64-byte boundary.
#pragma once

#include <cstddef>
#include <string>

#include "gradrt/gradrt.h"

namespace gradrt::npy {

// Parses a whole .npy image. Safe on any bytes: sizes are checked against `size` before
// anything is allocated, and the allocation goes through Tensor::allocate's limit.
Status read_bytes(const void* data, size_t size, Tensor* out);
Status read_file(const std::string& path, Tensor* out);

// The .npy image of t (format 1.0). bfloat16 is written as float32 values (NumPy has no
// bfloat16). t.data must hold product(t.shape) elements; an invalid view (negative dim,
// null data with elements) gives "" — write_file reports it as a Status instead.
std::string encode(const TensorView& t);
// Writes encode(t) to a temporary file beside `path`, then renames it over `path`, so a
// reader never sees a half-written file.
Status write_file(const std::string& path, const TensorView& t);

}  // namespace gradrt::npy
