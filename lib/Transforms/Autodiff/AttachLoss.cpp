//===- AttachLoss.cpp - a loss from a model output and labels ---*- C++ -*-===//
//
// `cleave-attach-loss`: the loss of a model that does not compute one, from
// one of its outputs and a new labels input, built of ops that
// `cleave-autodiff` can differentiate.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Autodiff/Passes.h"

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <numeric>

namespace cleave {
#define GEN_PASS_DEF_ATTACHLOSSPASS
#include "cleave/Transforms/Autodiff/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

/// The name of the result the pass adds.
constexpr llvm::StringLiteral kLossName = "loss";

enum class LossKind { CrossEntropy, MeanSquaredError };

class LossAttacher {
public:
  LossAttacher(func::FuncOp func, LossKind kind, StringRef logitsName,
               StringRef labelsName, int64_t ignoreIndex)
      : func(func), kind(kind), logitsName(logitsName), labelsName(labelsName),
        ignoreIndex(ignoreIndex) {}

  LogicalResult run() {
    if (failed(findLogits()) || failed(findOrAddLabels()))
      return failure();
    OpBuilder opBuilder(getTerminator());
    GradientBuilder builder(opBuilder,
                            NameLoc::get(opBuilder.getStringAttr(kLossName)));
    Value loss = kind == LossKind::CrossEntropy
                     ? buildCrossEntropy(builder)
                     : buildMeanSquaredError(builder);
    addResult(loss);
    return success();
  }

private:
  /// The float result named `logitsName`, with a static shape.
  LogicalResult findLogits() {
    if (logitsName.empty())
      return error("cleave-attach-loss needs the name of the output the loss "
                   "reads (logits=<result name>)");
    if (labelsName.empty())
      return error("cleave-attach-loss needs the name of the labels input "
                   "(labels=<name>)");
    std::optional<unsigned> index;
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      StringAttr name = getResultName(func, i);
      if (name && name.getValue() == kLossName)
        return error("logits=") << logitsName << ": @" << func.getSymName()
                                << " already has a result named '" << kLossName
                                << "'; differentiate it with loss=" << kLossName
                                << " instead of attaching one";
      if (name && name.getValue() == logitsName && !index)
        index = i;
    }
    if (!index) {
      InFlightDiagnostic diag = error("logits=")
                                << logitsName << ": no result of @"
                                << func.getSymName() << " is named '"
                                << logitsName << "'";
      listResults(diag);
      return diag;
    }
    logits = getTerminator()->getOperand(*index);
    logitsType = dyn_cast<RankedTensorType>(logits.getType());
    if (!logitsType || !isa<FloatType>(logitsType.getElementType()) ||
        !logitsType.hasStaticShape() ||
        (kind == LossKind::CrossEntropy && logitsType.getRank() == 0))
      return error("logits=")
             << logitsName << ": the "
             << (kind == LossKind::CrossEntropy
                     ? "cross-entropy reads float logits of static shape "
                       "[..., classes]"
                     : "mean squared error reads a float output of static "
                       "shape")
             << ", but the result is " << logits.getType();
    return success();
  }

  /// Names the results `logits` could have been (the first few).
  void listResults(InFlightDiagnostic &diag) {
    constexpr unsigned kListed = 8;
    unsigned count = func.getNumResults();
    if (count == 0) {
      diag << "; it has no results";
      return;
    }
    diag << "; its results are ";
    for (unsigned i = 0; i < std::min(count, kListed); ++i) {
      StringAttr name = getResultName(func, i);
      diag << (i ? ", " : "")
           << (name ? ("'" + name.getValue() + "'").str() : "(unnamed)");
    }
    if (count > kListed)
      diag << " and " << count - kListed << " more";
  }

  /// The type the labels must have: int64 class indices of the logits'
  /// leading shape, or the logits' own type.
  RankedTensorType getLabelsType() const {
    if (kind == LossKind::MeanSquaredError)
      return logitsType;
    return RankedTensorType::get(logitsType.getShape().drop_back(),
                                 IntegerType::get(logitsType.getContext(), 64));
  }

  static bool isInt64(Type type) {
    auto integer = dyn_cast<IntegerType>(type);
    return integer && integer.getWidth() == 64 && !integer.isUnsigned();
  }

  /// The input named `labelsName`, checked, or a new last input.
  LogicalResult findOrAddLabels() {
    RankedTensorType expected = getLabelsType();
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      StringAttr name = getArgName(func, i);
      if (!name || name.getValue() != labelsName)
        continue;
      labels = func.getArgument(i);
      auto type = dyn_cast<RankedTensorType>(labels.getType());
      bool fits = type && type.getShape() == expected.getShape() &&
                  (kind == LossKind::CrossEntropy
                       ? isInt64(type.getElementType())
                       : type.getElementType() == expected.getElementType());
      if (!fits)
        return error("labels=")
               << labelsName << ": the input has type " << labels.getType()
               << ", but the " << getKindName() << " of '" << logitsName
               << "' (" << logits.getType() << ") needs labels of type "
               << expected;
      return success();
    }
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(index, expected, {}, func.getLoc())))
      return failure();
    setArgName(func, index, labelsName);
    labels = func.getArgument(index);
    return success();
  }

  StringRef getKindName() const {
    return kind == LossKind::CrossEntropy ? "cross-entropy"
                                          : "mean squared error";
  }

  /// -sum(one_hot(labels) * log_softmax(logits)) / count(labels != ignore).
  Value buildCrossEntropy(GradientBuilder &b) {
    int64_t rank = logitsType.getRank();
    int64_t classes = logitsType.getDimSize(rank - 1);
    Type floatType = logitsType.getElementType();
    Type indexType = cast<RankedTensorType>(labels.getType()).getElementType();
    Value logProbabilities = b.create<LogSoftmaxOp>(
        logits, b.getBuilder().getI64IntegerAttr(rank - 1));
    SmallVector<int64_t> column(logitsType.getShape().drop_back());
    column.push_back(1);
    std::vector<int64_t> iota(classes);
    std::iota(iota.begin(), iota.end(), 0);
    auto iotaType = RankedTensorType::get({classes}, indexType);
    Value classIndices = ConstantOp::create(
        b.getBuilder(), b.getLoc(),
        DenseElementsAttr::get(iotaType, ArrayRef<int64_t>(iota)));
    Value hits = b.create<EqualOp>(b.reshape(labels, column), classIndices);
    SmallVector<int64_t> all(rank);
    std::iota(all.begin(), all.end(), 0);
    Value picked = b.reduceSum(b.mul(b.cast(hits, floatType), logProbabilities),
                               all, /*keepdims=*/false);
    Value ignored = b.create<EqualOp>(labels, b.scalar(ignoreIndex, indexType));
    Value countedOne = b.scalar(1.0, floatType);
    Value ignoredZero = b.scalar(0.0, floatType);
    Value counted = b.select(ignored, ignoredZero, countedOne);
    SmallVector<int64_t> labelDims(rank - 1);
    std::iota(labelDims.begin(), labelDims.end(), 0);
    Value count = labelDims.empty()
                      ? counted
                      : b.reduceSum(counted, labelDims, /*keepdims=*/false);
    return b.neg(b.div(picked, count));
  }

  /// mean((logits - labels)^2) over every element.
  Value buildMeanSquaredError(GradientBuilder &b) {
    Value difference = b.sub(logits, labels);
    SmallVector<int64_t> all(logitsType.getRank());
    std::iota(all.begin(), all.end(), 0);
    Value squared = b.mul(difference, difference);
    if (all.empty())
      return squared;
    return b.reduceMean(squared, all, /*keepdims=*/false);
  }

  /// Returns `loss` as one more result, named `loss`.
  void addResult(Value loss) {
    Operation *terminator = getTerminator();
    unsigned index = terminator->getNumOperands();
    SmallVector<DictionaryAttr> attrs;
    func.getAllResultAttrs(attrs);
    attrs.push_back(DictionaryAttr::get(func.getContext()));
    terminator->insertOperands(index, loss);
    func.setType(
        FunctionType::get(func.getContext(), func.getArgumentTypes(),
                          ValueRange(terminator->getOperands()).getTypes()));
    func.setAllResultAttrs(attrs);
    setResultName(func, index, kLossName);
  }

  /// An error at the function's location, which does not print the model.
  InFlightDiagnostic error(const Twine &message = {}) {
    return emitError(func.getLoc(), message);
  }

  Operation *getTerminator() { return func.getBody().front().getTerminator(); }

  func::FuncOp func;
  LossKind kind;
  StringRef logitsName, labelsName;
  int64_t ignoreIndex;
  Value logits, labels;
  RankedTensorType logitsType;
};

struct AttachLossPass
    : public cleave::impl::AttachLossPassBase<AttachLossPass> {
  using AttachLossPassBase::AttachLossPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<LossKind> lossKind =
        llvm::StringSwitch<std::optional<LossKind>>(kind)
            .Case("cross-entropy", LossKind::CrossEntropy)
            .Case("mse", LossKind::MeanSquaredError)
            .Default(std::nullopt);
    if (!lossKind) {
      emitError(module.getLoc(), "kind=")
          << kind << ": the loss is cross-entropy or mse";
      return signalPassFailure();
    }
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal() || !func.getBody().hasOneBlock()) {
      emitError(module.getLoc(), "cleave-attach-loss: no function @")
          << entry << " of one block to attach a loss to";
      return signalPassFailure();
    }
    if (failed(
            LossAttacher(func, *lossKind, logits, labels, ignoreIndex).run()))
      signalPassFailure();
  }
};

} // namespace
