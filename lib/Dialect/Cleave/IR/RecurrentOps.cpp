//===- RecurrentOps.cpp - RNN, GRU and LSTM ---------------------*- C++ -*-===//
//
// Type inference and verifiers of the recurrent family. Inference checks the
// operand shapes against `direction` and `hidden_size`, which it needs to
// build the result types; the verifier checks the attributes.
//
//===----------------------------------------------------------------------===//

#include "OpDiagnostics.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::detail;

namespace {

/// Gate blocks stacked in `weight` and `recurrence`, and activations per
/// direction, of each op (ONNX RNN, GRU, LSTM).
constexpr int64_t kRNNGates = 1, kRNNActivations = 1;
constexpr int64_t kGRUGates = 3, kGRUActivations = 2;
constexpr int64_t kLSTMGates = 4, kLSTMActivations = 3;
/// LSTM peepholes cover the input, output and forget gates.
constexpr int64_t kLSTMPeepholes = 3;

/// The activation functions the ops accept: ONNX's activations that take no
/// alpha/beta parameter, since the ops do not represent those parameters.
constexpr StringLiteral kActivationNames[] = {"Relu", "Tanh", "Sigmoid",
                                              "Softsign", "Softplus"};

/// Returns the number of directions `direction` names: 2 for a
/// bidirectional layer, 1 for a one-way one; any other value is an error.
template <typename OpT>
FailureOr<int64_t> getNumDirections(std::optional<Location> loc,
                                    StringRef direction) {
  std::optional<int64_t> dirs =
      llvm::StringSwitch<std::optional<int64_t>>(direction)
          .Cases({"forward", "reverse"}, 1)
          .Case("bidirectional", 2)
          .Default(std::nullopt);
  if (dirs)
    return *dirs;
  return emitOpErrorAt<OpT>(
      loc, "direction must be 'forward', 'reverse' or 'bidirectional', got '",
      direction, "'");
}

/// Checks that the tensor `value` (named `name`) has `expected` shape, whose
/// dimensions are described by `layout`; a dynamic dimension on either side
/// matches anything.
template <typename OpT>
LogicalResult verifyOperandShape(std::optional<Location> loc, Value value,
                                 StringRef name, ArrayRef<int64_t> expected,
                                 StringRef layout) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  bool matches = type && type.getShape().size() == expected.size();
  for (size_t i = 0; matches && i < expected.size(); ++i) {
    int64_t dim = type.getDimSize(i);
    matches = ShapedType::isDynamic(dim) ||
              ShapedType::isDynamic(expected[i]) || dim == expected[i];
  }
  if (matches)
    return success();
  return emitOpErrorAt<OpT>(loc, name, " must have shape ",
                            formatShape(expected), " (", layout, "), got ",
                            value.getType());
}

/// The sizes every recurrent op's operands and results are made of.
struct RecurrentDims {
  int64_t seq;
  int64_t dirs;
  int64_t batch;
  int64_t hidden;
};

/// Checks the operands the three recurrent ops share (input, weight,
/// recurrence, bias, initial_h) for a layer with `gates` gate blocks, and
/// returns the sizes their results are made of.
template <typename OpT, typename AdaptorT>
FailureOr<RecurrentDims> verifyCommonOperands(std::optional<Location> loc,
                                              AdaptorT adaptor, int64_t gates) {
  FailureOr<int64_t> dirs = getNumDirections<OpT>(loc, adaptor.getDirection());
  if (failed(dirs))
    return failure();
  int64_t hidden = static_cast<int64_t>(adaptor.getHiddenSize());
  if (hidden < 1)
    return emitOpErrorAt<OpT>(loc, "hidden_size (", hidden,
                              ") must be positive");

  auto inputType = dyn_cast<RankedTensorType>(adaptor.getInput().getType());
  if (!inputType || inputType.getRank() != 3)
    return emitOpErrorAt<OpT>(
        loc, "input must be 3-D (seq_length x batch x input_size), got ",
        adaptor.getInput().getType());
  Type elementType = inputType.getElementType();
  for (auto [value, name] :
       {std::pair<Value, StringRef>{adaptor.getWeight(), "weight"},
        {adaptor.getRecurrence(), "recurrence"},
        {adaptor.getBias(), "bias"},
        {adaptor.getInitialH(), "initial_h"}}) {
    if (value && getElementTypeOrSelf(value.getType()) != elementType)
      return emitOpErrorAt<OpT>(
          loc, name, " element type (", getElementTypeOrSelf(value.getType()),
          ") must equal input element type (", elementType, ")");
  }

  int64_t batch = inputType.getDimSize(1);
  int64_t inputSize = inputType.getDimSize(2);
  int64_t gateRows = gates * hidden;
  if (failed(verifyOperandShape<OpT>(
          loc, adaptor.getWeight(), "weight", {*dirs, gateRows, inputSize},
          "num_directions x " + std::to_string(gates) +
              "*hidden_size x input_size")) ||
      failed(verifyOperandShape<OpT>(
          loc, adaptor.getRecurrence(), "recurrence", {*dirs, gateRows, hidden},
          "num_directions x " + std::to_string(gates) +
              "*hidden_size x hidden_size")))
    return failure();
  if (Value bias = adaptor.getBias())
    if (failed(verifyOperandShape<OpT>(
            loc, bias, "bias", {*dirs, 2 * gateRows},
            "num_directions x " + std::to_string(2 * gates) + "*hidden_size")))
      return failure();
  if (Value initialH = adaptor.getInitialH()) {
    if (failed(verifyOperandShape<OpT>(loc, initialH, "initial_h",
                                       {*dirs, batch, hidden},
                                       "num_directions x batch x hidden_size")))
      return failure();
    // The initial state may know the batch size when the input does not.
    if (ShapedType::isDynamic(batch))
      batch = cast<RankedTensorType>(initialH.getType()).getDimSize(1);
  }
  return RecurrentDims{inputType.getDimSize(0), *dirs, batch, hidden};
}

/// Pushes the result types shared by the three ops: the sequence of hidden
/// states `y` and the last hidden state `y_h`.
void pushCommonResults(const RecurrentDims &dims, Type elementType,
                       SmallVectorImpl<Type> &inferredReturnTypes) {
  inferredReturnTypes.push_back(RankedTensorType::get(
      {dims.seq, dims.dirs, dims.batch, dims.hidden}, elementType));
  inferredReturnTypes.push_back(
      RankedTensorType::get({dims.dirs, dims.batch, dims.hidden}, elementType));
}

/// Checks the attributes that do not shape anything: the activation names
/// and their count (`perDirection` for each direction), and the clip bound.
template <typename OpT>
LogicalResult verifyRecurrentAttrs(OpT op, int64_t perDirection) {
  FailureOr<int64_t> numDirs =
      getNumDirections<OpT>(op.getLoc(), op.getDirection());
  if (failed(numDirs))
    return failure();
  int64_t dirs = *numDirs;
  ArrayAttr activations = op.getActivations();
  int64_t expected = perDirection * dirs;
  if (static_cast<int64_t>(activations.size()) != expected)
    return op.emitOpError("activations has ")
           << activations.size() << " names, expected " << expected << " ("
           << perDirection << " per direction, " << dirs << " direction"
           << (dirs == 1 ? "" : "s") << ")";
  for (auto [i, attr] :
       llvm::enumerate(activations.getAsValueRange<StringAttr>()))
    if (!llvm::is_contained(kActivationNames, attr))
      return op.emitOpError("activations[")
             << i << "] ('" << attr << "') must be one of "
             << llvm::join(ArrayRef<StringLiteral>(kActivationNames), ", ");
  if (std::optional<APFloat> clip = op.getClip())
    if (!clip->isFiniteNonZero() || clip->isNegative())
      return op.emitOpError("clip (")
             << clip->convertToDouble() << ") must be positive";
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// RNNOp
//===----------------------------------------------------------------------===//

LogicalResult
RNNOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                        Adaptor adaptor,
                        SmallVectorImpl<Type> &inferredReturnTypes) {
  FailureOr<RecurrentDims> dims =
      verifyCommonOperands<RNNOp>(location, adaptor, kRNNGates);
  if (failed(dims))
    return failure();
  pushCommonResults(*dims, getElementTypeOrSelf(adaptor.getInput().getType()),
                    inferredReturnTypes);
  return success();
}

LogicalResult RNNOp::verify() {
  return verifyRecurrentAttrs(*this, kRNNActivations);
}

//===----------------------------------------------------------------------===//
// GRUOp
//===----------------------------------------------------------------------===//

LogicalResult
GRUOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                        Adaptor adaptor,
                        SmallVectorImpl<Type> &inferredReturnTypes) {
  FailureOr<RecurrentDims> dims =
      verifyCommonOperands<GRUOp>(location, adaptor, kGRUGates);
  if (failed(dims))
    return failure();
  pushCommonResults(*dims, getElementTypeOrSelf(adaptor.getInput().getType()),
                    inferredReturnTypes);
  return success();
}

LogicalResult GRUOp::verify() {
  return verifyRecurrentAttrs(*this, kGRUActivations);
}

//===----------------------------------------------------------------------===//
// LSTMOp
//===----------------------------------------------------------------------===//

LogicalResult
LSTMOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                         Adaptor adaptor,
                         SmallVectorImpl<Type> &inferredReturnTypes) {
  FailureOr<RecurrentDims> dims =
      verifyCommonOperands<LSTMOp>(location, adaptor, kLSTMGates);
  if (failed(dims))
    return failure();
  Type elementType = getElementTypeOrSelf(adaptor.getInput().getType());
  for (auto [value, name] :
       {std::pair<Value, StringRef>{adaptor.getInitialC(), "initial_c"},
        {adaptor.getPeepholes(), "peepholes"}}) {
    if (value && getElementTypeOrSelf(value.getType()) != elementType)
      return emitOpErrorAt<LSTMOp>(location, name, " element type (",
                                   getElementTypeOrSelf(value.getType()),
                                   ") must equal input element type (",
                                   elementType, ")");
  }
  if (Value initialC = adaptor.getInitialC()) {
    if (failed(
            verifyOperandShape<LSTMOp>(location, initialC, "initial_c",
                                       {dims->dirs, dims->batch, dims->hidden},
                                       "num_directions x batch x hidden_size")))
      return failure();
    if (ShapedType::isDynamic(dims->batch))
      dims->batch = cast<RankedTensorType>(initialC.getType()).getDimSize(1);
  }
  if (Value peepholes = adaptor.getPeepholes())
    if (failed(verifyOperandShape<LSTMOp>(
            location, peepholes, "peepholes",
            {dims->dirs, kLSTMPeepholes * dims->hidden},
            "num_directions x 3*hidden_size")))
      return failure();

  pushCommonResults(*dims, elementType, inferredReturnTypes);
  // The last cell state y_c is shaped like y_h.
  inferredReturnTypes.push_back(inferredReturnTypes.back());
  return success();
}

LogicalResult LSTMOp::verify() {
  return verifyRecurrentAttrs(*this, kLSTMActivations);
}
