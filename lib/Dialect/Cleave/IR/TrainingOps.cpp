//===- TrainingOps.cpp - optimizer state and updates ------------*- C++ -*-===//
//
// Verifiers of the optimizer update ops, each message starting with the
// verifier label that docs and tests refer to, and the assembly of
// `cleave.sgd_update`, whose momentum buffer is there only with momentum.
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
  if (failed(verifyUpdate(*this, "sgd_update", getGradientScale(), getStep())))
    return failure();
  bool momentum = !getMomentum().isZero();
  Value buffer = getMomentumBuffer();
  // sgd_update_c2
  if (momentum && !buffer)
    return emitOpError() << "[sgd_update_c2] a momentum of "
                         << getMomentum().convertToDouble()
                         << " needs a momentum buffer";
  // sgd_update_c3
  if (getNesterov() && !momentum)
    return emitOpError("[sgd_update_c3] Nesterov momentum needs a nonzero "
                       "momentum");
  // sgd_update_c4
  if (buffer && !momentum)
    return emitOpError("[sgd_update_c4] has a momentum buffer without "
                       "momentum, which it would never read");
  // sgd_update_c5
  Value newBuffer = getNewMomentumBuffer();
  if (!buffer != !newBuffer)
    return emitOpError() << "[sgd_update_c5] has a momentum buffer "
                         << (buffer ? "without" : "result without") << " its "
                         << (buffer ? "result" : "operand");
  if (buffer && (buffer.getType() != getParameter().getType() ||
                 newBuffer.getType() != buffer.getType()))
    return emitOpError() << "[sgd_update_c5] the momentum buffer and its "
                            "result must have the parameter's type "
                         << getParameter().getType() << ", got "
                         << buffer.getType() << " and " << newBuffer.getType();
  return success();
}

/// `%g, %scale, %p, [%b,] %s attr-dict : type(%p), type(%s)`: the gradient,
/// the parameter and the buffer have the first type, the scale and the step
/// the second.
ParseResult SgdUpdateOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand, 5> operands;
  Type parameterType, stepType;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseOperandList(operands) ||
      parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(parameterType) || parser.parseComma() ||
      parser.parseType(stepType))
    return failure();
  if (operands.size() != 4 && operands.size() != 5)
    return parser.emitError(loc)
           << "expected 4 operands (gradient, scale, parameter, step) or 5 "
              "(with a momentum buffer before the step), got "
           << operands.size();
  bool hasBuffer = operands.size() == 5;
  SmallVector<Type, 5> operandTypes{parameterType, stepType, parameterType};
  result.addTypes(parameterType);
  if (hasBuffer) {
    operandTypes.push_back(parameterType);
    result.addTypes(parameterType);
  }
  operandTypes.push_back(stepType);
  result.addTypes(stepType);
  return parser.resolveOperands(operands, operandTypes, loc, result.operands);
}

void SgdUpdateOp::print(OpAsmPrinter &printer) {
  printer << ' ';
  printer.printOperands(getOperation()->getOperands());
  printer.printOptionalAttrDict((*this)->getAttrs());
  printer << " : " << getParameter().getType() << ", " << getStep().getType();
}

LogicalResult AdamUpdateOp::verify() {
  return verifyUpdate(*this, "adam_update", getGradientScale(), getStep());
}
