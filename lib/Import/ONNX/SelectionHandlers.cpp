//===- SelectionHandlers.cpp - TopK, ArgMax/ArgMin, CumSum ----------------===//
//
// Handlers of the operators that order or accumulate along one axis. Their
// configuration inputs (TopK's `K`, CumSum's `axis`) must be constants once
// shape computations are folded.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"
#include "OpHandlers.h"

using namespace mlir;

namespace cleave::onnx_import {
namespace {

/// Reads the single value of a constant integer input (a scalar or a
/// one-element tensor).
LogicalResult constantScalarInt(NodeBinder &b, unsigned index, StringRef role,
                                int64_t &value) {
  SmallVector<int64_t> values;
  if (failed(b.constantInts(index, role, values)))
    return failure();
  if (values.size() != 1)
    return b.emitError() << "input " << index << " ('" << role
                         << "') must hold one value, not " << values.size();
  value = values.front();
  return success();
}

LogicalResult importTopK(NodeBinder &b) {
  Value x;
  int64_t k, axis, largest, sorted;
  if (failed(b.input(0, x)) || failed(constantScalarInt(b, 1, "K", k)) ||
      failed(b.intAttr("axis", axis, -1)) ||
      failed(b.intAttr("largest", largest, 1)) ||
      failed(b.intAttr("sorted", sorted, 1)) ||
      failed(b.normalizeAxis(axis, NodeBinder::getType(x).getRank(), "axis")))
    return failure();
  // ONNX leaves the order of an unsorted result open; sorting is one order.
  (void)sorted;
  int64_t size = NodeBinder::getType(x).getDimSize(axis);
  if (k < 0 || (!ShapedType::isDynamic(size) && k > size))
    return b.emitError() << "K (" << k << ") must be in [0, " << size
                         << "], the size of dimension " << axis;
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<TopKOp>(
      {x}, {b.named("axis", builder.getI64IntegerAttr(axis)),
            b.named("k", builder.getI64IntegerAttr(k)),
            b.named("largest", builder.getBoolAttr(largest != 0))});
}

template <typename OpTy> LogicalResult importArgExtreme(NodeBinder &b) {
  Value x;
  int64_t axis, keepdims, selectLastIndex;
  if (failed(b.input(0, x)) || failed(b.intAttr("axis", axis, 0)) ||
      failed(b.intAttr("keepdims", keepdims, 1)) ||
      failed(b.intAttr("select_last_index", selectLastIndex, 0)) ||
      failed(b.normalizeAxis(axis, NodeBinder::getType(x).getRank(), "axis")))
    return failure();
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<OpTy>(
      {x}, {b.named("axis", builder.getI64IntegerAttr(axis)),
            b.named("keepdims", builder.getBoolAttr(keepdims != 0)),
            b.named("select_last_index",
                    builder.getBoolAttr(selectLastIndex != 0))});
}

LogicalResult importCumSum(NodeBinder &b) {
  Value x;
  int64_t axis, exclusive, reverse;
  if (failed(b.input(0, x)) || failed(constantScalarInt(b, 1, "axis", axis)) ||
      failed(b.intAttr("exclusive", exclusive, 0)) ||
      failed(b.intAttr("reverse", reverse, 0)) ||
      failed(b.normalizeAxis(axis, NodeBinder::getType(x).getRank(), "axis")))
    return failure();
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<CumSumOp>(
      {x}, {b.named("axis", builder.getI64IntegerAttr(axis)),
            b.named("exclusive", builder.getBoolAttr(exclusive != 0)),
            b.named("reverse", builder.getBoolAttr(reverse != 0))});
}

const OpHandler selectionHandlers[] = {
    {"ArgMax", 11, importArgExtreme<ArgMaxOp>, "cleave.arg_max",
     "negative axis normalised; `select_last_index` from opset 12"},
    {"ArgMin", 11, importArgExtreme<ArgMinOp>, "cleave.arg_min",
     "negative axis normalised; `select_last_index` from opset 12"},
    {"CumSum", 11, importCumSum, "cleave.cumsum", "constant `axis` input"},
    {"TopK", 11, importTopK, "cleave.topk",
     "constant `K` input; results always sorted (also for `sorted = 0`)"},
};

} // namespace

ArrayRef<OpHandler> getSelectionHandlers() { return selectionHandlers; }

} // namespace cleave::onnx_import
