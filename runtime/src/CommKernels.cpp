//===- CommKernels.cpp - the communication calls of host programs
//----------===//
//
// cleave_cpu_<name> for every CommList.def entry, over the context's
// Communicator. The communicator moves flat blocks; cutting a tensor along
// a dimension into the blocks of its group, and joining them again, is done
// here so that every communicator shares it.
//
//===----------------------------------------------------------------------===//

#include "Watchdog.h"

#include "cleave/rt/Communicator.h"
#include "cleave/rt/Context.h"

#include <cstring>
#include <string>
#include <vector>

namespace cleave::rt {

const char *reductionName(int64_t reduction) {
  static const char *const names[] = {"sum", "product", "max", "min",
                                      "average"};
  return reduction >= 0 && reduction < 5 ? names[reduction] : nullptr;
}

namespace {

/// A tensor seen as [outer, dim, inner] around one of its dimensions.
struct Split {
  std::size_t outer = 1;
  std::size_t dim = 1;
  std::size_t innerBytes = 1;
};

Split splitAt(const CleaveTensor &tensor, int64_t dim) {
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

std::size_t elements(const CleaveTensor &tensor) {
  std::size_t count = 1;
  for (int32_t d = 0; d < tensor.rank; ++d)
    count *= static_cast<std::size_t>(tensor.shape[d]);
  return count;
}

std::string shapeString(const CleaveTensor &tensor) {
  std::vector<int64_t> shape(tensor.shape, tensor.shape + tensor.rank);
  return typeString(static_cast<CleaveDType>(tensor.dtype), shape);
}

/// Cuts `src` ([outer, groups * n, inner]) into `groups` contiguous blocks
/// ([outer, n, inner] each), in order.
void packBlocks(const uint8_t *src, const Split &split, int groups,
                uint8_t *dst) {
  std::size_t row = split.dim / groups * split.innerBytes;
  for (int j = 0; j < groups; ++j)
    for (std::size_t o = 0; o < split.outer; ++o)
      std::memcpy(dst + (j * split.outer + o) * row,
                  src + (o * groups + j) * row, row);
}

/// Joins `groups` contiguous blocks ([outer, n, inner] each, `block` their
/// split) along the dimension: [outer, groups * n, inner].
void unpackBlocks(const uint8_t *src, const Split &block, int groups,
                  uint8_t *dst) {
  std::size_t row = block.dim * block.innerBytes;
  for (int j = 0; j < groups; ++j)
    for (std::size_t o = 0; o < block.outer; ++o)
      std::memcpy(dst + (o * groups + j) * row,
                  src + (j * block.outer + o) * row, row);
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
    if (!ctx->comm)
      fail("the program communicates, but runs as a single device without "
           "a communicator; run the bundle on its ranks (`cleave run`, or "
           "cleave-worker under mpirun)");
    return ctx->comm;
  }
  bool counts(int32_t numIn, int32_t numOut, int32_t wantIn, int32_t wantOut) {
    if (numIn == wantIn && numOut == wantOut)
      return true;
    fail("takes " + std::to_string(wantIn) + " inputs and " +
         std::to_string(wantOut) + " outputs, got " + std::to_string(numIn) +
         " and " + std::to_string(numOut));
    return false;
  }
  bool group(int64_t size, int actual) {
    if (size == actual)
      return true;
    fail("group_size " + std::to_string(size) +
         " differs from the device's tensor-parallel group of " +
         std::to_string(actual));
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

} // namespace
} // namespace cleave::rt

using namespace cleave::rt;

extern "C" {

int32_t cleave_cpu_send(CleaveContext *ctx, const CleaveTensor *in,
                        int32_t numIn, CleaveTensor *, int32_t numOut,
                        const int64_t *ints, const double *) {
  CommCall call(ctx, "send");
  Communicator *comm = call.communicator();
  if (!comm || !call.counts(numIn, numOut, 1, 0))
    return 1;
  std::size_t bytes = elements(in[0]) * cleave_dtype_size(in[0].dtype);
  return call.run([&] {
    comm->send(in[0].data, bytes, static_cast<int>(ints[0]),
               static_cast<int>(ints[1]));
  });
}

int32_t cleave_cpu_recv(CleaveContext *ctx, const CleaveTensor *, int32_t numIn,
                        CleaveTensor *out, int32_t numOut, const int64_t *ints,
                        const double *) {
  CommCall call(ctx, "recv");
  Communicator *comm = call.communicator();
  if (!comm || !call.counts(numIn, numOut, 0, 1))
    return 1;
  std::size_t bytes = elements(out[0]) * cleave_dtype_size(out[0].dtype);
  return call.run([&] {
    comm->recv(out[0].data, bytes, static_cast<int>(ints[0]),
               static_cast<int>(ints[1]));
  });
}

int32_t cleave_cpu_all_reduce(CleaveContext *ctx, const CleaveTensor *in,
                              int32_t numIn, CleaveTensor *out, int32_t numOut,
                              const int64_t *ints, const double *) {
  CommCall call(ctx, "all_reduce");
  Communicator *comm = call.communicator();
  if (!comm || !call.counts(numIn, numOut, 1, 1) ||
      !call.group(ints[0], comm->groupSize()) ||
      !call.scaled(in[0], out[0], -1, 1, 1) ||
      !call.reduction(ints[1], static_cast<CleaveDType>(in[0].dtype)))
    return 1;
  return call.run([&] {
    comm->allReduce(in[0].data, out[0].data, elements(in[0]),
                    static_cast<CleaveDType>(in[0].dtype),
                    static_cast<Reduction>(ints[1]));
  });
}

int32_t cleave_cpu_all_gather(CleaveContext *ctx, const CleaveTensor *in,
                              int32_t numIn, CleaveTensor *out, int32_t numOut,
                              const int64_t *ints, const double *) {
  CommCall call(ctx, "all_gather");
  Communicator *comm = call.communicator();
  if (!comm || !call.counts(numIn, numOut, 1, 1) ||
      !call.group(ints[0], comm->groupSize()) ||
      !call.dimension(in[0], ints[1]) ||
      !call.scaled(in[0], out[0], ints[1], ints[0], 1))
    return 1;
  int groups = static_cast<int>(ints[0]);
  Split block = splitAt(in[0], ints[1]);
  std::size_t bytes = block.outer * block.dim * block.innerBytes;
  return call.run([&] {
    // Gathered blocks are whole slabs of the output when nothing lies
    // outside the dimension.
    if (block.outer == 1) {
      comm->allGather(in[0].data, out[0].data, bytes);
      return;
    }
    std::vector<uint8_t> gathered(bytes * groups);
    comm->allGather(in[0].data, gathered.data(), bytes);
    unpackBlocks(gathered.data(), block, groups,
                 static_cast<uint8_t *>(out[0].data));
  });
}

int32_t cleave_cpu_reduce_scatter(CleaveContext *ctx, const CleaveTensor *in,
                                  int32_t numIn, CleaveTensor *out,
                                  int32_t numOut, const int64_t *ints,
                                  const double *) {
  CommCall call(ctx, "reduce_scatter");
  Communicator *comm = call.communicator();
  if (!comm || !call.counts(numIn, numOut, 1, 1) ||
      !call.group(ints[0], comm->groupSize()) ||
      !call.dimension(in[0], ints[1]) ||
      !call.scaled(in[0], out[0], ints[1], 1, ints[0]) ||
      !call.reduction(ints[2], static_cast<CleaveDType>(in[0].dtype)))
    return 1;
  int groups = static_cast<int>(ints[0]);
  Split whole = splitAt(in[0], ints[1]);
  return call.run([&] {
    const void *blocks = in[0].data;
    std::vector<uint8_t> packed;
    if (whole.outer != 1) {
      packed.resize(whole.outer * whole.dim * whole.innerBytes);
      packBlocks(static_cast<const uint8_t *>(in[0].data), whole, groups,
                 packed.data());
      blocks = packed.data();
    }
    comm->reduceScatter(blocks, out[0].data, elements(out[0]),
                        static_cast<CleaveDType>(in[0].dtype),
                        static_cast<Reduction>(ints[2]));
  });
}

int32_t cleave_cpu_all_slice(CleaveContext *ctx, const CleaveTensor *in,
                             int32_t numIn, CleaveTensor *out, int32_t numOut,
                             const int64_t *ints, const double *) {
  // A local copy: the device's place is all it needs, so it also runs
  // without a communicator.
  CommCall call(ctx, "all_slice");
  if (!call.counts(numIn, numOut, 1, 1) || !call.group(ints[0], ctx->tpSize) ||
      !call.dimension(in[0], ints[1]) ||
      !call.scaled(in[0], out[0], ints[1], 1, ints[0]))
    return 1;
  Split whole = splitAt(in[0], ints[1]);
  std::size_t row = whole.dim / ints[0] * whole.innerBytes;
  const auto *src = static_cast<const uint8_t *>(in[0].data);
  auto *dst = static_cast<uint8_t *>(out[0].data);
  for (std::size_t o = 0; o < whole.outer; ++o)
    std::memcpy(dst + o * row, src + (o * ints[0] + ctx->tpIndex) * row, row);
  return 0;
}

int32_t cleave_cpu_all_to_all(CleaveContext *ctx, const CleaveTensor *in,
                              int32_t numIn, CleaveTensor *out, int32_t numOut,
                              const int64_t *ints, const double *) {
  CommCall call(ctx, "all_to_all");
  Communicator *comm = call.communicator();
  if (!comm || !call.counts(numIn, numOut, 1, 1) ||
      !call.group(ints[0], comm->groupSize()) ||
      !call.dimension(in[0], ints[1]) || !call.dimension(in[0], ints[2]))
    return 1;
  int groups = static_cast<int>(ints[0]);
  int64_t splitDim = ints[1], concatDim = ints[2];
  // The block each device sends: X cut along split_dim.
  CleaveTensor block = in[0];
  if (block.shape[splitDim] % groups != 0)
    return call.fail("dimension " + std::to_string(splitDim) + " of " +
                     shapeString(in[0]) + " does not split into " +
                     std::to_string(groups) + " blocks");
  block.shape[splitDim] /= groups;
  if (!call.scaled(block, out[0], concatDim, groups, 1))
    return 1;
  Split whole = splitAt(in[0], splitDim);
  Split received = splitAt(block, concatDim);
  std::size_t bytes = elements(block) * cleave_dtype_size(block.dtype);
  return call.run([&] {
    std::vector<uint8_t> packed(bytes * groups), gathered(bytes * groups);
    packBlocks(static_cast<const uint8_t *>(in[0].data), whole, groups,
               packed.data());
    comm->allToAll(packed.data(), gathered.data(), bytes);
    unpackBlocks(gathered.data(), received, groups,
                 static_cast<uint8_t *>(out[0].data));
  });
}

} // extern "C"
