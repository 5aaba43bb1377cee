//===- CommKernels.cpp - the communication calls of host programs
//----------===//
//
// cleave_cpu_<name> for every CommList.def entry, over the context's
// Communicator. The communicator moves flat blocks; cutting a tensor along
// a dimension into the blocks of its group, and joining them again, is done
// here so that every communicator shares it.
//
//===----------------------------------------------------------------------===//

#include "CommCall.h"

#include <cstring>
#include <string>
#include <vector>

namespace cleave::rt {

using namespace comm;

const char *reductionName(int64_t reduction) {
  static const char *const names[] = {"sum", "product", "max", "min",
                                      "average"};
  return reduction >= 0 && reduction < 5 ? names[reduction] : nullptr;
}

namespace {

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

/// Y = block `index` of X cut into `blocks` along `dim`: a local copy.
int32_t sliceBlock(CommCall &call, const CleaveTensor &x, CleaveTensor &y,
                   int64_t blocks, int64_t dim, int64_t index) {
  if (!call.dimension(x, dim) || !call.scaled(x, y, dim, 1, blocks))
    return 1;
  Split whole = splitAt(x, dim);
  std::size_t row = whole.dim / blocks * whole.innerBytes;
  const auto *src = static_cast<const uint8_t *>(x.data);
  auto *dst = static_cast<uint8_t *>(y.data);
  for (std::size_t o = 0; o < whole.outer; ++o)
    std::memcpy(dst + o * row, src + (o * blocks + index) * row, row);
  return 0;
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

} // namespace
} // namespace cleave::rt

using namespace cleave::rt;
using namespace cleave::rt::comm;

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
  if (!call.counts(numIn, numOut, 1, 1) || !call.group(ints[0], ctx->tpSize))
    return 1;
  return sliceBlock(call, in[0], out[0], ints[0], ints[1], ctx->tpIndex);
}

int32_t cleave_cpu_batch_slice(CleaveContext *ctx, const CleaveTensor *in,
                               int32_t numIn, CleaveTensor *out,
                               int32_t numOut, const int64_t *ints,
                               const double *) {
  CommCall call(ctx, "batch_slice");
  if (!call.counts(numIn, numOut, 1, 1) || !call.batchBlocks(ints[0]))
    return 1;
  return sliceBlock(call, in[0], out[0], ints[0], ints[1], ctx->batchBlock);
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
