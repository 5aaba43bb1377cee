//===- ShardingInterfaceImpl.cpp - cleave ops as shardable ops --*- C++ -*-===//
//
// External models of `shard::ShardingInterface` for cleave ops. Each op family
// describes its iteration space once (a `LoopSpace`: its loops and which loop
// indexes each operand and result dimension); one model template turns that
// description into the interface that `sharding-propagation`,
// `shard-partition`, `cleave-partition` and the planner use.
//
// The description is richer than the interface's affine maps in two ways
// that cleave ops need:
//   - a dimension may be indexed by no loop: a size-1 dimension that
//     broadcasts (the `1x1xSxS` attention mask against `BxHxSxS` scores), the
//     gathered axis of a table, the minor dimensions of a reshape group. Such
//     a dimension is never split;
//   - a loop may be unsplittable: the normalised axes of softmax,
//     layer_norm and rms_norm, the axis of a concat or split. Propagation never
//     assigns a grid axis to such a loop, and partitioning rejects one that has
//     it.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Sharding.h"

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace cleave;

using mlir::shard::GridAxis;
using mlir::shard::ReductionKind;
using mlir::shard::Sharding;
using mlir::shard::ShardingArray;
using mlir::shard::ShardingOption;
using mlir::utils::IteratorType;

namespace {

/// Marks an operand or result dimension that no loop indexes.
constexpr int64_t kNoLoop = -1;

//===----------------------------------------------------------------------===//
// LoopSpace
//===----------------------------------------------------------------------===//

/// The iteration space of one op.
struct LoopSpace {
  SmallVector<IteratorType> iteratorTypes;
  /// How each loop reduces; only read for reduction loops.
  SmallVector<ReductionKind> reductionKinds;
  SmallVector<bool> splittable;
  /// For each operand, then each result: the loop that indexes each of its
  /// dimensions, or `kNoLoop`. Empty for values that are not ranked tensors.
  SmallVector<SmallVector<int64_t>> operandDims;
  SmallVector<SmallVector<int64_t>> resultDims;
  /// Whether every `kNoLoop` dimension has size 1, so that the affine maps
  /// (constant 0 there) describe the op exactly.
  bool affine = true;

  int64_t addLoop(IteratorType type,
                  ReductionKind kind = ReductionKind::Generic,
                  bool canSplit = true) {
    iteratorTypes.push_back(type);
    reductionKinds.push_back(kind);
    splittable.push_back(canSplit);
    return iteratorTypes.size() - 1;
  }

  int64_t numLoops() const { return iteratorTypes.size(); }

  /// Adds one parallel loop per dimension of `shape`.
  void addParallelLoops(ArrayRef<int64_t> shape) {
    for (size_t i = 0; i < shape.size(); ++i)
      addLoop(IteratorType::parallel);
  }

  /// The per-value dimension table of operand `i` (or result `i - numOperands`
  /// when `i` is past the operands).
  ArrayRef<int64_t> dimsOf(unsigned i) const {
    if (i < operandDims.size())
      return operandDims[i];
    return resultDims[i - operandDims.size()];
  }
};

/// `[first, first + rank)`: a value whose dimension i is loop first + i.
SmallVector<int64_t> identityDims(int64_t rank, int64_t first = 0) {
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i)
    dims.push_back(first + i);
  return dims;
}

/// The dimensions of an operand of shape `shape` that broadcasts (numpy
/// style, right-aligned) against loops `[first, first + loopShape.size())`
/// of extents `loopShape`: a size-1 dimension against a larger one is
/// indexed by no loop.
SmallVector<int64_t> broadcastDims(ArrayRef<int64_t> shape,
                                   ArrayRef<int64_t> loopShape,
                                   int64_t first = 0) {
  SmallVector<int64_t> dims;
  int64_t offset = loopShape.size() - shape.size();
  for (auto [i, size] : llvm::enumerate(shape)) {
    int64_t loop = offset + i;
    if (loop < 0 || (size == 1 && loopShape[loop] != 1))
      dims.push_back(kNoLoop);
    else
      dims.push_back(first + loop);
  }
  return dims;
}

FailureOr<ArrayRef<int64_t>> rankedShape(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return failure();
  return type.getShape();
}

/// The space of an op whose operands and results all have the result's
/// shape, or broadcast to it: one parallel loop per result dimension.
FailureOr<LoopSpace> describeBroadcasting(Operation *op) {
  if (op->getNumResults() != 1)
    return failure();
  FailureOr<ArrayRef<int64_t>> resultShape = rankedShape(op->getResult(0));
  if (failed(resultShape))
    return failure();
  LoopSpace space;
  space.addParallelLoops(*resultShape);
  for (Value operand : op->getOperands()) {
    FailureOr<ArrayRef<int64_t>> shape = rankedShape(operand);
    if (failed(shape))
      return failure();
    space.operandDims.push_back(broadcastDims(*shape, *resultShape));
  }
  space.resultDims.push_back(identityDims(resultShape->size()));
  return space;
}

//===----------------------------------------------------------------------===//
// Per-family descriptions
//===----------------------------------------------------------------------===//

/// Elementwise ops, broadcasting binary ops, where, cast, expand.
template <typename OpT> struct BroadcastingSpace {
  static FailureOr<LoopSpace> describe(OpT op) {
    return describeBroadcasting(op);
  }
};

/// numpy matmul: loops are the result's batch dimensions, then M (when lhs
/// is at least 2-D), then N (when rhs is at least 2-D), then the contracted
/// K. A 1-D operand has only K. A batch dimension that an operand
/// broadcasts (size 1) is indexed by no loop in that operand.
struct MatMulSpace {
  static FailureOr<LoopSpace> describe(MatMulOp op) {
    auto lhs = rankedShape(op.getLhs()), rhs = rankedShape(op.getRhs()),
         result = rankedShape(op.getOutput());
    if (failed(lhs) || failed(rhs) || failed(result))
      return failure();
    int64_t lhsRank = lhs->size(), rhsRank = rhs->size();
    bool hasM = lhsRank >= 2, hasN = rhsRank >= 2;
    int64_t numBatch = result->size() - hasM - hasN;
    if (numBatch < 0 || lhsRank < 1 || rhsRank < 1)
      return failure();

    LoopSpace space;
    ArrayRef<int64_t> batchShape = result->take_front(numBatch);
    space.addParallelLoops(batchShape);
    int64_t m = hasM ? space.addLoop(IteratorType::parallel) : kNoLoop;
    int64_t n = hasN ? space.addLoop(IteratorType::parallel) : kNoLoop;
    int64_t k = space.addLoop(IteratorType::reduction, ReductionKind::Sum);

    SmallVector<int64_t> lhsDims, rhsDims;
    if (hasM) {
      lhsDims = broadcastDims(lhs->drop_back(2), batchShape);
      lhsDims.append({m, k});
    } else {
      lhsDims = {k};
    }
    if (hasN) {
      rhsDims = broadcastDims(rhs->drop_back(2), batchShape);
      rhsDims.append({k, n});
    } else {
      rhsDims = {k};
    }
    SmallVector<int64_t> resultDims = identityDims(numBatch);
    if (hasM)
      resultDims.push_back(m);
    if (hasN)
      resultDims.push_back(n);
    space.operandDims = {lhsDims, rhsDims};
    space.resultDims = {resultDims};
    return space;
  }
};

/// Gemm: loops M, N, K. Splitting K would add `beta * c` once per device, so
/// K is unsplittable when `c` is present.
struct GemmSpace {
  static FailureOr<LoopSpace> describe(GemmOp op) {
    auto a = rankedShape(op.getA()), b = rankedShape(op.getB()),
         result = rankedShape(op.getOutput());
    if (failed(a) || failed(b) || failed(result) || a->size() != 2 ||
        b->size() != 2)
      return failure();
    LoopSpace space;
    int64_t m = space.addLoop(IteratorType::parallel);
    int64_t n = space.addLoop(IteratorType::parallel);
    int64_t k = space.addLoop(IteratorType::reduction, ReductionKind::Sum,
                              /*canSplit=*/!op.getC());
    space.operandDims.push_back(op.getTransA() ? SmallVector<int64_t>{k, m}
                                               : SmallVector<int64_t>{m, k});
    space.operandDims.push_back(op.getTransB() ? SmallVector<int64_t>{n, k}
                                               : SmallVector<int64_t>{k, n});
    if (Value c = op.getC()) {
      auto cShape = rankedShape(c);
      if (failed(cShape))
        return failure();
      space.operandDims.push_back(broadcastDims(*cShape, *result));
    }
    space.resultDims = {{m, n}};
    return space;
  }
};

/// Transpose: loops are the result dimensions; operand dimension perm[i] is
/// loop i.
struct TransposeSpace {
  static FailureOr<LoopSpace> describe(TransposeOp op) {
    auto result = rankedShape(op.getOutput());
    if (failed(result) || op.getPerm().size() != result->size())
      return failure();
    LoopSpace space;
    space.addParallelLoops(*result);
    SmallVector<int64_t> inputDims(result->size(), kNoLoop);
    for (auto [i, p] : llvm::enumerate(op.getPerm())) {
      if (p < 0 || p >= static_cast<int64_t>(inputDims.size()))
        return failure();
      inputDims[p] = i;
    }
    space.operandDims = {inputDims};
    space.resultDims = {identityDims(result->size())};
    return space;
  }
};

/// Reductions: one loop per input dimension; the reduced ones are reduction
/// loops that combine with `Kind` (Generic: not splittable, e.g. the L2
/// norm, whose partial norms do not add).
template <typename OpT, ReductionKind Kind> struct ReduceSpace {
  static FailureOr<LoopSpace> describe(OpT op) {
    auto input = rankedShape(op.getInput());
    if (failed(input))
      return failure();
    ArrayRef<int64_t> axes = op.getAxes();
    LoopSpace space;
    SmallVector<int64_t> resultDims;
    for (int64_t d = 0, e = input->size(); d < e; ++d) {
      bool reduced = llvm::is_contained(axes, d);
      int64_t loop = reduced ? space.addLoop(IteratorType::reduction, Kind,
                                             Kind != ReductionKind::Generic)
                             : space.addLoop(IteratorType::parallel);
      if (!reduced)
        resultDims.push_back(loop);
      else if (op.getKeepdims())
        resultDims.push_back(kNoLoop);
    }
    space.operandDims = {identityDims(input->size())};
    space.resultDims = {resultDims};
    return space;
  }
};

/// Softmax and log_softmax: the normalised axis is a reduction loop that is
/// never split (the normalisation needs every element of it).
template <typename OpT> struct SoftmaxSpace {
  static FailureOr<LoopSpace> describe(OpT op) {
    auto input = rankedShape(op.getInput());
    if (failed(input))
      return failure();
    LoopSpace space;
    for (int64_t d = 0, e = input->size(); d < e; ++d) {
      if (d == static_cast<int64_t>(op.getAxis()))
        space.addLoop(IteratorType::reduction, ReductionKind::Generic,
                      /*canSplit=*/false);
      else
        space.addLoop(IteratorType::parallel);
    }
    space.operandDims = {identityDims(input->size())};
    space.resultDims = {identityDims(input->size())};
    return space;
  }
};

/// Arg max/min: like a reduction over the axis, but the position of an
/// extreme cannot be combined from partial results, so the axis is never
/// split.
template <typename OpT> struct ArgExtremeSpace {
  static FailureOr<LoopSpace> describe(OpT op) {
    auto input = rankedShape(op.getInput());
    if (failed(input))
      return failure();
    int64_t axis = op.getAxis();
    LoopSpace space;
    SmallVector<int64_t> resultDims;
    for (int64_t d = 0, e = input->size(); d < e; ++d) {
      if (d != axis) {
        resultDims.push_back(space.addLoop(IteratorType::parallel));
        continue;
      }
      space.addLoop(IteratorType::reduction, ReductionKind::Generic,
                    /*canSplit=*/false);
      if (op.getKeepdims())
        resultDims.push_back(kNoLoop);
    }
    space.operandDims = {identityDims(input->size())};
    space.resultDims = {resultDims};
    return space;
  }
};

/// Top-k and cumsum: one loop per input dimension; the axis, whose elements
/// are ordered or accumulated together, is never split. Top-k's results
/// have k elements along it, indexed by no loop.
template <typename OpT> struct AxisScanSpace {
  static FailureOr<LoopSpace> describe(OpT op) {
    auto input = rankedShape(op.getInput());
    if (failed(input))
      return failure();
    int64_t axis = op.getAxis();
    LoopSpace space;
    for (int64_t d = 0, e = input->size(); d < e; ++d)
      space.addLoop(IteratorType::parallel, ReductionKind::Generic,
                    /*canSplit=*/d != axis);
    space.operandDims = {identityDims(input->size())};
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      SmallVector<int64_t> dims = identityDims(input->size());
      if constexpr (std::is_same_v<OpT, TopKOp>)
        dims[axis] = kNoLoop;
      space.resultDims.push_back(dims);
    }
    space.affine = !std::is_same_v<OpT, TopKOp>;
    return space;
  }
};

/// Layer and RMS norm: the normalised axes `[axis, rank)` are unsplittable
/// reduction loops; scale and bias broadcast against them.
template <typename OpT> struct TrailingNormSpace {
  static FailureOr<LoopSpace> describe(OpT op) {
    auto input = rankedShape(op.getInput());
    if (failed(input))
      return failure();
    int64_t rank = input->size(), axis = op.getAxis();
    if (axis < 0 || axis > rank)
      return failure();
    LoopSpace space;
    for (int64_t d = 0; d < rank; ++d) {
      if (d >= axis)
        space.addLoop(IteratorType::reduction, ReductionKind::Generic,
                      /*canSplit=*/false);
      else
        space.addLoop(IteratorType::parallel);
    }
    space.operandDims.push_back(identityDims(rank));
    ArrayRef<int64_t> normalised = input->drop_front(axis);
    for (Value param : op->getOperands().drop_front()) {
      auto shape = rankedShape(param);
      if (failed(shape))
        return failure();
      space.operandDims.push_back(broadcastDims(*shape, normalised, axis));
    }
    space.resultDims = {identityDims(rank)};
    return space;
  }
};

/// Rotary embedding: one parallel loop per input dimension. The head
/// entries (rank 4) or the hidden dimension (rank 3, which packs the heads
/// that `num_heads` counts) are never split: a rotation pairs entries across
/// the head. Without position ids the tables follow the batch (unless it
/// broadcasts) and the sequence; with them the tables are whole and the ids
/// follow the batch and sequence.
struct RotaryEmbeddingSpace {
  static FailureOr<LoopSpace> describe(RotaryEmbeddingOp op) {
    auto input = rankedShape(op.getInput()), cache = rankedShape(op.getCos());
    if (failed(input) || failed(cache))
      return failure();
    int64_t rank = input->size(), sequence = rank == 4 ? 2 : 1;
    LoopSpace space;
    for (int64_t d = 0; d < rank; ++d)
      space.addLoop(IteratorType::parallel, ReductionKind::Generic,
                    /*canSplit=*/d != rank - 1);
    SmallVector<int64_t> tableDims;
    if (op.getPositionIds())
      tableDims = {kNoLoop, kNoLoop};
    else
      tableDims = {(*cache)[0] == 1 ? kNoLoop : 0, sequence, kNoLoop};
    space.operandDims = {identityDims(rank), tableDims, tableDims};
    if (op.getPositionIds())
      space.operandDims.push_back({0, sequence});
    space.resultDims = {identityDims(rank)};
    space.affine = false;
    return space;
  }
};

/// Attention. Rank 4: loops batch, query head, query position, key position
/// (a reduction), head entry (a reduction) and value entry. The query heads
/// split with the key/value heads when they are the same heads; with
/// grouped heads a local head would read the wrong group, so they stay
/// whole. Query positions split unless the mask is causal (the diagonal is
/// counted from the first local query). The key positions and head
/// entries, which the softmax and the dot products run over, never split.
/// Rank 3 packs the heads into the hidden dimension, which never splits.
struct AttentionSpace {
  static FailureOr<LoopSpace> describe(AttentionOp op) {
    auto q = rankedShape(op.getQuery());
    if (failed(q))
      return failure();
    bool packed = q->size() == 3;
    bool sameHeads = op.getQNumHeads() == op.getKvNumHeads();
    LoopSpace space;
    int64_t batch = space.addLoop(IteratorType::parallel);
    int64_t head = packed ? kNoLoop
                          : space.addLoop(IteratorType::parallel,
                                          ReductionKind::Generic, sameHeads);
    int64_t query = space.addLoop(IteratorType::parallel,
                                  ReductionKind::Generic, !op.getIsCausal());
    int64_t key = space.addLoop(IteratorType::reduction, ReductionKind::Generic,
                                /*canSplit=*/false);
    int64_t entry = space.addLoop(IteratorType::reduction,
                                  ReductionKind::Generic, /*canSplit=*/false);
    int64_t valueEntry = space.addLoop(
        IteratorType::parallel, ReductionKind::Generic, /*canSplit=*/false);
    int64_t kvHead = sameHeads ? head : kNoLoop;
    if (packed) {
      space.operandDims = {
          {batch, query, entry}, {batch, key, kNoLoop}, {batch, key, kNoLoop}};
      space.resultDims = {{batch, query, valueEntry}};
    } else {
      space.operandDims = {{batch, head, query, entry},
                           {batch, kvHead, key, entry},
                           {batch, kvHead, key, valueEntry}};
      space.resultDims = {{batch, head, query, valueEntry}};
    }
    if (Value mask = op.getMask()) {
      auto maskShape = rankedShape(mask), k = rankedShape(op.getKey());
      if (failed(maskShape) || failed(k))
        return failure();
      SmallVector<int64_t> scores = {
          (*q)[0], static_cast<int64_t>(op.getQNumHeads()),
          (*q)[packed ? 1 : 2], (*k)[packed ? 1 : 2]};
      SmallVector<int64_t> dims = broadcastDims(*maskShape, scores);
      // Scores dimension d is loop batch, head, query, key in turn.
      int64_t loops[] = {batch, head, query, key};
      for (int64_t &dim : dims)
        if (dim != kNoLoop)
          dim = loops[dim];
      space.operandDims.push_back(dims);
    }
    space.affine = false;
    return space;
  }

  /// Split heads (only ungrouped ones split): each device's op computes its
  /// own heads, of the query and the key/value alike.
  static LogicalResult localize(Operation *local,
                                ArrayRef<SmallVector<GridAxis>>) {
    auto attention = cast<AttentionOp>(local);
    auto query = cast<RankedTensorType>(attention.getQuery().getType());
    if (query.getRank() != 4 || query.isDynamicDim(1))
      return success();
    int64_t heads = query.getDimSize(1);
    if (static_cast<uint64_t>(heads) == attention.getQNumHeads())
      return success();
    attention.setQNumHeads(heads);
    attention.setKvNumHeads(heads);
    return success();
  }
};

/// Ops whose samples are independent but whose other loops no loop space
/// here describes (convolutions, pools, recurrences, per-sample norms,
/// resizes, pads): one parallel loop, the batch, indexing the batch
/// dimension of the per-sample operands and of every result; the
/// parameters (weights, biases, scales) are whole. `Dims::of(op)` gives the
/// batch dimension of each operand, then each result, or kNoLoop.
template <typename OpT, typename Dims> struct SampleSpace {
  static FailureOr<LoopSpace> describe(OpT op) {
    std::optional<SmallVector<int64_t>> batchDims = Dims::of(op);
    if (!batchDims)
      return failure();
    LoopSpace space;
    space.addLoop(IteratorType::parallel);
    space.affine = false;
    unsigned index = 0;
    auto dimsOf = [&](Value value) {
      auto shape = rankedShape(value);
      SmallVector<int64_t> dims(succeeded(shape) ? shape->size() : 0, kNoLoop);
      int64_t batch = (*batchDims)[index++];
      if (batch >= 0 && batch < static_cast<int64_t>(dims.size()))
        dims[batch] = 0;
      return dims;
    };
    for (Value operand : op->getOperands())
      space.operandDims.push_back(dimsOf(operand));
    for (Value result : op->getResults())
      space.resultDims.push_back(dimsOf(result));
    return space;
  }
};

/// Operand 0 and every result carry the batch in dimension 0.
struct LeadingBatch {
  static std::optional<SmallVector<int64_t>> of(Operation *op) {
    SmallVector<int64_t> dims(op->getNumOperands() + op->getNumResults(),
                              kNoLoop);
    dims[0] = 0;
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      dims[op->getNumOperands() + i] = 0;
    return dims;
  }
};

/// A resize keeps the batch when it does not scale it.
struct ResizeBatch {
  static std::optional<SmallVector<int64_t>> of(ResizeOp op) {
    if (op.getScales().empty() || op.getScales().front() != 1.0)
      return std::nullopt;
    return LeadingBatch::of(op);
  }
};

/// A pad keeps the batch when it adds nothing to dimension 0.
struct PadBatch {
  static std::optional<SmallVector<int64_t>> of(PadOp op) {
    ArrayRef<int64_t> pads = op.getPads();
    if (pads.size() % 2 || pads.empty() || pads[0] != 0 ||
        pads[pads.size() / 2] != 0)
      return std::nullopt;
    return LeadingBatch::of(op);
  }
};

/// ONNX recurrences (layout 0): the input is [seq, batch, in], the initial
/// states [directions, batch, hidden], Y [seq, directions, batch, hidden]
/// and the final states like the initial ones. Weights, recurrences, biases
/// and peepholes are whole.
template <typename OpT> struct RecurrentBatch {
  static std::optional<SmallVector<int64_t>> of(OpT op) {
    SmallVector<int64_t> dims;
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      if (value == op.getInput())
        dims.push_back(1);
      else if (value == op.getInitialH() || isInitialC(op, value))
        dims.push_back(1);
      else
        dims.push_back(kNoLoop);
    }
    for (OpResult result : op->getResults())
      dims.push_back(result.getResultNumber() == 0 ? 2 : 1);
    return dims;
  }
  static bool isInitialC(OpT op, Value value) {
    if constexpr (std::is_same_v<OpT, LSTMOp>)
      return value == op.getInitialC();
    return false;
  }
};

/// Batch norm (inference): every dimension is parallel; the four parameters
/// are indexed by the channel loop (dimension 1).
struct BatchNormSpace {
  static FailureOr<LoopSpace> describe(BatchNormOp op) {
    auto input = rankedShape(op.getInput());
    if (failed(input) || input->size() < 2)
      return failure();
    LoopSpace space;
    space.addParallelLoops(*input);
    space.operandDims.push_back(identityDims(input->size()));
    for (unsigned i = 1; i < op->getNumOperands(); ++i)
      space.operandDims.push_back({1});
    space.resultDims = {identityDims(input->size())};
    return space;
  }
};

/// Gather: loops are the result dimensions. The table's gathered axis is
/// indexed by the index values, not by a loop, so it is never split (an
/// embedding splits its hidden dimension, not its vocabulary).
struct GatherSpace {
  static FailureOr<LoopSpace> describe(GatherOp op) {
    auto data = rankedShape(op.getData()),
         indices = rankedShape(op.getIndices()),
         result = rankedShape(op.getOutput());
    if (failed(data) || failed(indices) || failed(result))
      return failure();
    int64_t axis = op.getAxis();
    int64_t indexRank = indices->size();
    if (axis < 0 || axis >= static_cast<int64_t>(data->size()))
      return failure();
    LoopSpace space;
    space.addParallelLoops(*result);
    SmallVector<int64_t> dataDims;
    for (int64_t d = 0, e = data->size(); d < e; ++d) {
      if (d < axis)
        dataDims.push_back(d);
      else if (d == axis)
        dataDims.push_back(kNoLoop);
      else
        dataDims.push_back(d - 1 + indexRank);
    }
    space.operandDims = {dataDims, identityDims(indexRank, axis)};
    space.resultDims = {identityDims(result->size())};
    space.affine = false;
    return space;
  }
};

/// GatherND: loops are the result dimensions (the batch, the index
/// positions, then the slice). The data dimensions the index tuples address
/// and the tuple dimension of the indices are indexed by no loop.
struct GatherNDSpace {
  static FailureOr<LoopSpace> describe(GatherNDOp op) {
    auto data = rankedShape(op.getData()),
         indices = rankedShape(op.getIndices()),
         result = rankedShape(op.getOutput());
    if (failed(data) || failed(indices) || failed(result) || indices->empty())
      return failure();
    int64_t batchDims = op.getBatchDims();
    int64_t positions = indices->size() - 1, tuple = indices->back();
    LoopSpace space;
    space.addParallelLoops(*result);
    SmallVector<int64_t> dataDims;
    for (int64_t d = 0, e = data->size(); d < e; ++d) {
      if (d < batchDims)
        dataDims.push_back(d);
      else if (d < batchDims + tuple)
        dataDims.push_back(kNoLoop);
      else
        dataDims.push_back(positions + d - batchDims - tuple);
    }
    SmallVector<int64_t> indexDims = identityDims(positions);
    indexDims.push_back(kNoLoop);
    space.operandDims = {dataDims, indexDims};
    space.resultDims = {identityDims(result->size())};
    space.affine = false;
    return space;
  }
};

/// ScatterND: loops are the data dimensions. The leading ones the index
/// tuples address are not split (an update may land anywhere in them); the
/// slice dimensions are, in data, updates and the result alike.
struct ScatterNDSpace {
  static FailureOr<LoopSpace> describe(ScatterNDOp op) {
    auto data = rankedShape(op.getData()),
         indices = rankedShape(op.getIndices()),
         updates = rankedShape(op.getUpdates());
    if (failed(data) || failed(indices) || failed(updates) || indices->empty())
      return failure();
    int64_t tuple = indices->back(), positions = indices->size() - 1;
    LoopSpace space;
    for (int64_t d = 0, e = data->size(); d < e; ++d)
      space.addLoop(IteratorType::parallel, ReductionKind::Generic,
                    /*canSplit=*/d >= tuple);
    SmallVector<int64_t> updateDims(positions, kNoLoop);
    llvm::append_range(updateDims, identityDims(data->size() - tuple, tuple));
    space.operandDims = {identityDims(data->size()),
                         SmallVector<int64_t>(indices->size(), kNoLoop),
                         updateDims};
    space.resultDims = {identityDims(data->size())};
    space.affine = false;
    return space;
  }
};

/// Whether dimension `d` of an element-wise indexing's index tensor pairs
/// with the same dimension of its data (same static size, off the axis).
static bool pairsWithData(ArrayRef<int64_t> data, ArrayRef<int64_t> indices,
                          int64_t d, int64_t axis) {
  return d != axis && !ShapedType::isDynamic(data[d]) && data[d] == indices[d];
}

/// GatherElements: loops are the result (= indices) dimensions. Off the
/// axis a loop indexes data only where the two have the same size, and is
/// not split otherwise; along the axis data is read whole.
struct GatherElementsSpace {
  static FailureOr<LoopSpace> describe(GatherElementsOp op) {
    auto data = rankedShape(op.getData()),
         indices = rankedShape(op.getIndices());
    if (failed(data) || failed(indices) || data->size() != indices->size())
      return failure();
    int64_t axis = op.getAxis();
    LoopSpace space;
    SmallVector<int64_t> dataDims;
    for (int64_t d = 0, e = indices->size(); d < e; ++d) {
      bool pairs = pairsWithData(*data, *indices, d, axis);
      space.addLoop(IteratorType::parallel, ReductionKind::Generic,
                    /*canSplit=*/pairs || d == axis);
      dataDims.push_back(pairs ? d : kNoLoop);
    }
    space.operandDims = {dataDims, identityDims(indices->size())};
    space.resultDims = {identityDims(indices->size())};
    space.affine = false;
    return space;
  }
};

/// ScatterElements: loops are the data dimensions. The axis is not split
/// (an update may land anywhere along it), nor a dimension in which the
/// indices are smaller than data.
struct ScatterElementsSpace {
  static FailureOr<LoopSpace> describe(ScatterElementsOp op) {
    auto data = rankedShape(op.getData()),
         indices = rankedShape(op.getIndices());
    if (failed(data) || failed(indices) || data->size() != indices->size())
      return failure();
    int64_t axis = op.getAxis();
    LoopSpace space;
    SmallVector<int64_t> indexDims;
    for (int64_t d = 0, e = data->size(); d < e; ++d) {
      bool pairs = pairsWithData(*data, *indices, d, axis);
      space.addLoop(IteratorType::parallel, ReductionKind::Generic,
                    /*canSplit=*/pairs);
      indexDims.push_back(pairs ? d : kNoLoop);
    }
    space.operandDims = {identityDims(data->size()), indexDims, indexDims};
    space.resultDims = {identityDims(data->size())};
    space.affine = false;
    return space;
  }
};

/// OneHot: loops are the result dimensions; the inserted depth dimension is
/// not split (a block of it would compare indices with local positions).
/// The two values are whole.
struct OneHotSpace {
  static FailureOr<LoopSpace> describe(OneHotOp op) {
    auto result = rankedShape(op.getOutput());
    if (failed(result))
      return failure();
    int64_t axis = op.getAxis();
    LoopSpace space;
    SmallVector<int64_t> indexDims;
    for (int64_t d = 0, e = result->size(); d < e; ++d) {
      space.addLoop(IteratorType::parallel, ReductionKind::Generic,
                    /*canSplit=*/d != axis);
      if (d != axis)
        indexDims.push_back(d);
    }
    space.operandDims = {indexDims, {kNoLoop}};
    space.resultDims = {identityDims(result->size())};
    space.affine = false;
    return space;
  }
};

/// Trilu: the matrices of the last two dimensions are whole (the mask
/// depends on the global row and column); the dimensions before are split.
struct TriluSpace {
  static FailureOr<LoopSpace> describe(TriluOp op) {
    auto input = rankedShape(op.getInput());
    if (failed(input) || input->size() < 2)
      return failure();
    int64_t rank = input->size();
    LoopSpace space;
    for (int64_t d = 0; d < rank; ++d)
      space.addLoop(IteratorType::parallel, ReductionKind::Generic,
                    /*canSplit=*/d < rank - 2);
    space.operandDims = {identityDims(rank)};
    space.resultDims = {identityDims(rank)};
    return space;
  }
};

/// Concat: loops are the result dimensions; the joined axis is not split.
struct ConcatSpace {
  static FailureOr<LoopSpace> describe(ConcatOp op) {
    auto result = rankedShape(op.getOutput());
    if (failed(result))
      return failure();
    int64_t axis = op.getAxis();
    LoopSpace space;
    for (int64_t d = 0, e = result->size(); d < e; ++d)
      space.addLoop(IteratorType::parallel, ReductionKind::Generic,
                    /*canSplit=*/d != axis);
    for (Value input : op.getInputs()) {
      auto shape = rankedShape(input);
      if (failed(shape) || shape->size() != result->size())
        return failure();
      SmallVector<int64_t> dims = identityDims(shape->size());
      dims[axis] = kNoLoop;
      space.operandDims.push_back(dims);
    }
    space.resultDims = {identityDims(result->size())};
    space.affine = false;
    return space;
  }
};

/// Split: loops are the input dimensions; the split axis is not split.
struct SplitSpace {
  static FailureOr<LoopSpace> describe(SplitOp op) {
    auto input = rankedShape(op.getInput());
    if (failed(input))
      return failure();
    int64_t axis = op.getAxis();
    LoopSpace space;
    for (int64_t d = 0, e = input->size(); d < e; ++d)
      space.addLoop(IteratorType::parallel, ReductionKind::Generic,
                    /*canSplit=*/d != axis);
    space.operandDims = {identityDims(input->size())};
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      SmallVector<int64_t> dims = identityDims(input->size());
      dims[axis] = kNoLoop;
      space.resultDims.push_back(dims);
    }
    space.affine = false;
    return space;
  }
};

/// Whether `op` takes all of dimension `d`, in order.
bool slicesWholeDim(SliceOp op, int64_t d, int64_t size) {
  return op.getStarts()[d] == 0 && op.getEnds()[d] == size &&
         op.getSteps()[d] == 1;
}

/// Slice: one loop per dimension; only the dimensions the slice takes whole
/// may be split.
struct SliceSpace {
  static FailureOr<LoopSpace> describe(SliceOp op) {
    auto input = rankedShape(op.getInput());
    if (failed(input) || op.getStarts().size() != input->size() ||
        op.getEnds().size() != input->size() ||
        op.getSteps().size() != input->size())
      return failure();
    LoopSpace space;
    SmallVector<int64_t> inputDims;
    for (auto [d, size] : llvm::enumerate(*input)) {
      bool whole = slicesWholeDim(op, d, size);
      int64_t loop =
          space.addLoop(IteratorType::parallel, ReductionKind::Generic, whole);
      inputDims.push_back(whole ? loop : kNoLoop);
      if (!whole)
        space.affine = false;
    }
    space.operandDims = {inputDims};
    space.resultDims = {identityDims(input->size())};
    return space;
  }

  /// The local slice of a split dimension is the whole local dimension.
  static LogicalResult localize(Operation *local,
                                ArrayRef<SmallVector<GridAxis>> axes) {
    auto slice = cast<SliceOp>(local);
    auto shape = cast<RankedTensorType>(slice.getOutput().getType()).getShape();
    SmallVector<int64_t> ends(slice.getEnds());
    for (auto [d, loopAxes] : llvm::enumerate(axes))
      if (!loopAxes.empty())
        ends[d] = shape[d];
    slice.setEnds(ends);
    return success();
  }
};

/// Squeeze: loops are the result dimensions; the removed unit dimensions are
/// indexed by no loop.
struct SqueezeSpace {
  static FailureOr<LoopSpace> describe(SqueezeOp op) {
    auto input = rankedShape(op.getInput()),
         result = rankedShape(op.getOutput());
    if (failed(input) || failed(result))
      return failure();
    LoopSpace space;
    space.addParallelLoops(*result);
    SmallVector<int64_t> inputDims;
    int64_t next = 0;
    for (int64_t d = 0, e = input->size(); d < e; ++d)
      inputDims.push_back(llvm::is_contained(op.getAxes(), d) ? kNoLoop
                                                              : next++);
    space.operandDims = {inputDims};
    space.resultDims = {identityDims(result->size())};
    return space;
  }
};

/// Unsqueeze: loops are the result dimensions; the inserted unit dimensions
/// are loops of extent 1 that no operand dimension uses.
struct UnsqueezeSpace {
  static FailureOr<LoopSpace> describe(UnsqueezeOp op) {
    auto result = rankedShape(op.getOutput());
    if (failed(result))
      return failure();
    LoopSpace space;
    SmallVector<int64_t> inputDims;
    for (int64_t d = 0, e = result->size(); d < e; ++d) {
      bool inserted = llvm::is_contained(op.getAxes(), d);
      int64_t loop = space.addLoop(IteratorType::parallel,
                                   ReductionKind::Generic, !inserted);
      if (!inserted)
        inputDims.push_back(loop);
    }
    space.operandDims = {inputDims};
    space.resultDims = {identityDims(result->size())};
    return space;
  }
};

/// Reshapes (reshape, flatten): loops are the result dimensions. The shapes
/// pair up into groups of dimensions with equal element counts (`[B, S, H]
/// -> [B, S, nh, hd]` groups `H` with `nh, hd`). Splitting the major
/// non-unit dimension of a result group into equal blocks splits the major
/// non-unit input dimension of the group into equal blocks of the same
/// elements, so that pair is one loop; the other dimensions of a group are
/// indexed by no loop (input) or unsplittable loops (result). This is what
/// turns `H` split into `nh` split across the head-splitting reshape and
/// back.
///
/// A reshape that carries the batch of a cut batch between other dimensions
/// has `cleave.batch_dims` (`getBatchDims`), and the pair it names replaces the
/// major pair of its group (see `BatchTrace`).
template <typename OpT> struct ReshapeSpace {
  static FailureOr<LoopSpace> describe(OpT op) {
    auto input = rankedShape(op.getInput()),
         result = rankedShape(op.getOutput());
    if (failed(input) || failed(result) || !ShapedType::isStaticShape(*input) ||
        !ShapedType::isStaticShape(*result))
      return failure();
    std::optional<std::pair<size_t, size_t>> batchPair;
    if (std::optional<std::pair<int64_t, int64_t>> pair = getBatchDims(op)) {
      if (pair->first >= static_cast<int64_t>(input->size()) ||
          pair->second >= static_cast<int64_t>(result->size()))
        return failure();
      batchPair = {pair->first, pair->second};
    }
    LoopSpace space;
    for (size_t d = 0; d < result->size(); ++d)
      space.addLoop(IteratorType::parallel, ReductionKind::Generic,
                    /*canSplit=*/false);
    SmallVector<int64_t> inputDims(input->size(), kNoLoop);

    auto majorOf = [](ArrayRef<int64_t> shape, size_t begin, size_t end) {
      for (size_t d = begin; d < end; ++d)
        if (shape[d] != 1)
          return d;
      return begin;
    };
    size_t i = 0, j = 0, n = input->size(), m = result->size();
    while (i < n && j < m) {
      size_t groupI = i, groupJ = j;
      int64_t elemsI = (*input)[i++], elemsJ = (*result)[j++];
      while (elemsI != elemsJ) {
        if (elemsI < elemsJ && i < n)
          elemsI *= (*input)[i++];
        else if (elemsJ < elemsI && j < m)
          elemsJ *= (*result)[j++];
        else
          return failure();
      }
      size_t majorI = majorOf(*input, groupI, i);
      size_t majorJ = majorOf(*result, groupJ, j);
      bool batchIn =
          batchPair && batchPair->first >= groupI && batchPair->first < i;
      bool batchOut =
          batchPair && batchPair->second >= groupJ && batchPair->second < j;
      // A pair across two groups describes no reshape.
      if (batchIn != batchOut)
        return failure();
      if (batchIn) {
        majorI = batchPair->first;
        majorJ = batchPair->second;
      }
      inputDims[majorI] = majorJ;
      space.splittable[majorJ] = true;
      for (size_t d = groupI; d < i; ++d)
        if (d != majorI && (*input)[d] != 1)
          space.affine = false;
    }
    // Trailing unit dimensions belong to no group.
    for (; i < n; ++i)
      if ((*input)[i] != 1)
        return failure();
    for (; j < m; ++j)
      if ((*result)[j] != 1)
        return failure();
    space.operandDims = {inputDims};
    space.resultDims = {identityDims(m)};
    return space;
  }

  /// The pair is the plan's; the local reshape is an ordinary one.
  static LogicalResult localize(Operation *local,
                                ArrayRef<SmallVector<GridAxis>>) {
    setBatchDims(local, std::nullopt);
    return success();
  }
};

/// Ops without operands that define a tensor (weights, constants): one
/// parallel loop per result dimension.
template <typename OpT> struct SourceSpace {
  static FailureOr<LoopSpace> describe(OpT op) {
    auto result = rankedShape(op.getOutput());
    if (failed(result))
      return failure();
    LoopSpace space;
    space.addParallelLoops(*result);
    space.resultDims = {identityDims(result->size())};
    return space;
  }
};

/// Constants: an SPMD program holds the same constant on every device, so a
/// constant is never stored split; users that need a split slice it.
struct ConstantSpace : SourceSpace<ConstantOp> {
  static LogicalResult localize(Operation *local,
                                ArrayRef<SmallVector<GridAxis>> axes) {
    if (llvm::any_of(axes, [](const auto &a) { return !a.empty(); }))
      return local->emitOpError()
             << "cannot be stored split; annotate its users instead";
    return success();
  }
};

/// The split of source op `op`'s only split dimension; an error on `op`
/// when more than one dimension or more than one grid axis is split.
FailureOr<std::optional<std::pair<int64_t, GridAxis>>>
singleSplit(Operation *op, ArrayRef<SmallVector<GridAxis>> loopAxes) {
  std::optional<std::pair<int64_t, GridAxis>> split;
  for (auto [d, axes] : llvm::enumerate(loopAxes)) {
    if (axes.empty())
      continue;
    if (split || axes.size() != 1)
      return op->emitOpError()
             << "can be split along one dimension and one grid axis only";
    split = {static_cast<int64_t>(d), axes.front()};
  }
  return split;
}

/// Weights and weight slices: loops are the result dimensions. A device
/// holds its block of a split weight as a `cleave.weight_slice`, so that the
/// IR (and the memory check) sees only the bytes the device keeps.
template <typename OpT> struct WeightSpace : SourceSpace<OpT> {
  static FailureOr<Operation *>
  partitionLocal(Operation *op, ArrayRef<SmallVector<GridAxis>> loopAxes,
                 shard::GridOp grid, Type localType, OpBuilder &builder) {
    FailureOr<std::optional<std::pair<int64_t, GridAxis>>> split =
        singleSplit(op, loopAxes);
    if (failed(split))
      return failure();
    if (!*split)
      return builder.clone(*op);
    auto [dim, axis] = **split;
    auto weight = cast<OpT>(op);
    if constexpr (std::is_same_v<OpT, WeightSliceOp>) {
      if (weight.getSplitDim())
        return op->emitOpError() << "is split already";
    }
    int64_t groupSize = grid.getShape()[axis];
    auto fullType = cast<RankedTensorType>(weight.getOutput().getType());
    SmallVector<int64_t> shape(fullType.getShape());
    SmallVector<int64_t> starts(shape.size(), 0);
    if constexpr (std::is_same_v<OpT, WeightSliceOp>) {
      shape.assign(weight.getShape().begin(), weight.getShape().end());
      starts.assign(weight.getStarts().begin(), weight.getStarts().end());
    }
    Builder b(op->getContext());
    auto slice = WeightSliceOp::create(
        builder, op->getLoc(), localType, weight.getNameAttr(),
        weight.getFileAttr(), weight.getOffsetAttr(), weight.getLengthAttr(),
        b.getDenseI64ArrayAttr(shape), b.getDenseI64ArrayAttr(starts),
        b.getI64IntegerAttr(dim), b.getStringAttr(getGridAxisName(grid, axis)),
        b.getI64IntegerAttr(groupSize));
    // Plan attributes (the stage) carry over.
    for (NamedAttribute attr : op->getDiscardableAttrs())
      slice->setAttr(attr.getName(), attr.getValue());
    return slice.getOperation();
  }
};

/// The persistent state of a training step (`cleave.state`): stored split
/// like the parameter it belongs to, or whole. A device's block records
/// where it lies in the whole, so that checkpoints can gather it.
struct StateSpace : SourceSpace<StateOp> {
  static FailureOr<Operation *>
  partitionLocal(Operation *op, ArrayRef<SmallVector<GridAxis>> loopAxes,
                 shard::GridOp grid, Type localType, OpBuilder &builder) {
    FailureOr<std::optional<std::pair<int64_t, GridAxis>>> split =
        singleSplit(op, loopAxes);
    if (failed(split))
      return failure();
    auto state = cast<StateOp>(op);
    if (!*split)
      return builder.clone(*op);
    if (state.getSplitDim())
      return op->emitOpError() << "is split already";
    auto [dim, axis] = **split;
    auto local = cast<StateOp>(builder.clone(*op));
    local.getOutput().setType(cast<RankedTensorType>(localType));
    Builder b(op->getContext());
    local.setSplitDimAttr(b.getI64IntegerAttr(dim));
    local.setAxisAttr(b.getStringAttr(getGridAxisName(grid, axis)));
    local.setGroupSizeAttr(b.getI64IntegerAttr(grid.getShape()[axis]));
    return local.getOperation();
  }
};

/// A collective over the data-parallel replicas of a training step
/// (ZeRO's reduce-scatter, slice and gather of a parameter's block): one
/// parallel loop per result dimension, and the tensor-parallel devices
/// split any but the one the collective cuts or joins, each exchanging its
/// block with the replicas' same block.
template <typename OpT> struct ReplicaCollectiveSpace {
  static FailureOr<LoopSpace> describe(OpT op) {
    auto input = rankedShape(op.getInput());
    auto result = rankedShape(op.getOutput());
    int64_t dim = op.getDim();
    if (failed(input) || failed(result) || input->size() != result->size() ||
        dim < 0 || dim >= static_cast<int64_t>(result->size()) ||
        op.getAxis() != "dp")
      return failure();
    LoopSpace space;
    for (int64_t d = 0, e = result->size(); d < e; ++d)
      space.addLoop(IteratorType::parallel, ReductionKind::Generic,
                    /*canSplit=*/d != dim);
    SmallVector<int64_t> inputDims = identityDims(input->size());
    inputDims[dim] = kNoLoop;
    space.operandDims = {inputDims};
    space.resultDims = {identityDims(result->size())};
    return space;
  }
};

/// The in-place updates (`cleave.sgd_update`, `cleave.adam_update`): one
/// parallel loop per dimension of the parameter, which the gradient, the
/// parameter and its state follow; the scalars (the gradient's scale, the
/// step) stay whole on every device.
template <typename OpT> struct UpdateSpace {
  static FailureOr<LoopSpace> describe(OpT op) {
    FailureOr<ArrayRef<int64_t>> shape = rankedShape(op.getParameter());
    if (failed(shape))
      return failure();
    LoopSpace space;
    space.addParallelLoops(*shape);
    auto dimsOf = [&](Value value) -> FailureOr<SmallVector<int64_t>> {
      FailureOr<ArrayRef<int64_t>> valueShape = rankedShape(value);
      if (failed(valueShape))
        return failure();
      if (valueShape->empty())
        return SmallVector<int64_t>();
      if (*valueShape != *shape)
        return failure();
      return identityDims(shape->size());
    };
    for (Value operand : op->getOperands()) {
      FailureOr<SmallVector<int64_t>> dims = dimsOf(operand);
      if (failed(dims))
        return failure();
      space.operandDims.push_back(std::move(*dims));
    }
    for (Value result : op->getResults()) {
      FailureOr<SmallVector<int64_t>> dims = dimsOf(result);
      if (failed(dims))
        return failure();
      space.resultDims.push_back(std::move(*dims));
    }
    return space;
  }
};

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

/// Detects whether a description builds the local op itself
/// (`partitionLocal`) instead of cloning the op with local types.
template <typename Space, typename = void>
struct HasPartitionLocal : std::false_type {};
template <typename Space>
struct HasPartitionLocal<
    Space, std::void_t<decltype(Space::partitionLocal(
               std::declval<Operation *>(),
               std::declval<ArrayRef<SmallVector<GridAxis>>>(),
               std::declval<shard::GridOp>(), std::declval<Type>(),
               std::declval<OpBuilder &>()))>> : std::true_type {};

/// Detects whether a description has a `localize` hook that fixes up the
/// attributes of a partitioned clone.
template <typename Space, typename = void>
struct HasLocalize : std::false_type {};
template <typename Space>
struct HasLocalize<Space,
                   std::void_t<decltype(Space::localize(
                       std::declval<Operation *>(),
                       std::declval<ArrayRef<SmallVector<GridAxis>>>()))>>
    : std::true_type {};

SmallVector<shard::GridAxesAttr>
toSplitAxes(MLIRContext *ctx, ArrayRef<SmallVector<GridAxis>> axes) {
  SmallVector<shard::GridAxesAttr> result;
  for (const SmallVector<GridAxis> &dimAxes : axes)
    result.push_back(shard::GridAxesAttr::get(ctx, dimAxes));
  while (result.size() > 1 && result.back().empty())
    result.pop_back();
  return result;
}

/// The grid axes that `loopAxes` assigns to each dimension of a value
/// described by `dims`; fails when an unsplittable loop has axes.
FailureOr<SmallVector<SmallVector<GridAxis>>>
valueAxes(const LoopSpace &space, ArrayRef<int64_t> dims,
          ArrayRef<SmallVector<GridAxis>> loopAxes) {
  SmallVector<SmallVector<GridAxis>> axes(dims.size());
  for (auto [d, loop] : llvm::enumerate(dims)) {
    if (loop == kNoLoop || loop >= static_cast<int64_t>(loopAxes.size()) ||
        loopAxes[loop].empty())
      continue;
    if (!space.splittable[loop])
      return failure();
    axes[d] = loopAxes[loop];
  }
  return axes;
}

/// The sharding of one value under `option`: null for non-tensors,
/// replicated for 0-d tensors.
FailureOr<Sharding> valueSharding(Value value, const LoopSpace &space,
                                  ArrayRef<int64_t> dims,
                                  const ShardingOption &option) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return Sharding();
  if (type.getRank() == 0)
    return Sharding(option.grid);
  FailureOr<SmallVector<SmallVector<GridAxis>>> axes =
      valueAxes(space, dims, option.shardingArray);
  if (failed(axes))
    return failure();
  return Sharding::get(option.grid, toSplitAxes(value.getContext(), *axes));
}

/// Records in `loopAxes` the grid axes that `sharding` gives the dimensions
/// of a value described by `dims`. Dimensions that no splittable loop
/// indexes are skipped when `skipUnsplittable` (propagation: the value will
/// be resharded) and an error otherwise. Fails on conflicting assignments.
LogicalResult assignLoops(const LoopSpace &space, ArrayRef<int64_t> dims,
                          const Sharding &sharding,
                          SmallVectorImpl<SmallVector<GridAxis>> &loopAxes,
                          bool skipUnsplittable) {
  for (auto [d, dimAxes] : llvm::enumerate(sharding.getSplitAxes())) {
    ArrayRef<GridAxis> axes = dimAxes.asArrayRef();
    if (axes.empty())
      continue;
    if (d >= dims.size())
      return failure();
    int64_t loop = dims[d];
    if (loop == kNoLoop || !space.splittable[loop]) {
      if (skipUnsplittable)
        continue;
      return failure();
    }
    if (!loopAxes[loop].empty()) {
      if (!llvm::equal(loopAxes[loop], axes))
        return failure();
      continue;
    }
    for (const SmallVector<GridAxis> &other : loopAxes)
      for (GridAxis axis : axes)
        if (llvm::is_contained(other, axis))
          return failure();
    loopAxes[loop].assign(axes.begin(), axes.end());
  }
  return success();
}

template <typename OpT, typename Space>
struct LoopSpaceShardingModel : public shard::ShardingInterface::ExternalModel<
                                    LoopSpaceShardingModel<OpT, Space>, OpT> {
  static FailureOr<LoopSpace> describe(Operation *op) {
    return Space::describe(cast<OpT>(op));
  }

  SmallVector<IteratorType> getLoopIteratorTypes(Operation *op) const {
    FailureOr<LoopSpace> space = describe(op);
    if (failed(space))
      return {};
    return space->iteratorTypes;
  }

  SmallVector<ReductionKind>
  getReductionLoopIteratorKinds(Operation *op) const {
    FailureOr<LoopSpace> space = describe(op);
    SmallVector<ReductionKind> kinds;
    if (failed(space))
      return kinds;
    for (auto [type, kind] :
         llvm::zip_equal(space->iteratorTypes, space->reductionKinds))
      if (type == IteratorType::reduction)
        kinds.push_back(kind);
    return kinds;
  }

  /// The affine maps of the description, with constant 0 for dimensions no
  /// loop indexes; empty when those are not all of size 1 (a gather, a
  /// concat, a reshape that merges dimensions), since no affine map
  /// describes them.
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    FailureOr<LoopSpace> space = describe(op);
    if (failed(space) || !space->affine)
      return {};
    MLIRContext *ctx = op->getContext();
    SmallVector<AffineMap> maps;
    auto mapOf = [&](ArrayRef<int64_t> dims) {
      SmallVector<AffineExpr> exprs;
      for (int64_t loop : dims)
        exprs.push_back(loop == kNoLoop ? getAffineConstantExpr(0, ctx)
                                        : getAffineDimExpr(loop, ctx));
      return AffineMap::get(space->numLoops(), 0, exprs, ctx);
    };
    for (ArrayRef<int64_t> dims : space->operandDims)
      maps.push_back(mapOf(dims));
    for (ArrayRef<int64_t> dims : space->resultDims)
      maps.push_back(mapOf(dims));
    return maps;
  }

  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    FailureOr<LoopSpace> space = describe(op);
    if (failed(space))
      return op->emitOpError() << "has no iteration space to shard";
    ShardingArray loopAxes(space->numLoops());
    FlatSymbolRefAttr grid;
    auto visit = [&](ArrayRef<Sharding> shardings,
                     ArrayRef<SmallVector<int64_t>> allDims) -> LogicalResult {
      for (auto [sharding, dims] : llvm::zip(shardings, allDims)) {
        if (!sharding)
          continue;
        if (grid && grid != sharding.getGridAttr())
          return failure();
        grid = sharding.getGridAttr();
        if (failed(assignLoops(*space, dims, sharding, loopAxes,
                               /*skipUnsplittable=*/true)))
          return failure();
      }
      return success();
    };
    if (failed(visit(resultShardings, space->resultDims)) ||
        failed(visit(operandShardings, space->operandDims)))
      return failure();
    if (!grid)
      return ShardingOption::makeEmpty();
    return ShardingOption(std::move(loopAxes), grid);
  }

  FailureOr<std::vector<Sharding>>
  getShardingAnnotations(Operation *op, const ShardingOption &option) const {
    FailureOr<LoopSpace> space = describe(op);
    if (failed(space))
      return failure();
    std::vector<Sharding> shardings;
    for (auto [value, dims] :
         llvm::zip(op->getOperands(), space->operandDims)) {
      FailureOr<Sharding> sharding = valueSharding(value, *space, dims, option);
      if (failed(sharding))
        return failure();
      shardings.push_back(*sharding);
    }
    for (auto [value, dims] : llvm::zip(op->getResults(), space->resultDims)) {
      FailureOr<Sharding> sharding = valueSharding(value, *space, dims, option);
      if (failed(sharding))
        return failure();
      shardings.push_back(*sharding);
    }
    return shardings;
  }

  LogicalResult addShardingAnnotations(Operation *op, OpBuilder &builder,
                                       const ShardingOption &option) const {
    FailureOr<std::vector<Sharding>> shardings =
        getShardingAnnotations(op, option);
    if (failed(shardings))
      return failure();
    unsigned numOperands = op->getNumOperands();
    for (OpResult result : op->getResults()) {
      const Sharding &sharding =
          (*shardings)[numOperands + result.getResultNumber()];
      if (sharding)
        shard::maybeInsertTargetShardingAnnotation(sharding, result, builder);
    }
    for (OpOperand &operand : op->getOpOperands()) {
      const Sharding &sharding = (*shardings)[operand.getOperandNumber()];
      if (sharding)
        shard::maybeInsertSourceShardingAnnotation(sharding, operand, builder);
    }
    return success();
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    // An op whose operands and results are all whole is itself, whether
    // or not it could be split.
    FlatSymbolRefAttr gridName;
    bool whole = true;
    for (const Sharding &sharding :
         llvm::concat<const Sharding>(operandShardings, resultShardings)) {
      if (sharding && !gridName)
        gridName = sharding.getGridAttr();
      whole &= !sharding || shard::isFullReplication(sharding);
    }
    if (!gridName || whole) {
      builder.clone(*op, partitionMap);
      return success();
    }
    FailureOr<LoopSpace> space = describe(op);
    if (failed(space))
      return op->emitOpError() << "has no iteration space to partition";
    shard::GridOp grid = shard::getGridOrNull(op, gridName, symbolTable);
    if (!grid)
      return op->emitOpError() << "refers to unknown grid " << gridName;

    // The loop assignment follows from the operands; ops without operands
    // (weights) take it from their results.
    ShardingArray loopAxes(space->numLoops());
    for (auto [sharding, dims] :
         llvm::zip(operandShardings, space->operandDims))
      if (sharding && failed(assignLoops(*space, dims, sharding, loopAxes,
                                         /*skipUnsplittable=*/false)))
        return op->emitOpError()
               << "cannot be partitioned: its operand shardings split a "
                  "dimension that no splittable loop indexes, or disagree";
    if (op->getNumOperands() == 0)
      for (auto [sharding, dims] :
           llvm::zip(resultShardings, space->resultDims))
        if (sharding && failed(assignLoops(*space, dims, sharding, loopAxes,
                                           /*skipUnsplittable=*/false)))
          return op->emitOpError()
                 << "cannot be partitioned: its result sharding splits a "
                    "dimension that no splittable loop indexes";

    // Each result must come out in the sharding its annotation asks for.
    ShardingOption option(loopAxes, gridName);
    for (auto [result, dims, sharding] :
         llvm::zip(op->getResults(), space->resultDims, resultShardings)) {
      FailureOr<Sharding> expected =
          valueSharding(result, *space, dims, option);
      if (failed(expected))
        return failure();
      if (sharding && !(*expected == sharding) &&
          !(shard::isFullReplication(*expected) &&
            shard::isFullReplication(sharding)))
        return op->emitOpError()
               << "cannot be partitioned: result #" << result.getResultNumber()
               << " is annotated with a sharding its operands do not produce";
    }

    Operation *local = nullptr;
    if constexpr (HasPartitionLocal<Space>::value) {
      Type localType = op->getResult(0).getType();
      if (resultShardings.front())
        localType = shard::shardType(localType, grid, resultShardings.front());
      FailureOr<Operation *> built =
          Space::partitionLocal(op, loopAxes, grid, localType, builder);
      if (failed(built))
        return failure();
      local = *built;
      partitionMap.map(op->getResults(), local->getResults());
    } else {
      local = builder.clone(*op, partitionMap);
      for (auto [result, sharding] :
           llvm::zip(local->getResults(), resultShardings))
        if (sharding)
          result.setType(shard::shardType(result.getType(), grid, sharding));
    }
    if constexpr (HasLocalize<Space>::value)
      if (failed(Space::localize(local, loopAxes)))
        return failure();

    // A split reduction loop leaves partial results on every device; they
    // combine with one all-reduce per result.
    SmallVector<GridAxis> reductionAxes;
    std::optional<ReductionKind> kind;
    for (int64_t loop = 0; loop < space->numLoops(); ++loop) {
      if (space->iteratorTypes[loop] != IteratorType::reduction ||
          loopAxes[loop].empty())
        continue;
      if (kind && *kind != space->reductionKinds[loop])
        return op->emitOpError() << "cannot be partitioned: it splits "
                                    "reductions of different kinds";
      kind = space->reductionKinds[loop];
      llvm::append_range(reductionAxes, loopAxes[loop]);
    }
    if (kind) {
      for (OpResult result : op->getResults()) {
        Value reduced = shard::AllReduceOp::create(
            builder, op->getLoc(), partitionMap.lookup(result),
            grid.getSymName(), reductionAxes, *kind);
        partitionMap.map(result, reduced);
      }
    }
    return success();
  }
};

template <typename OpT, typename Space> void attach(MLIRContext *ctx) {
  OpT::template attachInterface<LoopSpaceShardingModel<OpT, Space>>(*ctx);
}

template <typename... OpTs> void attachBroadcasting(MLIRContext *ctx) {
  (attach<OpTs, BroadcastingSpace<OpTs>>(ctx), ...);
}

} // namespace

std::string cleave::getGridAxisName(shard::GridOp grid, GridAxis axis) {
  if (ArrayAttr names = getGridAxes(grid))
    if (axis < static_cast<int64_t>(names.size()))
      if (auto name = dyn_cast<StringAttr>(names[axis]))
        return name.str();
  return "axis" + std::to_string(axis);
}

void cleave::registerShardingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.insert<shard::ShardDialect>();
  registry.addExtension(+[](MLIRContext *ctx, CleaveDialect *) {
    ctx->getOrLoadDialect<shard::ShardDialect>();
    // Elementwise ops, whose operands broadcast to the result.
    attachBroadcasting<
        SqrtOp, ReciprocalOp, ExpOp, LogOp, ErfOp, TanhOp, SigmoidOp, SinOp,
        CosOp, FloorOp, CeilOp, SoftplusOp, HardSwishOp, ReluOp, NegOp, AbsOp,
        NotOp, LeakyReluOp, EluOp, GeluOp, HardSigmoidOp, ClipOp, CastOp, AddOp,
        SubOp, MulOp, DivOp, PowOp, MinOp, MaxOp, EqualOp, LessOp, LessEqualOp,
        GreaterOp, GreaterEqualOp, AndOp, OrOp, WhereOp, ExpandOp>(ctx);
    attachBroadcasting<RoundOp, SignOp, IsNaNOp, IsInfOp, ModOp>(ctx);
    attach<MatMulOp, MatMulSpace>(ctx);
    attach<GemmOp, GemmSpace>(ctx);
    attach<TransposeOp, TransposeSpace>(ctx);
    attach<ReduceSumOp, ReduceSpace<ReduceSumOp, ReductionKind::Sum>>(ctx);
    attach<ReduceMeanOp, ReduceSpace<ReduceMeanOp, ReductionKind::Average>>(
        ctx);
    attach<ReduceMaxOp, ReduceSpace<ReduceMaxOp, ReductionKind::Max>>(ctx);
    attach<ReduceMinOp, ReduceSpace<ReduceMinOp, ReductionKind::Min>>(ctx);
    attach<ReduceProdOp, ReduceSpace<ReduceProdOp, ReductionKind::Product>>(
        ctx);
    attach<ReduceSumSquareOp,
           ReduceSpace<ReduceSumSquareOp, ReductionKind::Sum>>(ctx);
    attach<ReduceL2Op, ReduceSpace<ReduceL2Op, ReductionKind::Generic>>(ctx);
    attach<ArgMaxOp, ArgExtremeSpace<ArgMaxOp>>(ctx);
    attach<ArgMinOp, ArgExtremeSpace<ArgMinOp>>(ctx);
    attach<TopKOp, AxisScanSpace<TopKOp>>(ctx);
    attach<CumSumOp, AxisScanSpace<CumSumOp>>(ctx);
    attach<SoftmaxOp, SoftmaxSpace<SoftmaxOp>>(ctx);
    attach<LogSoftmaxOp, SoftmaxSpace<LogSoftmaxOp>>(ctx);
    attach<LayerNormOp, TrailingNormSpace<LayerNormOp>>(ctx);
    attach<RmsNormOp, TrailingNormSpace<RmsNormOp>>(ctx);
    attach<RotaryEmbeddingOp, RotaryEmbeddingSpace>(ctx);
    attach<AttentionOp, AttentionSpace>(ctx);
    attach<BatchNormOp, BatchNormSpace>(ctx);
    attach<GatherOp, GatherSpace>(ctx);
    attach<GatherNDOp, GatherNDSpace>(ctx);
    attach<ScatterNDOp, ScatterNDSpace>(ctx);
    attach<GatherElementsOp, GatherElementsSpace>(ctx);
    attach<ScatterElementsOp, ScatterElementsSpace>(ctx);
    attach<OneHotOp, OneHotSpace>(ctx);
    attach<TriluOp, TriluSpace>(ctx);
    attach<ConcatOp, ConcatSpace>(ctx);
    attach<SplitOp, SplitSpace>(ctx);
    attach<SliceOp, SliceSpace>(ctx);
    attach<SqueezeOp, SqueezeSpace>(ctx);
    attach<UnsqueezeOp, UnsqueezeSpace>(ctx);
    attach<ReshapeOp, ReshapeSpace<ReshapeOp>>(ctx);
    attach<FlattenOp, ReshapeSpace<FlattenOp>>(ctx);
    attach<ConstantOp, ConstantSpace>(ctx);
    attach<ConvOp, SampleSpace<ConvOp, LeadingBatch>>(ctx);
    attach<ConvTransposeOp, SampleSpace<ConvTransposeOp, LeadingBatch>>(ctx);
    attach<MaxPoolOp, SampleSpace<MaxPoolOp, LeadingBatch>>(ctx);
    attach<AveragePoolOp, SampleSpace<AveragePoolOp, LeadingBatch>>(ctx);
    attach<GlobalAveragePoolOp, SampleSpace<GlobalAveragePoolOp, LeadingBatch>>(
        ctx);
    attach<GlobalMaxPoolOp, SampleSpace<GlobalMaxPoolOp, LeadingBatch>>(ctx);
    attach<InstanceNormOp, SampleSpace<InstanceNormOp, LeadingBatch>>(ctx);
    attach<GroupNormOp, SampleSpace<GroupNormOp, LeadingBatch>>(ctx);
    attach<ResizeOp, SampleSpace<ResizeOp, ResizeBatch>>(ctx);
    attach<PadOp, SampleSpace<PadOp, PadBatch>>(ctx);
    attach<RNNOp, SampleSpace<RNNOp, RecurrentBatch<RNNOp>>>(ctx);
    attach<GRUOp, SampleSpace<GRUOp, RecurrentBatch<GRUOp>>>(ctx);
    attach<LSTMOp, SampleSpace<LSTMOp, RecurrentBatch<LSTMOp>>>(ctx);
    attach<WeightOp, WeightSpace<WeightOp>>(ctx);
    attach<WeightSliceOp, WeightSpace<WeightSliceOp>>(ctx);
    // A training step's state and in-place updates, and the reduction of
    // the gradients over data-parallel replicas (elementwise on each
    // tensor-parallel block).
    attach<StateOp, StateSpace>(ctx);
    attach<SgdUpdateOp, UpdateSpace<SgdUpdateOp>>(ctx);
    attach<AdamUpdateOp, UpdateSpace<AdamUpdateOp>>(ctx);
    attachBroadcasting<AccumulateOp, ClearOp, AssignOp, AllReduceOp,
                       ReduceStartOp, ReduceWaitOp>(ctx);
    attach<ReduceScatterOp, ReplicaCollectiveSpace<ReduceScatterOp>>(ctx);
    attach<AllSliceOp, ReplicaCollectiveSpace<AllSliceOp>>(ctx);
    attach<AllGatherOp, ReplicaCollectiveSpace<AllGatherOp>>(ctx);
  });
}
