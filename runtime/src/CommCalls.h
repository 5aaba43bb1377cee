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

#include "cleave/rt/KernelArgs.h"

namespace cleave::rt::comm {

/// CommCalls<Rows>::name is the call `name` of CommList.def, over the view
/// of its signature (rt/KernelArgs.h).
template <typename Rows> struct CommCalls {
  static int32_t send(CleaveContext *ctx, const args::Send &args) {
    CommCall call(ctx, "send");
    Communicator *comm = call.communicator();
    if (!comm)
      return 1;
    return call.run([&] {
      comm->send(args.x().data, bytesOf(args.x()),
                 static_cast<int>(args.peerStage()),
                 static_cast<int>(args.tag()));
    });
  }

  static int32_t recv(CleaveContext *ctx, const args::Recv &args) {
    CommCall call(ctx, "recv");
    Communicator *comm = call.communicator();
    if (!comm)
      return 1;
    return call.run([&] {
      comm->recv(args.y().data, bytesOf(args.y()),
                 static_cast<int>(args.peerStage()),
                 static_cast<int>(args.tag()));
    });
  }

  static int32_t all_reduce(CleaveContext *ctx, const args::AllReduce &args) {
    CommCall call(ctx, "all_reduce");
    Communicator *comm = call.communicator();
    MeshAxis axis;
    if (!comm || !call.group(args.axis(), args.groupSize(), axis) ||
        !call.scaled(args.x(), args.y(), -1, 1, 1) ||
        !call.reduction(args.reduction(),
                        static_cast<CleaveDType>(args.x().dtype)))
      return 1;
    return call.run([&] {
      comm->allReduce(axis, args.x().data, args.y().data, elements(args.x()),
                      static_cast<CleaveDType>(args.x().dtype),
                      static_cast<Reduction>(args.reduction()));
    });
  }

  static int32_t reduce_start(CleaveContext *ctx,
                              const args::ReduceStart &args) {
    CommCall call(ctx, "reduce_start");
    Communicator *comm = call.communicator();
    MeshAxis axis;
    if (!comm || !call.group(args.axis(), args.groupSize(), axis) ||
        !call.scaled(args.x(), args.y(), -1, 1, 1) ||
        !call.reduction(args.reduction(),
                        static_cast<CleaveDType>(args.y().dtype)))
      return 1;
    if (args.x().data != args.y().data)
      return call.fail("reduces in place, but its input and output are "
                       "apart");
    if (!ctx->lastBackward)
      return 0;
    return call.run([&] {
      comm->startAllReduce(axis, args.y().data, elements(args.y()),
                           static_cast<CleaveDType>(args.y().dtype),
                           static_cast<Reduction>(args.reduction()),
                           static_cast<int>(args.id()), args.last() != 0);
    });
  }

  static int32_t reduce_wait(CleaveContext *ctx, const args::ReduceWait &args) {
    CommCall call(ctx, "reduce_wait");
    Communicator *comm = call.communicator();
    if (!comm)
      return 1;
    return call.run([&] { comm->waitAllReduce(static_cast<int>(args.id())); });
  }

  static int32_t all_gather(CleaveContext *ctx,
                            const args::BlockCollective &args) {
    CommCall call(ctx, "all_gather");
    Communicator *comm = call.communicator();
    MeshAxis axis;
    if (!comm || !call.group(args.axis(), args.groupSize(), axis) ||
        !call.dimension(args.x(), args.dim()) ||
        !call.scaled(args.x(), args.y(), args.dim(), args.groupSize(), 1))
      return 1;
    int groups = static_cast<int>(args.groupSize());
    Split block = splitAt(args.x(), args.dim());
    std::size_t bytes = bytesOf(args.x());
    return call.run([&] {
      // Gathered blocks are whole slabs of the output when nothing lies
      // outside the dimension.
      if (block.outer == 1) {
        comm->allGather(axis, args.x().data, args.y().data, bytes);
        return;
      }
      uint8_t *gathered = scratch(ctx, bytes * groups);
      comm->allGather(axis, args.x().data, gathered, bytes);
      unpackBlocks(ctx, gathered, block, groups,
                   static_cast<uint8_t *>(args.y().data));
    });
  }

  static int32_t reduce_scatter(CleaveContext *ctx,
                                const args::ReduceScatter &args) {
    CommCall call(ctx, "reduce_scatter");
    Communicator *comm = call.communicator();
    MeshAxis axis;
    if (!comm || !call.group(args.axis(), args.groupSize(), axis) ||
        !call.dimension(args.x(), args.dim()) ||
        !call.scaled(args.x(), args.y(), args.dim(), 1, args.groupSize()) ||
        !call.reduction(args.reduction(),
                        static_cast<CleaveDType>(args.x().dtype)))
      return 1;
    int groups = static_cast<int>(args.groupSize());
    Split whole = splitAt(args.x(), args.dim());
    return call.run([&] {
      const void *blocks = args.x().data;
      if (whole.outer != 1) {
        uint8_t *packed = scratch(ctx, bytesOf(args.x()));
        packBlocks(ctx, static_cast<const uint8_t *>(args.x().data), whole,
                   groups, packed);
        blocks = packed;
      }
      comm->reduceScatter(axis, blocks, args.y().data, elements(args.y()),
                          static_cast<CleaveDType>(args.x().dtype),
                          static_cast<Reduction>(args.reduction()));
    });
  }

  /// A local copy: the device's place is all it needs, so it also runs
  /// without a communicator.
  static int32_t all_slice(CleaveContext *ctx,
                           const args::BlockCollective &args) {
    CommCall call(ctx, "all_slice");
    MeshAxis axis;
    if (!call.group(args.axis(), args.groupSize(), axis))
      return 1;
    return sliceBlock(ctx, call, args.x(), args.y(), args.groupSize(),
                      args.dim(), ctx->coords.along(axis));
  }

  /// A local copy: the block of the batch the program computes.
  static int32_t batch_slice(CleaveContext *ctx, const args::BatchSlice &args) {
    CommCall call(ctx, "batch_slice");
    if (!call.batchBlocks(args.blocks()))
      return 1;
    return sliceBlock(ctx, call, args.x(), args.y(), args.blocks(), args.dim(),
                      ctx->batchBlock);
  }

  static int32_t all_to_all(CleaveContext *ctx, const args::AllToAll &args) {
    CommCall call(ctx, "all_to_all");
    Communicator *comm = call.communicator();
    MeshAxis axis;
    if (!comm || !call.group(args.axis(), args.groupSize(), axis) ||
        !call.dimension(args.x(), args.splitDim()) ||
        !call.dimension(args.x(), args.concatDim()))
      return 1;
    int groups = static_cast<int>(args.groupSize());
    int64_t splitDim = args.splitDim(), concatDim = args.concatDim();
    // The block each device sends: X cut along split_dim.
    CleaveTensor block = args.x();
    if (block.shape[splitDim] % groups != 0)
      return call.fail("dimension " + std::to_string(splitDim) + " of " +
                       shapeString(args.x()) + " does not split into " +
                       std::to_string(groups) + " blocks");
    block.shape[splitDim] /= groups;
    if (!call.scaled(block, args.y(), concatDim, groups, 1))
      return 1;
    Split whole = splitAt(args.x(), splitDim);
    Split received = splitAt(block, concatDim);
    std::size_t bytes = bytesOf(block);
    return call.run([&] {
      // Both halves in one scratch buffer, the second 256-byte aligned.
      std::size_t half = (bytes * groups + 255) / 256 * 256;
      uint8_t *packed = scratch(ctx, 2 * half);
      uint8_t *gathered = packed + half;
      packBlocks(ctx, static_cast<const uint8_t *>(args.x().data), whole,
                 groups, packed);
      comm->allToAll(axis, packed, gathered, bytes);
      unpackBlocks(ctx, gathered, received, groups,
                   static_cast<uint8_t *>(args.y().data));
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
