//===- CommCalls.h - the communication calls, written once -------*- C++
//-*-===//
//
// Every CommList.def call for host programs (CommKernels.cpp) and CUDA
// programs (kernels/cuda/Comm.cu). The communicator moves flat blocks;
// cutting a tensor along a dimension into the blocks of its group, and
// joining them again, is done here with pitched row copies, which is all
// that differs between the two: `Rows::copy` copies `rows` rows of `width`
// bytes between pitched layouts (memcpy on the host, a copy on the
// context's stream on a GPU). Working memory is the context's scratch, in
// the device's space.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_COMMCALLS_H
#define CLEAVE_RT_SRC_COMMCALLS_H

#include "CommCall.h"

namespace cleave::rt::comm {

/// CommCalls<Rows>::name is the call `name` of CommList.def, with the
/// arguments of CleaveKernelFn (Kernels.h).
template <typename Rows> struct CommCalls {
  static int32_t send(CleaveContext *ctx, const CleaveTensor *in,
                      int32_t numIn, CleaveTensor *, int32_t numOut,
                      const int64_t *ints) {
    CommCall call(ctx, "send");
    Communicator *comm = call.communicator();
    if (!comm || !call.counts(numIn, numOut, 1, 0))
      return 1;
    return call.run([&] {
      comm->send(in[0].data, bytesOf(in[0]), static_cast<int>(ints[0]),
                 static_cast<int>(ints[1]));
    });
  }

  static int32_t recv(CleaveContext *ctx, const CleaveTensor *,
                      int32_t numIn, CleaveTensor *out, int32_t numOut,
                      const int64_t *ints) {
    CommCall call(ctx, "recv");
    Communicator *comm = call.communicator();
    if (!comm || !call.counts(numIn, numOut, 0, 1))
      return 1;
    return call.run([&] {
      comm->recv(out[0].data, bytesOf(out[0]), static_cast<int>(ints[0]),
                 static_cast<int>(ints[1]));
    });
  }

  static int32_t all_reduce(CleaveContext *ctx, const CleaveTensor *in,
                            int32_t numIn, CleaveTensor *out, int32_t numOut,
                            const int64_t *ints) {
    CommCall call(ctx, "all_reduce");
    Communicator *comm = call.communicator();
    MeshAxis axis;
    if (!comm || !call.counts(numIn, numOut, 1, 1) ||
        !call.group(ints[0], ints[1], axis) ||
        !call.scaled(in[0], out[0], -1, 1, 1) ||
        !call.reduction(ints[2], static_cast<CleaveDType>(in[0].dtype)))
      return 1;
    return call.run([&] {
      comm->allReduce(axis, in[0].data, out[0].data, elements(in[0]),
                      static_cast<CleaveDType>(in[0].dtype),
                      static_cast<Reduction>(ints[2]));
    });
  }

  static int32_t all_gather(CleaveContext *ctx, const CleaveTensor *in,
                            int32_t numIn, CleaveTensor *out, int32_t numOut,
                            const int64_t *ints) {
    CommCall call(ctx, "all_gather");
    Communicator *comm = call.communicator();
    MeshAxis axis;
    if (!comm || !call.counts(numIn, numOut, 1, 1) ||
        !call.group(ints[0], ints[1], axis) ||
        !call.dimension(in[0], ints[2]) ||
        !call.scaled(in[0], out[0], ints[2], ints[1], 1))
      return 1;
    int groups = static_cast<int>(ints[1]);
    Split block = splitAt(in[0], ints[2]);
    std::size_t bytes = bytesOf(in[0]);
    return call.run([&] {
      // Gathered blocks are whole slabs of the output when nothing lies
      // outside the dimension.
      if (block.outer == 1) {
        comm->allGather(axis, in[0].data, out[0].data, bytes);
        return;
      }
      uint8_t *gathered = scratch(ctx, bytes * groups);
      comm->allGather(axis, in[0].data, gathered, bytes);
      unpackBlocks(ctx, gathered, block, groups,
                   static_cast<uint8_t *>(out[0].data));
    });
  }

  static int32_t reduce_scatter(CleaveContext *ctx, const CleaveTensor *in,
                                int32_t numIn, CleaveTensor *out,
                                int32_t numOut, const int64_t *ints) {
    CommCall call(ctx, "reduce_scatter");
    Communicator *comm = call.communicator();
    MeshAxis axis;
    if (!comm || !call.counts(numIn, numOut, 1, 1) ||
        !call.group(ints[0], ints[1], axis) ||
        !call.dimension(in[0], ints[2]) ||
        !call.scaled(in[0], out[0], ints[2], 1, ints[1]) ||
        !call.reduction(ints[3], static_cast<CleaveDType>(in[0].dtype)))
      return 1;
    int groups = static_cast<int>(ints[1]);
    Split whole = splitAt(in[0], ints[2]);
    return call.run([&] {
      const void *blocks = in[0].data;
      if (whole.outer != 1) {
        uint8_t *packed = scratch(ctx, bytesOf(in[0]));
        packBlocks(ctx, static_cast<const uint8_t *>(in[0].data), whole,
                   groups, packed);
        blocks = packed;
      }
      comm->reduceScatter(axis, blocks, out[0].data, elements(out[0]),
                          static_cast<CleaveDType>(in[0].dtype),
                          static_cast<Reduction>(ints[3]));
    });
  }

  /// A local copy: the device's place is all it needs, so it also runs
  /// without a communicator.
  static int32_t all_slice(CleaveContext *ctx, const CleaveTensor *in,
                           int32_t numIn, CleaveTensor *out, int32_t numOut,
                           const int64_t *ints) {
    CommCall call(ctx, "all_slice");
    MeshAxis axis;
    if (!call.counts(numIn, numOut, 1, 1) ||
        !call.group(ints[0], ints[1], axis))
      return 1;
    return sliceBlock(ctx, call, in[0], out[0], ints[1], ints[2],
                      ctx->coords.along(axis));
  }

  /// A local copy: the block of the batch the program computes.
  static int32_t batch_slice(CleaveContext *ctx, const CleaveTensor *in,
                             int32_t numIn, CleaveTensor *out, int32_t numOut,
                             const int64_t *ints) {
    CommCall call(ctx, "batch_slice");
    if (!call.counts(numIn, numOut, 1, 1) || !call.batchBlocks(ints[0]))
      return 1;
    return sliceBlock(ctx, call, in[0], out[0], ints[0], ints[1],
                      ctx->batchBlock);
  }

  static int32_t all_to_all(CleaveContext *ctx, const CleaveTensor *in,
                            int32_t numIn, CleaveTensor *out, int32_t numOut,
                            const int64_t *ints) {
    CommCall call(ctx, "all_to_all");
    Communicator *comm = call.communicator();
    MeshAxis axis;
    if (!comm || !call.counts(numIn, numOut, 1, 1) ||
        !call.group(ints[0], ints[1], axis) ||
        !call.dimension(in[0], ints[2]) || !call.dimension(in[0], ints[3]))
      return 1;
    int groups = static_cast<int>(ints[1]);
    int64_t splitDim = ints[2], concatDim = ints[3];
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
    std::size_t bytes = bytesOf(block);
    return call.run([&] {
      // Both halves in one scratch buffer, the second 256-byte aligned.
      std::size_t half = (bytes * groups + 255) / 256 * 256;
      uint8_t *packed = scratch(ctx, 2 * half);
      uint8_t *gathered = packed + half;
      packBlocks(ctx, static_cast<const uint8_t *>(in[0].data), whole, groups,
                 packed);
      comm->allToAll(axis, packed, gathered, bytes);
      unpackBlocks(ctx, gathered, received, groups,
                   static_cast<uint8_t *>(out[0].data));
    });
  }

private:
  static std::size_t bytesOf(const CleaveTensor &tensor) {
    return elements(tensor) * cleave_dtype_size(tensor.dtype);
  }

  /// The context's scratch of `bytes`, or throws (the context recorded
  /// why).
  static uint8_t *scratch(CleaveContext *ctx, std::size_t bytes) {
    void *pointer = cleave_rt_scratch(ctx, bytes ? bytes : 1);
    if (!pointer)
      throw Error(ctx->error);
    return static_cast<uint8_t *>(pointer);
  }

  /// Cuts `src` ([outer, groups * n, inner]) into `groups` contiguous
  /// blocks ([outer, n, inner] each), in order.
  static void packBlocks(CleaveContext *ctx, const uint8_t *src,
                         const Split &split, int groups, uint8_t *dst) {
    std::size_t row = split.dim / groups * split.innerBytes;
    for (int j = 0; j < groups; ++j)
      Rows::copy(ctx, dst + j * split.outer * row, row, src + j * row,
                 groups * row, row, split.outer);
  }

  /// Joins `groups` contiguous blocks ([outer, n, inner] each, `block`
  /// their split) along the dimension: [outer, groups * n, inner].
  static void unpackBlocks(CleaveContext *ctx, const uint8_t *src,
                           const Split &block, int groups, uint8_t *dst) {
    std::size_t row = block.dim * block.innerBytes;
    for (int j = 0; j < groups; ++j)
      Rows::copy(ctx, dst + j * row, groups * row, src + j * block.outer * row,
                 row, row, block.outer);
  }

  /// Y = block `index` of X cut into `blocks` along `dim`.
  static int32_t sliceBlock(CleaveContext *ctx, CommCall &call,
                            const CleaveTensor &x, CleaveTensor &y,
                            int64_t blocks, int64_t dim, int64_t index) {
    if (!call.dimension(x, dim) || !call.scaled(x, y, dim, 1, blocks))
      return 1;
    Split whole = splitAt(x, dim);
    std::size_t row = whole.dim / blocks * whole.innerBytes;
    return call.run([&] {
      Rows::copy(ctx, static_cast<uint8_t *>(y.data), row,
                 static_cast<const uint8_t *>(x.data) + index * row,
                 blocks * row, row, whole.outer);
    });
  }
};

} // namespace cleave::rt::comm

#endif // CLEAVE_RT_SRC_COMMCALLS_H
