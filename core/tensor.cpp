#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "checked.h"
#include "gradrt/gradrt.h"
#include "half.h"
#include "status_macros.h"

namespace gradrt {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
  }
  return "unknown";
}

bool dtype_from_name(std::string_view name, DType* out) {
  struct Alias { const char* name; DType dtype; };
  static const Alias aliases[] = {
      {"float16", DType::float16}, {"half", DType::float16},     {"bfloat16", DType::bfloat16},
      {"float32", DType::float32}, {"float", DType::float32},    {"float64", DType::float64},
      {"double", DType::float64},  {"int32", DType::int32},      {"int64", DType::int64}};
  for (const Alias& a : aliases) {
    if (name == a.name) {
      *out = a.dtype;
      return true;
    }
  }
  return false;
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::float16:
    case DType::bfloat16: return 2;
    case DType::float32:
    case DType::int32: return 4;
    case DType::float64:
    case DType::int64: return 8;
  }
  return 1;
}

namespace {
#if defined(__EMSCRIPTEN__)
constexpr int64_t kDefaultMaxElements = int64_t{1} << 27;  // 512 MiB of float32: the 32-bit heap
#else
constexpr int64_t kDefaultMaxElements = int64_t{1} << 34;
#endif
std::atomic<int64_t> g_max_elements{kDefaultMaxElements};
}  // namespace

int64_t max_tensor_elements() { return g_max_elements.load(); }
void set_max_tensor_elements(int64_t n) { g_max_elements.store(n > 0 ? n : kDefaultMaxElements); }

namespace {

// Every block starts with a header; its last 16 bytes, just before the data, hold the block's
// base and data size, so a freed tensor's block can be kept for the next one of the same size:
// a training step asks for the same output shapes as the step before, and a fresh block pays a
// page fault per 4 KiB on its first touch (measured here: the 12.8 MB output of
// DepthwiseConv2dNativeBackpropInput at batch 8 took 1.1 ms with a reused block and up to 10 ms
// when glibc handed back fresh pages). Data starts on a 128-byte boundary (a pair of cache
// lines), as the wasm heap buffers of gradrt_alloc; in wasm an output can be placed away from
// an input instead (see kAwayBytes).
constexpr size_t kHeader = 128, kAlign = 128;

// WASM: an output of at least kAwayBytes goes at (its largest input + 2048 + 32) mod 4096, half a
// page and half a line from it. Kernels that store an output while loading an input of the
// same layout (the depthwise input gradient: dx pixel p after dy pixel p+1 of three rows)
// otherwise hit 4K aliasing (a load waits on an older store whose address matches in bits
// 0-11) and L1 set conflicts, by chance of the heap layout: 112x112x32 (128-byte pixels), over
// dx placements in 128-byte steps: 180-252 us at 0 mod 128 from dy; at 32 mod 64, 182-190 us
// but 278-302 us within ~600 bytes of dy mod 4096; placed, 174-180 us for every dy placement.
// Native kernels measured flat over input placements (that op 63-66 us, FusedBatchNormGrad
// 181-195 us), so native outputs stay where malloc puts them.
constexpr size_t kAwayBytes = size_t{64} << 10, kPage = 4096;

// Blocks of >= 128 KiB (glibc's default mmap threshold: smaller ones stay in malloc's heap),
// at most 64 of them and 256 MiB together, oldest dropped first; taken only by an exact size
// match. Conversion scratch (core/convert.h) comes from here too: without the cache every
// NCHW or half-precision call faulted in fresh pages for it. A step cycles through its sizes,
// so a cache smaller than a step's set misses on every call: with 8 blocks a channels-first
// Keras step (bench/keras_step.py cnn_nchw) took 1000-9000 minor page faults per step in a
// process with other models, none with 64. Not in wasm, where freed heap memory never leaves
// the process and a kept block would only stop malloc from reusing it for other sizes.
class BlockCache {
 public:
  void* take(size_t bytes) {
    if (!cacheable(bytes)) return nullptr;
    std::lock_guard<std::mutex> lock(m_);
    for (size_t i = blocks_.size(); i-- > 0;)
      if (blocks_[i].bytes == bytes) {
        void* base = blocks_[i].base;
        held_ -= bytes;
        blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
        return base;
      }
    return nullptr;
  }
  bool put(void* base, size_t bytes) {
    if (!cacheable(bytes)) return false;
    std::vector<void*> dropped;
    {
      std::lock_guard<std::mutex> lock(m_);
      while (!blocks_.empty() && (blocks_.size() >= kMaxBlocks || held_ + bytes > kMaxBytes)) {
        dropped.push_back(blocks_.front().base);
        held_ -= blocks_.front().bytes;
        blocks_.erase(blocks_.begin());
      }
      blocks_.push_back({base, bytes});
      held_ += bytes;
    }
    for (void* b : dropped) std::free(b);
    return true;
  }

 private:
  static constexpr size_t kMinBytes = size_t{128} << 10, kMaxBytes = size_t{256} << 20, kMaxBlocks = 64;
  static bool cacheable(size_t bytes) {
#if defined(__EMSCRIPTEN__)
    (void)bytes;
    return false;
#else
    return bytes >= kMinBytes && bytes <= kMaxBytes;
#endif
  }
  struct Block {
    void* base;
    size_t bytes;
  };
  std::mutex m_;
  std::vector<Block> blocks_;
  size_t held_ = 0;
};

BlockCache& block_cache() {
  static BlockCache* cache = new BlockCache;  // never destroyed: tensors may outlive statics
  return *cache;
}

}  // namespace

void Tensor::Free::operator()(void* p) const {
  if (p == nullptr || !owned) return;
  void* base;
  size_t bytes;
  std::memcpy(&base, static_cast<char*>(p) - 16, sizeof base);
  std::memcpy(&bytes, static_cast<char*>(p) - 8, sizeof bytes);
  if (static_cast<char*>(base) + kHeader != p || !block_cache().put(base, bytes)) std::free(base);
}

namespace {
// The checks every tensor passes before memory is found for it: element count within the limit,
// bytes addressable.
Status checked_bytes(DType dtype, const std::vector<int64_t>& shape, int64_t* n_out, size_t* bytes_out) {
  int64_t n = 0;
  GRADRT_RETURN_IF_ERROR(checked_num_elements(shape, "tensor", &n));
  if (n > max_tensor_elements())
    return Status(Code::ResourceExhausted, "tensor of shape " + shape_string(shape) + " has " +
                                               std::to_string(n) + " elements, more than the limit of " +
                                               std::to_string(max_tensor_elements()));
  // Checked: with a raised limit (or 32-bit size_t, wasm) n * itemsize could wrap around
  // to a small allocation that the op would then overrun.
  int64_t bytes64 = 0;
  if (mul_overflows(n, static_cast<int64_t>(dtype_size(dtype)), &bytes64) ||
      static_cast<uint64_t>(bytes64) > static_cast<uint64_t>(SIZE_MAX - kAlign - kHeader))  // + rounding + header
    return Status(Code::ResourceExhausted, "tensor of shape " + shape_string(shape) + " has " + std::to_string(n) +
                                               " elements, too many bytes to address");
  *n_out = n;
  *bytes_out = static_cast<size_t>(bytes64);
  return Status::OK();
}
}  // namespace

Status Tensor::adopt(DType dtype, std::vector<int64_t> shape, void* data, Tensor* out) {
  int64_t n = 0;
  size_t bytes = 0;
  GRADRT_RETURN_IF_ERROR(checked_bytes(dtype, shape, &n, &bytes));
  if (data == nullptr) return Status::OK();
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.num_elements_ = n;
  t.data_ = std::unique_ptr<void, Free>(data, Free(false));
  *out = std::move(t);
  return Status::OK();
}

Status Tensor::allocate(DType dtype, std::vector<int64_t> shape, Tensor* out, const void* away_from) {
  int64_t n = 0;
  size_t bytes = 0;
  GRADRT_RETURN_IF_ERROR(checked_bytes(dtype, shape, &n, &bytes));
  // Round up to the alignment (aligned_alloc wants a multiple of it: Emscripten's returns
  // null otherwise); allocate at least that much so data() is never null.
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (rounded == 0) rounded = kAlign;
  void* base = nullptr;
  size_t offset = kHeader;  // of the data in the block
  bool placed = false;
#if defined(__EMSCRIPTEN__)
  if (away_from != nullptr && rounded >= kAwayBytes && rounded <= SIZE_MAX - 3 * kPage) {
    // A page-aligned block with a page of slack: the data at offset kHeader + ((target -
    // kHeader) mod 4096) lies at target mod 4096 (16-byte aligned at least).
    const size_t target = ((reinterpret_cast<uintptr_t>(away_from) + kPage / 2 + 32) % kPage) & ~size_t{15};
    offset = kHeader + (target + kPage - kHeader) % kPage;
    base = std::aligned_alloc(kPage, (rounded + kHeader + 2 * kPage - 1) / kPage * kPage);
    placed = true;
  }
#else
  (void)away_from;
#endif
  if (!placed) {
    base = block_cache().take(rounded);
    if (base == nullptr) base = std::aligned_alloc(kAlign, rounded + kHeader);
  }
  if (base == nullptr)
    return Status(Code::ResourceExhausted, "out of memory allocating " + std::to_string(bytes) + " bytes");
  void* p = static_cast<char*>(base) + offset;
  std::memcpy(static_cast<char*>(p) - 16, &base, sizeof base);
  std::memcpy(static_cast<char*>(p) - 8, &rounded, sizeof rounded);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.num_elements_ = n;
  t.data_.reset(p);
  *out = std::move(t);
  return Status::OK();
}

uint16_t float_to_half(float f) { return half_bits(f); }
float half_to_float(uint16_t h) { return float_from_half(h); }
uint16_t float_to_bfloat16(float f) { return bfloat16_bits(f); }
float bfloat16_to_float(uint16_t b) { return float_from_bfloat16(b); }

}  // namespace gradrt
