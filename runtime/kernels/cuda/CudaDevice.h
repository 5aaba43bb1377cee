//===- CudaDevice.h - one CUDA GPU as a cleave::rt::Device -------*- C++
//-*-===//
//
// Owns the GPU's stream, the cuBLAS, cuBLASLt and cuDNN handles bound to it,
// the context kernels receive, and the device error word of DeviceError.h.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_CUDA_CUDADEVICE_H
#define CLEAVE_RT_CUDA_CUDADEVICE_H

#include "DeviceError.h"
#include "cleave/rt/Context.h"
#include "cleave/rt/Device.h"

namespace cleave::cuda {

class CudaDevice final : public rt::Device {
public:
  /// Binds GPU `index`; throws std::runtime_error saying why it cannot.
  explicit CudaDevice(int index);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  std::string name() const override;
  void *allocate(std::size_t bytes) override;
  void release(void *pointer) override;
  void copyToDevice(void *dst, const void *src, std::size_t bytes) override;
  void copyToHost(void *dst, const void *src, std::size_t bytes) override;
  /// Also reports, once, an error a kernel recorded in the error word.
  void synchronize() override;
  CleaveContext *context() override { return &context_; }
  bool isHost() const override { return false; }

  DeviceErrorWord *errorWord() const { return errorWord_; }
  /// The GPU's CUDA device number.
  int index() const { return index_; }

private:
  void makeCurrent() const;
  void destroy() noexcept;

  int index_;
  CleaveContext context_;
  DeviceErrorWord *errorWord_ = nullptr;
};

/// The error word of the CudaDevice behind `ctx`, or null when the context
/// belongs to another device.
DeviceErrorWord *deviceErrorWord(CleaveContext *ctx);

} // namespace cleave::cuda

#endif // CLEAVE_RT_CUDA_CUDADEVICE_H
