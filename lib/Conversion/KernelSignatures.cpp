//===- KernelSignatures.cpp - packing typed kernel builders ---------------===//
//
// The checks behind cleave::kernels::buildCall: a builder's fields become a
// KernelCall's operand indices, ints and floats in signature order; and
// checkCall, which reads a finished call back against its signature the
// way the runtime's views will.
//
//===----------------------------------------------------------------------===//

#include "cleave/Conversion/KernelSignatures.h"

#include "cleave/rt/Kernels.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"

#include <optional>

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

void CallPacker::optionalOutput(Value result) {
  ++outputs;
  auto opResult = dyn_cast_or_null<OpResult>(result);
  if (result && (!opResult || opResult.getOwner() != op)) {
    fail("kernel output is not a result of the op");
    return;
  }
  // The runtime reads an absent output as one past numOut, so a present
  // one cannot follow it.
  if (opResult && llvm::is_contained(optionalResults, -1))
    fail("an optional kernel output follows an absent one");
  optionalResults.push_back(opResult ? opResult.getResultNumber() : -1);
}

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
  unsigned absent = llvm::count(optionalResults, -1);
  if (error.empty() && (variadicOutputs ? results < outputs - absent
                                        : results != outputs - absent))
    fail("kernel '" + call.kernel + "' writes " +
         (variadicOutputs ? "at least " : "") + Twine(outputs - absent) +
         " outputs, the op has " + Twine(results) + " results");
  // The required outputs are the results no optional output names, in
  // order, and the optional ones follow them.
  call.results.clear();
  if (error.empty() && absent < optionalResults.size()) {
    for (unsigned index = 0; index < results; ++index)
      if (!llvm::is_contained(optionalResults, static_cast<int>(index)))
        call.results.push_back(index);
    for (int index : optionalResults)
      if (index >= 0)
        call.results.push_back(index);
  }
  if (error.empty())
    return success();
  return op->emitOpError("has a malformed call of kernel '")
         << call.kernel << "': " << error;
}

//===----------------------------------------------------------------------===//
// checkCall
//===----------------------------------------------------------------------===//

namespace {

/// Walks a signature's fields over a finished call, as rt::args::Binder
/// does over the arrays the program passes.
class CallChecker {
public:
  CallChecker(const KernelCall &call, function_ref<int64_t(int)> rankOf)
      : call(call), rankOf(rankOf) {}

  void input(const char *field) {
    if (inputs < call.inputs.size() && call.inputs[inputs] < 0)
      fail(Twine("input '") + field + "' is absent");
    fields.push_back({field, inputs});
    ++inputs;
    ++requiredInputs;
  }
  void optionalInput(const char *field) {
    fields.push_back({field, inputs});
    ++inputs;
  }
  void variadicInput(const char *field) {
    for (size_t i = inputs; i < call.inputs.size(); ++i)
      if (call.inputs[i] < 0)
        fail(Twine("input '") + field + "' has an absent tensor");
    ++requiredInputs;
    variadicInputs = true;
  }
  void output() {
    ++outputs;
    ++requiredOutputs;
  }
  void optionalOutput() { ++outputs; }
  void variadicOutput() {
    ++requiredOutputs;
    variadicOutputs = true;
  }
  void integer() { ++ints; }
  int64_t count(const char *field) {
    int64_t value = ints < call.ints.size() ? call.ints[ints] : 0;
    ++ints;
    if (value < 0 || value > CLEAVE_MAX_RANK) {
      fail(Twine(field) + " is " + Twine(value) + ", outside [0, " +
           Twine(CLEAVE_MAX_RANK) + "]");
      return 0;
    }
    return value;
  }
  void intList(int64_t size) { ints += size; }
  void floating() { ++floats; }
  void floatList(int64_t size) { floats += size; }
  /// The rank of the input field `tensor`, 0 when it is absent.
  int64_t rank(const char *tensor) {
    for (auto [field, index] : fields)
      if (StringRef(field) == tensor)
        return index < call.inputs.size() && call.inputs[index] >= 0
                   ? rankOf(call.inputs[index])
                   : 0;
    return 0;
  }

  std::string finish() {
    auto range = [](size_t min, size_t max, bool variadic) {
      return variadic     ? "at least " + std::to_string(min)
             : min == max ? std::to_string(min)
                          : std::to_string(min) + " to " + std::to_string(max);
    };
    size_t numIn = call.inputs.size(), numOut = call.outputs.size();
    if (numIn < requiredInputs || (!variadicInputs && numIn > inputs))
      fail(Twine(numIn) + " inputs, expected " +
           range(requiredInputs, inputs, variadicInputs));
    else if (numOut < requiredOutputs || (!variadicOutputs && numOut > outputs))
      fail(Twine(numOut) + " outputs, expected " +
           range(requiredOutputs, outputs, variadicOutputs));
    else if (call.ints.size() != ints)
      fail(Twine(call.ints.size()) + " ints, expected " + Twine(ints));
    else if (call.floats.size() != floats)
      fail(Twine(call.floats.size()) + " floats, expected " + Twine(floats));
    return error;
  }

private:
  void fail(const Twine &message) {
    if (error.empty())
      error = message.str();
  }

  const KernelCall &call;
  function_ref<int64_t(int)> rankOf;
  SmallVector<std::pair<const char *, size_t>, 8> fields;
  size_t inputs = 0, requiredInputs = 0, outputs = 0, requiredOutputs = 0;
  bool variadicInputs = false, variadicOutputs = false;
  size_t ints = 0, floats = 0;
  std::string error;
};

using SignatureCheck = std::string (*)(CallChecker &);

struct KernelCheck {
  const char *signature;
  SignatureCheck check;
};

} // namespace

#define CLEAVE_CHECK_BEGIN(signature)                                          \
  static std::string check##signature(CallChecker &checker) {
#define CLEAVE_CHECK_END(signature)                                            \
  return checker.finish();                                                     \
  }
#define CLEAVE_CHECK_INPUT(name) checker.input(#name);
#define CLEAVE_CHECK_OPTIONAL_INPUT(name) checker.optionalInput(#name);
#define CLEAVE_CHECK_VARIADIC_INPUT(name) checker.variadicInput(#name);
#define CLEAVE_CHECK_OUTPUT(name) checker.output();
#define CLEAVE_CHECK_OPTIONAL_OUTPUT(name) checker.optionalOutput();
#define CLEAVE_CHECK_VARIADIC_OUTPUT(name) checker.variadicOutput();
#define CLEAVE_CHECK_INT(name) checker.integer();
#define CLEAVE_CHECK_INT_COUNT(name) int64_t name = checker.count(#name);
#define CLEAVE_CHECK_INT_LIST(name, count, factor)                             \
  checker.intList(count *factor);
#define CLEAVE_CHECK_INT_RANK_LIST(name, tensor, factor)                       \
  checker.intList(checker.rank(#tensor) * factor);
#define CLEAVE_CHECK_FLOAT(name) checker.floating();
#define CLEAVE_CHECK_FLOAT_RANK_LIST(name, tensor, factor)                     \
  checker.floatList(checker.rank(#tensor) * factor);

#define CLEAVE_SIGNATURE_BEGIN CLEAVE_CHECK_BEGIN
#define CLEAVE_SIGNATURE_END CLEAVE_CHECK_END
#define CLEAVE_INPUT CLEAVE_CHECK_INPUT
#define CLEAVE_OPTIONAL_INPUT CLEAVE_CHECK_OPTIONAL_INPUT
#define CLEAVE_VARIADIC_INPUT CLEAVE_CHECK_VARIADIC_INPUT
#define CLEAVE_OUTPUT CLEAVE_CHECK_OUTPUT
#define CLEAVE_OPTIONAL_OUTPUT CLEAVE_CHECK_OPTIONAL_OUTPUT
#define CLEAVE_VARIADIC_OUTPUT CLEAVE_CHECK_VARIADIC_OUTPUT
#define CLEAVE_INT CLEAVE_CHECK_INT
#define CLEAVE_INT_COUNT CLEAVE_CHECK_INT_COUNT
#define CLEAVE_INT_LIST CLEAVE_CHECK_INT_LIST
#define CLEAVE_INT_RANK_LIST CLEAVE_CHECK_INT_RANK_LIST
#define CLEAVE_FLOAT CLEAVE_CHECK_FLOAT
#define CLEAVE_FLOAT_RANK_LIST CLEAVE_CHECK_FLOAT_RANK_LIST
#include "cleave/rt/KernelList.def"
#define CLEAVE_SIGNATURE_BEGIN CLEAVE_CHECK_BEGIN
#define CLEAVE_SIGNATURE_END CLEAVE_CHECK_END
#define CLEAVE_INPUT CLEAVE_CHECK_INPUT
#define CLEAVE_OUTPUT CLEAVE_CHECK_OUTPUT
#define CLEAVE_INT CLEAVE_CHECK_INT
#include "cleave/rt/CommList.def"

std::string kernels::checkCall(const KernelCall &call,
                               function_ref<int64_t(int)> rankOf) {
  std::optional<KernelCheck> kernel =
      llvm::StringSwitch<std::optional<KernelCheck>>(call.kernel)
#define CLEAVE_KERNEL(name, signature)                                         \
  .Case(#name, KernelCheck{#signature, &check##signature})
#include "cleave/rt/KernelList.def"
#define CLEAVE_COMM(name, signature)                                           \
  .Case(#name, KernelCheck{#signature, &check##signature})
#include "cleave/rt/CommList.def"
          .Default(std::nullopt);
  if (!kernel)
    return "calls unknown kernel '" + call.kernel + "'";
  CallChecker checker(call, rankOf);
  std::string error = kernel->check(checker);
  if (error.empty())
    return error;
  return "calls " + call.kernel + " (" + kernel->signature + "): " + error;
}
