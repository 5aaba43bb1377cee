//===- CommDevice.h - element work of the GPU communicators -------*- C++
//-*-===//
//
// Shared by the in-process transport (Comm.cu) and the NCCL communicator
// (runtime/comm/nccl), which links libcleave_rt_cuda for them.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_CUDA_COMMDEVICE_H
#define CLEAVE_RT_CUDA_COMMDEVICE_H

#include "cleave/rt/Communicator.h"

#include <cuda_runtime.h>

namespace cleave::cuda {

/// Queues `out` = the reduction of `numBlocks` blocks of `count` elements
/// at `blocks` on `stream` (float16 and bfloat16 accumulate in float32 and
/// round once; bool sums are "any", products "all"). Throws Error.
void reduceBlocksOnDevice(void *out, const void *blocks, int numBlocks,
                          std::size_t count, CleaveDType dtype,
                          rt::Reduction reduction, cudaStream_t stream);

/// Queues data[i] /= divisor (an average's last step).
void divideOnDevice(void *data, std::size_t count, CleaveDType dtype,
                    int divisor, cudaStream_t stream);

} // namespace cleave::cuda

#endif // CLEAVE_RT_CUDA_COMMDEVICE_H
