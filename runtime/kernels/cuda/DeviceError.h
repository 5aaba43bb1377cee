//===- DeviceError.h - errors kernels report from the GPU --------*- C++
//-*-===//
//
// A kernel cannot synchronise to look at its data, so a check that depends
// on values (a gather index out of range) runs on the GPU: the first failing
// thread writes a code and a detail into the device's error word, the kernel
// still writes a defined value (zero) instead of reading out of bounds, and
// CudaDevice::synchronize() reads the word, clears it and throws the message.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_CUDA_DEVICEERROR_H
#define CLEAVE_RT_CUDA_DEVICEERROR_H

#include <cstdint>
#include <string>

namespace cleave::cuda {

/// Lives in device memory, one per CudaDevice.
struct DeviceErrorWord {
  int code;
  int unused;
  long long detail;
};

enum DeviceErrorCode : int {
  kNoDeviceError = 0,
  /// gather: `detail` is the offending index.
  kGatherIndexOutOfRange = 1,
};

inline std::string describeDeviceError(const DeviceErrorWord &word) {
  switch (word.code) {
  case kGatherIndexOutOfRange:
    return "gather: index " + std::to_string(word.detail) + " is out of range";
  default:
    return "device error " + std::to_string(word.code);
  }
}

} // namespace cleave::cuda

#endif // CLEAVE_RT_CUDA_DEVICEERROR_H
