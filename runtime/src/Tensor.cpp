//===- Tensor.cpp - owned tensors and dtype names
//--------------------------===//

#include "cleave/rt/Checked.h"
#include "cleave/rt/Runtime.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace cleave::rt {

namespace {
/// Owned blocks of at least kCachedBlockBytes that tensors freed, kept for
/// the next tensor of the same size. A session allocates its outputs anew
/// at every run and the program writes them in place; without the cache,
/// the C library returns a large freed block to the system (or alternates
/// between blocks), and every other run of a model with a large output
/// paid its page faults inside the kernel that wrote it (a 256 KB output:
/// 0.9 against 0.73 ms). At most kCachedBytes are kept; a block past that
/// is freed.
class BlockCache {
public:
  static constexpr std::size_t kCachedBlockBytes = 64 * 1024;
  static constexpr std::size_t kCachedBytes = 256 * 1024 * 1024;

  /// The process's cache, never destroyed: tensors may be freed by other
  /// static objects' destructors.
  static BlockCache &get() {
    static BlockCache *cache = new BlockCache();
    return *cache;
  }

  /// A kept block of `bytes`, or null.
  void *take(std::size_t bytes) {
    if (bytes < kCachedBlockBytes)
      return nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = blocks.find(bytes);
    if (it == blocks.end() || it->second.empty())
      return nullptr;
    void *block = it->second.back();
    it->second.pop_back();
    kept -= bytes;
    return block;
  }

  /// Keeps `block` of `bytes`; false when it is too small or there is no
  /// room (the caller frees it).
  bool give(void *block, std::size_t bytes) {
    if (bytes < kCachedBlockBytes)
      return false;
    std::lock_guard<std::mutex> lock(mutex);
    if (kept + bytes > kCachedBytes)
      return false;
    blocks[bytes].push_back(block);
    kept += bytes;
    return true;
  }

private:
  std::mutex mutex;
  std::unordered_map<std::size_t, std::vector<void *>> blocks;
  std::size_t kept = 0;
};

struct DTypeName {
  CleaveDType dtype;
  const char *name;
};
constexpr DTypeName dtypeNames[] = {
#define CLEAVE_DTYPE(suffix, name, code, bytes, numpy)                         \
  {CLEAVE_##suffix, #numpy},
#include "cleave/rt/DTypeList.def"
};
} // namespace

const char *dtypeName(CleaveDType dtype) {
  for (const DTypeName &entry : dtypeNames)
    if (entry.dtype == dtype)
      return entry.name;
  return "invalid";
}

CleaveDType dtypeFromName(const std::string &name) {
  for (const DTypeName &entry : dtypeNames)
    if (name == entry.name)
      return entry.dtype;
  return CLEAVE_DTYPE_INVALID;
}

std::string typeString(CleaveDType dtype, const std::vector<int64_t> &shape) {
  std::string text = dtypeName(dtype);
  text += '[';
  for (std::size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + ']';
}

/// The bytes of one row of `tensor` below dimension `dim`: the elements of
/// dimensions `dim...`, and how many such rows lie above it.
static std::pair<std::size_t, int64_t> rowsOf(const Tensor &tensor, int dim) {
  int64_t outer = 1;
  for (int d = 0; d < dim; ++d)
    outer *= tensor.shape()[d];
  std::size_t row =
      outer == 0 ? 0 : tensor.byteSize() / static_cast<std::size_t>(outer);
  return {row, outer};
}

Tensor concatenate(const std::vector<Tensor> &blocks, int dim) {
  if (blocks.empty())
    throw Error("no blocks to join");
  const Tensor &first = blocks.front();
  if (dim < 0 || dim >= static_cast<int>(first.shape().size()))
    throw Error("cannot join " + typeString(first.dtype(), first.shape()) +
                " blocks along dimension " + std::to_string(dim));
  for (const Tensor &block : blocks)
    if (block.dtype() != first.dtype() || block.shape() != first.shape())
      throw Error("cannot join a " + typeString(block.dtype(), block.shape()) +
                  " block to " + typeString(first.dtype(), first.shape()) +
                  " blocks");
  std::vector<int64_t> shape = first.shape();
  shape[dim] *= static_cast<int64_t>(blocks.size());
  Tensor whole(first.dtype(), shape);
  auto [row, outer] = rowsOf(first, dim);
  auto *out = static_cast<uint8_t *>(whole.data());
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor &block : blocks) {
      std::memcpy(out, static_cast<const uint8_t *>(block.data()) + o * row,
                  row);
      out += row;
    }
  return whole;
}

Tensor blockOf(const Tensor &whole, int dim, int index, int parts) {
  const std::vector<int64_t> &shape = whole.shape();
  if (dim < 0 || dim >= static_cast<int>(shape.size()) || parts < 1 ||
      index < 0 || index >= parts || shape[dim] % parts != 0)
    throw Error("cannot take block " + std::to_string(index) + " of " +
                std::to_string(parts) + " of " +
                typeString(whole.dtype(), shape) + " along dimension " +
                std::to_string(dim));
  std::vector<int64_t> blockShape = shape;
  blockShape[dim] /= parts;
  Tensor block(whole.dtype(), blockShape);
  auto [row, outer] = rowsOf(block, dim);
  const auto *in = static_cast<const uint8_t *>(whole.data());
  auto *out = static_cast<uint8_t *>(block.data());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out + o * row, in + (o * parts + index) * row, row);
  return block;
}

void Tensor::Free::operator()(void *pointer) const {
  if (borrowed || BlockCache::get().give(pointer, bytes))
    return;
  std::free(pointer);
}

void Tensor::describe(CleaveDType dtype, std::vector<int64_t> shape) {
  dtype_ = dtype;
  shape_ = std::move(shape);
  if (cleave_dtype_size(dtype) == 0)
    throw Error("a tensor of unknown dtype " + std::to_string(dtype));
  for (int64_t dim : shape_)
    if (dim < 0)
      throw Error("a tensor of negative dimension: " +
                  typeString(dtype_, shape_));
  int64_t elements, bytes;
  if (!checkedTensorSize(shape_, cleave_dtype_size(dtype), elements, bytes))
    throw Error("a tensor of more bytes than cleave can address: " +
                typeString(dtype_, shape_));
}

Tensor::Tensor(CleaveDType dtype, std::vector<int64_t> shape, Uninitialized) {
  describe(dtype, std::move(shape));
  std::size_t size = std::max<std::size_t>((byteSize() + 63) / 64 * 64, 64);
  void *block = BlockCache::get().take(size);
  if (!block)
    block = std::aligned_alloc(64, size);
  if (!block)
    throw Error("cannot allocate " + typeString(dtype_, shape_));
  bytes_ = std::unique_ptr<uint8_t, Free>(static_cast<uint8_t *>(block),
                                          Free{/*borrowed=*/false, size});
}

Tensor::Tensor(CleaveDType dtype, std::vector<int64_t> shape)
    : Tensor(dtype, std::move(shape), Uninitialized()) {
  std::memset(bytes_.get(), 0, byteSize());
}

Tensor::Tensor(CleaveDType dtype, std::vector<int64_t> shape, const void *data)
    : Tensor(dtype, std::move(shape), Uninitialized()) {
  if (byteSize())
    std::memcpy(bytes_.get(), data, byteSize());
}

Tensor Tensor::uninitialized(CleaveDType dtype, std::vector<int64_t> shape) {
  return Tensor(dtype, std::move(shape), Uninitialized());
}

Tensor Tensor::borrowed(CleaveDType dtype, std::vector<int64_t> shape,
                        void *data) {
  Tensor tensor;
  tensor.describe(dtype, std::move(shape));
  if (!data && tensor.byteSize())
    throw Error("a borrowed " + typeString(dtype, tensor.shape_) +
                " without bytes");
  if (reinterpret_cast<uintptr_t>(data) % cleave_dtype_size(dtype))
    throw Error("a borrowed " + typeString(dtype, tensor.shape_) +
                " at an address not aligned to its element");
  tensor.bytes_ = std::unique_ptr<uint8_t, Free>(static_cast<uint8_t *>(data),
                                                 Free{/*borrowed=*/true});
  return tensor;
}

Tensor::Tensor(const Tensor &other) { *this = other; }

Tensor &Tensor::operator=(const Tensor &other) {
  if (this == &other)
    return *this;
  if (!other.bytes_) {
    *this = Tensor();
    return *this;
  }
  *this = Tensor(other.dtype_, other.shape_, other.data());
  return *this;
}

int64_t Tensor::numElements() const {
  int64_t count = 1;
  for (int64_t dim : shape_)
    count *= dim;
  return count;
}

std::size_t Tensor::byteSize() const {
  // An empty Tensor has the invalid dtype, whose size is 0.
  return static_cast<std::size_t>(numElements()) * cleave_dtype_size(dtype_);
}

} // namespace cleave::rt
