//===- Context.h - the state behind CleaveContext ----------------*- C++
//-*-===//
//
// Shared by the runtime core and the device libraries; emitted programs and
// kernels only see the opaque pointer and the cleave_rt_* functions.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_CONTEXT_H
#define CLEAVE_RT_CONTEXT_H

#include "cleave/rt/Kernels.h"
#include "cleave/rt/Mesh.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace cleave::rt {
class Communicator;
class Device;
class Watchdog;

/// Constant weights in a kernel library's packed layout, by their offset in
/// the weight file and the library's description of the layout
/// (cleave_rt_find_packed_weights, cleave_rt_packed_weights): a bundle's
/// packed-weight file, or what the kernels pack while a bundle is packed.
class PackedWeights {
public:
  virtual ~PackedWeights() = default;
  /// The packed bytes, or null.
  virtual const void *find(int64_t offset, const void *layout,
                           std::size_t layoutBytes,
                           std::size_t bytes) const = 0;
  /// The kernels packed these bytes themselves.
  virtual void packed(int64_t offset, const void *layout,
                      std::size_t layoutBytes, const void *data,
                      std::size_t bytes) = 0;
};
} // namespace cleave::rt

struct CleaveContext {
  CleaveContext() = default;
  CleaveContext(const CleaveContext &) = delete;
  CleaveContext &operator=(const CleaveContext &) = delete;
  ~CleaveContext() {
    if (kernelCache)
      destroyKernelCache(kernelCache);
  }

  cleave::rt::Device *device = nullptr;
  int32_t numThreads = 1;
  /// The x86-64 level of the CPU kernels (cleave_rt_cpu_level).
  int32_t cpuLevel = 1;

  /// The first failure of the run: the kernel and the message.
  std::string error;
  std::string failedKernel;
  /// The step being run and its ONNX node (for messages and profiles).
  int32_t step = -1;
  const char *node = nullptr;
  /// Called at every step when set (profiling).
  void (*onStep)(CleaveContext *, int32_t step, const char *node) = nullptr;
  void *onStepData = nullptr;

  /// Scratch memory in the device's space, grown on demand.
  void *scratch = nullptr;
  std::size_t scratchBytes = 0;

  /// The program's constant weights (cleave_rt_constant_weights): the
  /// read-only mapping of its weight file on the host; empty elsewhere.
  const void *constantWeights = nullptr;
  std::size_t constantWeightBytes = 0;
  /// The constant weights stored packed, and where the kernels report what
  /// they pack (null: none stored, nothing reported).
  cleave::rt::PackedWeights *packedWeights = nullptr;
  /// What the CPU kernels keep between calls (cleave_rt_kernel_cache):
  /// primitives and weights repacked once, keyed by shape and address.
  void *kernelCache = nullptr;
  void (*destroyKernelCache)(void *) = nullptr;

  /// The kernel cache, made by `create` on first use (null when that
  /// fails); `destroy` frees it with the context.
  void *getKernelCache(void *(*create)(void), void (*destroy)(void *)) {
    if (!kernelCache) {
      kernelCache = create();
      if (kernelCache)
        destroyKernelCache = destroy;
    }
    return kernelCache;
  }

  /// cleave_rt_find_packed_weights.
  const void *findPackedWeights(const void *weights, const void *layout,
                                std::size_t layoutBytes,
                                std::size_t bytes) const {
    if (!packedWeights || !holdsConstantWeights(weights, 0))
      return nullptr;
    return packedWeights->find(offsetOfConstant(weights), layout, layoutBytes,
                               bytes);
  }
  /// cleave_rt_packed_weights.
  void reportPackedWeights(const void *weights, const void *layout,
                           std::size_t layoutBytes, const void *data,
                           std::size_t bytes) {
    if (packedWeights && holdsConstantWeights(weights, 0))
      packedWeights->packed(offsetOfConstant(weights), layout, layoutBytes,
                            data, bytes);
  }
  /// The offset of `data`, in constantWeights, from its start.
  int64_t offsetOfConstant(const void *data) const {
    return static_cast<int64_t>(
        reinterpret_cast<std::uintptr_t>(data) -
        reinterpret_cast<std::uintptr_t>(constantWeights));
  }

  /// Whether the `bytes` at `data` lie in `constantWeights`.
  bool holdsConstantWeights(const void *data, std::size_t bytes) const {
    auto begin = reinterpret_cast<std::uintptr_t>(constantWeights);
    auto at = reinterpret_cast<std::uintptr_t>(data);
    return constantWeights && at >= begin &&
           at - begin <= constantWeightBytes &&
           bytes <= constantWeightBytes - (at - begin);
  }

  /// The link to the bundle's other devices and this device's place (null
  /// and zeros for a single device); the communication calls use them.
  cleave::rt::Communicator *comm = nullptr;
  int32_t rank = 0;
  int32_t stage = 0;
  cleave::rt::MeshShape mesh;
  cleave::rt::MeshCoords coords;
  /// The block of the batch the program is computing, of `batchBlocks`
  /// (data-parallel replica x microbatches + microbatch).
  int32_t batchBlock = 0;
  int32_t batchBlocks = 1;
  /// Set while the program runs the last backward call of a training step,
  /// after which every gradient sum is final: the call that starts their
  /// reductions over the data-parallel replicas (reduce_start).
  bool lastBackward = false;
  /// Told when a step or a communication call starts and ends (null: no
  /// time limit).
  cleave::rt::Watchdog *watchdog = nullptr;

  /// CUDA handles (null on the host).
  void *cudaStream = nullptr;
  void *cublas = nullptr;
  void *cublasLt = nullptr;
  void *cudnn = nullptr;
};

#endif // CLEAVE_RT_CONTEXT_H
