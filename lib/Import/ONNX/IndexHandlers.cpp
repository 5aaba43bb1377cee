//===- IndexHandlers.cpp - gathers, scatters, one-hot, trilu --------------===//
//
// Handlers of the operators that index by tensors of indices (GatherND,
// ScatterND, GatherElements, ScatterElements), OneHot and Trilu. Their
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
    {"Trilu", 14, importTrilu, "cleave.trilu", "constant `k`"},
};

} // namespace

ArrayRef<OpHandler> getIndexHandlers() { return indexHandlers; }

} // namespace cleave::onnx_import
