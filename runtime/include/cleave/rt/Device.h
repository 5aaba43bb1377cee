//===- Device.h - where a program's memory lives and kernels run -*- C++ -*-===//
//
// The runtime runs a program on a Device: the host (CPU kernels, OpenMP
// threads) or one CUDA GPU (libcleave_rt_cuda.so, loaded on demand so that
// the runtime itself never links CUDA).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_DEVICE_H
#define CLEAVE_RT_DEVICE_H

#include "cleave/rt/Kernels.h"

#include <cstddef>
#include <memory>
#include <string>

namespace cleave::rt {

class Device {
public:
  virtual ~Device() = default;
  /// "cpu" or "cuda:N".
  virtual std::string name() const = 0;
  /// Device memory of `bytes`, aligned to 64; throws on failure.
  virtual void *allocate(std::size_t bytes) = 0;
  virtual void release(void *pointer) = 0;
  virtual void copyToDevice(void *dst, const void *src, std::size_t bytes) = 0;
  virtual void copyToHost(void *dst, const void *src, std::size_t bytes) = 0;
  /// Waits for the work queued on the device; throws with the device's
  /// error message if it failed.
  virtual void synchronize() = 0;
  /// The context kernels receive. Owned by the device.
  virtual CleaveContext *context() = 0;
  /// True when device memory is host memory (no copies needed).
  virtual bool isHost() const = 0;
};

/// The host device with `numThreads` kernel threads (0: all cores).
std::unique_ptr<Device> createCpuDevice(int numThreads);

/// CUDA device `index`; loads libcleave_rt_cuda.so. Throws, saying why,
/// when the library, the driver or the GPU is missing.
std::unique_ptr<Device> createCudaDevice(int index);

} // namespace cleave::rt

/// Exported by libcleave_rt_cuda.so.
extern "C" cleave::rt::Device *cleave_rt_create_cuda_device(int index,
                                                            char *error,
                                                            int errorBytes);

#endif // CLEAVE_RT_DEVICE_H
