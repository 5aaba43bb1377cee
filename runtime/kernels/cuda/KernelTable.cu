//===- KernelTable.cu - the C symbols of the CUDA kernels -----------------===//
//
// cleave_cuda_<name> for every KernelList.def entry: binds the view of the
// entry's signature (rt/KernelArgs.h) on the host and calls
// kernels::<name>. An entry whose function is missing does not link; one
// whose function takes another signature's view does not compile.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"

extern "C" {

#define CLEAVE_KERNEL(name, signature)                                         \
  int32_t cleave_cuda_##name(CleaveContext *ctx, const CleaveTensor *in,       \
                             int32_t numIn, CleaveTensor *out, int32_t numOut, \
                             const int64_t *ints, const double *floats) {      \
    return cleave::rt::args::runKernel<cleave::rt::args::signature>(           \
        &cleave::cuda::kernels::name, #name, ctx, in, numIn, out, numOut,      \
        ints, floats);                                                         \
  }
#include "cleave/rt/KernelList.def"

} // extern "C"
