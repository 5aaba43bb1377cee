//===- RecurrentHandlers.cpp - RNN, GRU, LSTM -----------------------------===//
//
// The recurrent layers keep ONNX's operands; the importer fills in default
// activations, checks that `sequence_lens` (not represented) is uniform, and
// turns layout 1 (batch-major, opset 14) into transposes around the
// sequence-major cleave op.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "NodeBinder.h"
#include "OpHandlers.h"

using namespace mlir;

namespace cleave::onnx_import {
namespace {

/// What distinguishes the three recurrent operators for the importer.
struct RecurrentKind {
  /// Activation names per direction when the model gives none.
  ArrayRef<StringRef> defaultActivations;
  /// LSTM has initial_c (input 6), peepholes (input 7) and a third result.
  bool isLSTM;
};

LogicalResult checkActivations(NodeBinder &b, const RecurrentKind &kind,
                               int64_t directions,
                               SmallVectorImpl<std::string> &activations) {
  size_t perDirection = kind.defaultActivations.size();
  if (activations.empty())
    for (int64_t d = 0; d < directions; ++d)
      for (StringRef name : kind.defaultActivations)
        activations.push_back(name.str());
  // A bidirectional layer given one direction's list uses it for both.
  if (directions == 2 && activations.size() == perDirection)
    activations.append(
        SmallVector<std::string>(activations.begin(), activations.end()));
  if (activations.size() != perDirection * directions)
    return b.emitError() << "activations has " << activations.size()
                         << " entries; expected " << perDirection << " per "
                         << "direction";
  for (const std::string &name : activations)
    if (name != "Tanh" && name != "Relu" && name != "Sigmoid")
      return b.emitError() << "activation '" << name
                           << "' is not supported (Tanh, Relu and Sigmoid "
                              "are)";
  return success();
}

FailureOr<Value> transpose(NodeBinder &b, Value value, ArrayRef<int64_t> perm) {
  return b.create<TransposeOp>(
      {value}, {b.named("perm", b.getBuilder().getDenseI64ArrayAttr(perm))});
}

template <typename OpTy>
LogicalResult importRecurrent(NodeBinder &b, const RecurrentKind &kind) {
  Value x, weight, recurrence, bias, initialH, initialC, peepholes;
  if (failed(b.input(0, x)) || failed(b.input(1, weight)) ||
      failed(b.input(2, recurrence)) || failed(b.optionalInput(3, bias)) ||
      failed(b.optionalInput(5, initialH)))
    return failure();
  if (kind.isLSTM && (failed(b.optionalInput(6, initialC)) ||
                      failed(b.optionalInput(7, peepholes))))
    return failure();

  std::string direction;
  SmallVector<std::string> activations;
  SmallVector<float> alphas, betas;
  std::optional<float> clip;
  int64_t hiddenSize, layout = 0, linearBeforeReset, inputForget;
  if (failed(b.stringAttr("direction", direction, "forward")) ||
      failed(b.stringsAttr("activations", activations)) ||
      failed(b.floatsAttr("activation_alpha", alphas)) ||
      failed(b.floatsAttr("activation_beta", betas)) ||
      failed(b.optionalFloatAttr("clip", clip)) ||
      failed(b.intAttr("hidden_size", hiddenSize, -1)) ||
      failed(b.intAttr("linear_before_reset", linearBeforeReset, 0)) ||
      failed(b.intAttr("input_forget", inputForget, 0)) ||
      (b.getOpset() >= 14 && failed(b.intAttr("layout", layout, 0))))
    return failure();
  if (!alphas.empty() || !betas.empty())
    return b.emitError() << "activation_alpha and activation_beta are not "
                            "supported";
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return b.emitError() << "direction '" << direction
                         << "' is not forward, reverse or bidirectional";
  if (layout != 0 && layout != 1)
    return b.emitError() << "layout must be 0 or 1, not " << layout;
  if (int64_t rank = NodeBinder::getType(x).getRank(); rank != 3)
    return b.emitError() << "X must have rank 3 ("
                         << (layout == 0 ? "sequence x batch"
                                         : "batch x sequence")
                         << " x input), not " << rank;
  int64_t directions = direction == "bidirectional" ? 2 : 1;
  if (failed(checkActivations(b, kind, directions, activations)))
    return failure();

  auto recurrenceType = NodeBinder::getType(recurrence);
  if (hiddenSize < 0) {
    if (recurrenceType.getRank() != 3 || recurrenceType.isDynamicDim(2))
      return b.emitError() << "hidden_size is missing and cannot be taken "
                              "from the recurrence weight";
    hiddenSize = recurrenceType.getDimSize(2);
  }

  // Layout 1 is batch-major: X is batch x seq x input and the states batch x
  // dirs x hidden.
  if (layout == 1) {
    FailureOr<Value> t = transpose(b, x, {1, 0, 2});
    if (failed(t))
      return failure();
    x = *t;
    for (Value *state : {&initialH, &initialC}) {
      if (!*state)
        continue;
      FailureOr<Value> ts = transpose(b, *state, {1, 0, 2});
      if (failed(ts))
        return failure();
      *state = *ts;
    }
  }

  // sequence_lens is not represented; it is harmless when every sequence
  // has the full length.
  if (b.hasInput(4)) {
    SmallVector<int64_t> lengths;
    if (failed(b.constantInts(4, "sequence_lens", lengths)))
      return failure();
    auto xType = NodeBinder::getType(x);
    if (xType.isDynamicDim(0) || llvm::any_of(lengths, [&](int64_t length) {
          return length != xType.getDimSize(0);
        }))
      return b.emitError() << "sequence_lens other than the full sequence "
                              "length are not supported";
  }

  SmallVector<Value> operands = {x, weight, recurrence};
  SmallVector<int32_t> segments = {1, 1, 1};
  for (Value optional : {bias, initialH}) {
    if (optional)
      operands.push_back(optional);
    segments.push_back(optional ? 1 : 0);
  }
  if (kind.isLSTM) {
    for (Value optional : {initialC, peepholes}) {
      if (optional)
        operands.push_back(optional);
      segments.push_back(optional ? 1 : 0);
    }
  }

  OpBuilder &builder = b.getBuilder();
  SmallVector<StringRef> activationRefs(activations.begin(), activations.end());
  SmallVector<NamedAttribute> attrs = {
      b.named("hidden_size", builder.getI64IntegerAttr(hiddenSize)),
      b.named("direction", builder.getStringAttr(direction)),
      b.named("activations", builder.getStrArrayAttr(activationRefs)),
      b.named("operandSegmentSizes", builder.getDenseI32ArrayAttr(segments))};
  if (clip)
    attrs.push_back(b.named("clip", builder.getF32FloatAttr(*clip)));
  if (OpTy::getOperationName() == GRUOp::getOperationName())
    attrs.push_back(b.named("linear_before_reset",
                            builder.getBoolAttr(linearBeforeReset != 0)));
  if (kind.isLSTM)
    attrs.push_back(
        b.named("input_forget", builder.getBoolAttr(inputForget != 0)));

  FailureOr<SmallVector<Value>> results = b.createMulti<OpTy>(operands, attrs);
  if (failed(results))
    return failure();
  if (layout == 1) {
    // y: seq x dirs x batch x hidden -> batch x seq x dirs x hidden; the
    // final states: dirs x batch x hidden -> batch x dirs x hidden.
    for (auto [i, result] : llvm::enumerate(*results)) {
      FailureOr<Value> t = transpose(b, result,
                                     i == 0 ? ArrayRef<int64_t>{2, 0, 1, 3}
                                            : ArrayRef<int64_t>{1, 0, 2});
      if (failed(t))
        return failure();
      result = *t;
    }
  }
  return b.bindOutputs(*results);
}

constexpr StringRef kRNNActivations[] = {"Tanh"};
constexpr StringRef kGRUActivations[] = {"Sigmoid", "Tanh"};
constexpr StringRef kLSTMActivations[] = {"Sigmoid", "Tanh", "Tanh"};

LogicalResult importRNN(NodeBinder &b) {
  return importRecurrent<RNNOp>(b, {kRNNActivations, /*isLSTM=*/false});
}

LogicalResult importGRU(NodeBinder &b) {
  return importRecurrent<GRUOp>(b, {kGRUActivations, /*isLSTM=*/false});
}

LogicalResult importLSTM(NodeBinder &b) {
  return importRecurrent<LSTMOp>(b, {kLSTMActivations, /*isLSTM=*/true});
}

constexpr StringLiteral kRecurrentNotes =
    "default activations filled in; `layout` 1 (14+) becomes transposes; "
    "`sequence_lens` must be the full length";

const OpHandler recurrentHandlers[] = {
    {"GRU", 11, importGRU, "cleave.gru cleave.transpose", kRecurrentNotes},
    {"LSTM", 11, importLSTM, "cleave.lstm cleave.transpose", kRecurrentNotes},
    {"RNN", 11, importRNN, "cleave.rnn cleave.transpose", kRecurrentNotes},
};

} // namespace

ArrayRef<OpHandler> getRecurrentHandlers() { return recurrentHandlers; }

} // namespace cleave::onnx_import
