//===- Segmentation.h - the model cut into repeated segments ----*- C++ -*-===//
//
// A transformer is the same block many times over, with one activation (the
// residual stream) passed from each block to the next. The planner cuts the
// op sequence of a function at every point where exactly one activation is
// live; a model with no such point (an encoder-decoder, whose decoder reads
// the encoder's output in every layer), when asked for stages, is cut where
// the fewest activations are live. It recognises segments that are
// structurally identical (same op names, attributes and types, the same
// wiring; not the same values or weight names) so that each distinct segment
// is costed once.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_PLAN_SEGMENTATION_H
#define CLEAVE_PLAN_SEGMENTATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace cleave {

/// A contiguous range of planned ops.
struct ModelSegment {
  /// Ops [firstOp, lastOp] of `SegmentedModel::ops`.
  int64_t firstOp = 0;
  int64_t lastOp = 0;
  /// Index into `SegmentedModel::classes`.
  int64_t segmentClass = 0;
  /// Activations defined before the segment and used in it.
  llvm::SmallVector<mlir::Value> inputs;
  /// Activations defined in the segment and used after it (by a later op or
  /// the function's return).
  llvm::SmallVector<mlir::Value> outputs;
  /// Activations computed by ops up to the segment's last and used after
  /// it, in program order: what a stage that ends with the segment sends to
  /// the next. The outputs, and any value that passes by the segment on to
  /// a later one (arguments are not sent: each stage reads those it uses).
  llvm::SmallVector<mlir::Value> liveAfter;

  int64_t numOps() const { return lastOp - firstOp + 1; }
};

/// Segments that are structurally identical.
struct SegmentClass {
  /// The segment that stands for all of them.
  int64_t representative = 0;
  int64_t numInstances = 0;
};

/// A function's planned ops, cut into segments.
struct SegmentedModel {
  mlir::func::FuncOp function;
  /// The ops that do work, in program order: every op of the body except
  /// parameters (weights, constants and views of them) and the terminator.
  std::vector<mlir::Operation *> ops;
  llvm::DenseMap<mlir::Operation *, int64_t> opIndex;
  /// Size of the batch dimension (dimension 0 of the first tensor argument);
  /// 1 when the function has none.
  int64_t batchSize = 1;
  /// Activations that carry the batch, with the dimension that holds it.
  /// Traced from the arguments through each op's shardable loops.
  llvm::DenseMap<mlir::Value, int64_t> batchDims;
  /// Whether the batch can be split: every op that reads a batch-carrying
  /// value has a loop that splits it along the batch, and every output
  /// holds the samples in blocks of a dimension.
  bool batchSplittable = true;
  /// The first op whose loops lose the batch, when `batchSplittable` fails.
  mlir::Operation *batchBarrier = nullptr;
  /// Otherwise the first output that does not hold the samples in blocks
  /// (computed without the batch, or with the samples interleaved).
  int64_t batchOutput = -1;
  /// Per activation, a bit per token dimension: a dimension that indexes
  /// samples or positions of the input (batch, sequence, image rows) rather
  /// than features of the model. Every dimension of an argument is a token
  /// dimension; an op's loop that indexes a token dimension of an operand
  /// makes the result dimensions it indexes token dimensions too.
  llvm::DenseMap<mlir::Value, uint64_t> tokenDims;
  std::vector<ModelSegment> segments;
  std::vector<SegmentClass> classes;

  /// Whether dimension `dim` of `value` is a token dimension.
  bool isTokenDim(mlir::Value value, int64_t dim) const {
    auto it = tokenDims.find(value);
    return it != tokenDims.end() && dim >= 0 && dim < 64 &&
           (it->second >> dim & 1);
  }

  /// The batch dimension of `value`, or -1.
  int64_t getBatchDim(mlir::Value value) const {
    auto it = batchDims.find(value);
    return it == batchDims.end() ? -1 : it->second;
  }

  /// The dimension along which sequence parallelism holds `value` split
  /// between segments: its first token dimension, other than the batch,
  /// of more than one element. -1 when it has none, and for a value the
  /// function returns (results are whole).
  int64_t getSequenceDim(mlir::Value value) const;
};

/// Whether `value` is an activation: a value computed per sample (a
/// function argument or an op result) rather than a parameter.
bool isActivation(mlir::Value value);

/// Cuts `function` into segments and groups the identical ones. When no
/// point of the function has exactly one activation live and `minSegments`
/// is above one, cuts where the fewest activations are live instead. Fails,
/// with an error on the function, when it has no body or more than one
/// block.
mlir::FailureOr<SegmentedModel> segmentModel(mlir::func::FuncOp function,
                                             int64_t minSegments = 1);

} // namespace cleave

#endif // CLEAVE_PLAN_SEGMENTATION_H
