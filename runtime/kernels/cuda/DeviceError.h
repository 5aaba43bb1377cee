//===- DeviceError.h - errors kernels report from the GPU --------*- C++
//-*-===//
//
// A kernel cannot synchronise to look at its data, so a check that depends
// on values (an index out of range) runs on the GPU: the first failing
// thread writes a code, the offending index and the step that launched the
// kernel into the device's error word, the kernel still writes a defined
// value (zero, or nothing for a scatter) instead of reading or writing out
// of bounds, and CudaDevice::synchronize() reads the word, clears it and
// throws the message, naming the step and its node as a CPU kernel's
// failure does.
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
  /// The program step that launched the failing kernel (-1: none).
  int step;
  /// The dimension of data the index addresses.
  int dim;
  int unused;
  long long index;
  /// The size of that dimension: valid indices are [-bound, bound).
  long long bound;
  /// The step's node name: a host pointer into the loaded program, carried
  /// through the GPU but never read there.
  const char *node;
};

/// Where a kernel reports to: the device's word (null without a
/// CudaDevice) and the step that launches the kernel. Built on the host at
/// launch and passed to the kernel by value.
struct DeviceErrorSite {
  DeviceErrorWord *word;
  int step;
  const char *node;
};

/// One code per kernel that checks indices; the word's fields say which
/// index failed.
enum DeviceErrorCode : int {
  kNoDeviceError = 0,
  kGatherIndexOutOfRange = 1,
  kGatherNDIndexOutOfRange = 2,
  kScatterNDIndexOutOfRange = 3,
  kGatherElementsIndexOutOfRange = 4,
  kScatterElementsIndexOutOfRange = 5,
  kRotaryPositionOutOfRange = 6,
};

inline const char *deviceErrorKernel(int code) {
  switch (code) {
  case kGatherIndexOutOfRange:
    return "gather";
  case kGatherNDIndexOutOfRange:
    return "gather_nd";
  case kScatterNDIndexOutOfRange:
    return "scatter_nd";
  case kGatherElementsIndexOutOfRange:
    return "gather_elements";
  case kScatterElementsIndexOutOfRange:
    return "scatter_elements";
  case kRotaryPositionOutOfRange:
    return "rotary_embedding";
  default:
    return nullptr;
  }
}

/// The message of a recorded error, worded as cleave_rt_fail words a CPU
/// kernel's: "step 3 (node 'Gather_0'), kernel gather: index ...".
inline std::string describeDeviceError(const DeviceErrorWord &word) {
  const char *kernel = deviceErrorKernel(word.code);
  if (!kernel)
    return "device error " + std::to_string(word.code);
  std::string where;
  if (word.step >= 0) {
    where = "step " + std::to_string(word.step);
    if (word.node && *word.node)
      where += " (node '" + std::string(word.node) + "')";
    where += ", ";
  }
  return where + "kernel " + kernel + ": index " + std::to_string(word.index) +
         " is out of range [" + std::to_string(-word.bound) + ", " +
         std::to_string(word.bound) + ") for dimension " +
         std::to_string(word.dim) + " of data";
}

} // namespace cleave::cuda

#endif // CLEAVE_RT_CUDA_DEVICEERROR_H
