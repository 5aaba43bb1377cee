//===- KernelSignatures.cpp - packing typed kernel builders ---------------===//
//
// The checks behind cleave::kernels::buildCall: a builder's fields become a
// KernelCall's operand indices, ints and floats in signature order.
//
//===----------------------------------------------------------------------===//

#include "cleave/Conversion/KernelSignatures.h"

#include "cleave/rt/Kernels.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::kernels;

void CallPacker::fail(const Twine &message) {
  if (error.empty())
    error = message.str();
}

void CallPacker::input(Value value, const char *field) {
  if (!value) {
    fail(Twine("kernel input '") + field + "' is not set");
    call.operands.push_back(-1);
    return;
  }
  optionalInput(value);
  if (call.operands.back() < 0)
    fail(Twine("kernel input '") + field + "' is not an operand of the op");
}

void CallPacker::optionalInput(Value value) {
  int index = -1;
  if (value)
    for (OpOperand &operand : op->getOpOperands())
      if (operand.get() == value) {
        index = static_cast<int>(operand.getOperandNumber());
        break;
      }
  call.operands.push_back(index);
}

void CallPacker::variadicInput(ArrayRef<Value> values, const char *field) {
  if (values.empty())
    fail(Twine("kernel input list '") + field + "' is empty");
  for (Value value : values)
    input(value, field);
}

void CallPacker::output() { ++outputs; }

void CallPacker::variadicOutput() {
  ++outputs;
  variadicOutputs = true;
}

void CallPacker::integer(const std::optional<int64_t> &value,
                         const char *field) {
  if (!value)
    fail(Twine("kernel attribute '") + field + "' is not set");
  call.ints.push_back(value.value_or(0));
}

size_t CallPacker::count() {
  call.ints.push_back(0);
  return call.ints.size() - 1;
}

void CallPacker::intList(size_t countSlot, ArrayRef<int64_t> values,
                         int64_t factor, const char *field) {
  int64_t size = static_cast<int64_t>(values.size());
  if (size % factor != 0)
    fail(Twine("kernel attribute '") + field + "' has " + Twine(size) +
         " values, not a multiple of " + Twine(factor));
  if (llvm::is_contained(filledCounts, countSlot)) {
    if (call.ints[countSlot] * factor != size)
      fail(Twine("kernel attribute '") + field + "' has " + Twine(size) +
           " values, expected " + Twine(call.ints[countSlot] * factor));
  } else {
    // The runtime refuses a longer list (rt/KernelArgs.h).
    if (size / factor > CLEAVE_MAX_RANK)
      fail(Twine("kernel attribute '") + field + "' has " + Twine(size) +
           " values, more than " + Twine(CLEAVE_MAX_RANK * factor));
    call.ints[countSlot] = size / factor;
    filledCounts.push_back(countSlot);
  }
  llvm::append_range(call.ints, values);
}

std::optional<int64_t> CallPacker::getRank(Value tensor, const char *field) {
  auto type = tensor ? dyn_cast<ShapedType>(tensor.getType()) : ShapedType();
  if (!type || !type.hasRank()) {
    fail(Twine("kernel attribute '") + field +
         "' takes the rank of a tensor that has none");
    return std::nullopt;
  }
  return type.getRank();
}

void CallPacker::intRankList(ArrayRef<int64_t> values, Value tensor,
                             int64_t factor, const char *field) {
  std::optional<int64_t> rank = getRank(tensor, field);
  if (rank && static_cast<int64_t>(values.size()) != *rank * factor)
    fail(Twine("kernel attribute '") + field + "' has " + Twine(values.size()) +
         " values, expected " + Twine(*rank * factor));
  llvm::append_range(call.ints, values);
}

void CallPacker::floating(const std::optional<double> &value,
                          const char *field) {
  if (!value)
    fail(Twine("kernel attribute '") + field + "' is not set");
  call.floats.push_back(value.value_or(0.0));
}

void CallPacker::floatRankList(ArrayRef<double> values, Value tensor,
                               int64_t factor, const char *field) {
  std::optional<int64_t> rank = getRank(tensor, field);
  if (rank && static_cast<int64_t>(values.size()) != *rank * factor)
    fail(Twine("kernel attribute '") + field + "' has " + Twine(values.size()) +
         " values, expected " + Twine(*rank * factor));
  llvm::append_range(call.floats, values);
}

LogicalResult CallPacker::finish() {
  unsigned results = op->getNumResults();
  if (error.empty() &&
      (variadicOutputs ? results < outputs : results != outputs))
    fail("kernel '" + call.kernel + "' writes " +
         (variadicOutputs ? "at least " : "") + Twine(outputs) +
         " outputs, the op has " + Twine(results) + " results");
  if (error.empty())
    return success();
  return op->emitOpError("has a malformed call of kernel '")
         << call.kernel << "': " << error;
}
