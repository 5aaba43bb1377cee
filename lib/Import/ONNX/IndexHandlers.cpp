//===- IndexHandlers.cpp - gathers, scatters, one-hot, trilu --------------===//
//
// Handlers of the operators that index by tensors of indices (GatherND,
// ScatterND, GatherElements, ScatterElements, TensorScatter), OneHot and
// Trilu. Their
// configuration inputs (OneHot's depth, Trilu's k) must be constants; the
// indices are run-time data that the kernels check.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "NodeBinder.h"
#include "OpHandlers.h"

#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;

namespace cleave::onnx_import {
namespace {

LogicalResult importGatherND(NodeBinder &b) {
  Value data, indices;
  int64_t batchDims;
  if (failed(b.input(0, data)) || failed(b.input(1, indices)) ||
      failed(b.intAttr("batch_dims", batchDims, 0)))
    return failure();
  return b.replaceWith<GatherNDOp>(
      {data, indices},
      {b.named("batch_dims", b.getBuilder().getI64IntegerAttr(batchDims))});
}

/// The scatter's `reduction` attribute (opset 16+; `max` and `min` 18+).
LogicalResult readReduction(NodeBinder &b, std::string &reduction) {
  if (failed(b.stringAttr("reduction", reduction, "none")))
    return failure();
  if (reduction == "none" || reduction == "add" || reduction == "mul" ||
      reduction == "max" || reduction == "min")
    return success();
  return b.emitError() << "reduction '" << reduction
                       << "' is not one of none, add, mul, max, min";
}

LogicalResult importScatterND(NodeBinder &b) {
  Value data, indices, updates;
  std::string reduction;
  if (failed(b.input(0, data)) || failed(b.input(1, indices)) ||
      failed(b.input(2, updates)) || failed(readReduction(b, reduction)))
    return failure();
  return b.replaceWith<ScatterNDOp>(
      {data, indices, updates},
      {b.named("reduction", b.getBuilder().getStringAttr(reduction))});
}

LogicalResult importGatherElements(NodeBinder &b) {
  Value data, indices;
  int64_t axis;
  if (failed(b.input(0, data)) || failed(b.input(1, indices)) ||
      failed(b.intAttr("axis", axis, 0)) ||
      failed(
          b.normalizeAxis(axis, NodeBinder::getType(data).getRank(), "axis")))
    return failure();
  return b.replaceWith<GatherElementsOp>(
      {data, indices},
      {b.named("axis", b.getBuilder().getI64IntegerAttr(axis))});
}

LogicalResult importScatterElements(NodeBinder &b) {
  Value data, indices, updates;
  int64_t axis;
  std::string reduction;
  if (failed(b.input(0, data)) || failed(b.input(1, indices)) ||
      failed(b.input(2, updates)) || failed(b.intAttr("axis", axis, 0)) ||
      failed(readReduction(b, reduction)) ||
      failed(
          b.normalizeAxis(axis, NodeBinder::getType(data).getRank(), "axis")))
    return failure();
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<ScatterElementsOp>(
      {data, indices, updates},
      {b.named("axis", builder.getI64IntegerAttr(axis)),
       b.named("reduction", builder.getStringAttr(reduction))});
}

/// TensorScatter (opset 24): `update` written into a copy of `past_cache`
/// along `axis`, starting at each batch's write index (0 without
/// `write_indices`), the positions taken modulo the cache length in
/// `circular` mode. Without write indices this is the update followed by
/// the rest of the cache; with them, a scatter along `axis` to
/// `write_indices[b] + s`.
LogicalResult importTensorScatter(NodeBinder &b) {
  Value past, update, writeIndices;
  int64_t axis;
  std::string mode;
  if (failed(b.input(0, past)) || failed(b.input(1, update)) ||
      failed(b.optionalInput(2, writeIndices)) ||
      failed(b.intAttr("axis", axis, -2)) ||
      failed(b.stringAttr("mode", mode, "linear")))
    return failure();
  if (mode != "linear" && mode != "circular")
    return b.emitError() << "mode must be \"linear\" or \"circular\", not \""
                         << mode << "\"";
  RankedTensorType pastType = NodeBinder::getType(past);
  RankedTensorType updateType = NodeBinder::getType(update);
  int64_t rank = pastType.getRank();
  if (failed(b.normalizeAxis(axis, rank, "axis")))
    return failure();
  if (axis == 0)
    return b.emitError() << "axis cannot be the batch dimension (0)";
  ArrayRef<int64_t> pastShape = pastType.getShape();
  ArrayRef<int64_t> updateShape = updateType.getShape();
  bool sameOffAxis = updateType.getRank() == rank;
  for (int64_t d = 0; sameOffAxis && d < rank; ++d)
    sameOffAxis = d == axis || updateShape[d] == pastShape[d];
  if (!sameOffAxis || updateType.getElementType() != pastType.getElementType())
    return b.emitError() << "update " << updateType
                         << " must have the element type and, off axis " << axis
                         << ", the shape of past_cache " << pastType;
  int64_t cacheLength = pastShape[axis], length = updateShape[axis];
  if (length > cacheLength)
    return b.emitError() << "update's sequence length " << length
                         << " exceeds the cache's " << cacheLength;
  OpBuilder &builder = b.getBuilder();

  if (!writeIndices) {
    if (length == cacheLength)
      return b.bindOutputs(update);
    SmallVector<int64_t> starts(rank, 0), ends(pastShape), steps(rank, 1);
    starts[axis] = length;
    FailureOr<Value> rest = b.create<SliceOp>(
        {past}, {b.named("starts", builder.getDenseI64ArrayAttr(starts)),
                 b.named("ends", builder.getDenseI64ArrayAttr(ends)),
                 b.named("steps", builder.getDenseI64ArrayAttr(steps))});
    if (failed(rest))
      return failure();
    return b.replaceWith<ConcatOp>(
        {update, *rest}, {b.named("axis", builder.getI64IntegerAttr(axis))});
  }

  RankedTensorType indicesType = NodeBinder::getType(writeIndices);
  if (indicesType.getRank() != 1 ||
      !indicesType.getElementType().isInteger(64) ||
      indicesType.getDimSize(0) != pastShape[0])
    return b.emitError() << "write_indices must be a 1-D int64 tensor of one "
                            "index per batch ("
                         << pastShape[0] << "), not " << indicesType;
  // positions[b, ..., s, ...] = write_indices[b] + s
  Type i64 = builder.getI64Type();
  SmallVector<int64_t> offsetShape(rank, 1);
  offsetShape[axis] = length;
  SmallVector<int64_t> offsets(length);
  for (int64_t s = 0; s < length; ++s)
    offsets[s] = s;
  Value steps = b.constant(DenseElementsAttr::get(
      RankedTensorType::get(offsetShape, i64), ArrayRef<int64_t>(offsets)));
  SmallVector<int64_t> trailing;
  for (int64_t d = 1; d < rank; ++d)
    trailing.push_back(d);
  FailureOr<Value> starts = b.create<UnsqueezeOp>(
      {writeIndices},
      {b.named("axes", builder.getDenseI64ArrayAttr(trailing))});
  if (failed(starts))
    return failure();
  FailureOr<Value> positions = b.create<AddOp>({*starts, steps});
  if (failed(positions))
    return failure();
  if (mode == "circular") {
    positions =
        b.create<ModOp>({*positions, b.intScalarConstant(i64, cacheLength)});
    if (failed(positions))
      return failure();
  }
  positions = b.create<ExpandOp>({*positions}, {}, updateType.clone(i64));
  if (failed(positions))
    return failure();
  return b.replaceWith<ScatterElementsOp>(
      {past, *positions, update},
      {b.named("axis", builder.getI64IntegerAttr(axis)),
       b.named("reduction", builder.getStringAttr("none"))});
}

/// OneHot reads indices of any numeric type; the op takes int32 or int64,
/// so others are cast to int64 (floats truncate toward zero, as ONNX's
/// reference and onnxruntime do).
LogicalResult importOneHot(NodeBinder &b) {
  Value indices, values;
  SmallVector<double> depth;
  int64_t axis;
  if (failed(b.input(0, indices)) ||
      failed(b.constantDoubles(1, "depth", depth)) ||
      failed(b.input(2, values)) || failed(b.intAttr("axis", axis, -1)))
    return failure();
  if (depth.size() != 1)
    return b.emitError() << "depth must hold one value, not " << depth.size();
  double count = std::trunc(depth[0]);
  if (!(count >= 1) || count > static_cast<double>(INT32_MAX)) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%g", depth[0]);
    return b.emitError() << "depth " << text << " must be a positive integer";
  }
  auto indicesType = NodeBinder::getType(indices);
  if (failed(b.normalizeAxis(axis, indicesType.getRank() + 1, "axis")))
    return failure();
  Type elementType = indicesType.getElementType();
  if (!elementType.isSignlessInteger(64) &&
      !elementType.isSignlessInteger(32)) {
    auto cast = b.create<CastOp>(
        {indices}, {}, indicesType.clone(IntegerType::get(b.getContext(), 64)));
    if (failed(cast))
      return failure();
    indices = *cast;
  }
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<OneHotOp>(
      {indices, values},
      {b.named("depth", builder.getI64IntegerAttr(static_cast<int64_t>(count))),
       b.named("axis", builder.getI64IntegerAttr(axis))});
}

LogicalResult importTrilu(NodeBinder &b) {
  Value x;
  SmallVector<int64_t> k;
  int64_t upper;
  if (failed(b.input(0, x)) || failed(b.intAttr("upper", upper, 1)) ||
      (b.hasInput(1) && failed(b.constantInts(1, "k", k))))
    return failure();
  if (k.size() > 1)
    return b.emitError() << "k must be a scalar";
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<TriluOp>(
      {x}, {b.named("k", builder.getI64IntegerAttr(k.empty() ? 0 : k[0])),
            b.named("upper", builder.getBoolAttr(upper != 0))});
}

constexpr StringLiteral kScatterNotes =
    "`reduction` (16+: add, mul; 18+: max, min); indices checked at run time";

const OpHandler indexHandlers[] = {
    {"GatherElements", 11, importGatherElements, "cleave.gather_elements",
     "negative axis normalised; indices checked at run time"},
    {"GatherND", 11, importGatherND, "cleave.gather_nd",
     "`batch_dims` (12+); indices checked at run time"},
    {"OneHot", 11, importOneHot, "cleave.one_hot cleave.cast",
     "constant `depth`; indices other than int32 and int64 cast to int64"},
    {"ScatterElements", 11, importScatterElements, "cleave.scatter_elements",
     kScatterNotes},
    {"ScatterND", 11, importScatterND, "cleave.scatter_nd", kScatterNotes},
    {"TensorScatter", 24, importTensorScatter,
     "cleave.slice cleave.concat cleave.constant cleave.unsqueeze cleave.add "
     "cleave.mod cleave.expand cleave.scatter_elements",
     "without `write_indices` the update followed by the rest of the cache; "
     "with them a scatter to `write_indices[b] + s` (modulo the cache "
     "length in `circular` mode), checked at run time"},
    {"Trilu", 14, importTrilu, "cleave.trilu", "constant `k`"},
};

} // namespace

ArrayRef<OpHandler> getIndexHandlers() { return indexHandlers; }

} // namespace cleave::onnx_import
