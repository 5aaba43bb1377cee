//===- TrainingOps.cpp - optimizer state and updates ------------*- C++ -*-===//
//
// Verifiers of the optimizer update ops. Each message starts with the
// verifier label that docs and tests refer to.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

using namespace mlir;
using namespace cleave;

static bool isScalar(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.hasStaticShape() && type.getNumElements() == 1;
}

/// The types match (AllTypesMatch); the scale and the step must be scalars.
static LogicalResult verifyUpdate(Operation *op, StringRef label, Value scale,
                                  Value step) {
  if (!isScalar(scale))
    return op->emitOpError() << "[" << label
                             << "_c1] the gradient scale and the step must be "
                                "scalars, got "
                             << scale.getType();
  return success();
}

LogicalResult SgdUpdateOp::verify() {
  return verifyUpdate(*this, "sgd_update", getGradientScale(), getStep());
}

LogicalResult AdamUpdateOp::verify() {
  return verifyUpdate(*this, "adam_update", getGradientScale(), getStep());
}
