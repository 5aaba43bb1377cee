//===- Sharding.h - how splitting one loop distributes an op ----*- C++ -*-===//
//
// cleave ops implement upstream MLIR's `shard::ShardingInterface` as external
// models, so that `sharding-propagation` and `shard-partition` can rewrite
// cleave IR into SPMD form. This header registers those models and offers the
// planner a small view of them: which loops of an op may be split over the
// tensor-parallel axis, and what splitting one of them does to each operand
// and result.
//
// Loop numbering is the one of the op's `ShardingInterface`
// (`getLoopIteratorTypes`), and it is what `cleave.tp_loop` refers to; the
// per-op orders are listed in docs/partitioning.md.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSFORMS_PARTITION_SHARDING_H
#define CLEAVE_TRANSFORMS_PARTITION_SHARDING_H

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <string>

namespace cleave {

/// How one tensor is laid out over the tensor-parallel axis.
struct ValueSharding {
  enum class Kind {
    /// Every device holds the whole tensor.
    Replicated,
    /// Device r holds the r-th of equal contiguous blocks along `dim`.
    Split,
    /// Every device holds a tensor of the full shape; the value is their
    /// reduction by `reduction` (the result of a split reduction loop,
    /// before the all-reduce that `shard-partition` inserts).
    Partial,
  };

  Kind kind = Kind::Replicated;
  /// The split dimension when `kind` is `Split`, -1 otherwise.
  int64_t dim = -1;
  /// How the partial values combine when `kind` is `Partial`.
  mlir::shard::ReductionKind reduction = mlir::shard::ReductionKind::Sum;

  static ValueSharding replicated() { return {}; }
  static ValueSharding split(int64_t dim) {
    return {Kind::Split, dim, mlir::shard::ReductionKind::Sum};
  }
  static ValueSharding partial(mlir::shard::ReductionKind reduction) {
    return {Kind::Partial, -1, reduction};
  }

  bool isReplicated() const { return kind == Kind::Replicated; }
  bool isSplit() const { return kind == Kind::Split; }
  bool isPartial() const { return kind == Kind::Partial; }

  bool operator==(const ValueSharding &other) const {
    return kind == other.kind && dim == other.dim &&
           (kind != Kind::Partial || reduction == other.reduction);
  }
  bool operator!=(const ValueSharding &other) const {
    return !(*this == other);
  }
};

/// The layout of every operand and result of an op whose loop `loop` is split
/// over the tensor-parallel axis. Operands that are not ranked tensors of
/// rank >= 1 are always `Replicated`.
struct OpLoopSharding {
  int64_t loop = -1;
  mlir::utils::IteratorType iteratorType = mlir::utils::IteratorType::parallel;
  /// The loop's trip count: the size of the dimensions it splits.
  int64_t extent = 0;
  llvm::SmallVector<ValueSharding> operands;
  llvm::SmallVector<ValueSharding> results;
};

/// The layout splitting loop `loop` of `op` gives its operands and results.
/// Fails when `op` has no `ShardingInterface`, when `loop` is out of range,
/// and when the loop is not splittable (a normalised axis of softmax or
/// layer_norm, the axis of a concat, a broadcast batch loop, ...).
mlir::FailureOr<OpLoopSharding> getLoopSharding(mlir::Operation *op,
                                                int64_t loop);

/// Whether `use` writes its value in place (a destination of a
/// `DestinationStyleOpInterface` op: a training step's update,
/// accumulation, clearing or assignment).
bool writesInPlace(mlir::OpOperand &use);

/// The layout that `cleave-shard-step` gives a stored tensor (a weight or
/// a training step's state, `stored` its defining op) when the plan has
/// not decided it: the layout its first reader in program order needs,
/// that is the reader's `cleave.tp_loop` split, or whole when the reader has
/// none. A stored op with a `cleave.tp_loop` of its own has that split.
ValueSharding getFirstReaderLayout(mlir::Operation *stored);

/// Every loop of `op` that may be split `numShards` ways: the loops
/// `getLoopSharding` accepts whose split dimensions all divide by
/// `numShards`. In loop order; empty when `op` has no `ShardingInterface`.
llvm::SmallVector<OpLoopSharding> getShardableLoops(mlir::Operation *op,
                                                    int64_t numShards = 1);

/// How the samples of a batch run through a function body: which values
/// carry the batch, in which dimension, and which loop of each op keeps the
/// samples apart. Traced from the arguments: an op keeps the batch when one
/// of its loops splits every batch-carrying operand along its batch
/// dimension (other operands, computed without the batch, are cut along
/// with them or stay whole) and splits its results; they then carry the
/// batch where that loop splits them.
///
/// A reshape may merge the batch with the dimensions around it. Viewing a
/// value as `[P, B, Q]` (everything before the samples, the samples,
/// everything after them), a reshape keeps the batch when its result has a
/// dimension `e` whose predecessors hold `P / o` elements and whose own size
/// divides by `o * B`: the batch then sits in `e` below an outer factor `o`.
/// With `o = 1` (torch's `[S, B, H] -> [S, B * nh, hd]`) equal blocks of `e`
/// are blocks of samples. With `o > 1` (`[S, B, H] -> [S * B, H]`) they are
/// not, but a program that computes one block of the batch computes the
/// same ops at a smaller batch, where that dimension holds `o * B / blocks`
/// rows in the same interleaved order: the value is still cut "along `e`",
/// as long as nothing reads it by position across the batch (no operand
/// without the batch is cut along it, and it is not an output).
struct BatchTrace {
  /// Dimension 0 of the first tensor argument with a static one; 1 when
  /// there is none.
  int64_t batchSize = 1;
  llvm::DenseMap<mlir::Value, int64_t> dims;
  /// The outer factor `o` of every value in `dims` whose batch dimension
  /// holds the samples below another dimension; absent means 1.
  llvm::DenseMap<mlir::Value, int64_t> outer;
  /// The batch loop of every op that reads the batch and keeps it.
  llvm::DenseMap<mlir::Operation *, OpLoopSharding> loops;
  /// The reshapes that keep the batch by pairing an operand and a result
  /// dimension their loops do not pair: (operand dim, result dim). Cutting
  /// them takes `cleave.batch_dims` (`setBatchDims`).
  llvm::DenseMap<mlir::Operation *, std::pair<int64_t, int64_t>> movedBatch;
  /// The first op that reads the batch but mixes its samples (a reduction
  /// over the batch, a reshape that scatters it), if any.
  mlir::Operation *barrier = nullptr;

  /// The batch dimension of `value`, or -1.
  int64_t getDim(mlir::Value value) const {
    auto it = dims.find(value);
    return it == dims.end() ? -1 : it->second;
  }
  /// The outer factor of `value`'s batch dimension (see above).
  int64_t getOuter(mlir::Value value) const {
    auto it = outer.find(value);
    return it == outer.end() ? 1 : it->second;
  }
};

/// Traces the batch through `body`. `isActivation` tells the arguments that
/// hold samples from those that do not.
BatchTrace traceBatch(mlir::Block &body,
                      llvm::function_ref<bool(mlir::Value)> isActivation);

/// The mesh axis name of axis `axis` of `grid`: its entry in the grid's
/// `cleave.axes` attribute, `axis<N>` for grids without one.
std::string getGridAxisName(mlir::shard::GridOp grid,
                            mlir::shard::GridAxis axis);

/// Attaches `shard::ShardingInterface` external models to the cleave ops
/// whose split is described by a map of one iteration space: elementwise,
/// broadcasting, contractions, transposes, reductions, normalisations,
/// gathers, reshapes and the ops that join, split and slice tensors. Tools
/// call this through `cleave::registerAllDialects`.
void registerShardingInterfaceExternalModels(mlir::DialectRegistry &registry);

} // namespace cleave

#endif // CLEAVE_TRANSFORMS_PARTITION_SHARDING_H
