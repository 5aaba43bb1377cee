//===- CommCall.h - what every communication call checks ---------*- C++
//-*-===//
//
// The host (CommKernels.cpp) and CUDA (kernels/cuda/Comm.cu) communication
// calls take the same arguments and refuse the same mistakes; cutting a
// tensor along a dimension starts from the same view of it.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_COMMCALL_H
#define CLEAVE_RT_SRC_COMMCALL_H

#include "Watchdog.h"

#include "cleave/rt/Communicator.h"
#include "cleave/rt/Context.h"

#include <string>
#include <vector>

namespace cleave::rt::comm {

/// A tensor seen as [outer, dim, inner] around one of its dimensions.
struct Split {
  std::size_t outer = 1;
  std::size_t dim = 1;
  std::size_t innerBytes = 1;
};

inline Split splitAt(const CleaveTensor &tensor, int64_t dim) {
  Split split;
  split.innerBytes = cleave_dtype_size(tensor.dtype);
  for (int32_t d = 0; d < tensor.rank; ++d) {
    std::size_t extent = static_cast<std::size_t>(tensor.shape[d]);
    if (d < dim)
      split.outer *= extent;
    else if (d == dim)
      split.dim = extent;
    else
      split.innerBytes *= extent;
  }
  return split;
}

inline std::size_t elements(const CleaveTensor &tensor) {
  std::size_t count = 1;
  for (int32_t d = 0; d < tensor.rank; ++d)
    count *= static_cast<std::size_t>(tensor.shape[d]);
  return count;
}

inline std::string shapeString(const CleaveTensor &tensor) {
  std::vector<int64_t> shape(tensor.shape, tensor.shape + tensor.rank);
  return typeString(static_cast<CleaveDType>(tensor.dtype), shape);
}

/// The checks and bookkeeping every communication call shares: a failure
/// is recorded on the context (naming the call) and returned.
class CommCall {
public:
  CommCall(CleaveContext *ctx, const char *name) : ctx(ctx), name(name) {
    if (ctx->watchdog)
      ctx->watchdog->begin(name, ctx->node);
  }
  ~CommCall() {
    if (ctx->watchdog)
      ctx->watchdog->begin("step", ctx->node);
  }

  int32_t fail(const std::string &message) {
    return cleave_rt_fail(ctx, name, message.c_str());
  }
  /// The communicator, or null after failing.
  Communicator *communicator() {
    if (!ctx->comm) {
      fail("the program communicates, but runs as a single device without "
           "a communicator; run the bundle on its ranks (`cleave run`, or "
           "cleave-worker under mpirun)");
      return nullptr;
    }
    try {
      ctx->comm->useContext(ctx);
    } catch (const std::exception &e) {
      fail(e.what());
      return nullptr;
    }
    return ctx->comm;
  }
  /// The collective's group: `code` must name a mesh axis and `size` be
  /// the device's group along it.
  bool group(int64_t code, int64_t size, MeshAxis &axis) {
    if (!meshAxisFromCode(code, axis))
      return fail("mesh axis " + std::to_string(code) +
                  " is none of pp (0), dp (1) or tp (2)"),
             false;
    int64_t actual = ctx->mesh.extent(axis);
    if (size == actual)
      return true;
    fail("group_size " + std::to_string(size) + " differs from the device's " +
         meshAxisName(axis) + " group of " + std::to_string(actual));
    return false;
  }
  /// The program's blocks of the batch must be the bundle's.
  bool batchBlocks(int64_t blocks) {
    if (blocks == ctx->batchBlocks)
      return true;
    fail("the program cuts the batch into " + std::to_string(blocks) +
         " blocks, the bundle into " + std::to_string(ctx->batchBlocks));
    return false;
  }
  bool dimension(const CleaveTensor &tensor, int64_t dim) {
    if (dim >= 0 && dim < tensor.rank)
      return true;
    fail("dimension " + std::to_string(dim) + " is outside " +
         shapeString(tensor));
    return false;
  }
  bool sameType(const CleaveTensor &x, const CleaveTensor &y) {
    if (x.dtype == y.dtype)
      return true;
    fail("input " + shapeString(x) + " and output " + shapeString(y) +
         " differ in dtype");
    return false;
  }
  /// `y` must be `x` with dimension `dim` scaled by num/den.
  bool scaled(const CleaveTensor &x, const CleaveTensor &y, int64_t dim,
              int64_t num, int64_t den) {
    bool ok = sameType(x, y) && x.rank == y.rank;
    for (int32_t d = 0; ok && d < x.rank; ++d)
      ok = d == dim
               ? x.shape[d] % den == 0 && y.shape[d] == x.shape[d] / den * num
               : x.shape[d] == y.shape[d];
    if (!ok && ctx->error.empty())
      fail("output " + shapeString(y) + " does not match input " +
           shapeString(x) + " along dimension " + std::to_string(dim));
    return ok;
  }
  bool reduction(int64_t value, CleaveDType dtype) {
    const char *reductionText = reductionName(value);
    if (!reductionText)
      return fail("unknown reduction " + std::to_string(value)), false;
    if (dtype == CLEAVE_BOOL && value == int64_t(Reduction::Average))
      return fail("cannot average bool"), false;
    return true;
  }

  /// Runs `body`, turning an Error into a recorded failure.
  template <typename Body> int32_t run(Body body) {
    try {
      body();
      return 0;
    } catch (const std::exception &e) {
      return fail(e.what());
    }
  }

private:
  CleaveContext *ctx;
  const char *name;
};

} // namespace cleave::rt::comm

#endif // CLEAVE_RT_SRC_COMMCALL_H
