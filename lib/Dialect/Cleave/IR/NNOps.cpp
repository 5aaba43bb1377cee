//===- NNOps.cpp - placeholder bodies, replaced by the real ones ----*- C++ -*-===//

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace cleave;

LogicalResult AveragePoolOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "AveragePoolOp: type inference not implemented");
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "BatchNormOp: type inference not implemented");
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ConvOp: type inference not implemented");
}

LogicalResult ConvTransposeOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ConvTransposeOp: type inference not implemented");
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "GemmOp: type inference not implemented");
}

LogicalResult GlobalAveragePoolOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "GlobalAveragePoolOp: type inference not implemented");
}

LogicalResult GlobalMaxPoolOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "GlobalMaxPoolOp: type inference not implemented");
}

LogicalResult GroupNormOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "GroupNormOp: type inference not implemented");
}

LogicalResult InstanceNormOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "InstanceNormOp: type inference not implemented");
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "LayerNormOp: type inference not implemented");
}

LogicalResult LogSoftmaxOp::verify() { return success(); }

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "MatMulOp: type inference not implemented");
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "MaxPoolOp: type inference not implemented");
}

LogicalResult ReduceL2Op::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ReduceL2Op: type inference not implemented");
}

LogicalResult ReduceMaxOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ReduceMaxOp: type inference not implemented");
}

LogicalResult ReduceMeanOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ReduceMeanOp: type inference not implemented");
}

LogicalResult ReduceMinOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ReduceMinOp: type inference not implemented");
}

LogicalResult ReduceProdOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ReduceProdOp: type inference not implemented");
}

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ReduceSumOp: type inference not implemented");
}

LogicalResult ReduceSumSquareOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ReduceSumSquareOp: type inference not implemented");
}

LogicalResult SoftmaxOp::verify() { return success(); }
