//===- ShapeOps.cpp - placeholder bodies, replaced by the real ones ----*- C++ -*-===//

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace cleave;

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ConcatOp: type inference not implemented");
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult ConstantOfShapeOp::verify() { return success(); }

OpFoldResult ConstantOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ConstantOp: type inference not implemented");
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult ExpandOp::verify() { return success(); }

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "FlattenOp: type inference not implemented");
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult GatherOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "GatherOp: type inference not implemented");
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "PadOp: type inference not implemented");
}

LogicalResult PadOp::verify() { return success(); }

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult RangeOp::verify() { return success(); }

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult ReshapeOp::verify() { return success(); }

LogicalResult ResizeOp::verify() { return success(); }

OpFoldResult ShapeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult ShapeOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ShapeOp: type inference not implemented");
}

LogicalResult ShapeOp::verify() { return success(); }

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult SliceOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "SliceOp: type inference not implemented");
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "SplitOp: type inference not implemented");
}

OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "SqueezeOp: type inference not implemented");
}

LogicalResult TileOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "TileOp: type inference not implemented");
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "TransposeOp: type inference not implemented");
}

OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "UnsqueezeOp: type inference not implemented");
}

LogicalResult WeightOp::verify() { return success(); }

FailureOr<SmallVector<int64_t>>
cleave::resolveReshape(ArrayRef<int64_t> inputShape, ArrayRef<int64_t> target,
                       bool allowZero, std::string &error) {
  return failure();
}
