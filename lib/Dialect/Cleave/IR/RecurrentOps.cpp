//===- RecurrentOps.cpp - placeholder bodies, replaced by the real ones ----*- C++ -*-===//

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace cleave;

LogicalResult GRUOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "GRUOp: type inference not implemented");
}

LogicalResult GRUOp::verify() { return success(); }

LogicalResult LSTMOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "LSTMOp: type inference not implemented");
}

LogicalResult LSTMOp::verify() { return success(); }

LogicalResult RNNOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location, Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "RNNOp: type inference not implemented");
}

LogicalResult RNNOp::verify() { return success(); }
