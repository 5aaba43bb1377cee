//===- CpuDevice.cpp - the host as a Device
//--------------------------------===//

#include "cleave/rt/Context.h"
#include "cleave/rt/Device.h"
#include "cleave/rt/Runtime.h"

#include <cstdlib>
#include <cstring>
#include <omp.h>

namespace cleave::rt {
namespace {

class CpuDevice final : public Device {
public:
  explicit CpuDevice(int numThreads) {
    ctx.device = this;
    ctx.numThreads = numThreads > 0 ? numThreads : omp_get_max_threads();
  }
  ~CpuDevice() override {
    if (ctx.scratch)
      release(ctx.scratch);
  }

  std::string name() const override { return "cpu"; }

  void *allocate(std::size_t bytes) override {
    // aligned_alloc wants a multiple of the alignment, and a zero-sized
    // tensor still needs a distinct, valid pointer.
    std::size_t size = (bytes + 63) / 64 * 64;
    if (size == 0)
      size = 64;
    void *pointer = std::aligned_alloc(64, size);
    if (!pointer)
      throw Error("cpu: cannot allocate " + std::to_string(bytes) + " bytes");
    return pointer;
  }
  void release(void *pointer) override { std::free(pointer); }

  void copyToDevice(void *dst, const void *src, std::size_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
  }
  void copyToHost(void *dst, const void *src, std::size_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
  }
  void synchronize() override {}
  CleaveContext *context() override { return &ctx; }
  bool isHost() const override { return true; }

private:
  CleaveContext ctx;
};

} // namespace

std::unique_ptr<Device> createCpuDevice(int numThreads) {
  return std::make_unique<CpuDevice>(numThreads);
}

} // namespace cleave::rt
