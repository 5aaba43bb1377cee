//===- HostTransport.cpp - in-process ranks on the host
//--------------------===//
//
// Host memory is every rank's: copies are memcpy, done when called, so marks
// are null and waiting for one is free.
//
//===----------------------------------------------------------------------===//

#include "../Elements.h"
#include "cleave/rt/LocalTransport.h"

#include <cstdlib>
#include <cstring>

namespace cleave::rt {
namespace {

class HostTransport final : public LocalTransport {
public:
  void *allocate(std::size_t bytes) override {
    std::size_t size = (bytes + 63) / 64 * 64;
    void *pointer = std::aligned_alloc(64, size ? size : 64);
    if (!pointer)
      throw Error("cpu: cannot allocate " + std::to_string(bytes) + " bytes");
    return pointer;
  }
  void release(void *pointer) override { std::free(pointer); }
  void copy(void *dst, const void *src, std::size_t bytes) override {
    if (bytes && dst != src)
      std::memcpy(dst, src, bytes);
  }
  void reduceBlocks(void *out, const void *blocks, int numBlocks,
                    std::size_t count, CleaveDType dtype,
                    Reduction reduction) override {
    elements::reduceBlocks(out, blocks, numBlocks, count, dtype, reduction);
  }
  QueueMark mark() override { return nullptr; }
  void waitFor(const QueueMark &) override {}
  bool reached(const QueueMark &) override { return true; }
  void synchronize() override {}
};

} // namespace

std::unique_ptr<LocalTransport> createHostTransport() {
  return std::make_unique<HostTransport>();
}

} // namespace cleave::rt
