//===- ElementwiseOps.cpp - placeholder bodies, replaced by the real ones ----*- C++ -*-===//

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace cleave;

OpFoldResult AddOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult AddOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "AddOp: type inference not implemented");
}

OpFoldResult AndOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult AndOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "AndOp: type inference not implemented");
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult ClipOp::verify() { return success(); }

OpFoldResult DivOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult DivOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "DivOp: type inference not implemented");
}

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult EqualOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "EqualOp: type inference not implemented");
}

LogicalResult GeluOp::verify() { return success(); }

OpFoldResult GreaterEqualOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult GreaterEqualOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "GreaterEqualOp: type inference not implemented");
}

OpFoldResult GreaterOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult GreaterOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "GreaterOp: type inference not implemented");
}

OpFoldResult LessEqualOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult LessEqualOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "LessEqualOp: type inference not implemented");
}

OpFoldResult LessOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult LessOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "LessOp: type inference not implemented");
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult MaxOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "MaxOp: type inference not implemented");
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult MinOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "MinOp: type inference not implemented");
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult MulOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "MulOp: type inference not implemented");
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) { return {}; }

OpFoldResult NotOp::fold(FoldAdaptor adaptor) { return {}; }

OpFoldResult OrOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult OrOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "OrOp: type inference not implemented");
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult PowOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "PowOp: type inference not implemented");
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult SubOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "SubOp: type inference not implemented");
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult WhereOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "WhereOp: type inference not implemented");
}

FailureOr<SmallVector<int64_t>>
cleave::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  // Align the shapes at their trailing dimensions; the shorter one is padded
  // with leading 1s.
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    int64_t &out = result[rank - 1 - i];
    if (ShapedType::isDynamic(l) || ShapedType::isDynamic(r)) {
      // A dynamic size can only be 1 or the other size at run time, so a
      // static size above 1 decides the result.
      int64_t other = ShapedType::isDynamic(l) ? r : l;
      out = !ShapedType::isDynamic(other) && other > 1 ? other
                                                       : ShapedType::kDynamic;
      continue;
    }
    if (l == r || r == 1)
      out = l;
    else if (l == 1)
      out = r;
    else
      return failure();
  }
  return result;
}
