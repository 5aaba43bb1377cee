//===- ShapeGradients.cpp - derivatives of data movement --------*- C++ -*-===//
//
// Ops that move elements without arithmetic: the cotangent of an operand is
// the result cotangent moved back, and where several result elements came
// from one operand element (expand, tile, gather) their cotangents are
// summed. Positions a result did not read (around a slice, between strided
// elements) get zeros.
//
//===----------------------------------------------------------------------===//

#include "GradientRules.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace cleave;

namespace {

/// An op of one operand and one result whose cotangent `Rule` gives.
template <typename OpT, Value (*Rule)(GradientBuilder &, OpT, Value)>
struct MovementGradientModel
    : GradientInterface::ExternalModel<MovementGradientModel<OpT, Rule>, OpT> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &builder,
                               OpGradients &gradients) const {
    if (gradients.wanted[0])
      gradients.operands[0] =
          Rule(builder, cast<OpT>(op), gradients.results[0]);
    return success();
  }
};

/// Reshape, flatten, squeeze and unsqueeze keep the elements in order.
template <typename OpT>
Value reshapeGradient(GradientBuilder &b, OpT op, Value g) {
  return b.reshape(g, getShape(op->getOperand(0)));
}

Value transposeGradient(GradientBuilder &b, TransposeOp op, Value g) {
  ArrayRef<int64_t> perm = op.getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  return b.transpose(g, inverse);
}

Value expandGradient(GradientBuilder &b, ExpandOp op, Value g) {
  return b.sumToShape(g, getShape(op.getInput()));
}

/// Dimension i of the result is `repeats[i]` copies of dimension i: viewed
/// as `r0 x d0 x r1 x d1 x ...`, the copies are summed away.
Value tileGradient(GradientBuilder &b, TileOp op, Value g) {
  ArrayRef<int64_t> shape = getShape(op.getInput());
  SmallVector<int64_t> split, copies;
  for (auto [i, repeat] : llvm::enumerate(op.getRepeats())) {
    copies.push_back(split.size());
    split.append({repeat, shape[i]});
  }
  return b.reduceSum(b.reshape(g, split), copies, /*keepdims=*/false);
}

/// `pad` in constant mode: the cotangent of the input is the window of the
/// result's that the input filled.
Value padGradient(GradientBuilder &b, PadOp op, Value g) {
  ArrayRef<int64_t> shape = getShape(op.getInput());
  ArrayRef<int64_t> pads = op.getPads();
  SmallVector<int64_t> starts, ends, steps(shape.size(), 1);
  for (auto [i, size] : llvm::enumerate(shape)) {
    starts.push_back(pads[i]);
    ends.push_back(pads[i] + size);
  }
  return b.create<SliceOp>(g, starts, ends, steps);
}

struct PadGradientModel
    : GradientInterface::ExternalModel<PadGradientModel, PadOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto pad = cast<PadOp>(op);
    if (pad.getMode() != "constant")
      return pad.emitOpError("has no gradient rule in mode '")
             << pad.getMode() << "' (only 'constant')";
    if (gradients.wanted[0])
      gradients.operands[0] = padGradient(b, pad, gradients.results[0]);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Slices
//===----------------------------------------------------------------------===//

/// The adjoint of one dimension of a slice: where the result's elements sit
/// in the input along `dim`.
struct SlicePlacement {
  /// The input position of the first element the cotangent holds.
  int64_t offset = 0;
  /// The cotangent's extent along `dim` once strided elements are spread.
  int64_t extent = 0;
};

/// Spreads the cotangent `g` of a slice along `dim` (start, step, `count`
/// elements) into increasing input order, one element every `|step|`
/// positions, and says where it starts in the input.
SlicePlacement spreadSliceDim(GradientBuilder &b, Value &g, int64_t dim,
                              int64_t start, int64_t step, int64_t count) {
  SmallVector<int64_t> shape(getShape(g));
  int64_t rank = shape.size();
  int64_t stride = step < 0 ? -step : step;
  SlicePlacement placement{start, count};
  if (step < 0) {
    // Reversed, the elements come in increasing input order, starting at
    // the last one the slice read.
    SmallVector<int64_t> starts(rank, 0), ends(shape), steps(rank, 1);
    starts[dim] = count - 1;
    ends[dim] = -1;
    steps[dim] = -1;
    g = b.create<SliceOp>(g, starts, ends, steps);
    placement.offset = start + (count - 1) * step;
  }
  if (stride > 1) {
    // Each element followed by stride - 1 zeros: a unit dimension after
    // `dim`, padded to the stride and merged back.
    SmallVector<int64_t> withUnit(shape);
    withUnit.insert(withUnit.begin() + dim + 1, 1);
    SmallVector<int64_t> pads(2 * (rank + 1), 0);
    pads[rank + 1 + dim + 1] = stride - 1;
    g = b.create<PadOp>(b.reshape(g, withUnit), pads, "constant", APFloat(0.0));
    shape[dim] = count * stride;
    g = b.reshape(g, shape);
    placement.extent = count * stride;
  }
  return placement;
}

/// Zeros around the slice's elements: one pad for every dimension, then a
/// slice where strided spreading ran past the input's end.
struct SliceGradientModel
    : GradientInterface::ExternalModel<SliceGradientModel, SliceOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    if (!gradients.wanted[0])
      return success();
    auto slice = cast<SliceOp>(op);
    ArrayRef<int64_t> inputShape = getShape(slice.getInput());
    ArrayRef<int64_t> counts = getShape(slice.getOutput());
    Value g = gradients.results[0];
    if (llvm::is_contained(counts, 0)) {
      gradients.operands[0] =
          b.zeros(cast<RankedTensorType>(slice.getInput().getType()));
      return success();
    }
    int64_t rank = inputShape.size();
    SmallVector<int64_t> pads(2 * rank, 0), ends(inputShape);
    bool truncate = false;
    for (int64_t dim = 0; dim < rank; ++dim) {
      SlicePlacement placement =
          spreadSliceDim(b, g, dim, slice.getStarts()[dim],
                         slice.getSteps()[dim], counts[dim]);
      int64_t after = inputShape[dim] - placement.offset - placement.extent;
      pads[dim] = placement.offset;
      pads[rank + dim] = std::max<int64_t>(after, 0);
      truncate |= after < 0;
    }
    if (llvm::any_of(pads, [](int64_t pad) { return pad != 0; }))
      g = b.create<PadOp>(g, pads, "constant", APFloat(0.0));
    if (truncate)
      g = b.create<SliceOp>(g, SmallVector<int64_t>(rank, 0), ends,
                            SmallVector<int64_t>(rank, 1));
    gradients.operands[0] = g;
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Joining and splitting
//===----------------------------------------------------------------------===//

/// Each input's cotangent is its window of the result's along the axis.
struct ConcatGradientModel
    : GradientInterface::ExternalModel<ConcatGradientModel, ConcatOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto concat = cast<ConcatOp>(op);
    int64_t axis = concat.getAxis();
    Value g = gradients.results[0];
    SmallVector<int64_t> starts(getShape(g).size(), 0), ends(getShape(g)),
        steps(getShape(g).size(), 1);
    for (auto [i, input] : llvm::enumerate(concat.getInputs())) {
      ends[axis] = starts[axis] + getShape(input)[axis];
      if (gradients.wanted[i])
        gradients.operands[i] = b.create<SliceOp>(g, starts, ends, steps);
      starts[axis] = ends[axis];
    }
    return success();
  }
};

/// The pieces' cotangents joined again.
struct SplitGradientModel
    : GradientInterface::ExternalModel<SplitGradientModel, SplitOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    if (!gradients.wanted[0])
      return success();
    auto split = cast<SplitOp>(op);
    gradients.operands[0] = b.create<ConcatOp>(
        gradients.results, static_cast<uint64_t>(split.getAxis()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Gathers
//===----------------------------------------------------------------------===//

/// The adjoint of a gather along `axis` is a scatter-add of the cotangent
/// into the table. It is built as a product with the one-hot matrix of the
/// indices (`onehot[n, v] = [index n == v]`), which needs no scatter
/// kernel: for an embedding table (`axis` 0) `dtable = onehot^T @
/// dy` with the lookups flattened into rows.
struct GatherGradientModel
    : GradientInterface::ExternalModel<GatherGradientModel, GatherOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    if (!gradients.wanted[0])
      return success();
    auto gather = cast<GatherOp>(op);
    Value table = gather.getData(), g = gradients.results[0];
    ArrayRef<int64_t> shape = getShape(table);
    int64_t axis = gather.getAxis();
    int64_t rows = shape[axis];
    int64_t lookups = ShapedType::getNumElements(getShape(gather.getIndices()));
    int64_t outer = ShapedType::getNumElements(shape.take_front(axis));
    int64_t inner = ShapedType::getNumElements(shape.drop_front(axis + 1));

    // Indices count from the end when negative.
    Value indices = b.reshape(gather.getIndices(), {lookups});
    Type indexType = getElementType(indices);
    Value zero = b.scalar(0.0, indexType);
    Value size = b.scalar(static_cast<double>(rows), indexType);
    Value negative = b.create<LessOp>(indices, zero);
    indices = b.select(negative, b.add(indices, size), indices);
    Value step = b.scalar(1.0, indexType);
    Value iota = b.create<RangeOp>(RankedTensorType::get({rows}, indexType),
                                   zero, size, step);
    Type floatType = getElementType(table);

    Value dtable;
    if (axis == 0) {
      Value column = b.reshape(iota, {rows, 1});
      Value hits = b.create<EqualOp>(column, b.reshape(indices, {1, lookups}));
      hits = b.cast(hits, floatType);
      dtable = b.create<MatMulOp>(hits, b.reshape(g, {lookups, inner}));
    } else {
      Value column = b.reshape(indices, {lookups, 1});
      Value hits = b.create<EqualOp>(column, b.reshape(iota, {1, rows}));
      hits = b.cast(hits, floatType);
      Value perRow =
          b.transpose(b.reshape(g, {outer, lookups, inner}), {0, 2, 1});
      dtable = b.transpose(b.create<MatMulOp>(perRow, hits), {0, 2, 1});
    }
    gradients.operands[0] = b.reshape(dtable, shape);
    return success();
  }
};

template <typename OpT, Value (*Rule)(GradientBuilder &, OpT, Value)>
void attachMovement(MLIRContext *context) {
  OpT::template attachInterface<MovementGradientModel<OpT, Rule>>(*context);
}

} // namespace

void cleave::detail::attachShapeGradients(MLIRContext *context) {
  attachMovement<ReshapeOp, reshapeGradient<ReshapeOp>>(context);
  attachMovement<FlattenOp, reshapeGradient<FlattenOp>>(context);
  attachMovement<SqueezeOp, reshapeGradient<SqueezeOp>>(context);
  attachMovement<UnsqueezeOp, reshapeGradient<UnsqueezeOp>>(context);
  attachMovement<TransposeOp, transposeGradient>(context);
  attachMovement<ExpandOp, expandGradient>(context);
  attachMovement<TileOp, tileGradient>(context);
  PadOp::attachInterface<PadGradientModel>(*context);
  SliceOp::attachInterface<SliceGradientModel>(*context);
  ConcatOp::attachInterface<ConcatGradientModel>(*context);
  SplitOp::attachInterface<SplitGradientModel>(*context);
  GatherOp::attachInterface<GatherGradientModel>(*context);
}
