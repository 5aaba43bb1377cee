//===- CommKernels.cpp - the communication calls of host programs
//----------===//
//
// cleave_cpu_<name> for every CommList.def entry, over the context's
// Communicator (CommCalls.h), with blocks cut and joined by memcpy: each
// binds the view of its signature (rt/KernelArgs.h) and calls
// CommCalls<HostRows>::<name>.
//
//===----------------------------------------------------------------------===//

#include "CommCalls.h"

#include <cstring>
#include <type_traits>

namespace cleave::rt {

const char *reductionName(int64_t reduction) {
  // Every enum's values expand to a test; only CleaveReduction's can pass.
#define CLEAVE_ENUM_BEGIN(type)
#define CLEAVE_ENUM_VALUE(type, enumerator, code, spelling)                    \
  if (std::is_same_v<type, CleaveReduction> && reduction == enumerator)        \
    return spelling;
#define CLEAVE_ENUM_END(type)
#include "cleave/rt/KernelEnums.def"
  return nullptr;
}

} // namespace cleave::rt

namespace {

/// Pitched row copies in host memory.
struct HostRows {
  static void copy(CleaveContext *, uint8_t *dst, std::size_t dstPitch,
                   const uint8_t *src, std::size_t srcPitch,
                   std::size_t width, std::size_t rows) {
    if (dstPitch == width && srcPitch == width) {
      std::memcpy(dst, src, width * rows);
      return;
    }
    for (std::size_t r = 0; r < rows; ++r)
      std::memcpy(dst + r * dstPitch, src + r * srcPitch, width);
  }
};

} // namespace

extern "C" {

#define CLEAVE_COMM(name, signature)                                           \
  int32_t cleave_cpu_##name(CleaveContext *ctx, const CleaveTensor *in,        \
                            int32_t numIn, CleaveTensor *out, int32_t numOut,  \
                            const int64_t *ints, const double *floats) {       \
    return cleave::rt::args::runKernel<cleave::rt::args::signature>(           \
        &cleave::rt::comm::CommCalls<HostRows>::name, #name, ctx, in, numIn,   \
        out, numOut, ints, floats);                                            \
  }
#include "cleave/rt/CommList.def"

} // extern "C"
