//===- Autodiff.cpp - reverse-mode differentiation --------------*- C++ -*-===//
//
// `cleave-autodiff`: the gradient of a scalar loss with respect to every
// trainable parameter, built after the forward ops by one reverse sweep over
// the ops on the path from the parameters to the loss.
//
// Only active values carry cotangents: a value is active when it depends on
// a trainable parameter (varied) and the loss depends on it (useful), and an
// op is active when it has an active result and a varied operand. Only
// active ops need a gradient rule, so integer index computations, masks and
// the parts of the model that do not reach the loss never ask for one.
//
// Under a pipeline plan (`cleave.stage` on the forward ops) the ops a rule
// builds take the stage of the op it differentiates, so that each stage runs
// its own ops' backward; a parameter that every stage reads gets one
// gradient per stage, the sum of that stage's reads, and the update adds
// them up.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Autodiff/Passes.h"

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"
#include "cleave/Transforms/Autodiff/LossScaling.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Regex.h"

#include <map>
#include <set>

namespace cleave {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "cleave/Transforms/Autodiff/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

/// The prefix of a gradient result's name: `grad:<weight name>`.
constexpr llvm::StringLiteral kGradientPrefix = "grad:";

bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// Where the backward ops of a forward op say they come from: its node,
/// suffixed `/grad`, so that profiles and errors tell the two apart.
Location getGradientLoc(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return NameLoc::get(
        StringAttr::get(loc.getContext(), name.getName().str() + "/grad"),
        name.getChildLoc());
  return loc;
}

/// One trainable parameter: every weight op that reads it.
struct Parameter {
  std::string name;
  SmallVector<WeightOp> uses;
};

class ReverseModeDifferentiator {
public:
  /// `lossScale`: seed with the loss scale of dynamic loss scaling
  /// (LossScaling.h), whose initial value it is; 0 seeds with 1.
  ReverseModeDifferentiator(func::FuncOp func, StringRef lossName,
                            StringRef freeze, double lossScale)
      : func(func), lossName(lossName), freeze(freeze), lossScale(lossScale) {}

  LogicalResult run() {
    if (failed(findLoss()) || failed(collectParameters()))
      return failure();
    placeParameterReads();
    analyzeActivity();
    if (failed(checkActiveOps()) || failed(buildBackward()))
      return failure();
    sumParameterGradients();
    rewriteResults();
    eraseDeadOps();
    return success();
  }

private:
  /// Finds the result named `lossName` and checks that it is a float scalar.
  LogicalResult findLoss() {
    if (lossName.empty())
      return error("cleave-autodiff needs the name of the loss "
                   "result (loss=<result name>)");
    for (unsigned i = 0, e = func.getNumResults(); i < e && !lossIndex; ++i)
      if (StringAttr name = getResultName(func, i))
        if (name.getValue() == lossName)
          lossIndex = i;
    if (!lossIndex)
      return reportUnknownLoss();
    loss = getTerminator()->getOperand(*lossIndex);
    auto type = dyn_cast<RankedTensorType>(loss.getType());
    if (!type || !isa<FloatType>(type.getElementType()) ||
        !type.hasStaticShape() || type.getNumElements() != 1)
      return error("loss=")
             << lossName << ": the loss must be a float scalar (a tensor of "
             << "one element), but it is " << loss.getType();
    return success();
  }

  /// Names the results the loss could have been (the first few of a model
  /// of many outputs).
  LogicalResult reportUnknownLoss() {
    constexpr unsigned kListed = 8;
    InFlightDiagnostic diag =
        error("loss=") << lossName << ": no result of @" << func.getSymName()
                       << " is named '" << lossName << "'; ";
    unsigned count = func.getNumResults();
    if (count == 0)
      return diag << "it has no results";
    diag << "its results are ";
    for (unsigned i = 0; i < std::min(count, kListed); ++i) {
      StringAttr name = getResultName(func, i);
      diag << (i ? ", " : "")
           << (name ? ("'" + name.getValue() + "'").str() : "(unnamed)");
    }
    if (count > kListed)
      diag << " and " << count - kListed << " more";
    return diag;
  }

  /// Groups the float weights by name, leaving out the frozen ones.
  LogicalResult collectParameters() {
    llvm::Regex frozen(freeze);
    std::string regexError;
    if (!freeze.empty() && !frozen.isValid(regexError))
      return error("freeze=")
             << freeze << ": not a valid regular expression: " << regexError;
    bool anyFloatWeight = false;
    llvm::StringMap<size_t> indexOf;
    func.walk([&](WeightOp weight) {
      // A weight the step already writes (a running statistic) is state.
      if (!isFloatTensor(weight.getOutput()) || isWritable(weight))
        return;
      anyFloatWeight = true;
      StringRef name = weight.getName();
      if (!freeze.empty() && frozen.match(name))
        return;
      auto [it, inserted] = indexOf.try_emplace(name, parameters.size());
      if (inserted)
        parameters.push_back({name.str(), {}});
      parameters[it->second].uses.push_back(weight);
    });
    if (!parameters.empty())
      return success();
    if (anyFloatWeight)
      return error("no trainable parameter: freeze=")
             << freeze << " matches every float weight of @"
             << func.getSymName();
    return error("no trainable parameter: @")
           << func.getSymName() << " reads no float weight";
  }

  /// Marks the varied values (forward from the parameters) and the useful
  /// ones (backward from the loss); active values are both.
  void analyzeActivity() {
    Block &body = func.getBody().front();
    for (const Parameter &parameter : parameters)
      for (WeightOp weight : parameter.uses)
        varied.insert(weight.getOutput());
    for (Operation &op : body.without_terminator()) {
      if (!llvm::any_of(op.getOperands(),
                        [&](Value v) { return varied.contains(v); }))
        continue;
      for (Value result : op.getResults())
        if (isFloatTensor(result))
          varied.insert(result);
    }
    useful.insert(loss);
    for (Operation &op : llvm::reverse(body.without_terminator())) {
      if (!llvm::any_of(op.getResults(),
                        [&](Value v) { return useful.contains(v); }))
        continue;
      for (Value operand : op.getOperands())
        if (isFloatTensor(operand))
          useful.insert(operand);
    }
  }

  bool isActive(Value value) const {
    return varied.contains(value) && useful.contains(value);
  }

  bool isActive(Operation *op) const {
    return llvm::any_of(op->getResults(),
                        [&](Value v) { return isActive(v); }) &&
           llvm::any_of(op->getOperands(),
                        [&](Value v) { return varied.contains(v); });
  }

  /// Every active op must have a rule and static shapes; the ops that lack
  /// a rule are reported together.
  LogicalResult checkActiveOps() {
    SmallVector<Operation *> missing;
    for (Operation &op : func.getBody().front().without_terminator()) {
      if (!isActive(&op))
        continue;
      for (Value value : llvm::concat<Value>(op.getOperands(), op.getResults()))
        if (!cast<ShapedType>(value.getType()).hasStaticShape())
          return op.emitOpError("is on the path from the parameters to the "
                                "loss but has a value of dynamic shape ")
                 << value.getType()
                 << "; bind the model's input shapes before differentiating";
      if (!isa<GradientInterface>(op))
        missing.push_back(&op);
    }
    if (missing.empty())
      return success();
    InFlightDiagnostic diag = error()
                              << "cannot differentiate '" << lossName
                              << "': " << missing.size()
                              << (missing.size() == 1 ? " op" : " ops")
                              << " on the path from the parameters to the "
                                 "loss "
                              << (missing.size() == 1 ? "has" : "have")
                              << " no gradient rule: ";
    llvm::interleaveComma(missing, diag, [&](Operation *op) {
      diag << op->getName();
      if (std::string node = getNodeName(op->getLoc()); !node.empty())
        diag << " (node '" << node << "')";
    });
    for (Operation *op : missing)
      diag.attachNote(op->getLoc()) << "no gradient rule for " << op->getName();
    return diag;
  }

  /// The pipeline stages that read `weight`, when a plan placed them.
  static std::set<int64_t> getReaderStages(WeightOp weight) {
    std::set<int64_t> stages;
    for (Operation *user : weight->getUsers())
      if (std::optional<int64_t> stage = getStage(user))
        stages.insert(*stage);
    return stages;
  }

  /// Under a pipeline plan, every stage that reads a parameter holds a copy
  /// of it: a weight op read by several stages becomes one per stage, so
  /// that each stage's reads have a cotangent of their own (the stages'
  /// gradients add up in the update, by an all-reduce along pp in which
  /// the stages without a copy take part with zeros). Under the interleaved
  /// schedule the copies of two model chunks of one device are one tensor
  /// of the device program, updated by the first chunk
  /// (cleave-optimizer-update).
  void placeParameterReads() {
    for (Parameter &parameter : parameters) {
      SmallVector<WeightOp> uses = parameter.uses;
      for (WeightOp weight : uses) {
        std::set<int64_t> stages = getReaderStages(weight);
        if (stages.size() <= 1)
          continue;
        OpBuilder builder(weight);
        builder.setInsertionPointAfter(weight);
        for (int64_t stage : llvm::drop_begin(stages)) {
          auto copy = cast<WeightOp>(builder.clone(*weight));
          setStage(copy, stage);
          weight.getOutput().replaceUsesWithIf(
              copy.getOutput(), [&](OpOperand &use) {
                return getStage(use.getOwner()) == stage;
              });
          parameter.uses.push_back(copy);
        }
        setStage(weight, *stages.begin());
      }
    }
  }

  /// The stages that read `parameter`.
  static std::set<int64_t> getParameterStages(const Parameter &parameter) {
    std::set<int64_t> stages;
    for (WeightOp weight : parameter.uses)
      stages.merge(getReaderStages(weight));
    return stages;
  }

  /// Adds `gradient` to the cotangent of `value`.
  void accumulate(GradientBuilder &builder, Value value, Value gradient) {
    Value &total = cotangents[value];
    total = total ? builder.add(total, gradient) : gradient;
  }

  /// The reverse sweep: seeds the loss with 1 (or the loss scale) and runs each
  /// active op's rule, last op first, so that a value's cotangent is complete
  /// (every use has contributed) before its definer reads it.
  LogicalResult buildBackward() {
    OpBuilder opBuilder(getTerminator());
    GradientBuilder builder(opBuilder, getGradientLoc(loss.getLoc()));
    Operation *mark = getTerminator()->getPrevNode();
    auto lossType = cast<RankedTensorType>(loss.getType());
    cotangents[loss] =
        lossScale > 0 ? builder.broadcastTo(
                            builder.cast(buildLossScale(builder, lossScale),
                                         lossType.getElementType()),
                            lossType.getShape())
                      : builder.splat(1.0, lossType);
    if (Operation *def = loss.getDefiningOp())
      setStageOfOpsAfter(mark, getStage(def));
    Block &body = func.getBody().front();
    for (Operation &op : llvm::reverse(body.without_terminator()))
      if (isActive(&op) && failed(differentiate(op, builder)))
        return failure();
    return success();
  }

  /// Runs the rule of `op` and adds what it builds to the cotangents of its
  /// operands. A float result the loss does not reach gets zeros, so that
  /// rules see a cotangent for each (a split of which one piece is used).
  LogicalResult differentiate(Operation &op, GradientBuilder &builder) {
    if (llvm::none_of(op.getResults(),
                      [&](Value v) { return cotangents.count(v); }))
      return success();
    builder.setLoc(getGradientLoc(op.getLoc()));
    Operation *mark = getTerminator()->getPrevNode();
    OpGradients gradients;
    for (Value result : op.getResults()) {
      Value cotangent = cotangents.lookup(result);
      if (!cotangent && isFloatTensor(result))
        cotangent = builder.zeros(cast<RankedTensorType>(result.getType()));
      gradients.results.push_back(cotangent);
    }
    for (Value operand : op.getOperands())
      gradients.wanted.push_back(varied.contains(operand));
    gradients.operands.resize(op.getNumOperands());
    if (failed(cast<GradientInterface>(op).buildGradients(builder, gradients)))
      return failure();
    for (auto [index, operand, gradient] :
         llvm::enumerate(op.getOperands(), gradients.operands)) {
      if (!gradient || !gradients.wanted[index])
        continue;
      if (gradient.getType() != operand.getType())
        return op.emitOpError("gradient rule built ")
               << gradient.getType() << " for operand " << index << " of type "
               << operand.getType();
      accumulate(builder, operand, gradient);
    }
    setStageOfOpsAfter(mark, getStage(&op));
    return success();
  }

  /// One gradient per parameter: the sum of its weight ops' cotangents, or
  /// zeros when the loss does not depend on it. A parameter that several
  /// pipeline stages read has one per stage, the sum of that stage's
  /// reads': the update adds them up.
  void sumParameterGradients() {
    OpBuilder opBuilder(getTerminator());
    GradientBuilder builder(opBuilder, func.getLoc());
    for (const Parameter &parameter : parameters) {
      std::set<int64_t> stages = getParameterStages(parameter);
      SmallVector<std::optional<int64_t>> wanted;
      if (stages.empty())
        wanted.push_back(std::nullopt);
      for (int64_t stage : stages)
        wanted.push_back(stage);
      WeightOp first = parameter.uses.front();
      builder.setLoc(getGradientLoc(first.getLoc()));
      for (std::optional<int64_t> stage : wanted) {
        Operation *mark = getTerminator()->getPrevNode();
        Value total;
        for (WeightOp weight : parameter.uses) {
          if (stage && getStage(weight) != stage)
            continue;
          if (Value cotangent = cotangents.lookup(weight.getOutput()))
            total = total ? builder.add(total, cotangent) : cotangent;
        }
        if (!total)
          total = builder.zeros(cast<RankedTensorType>(first.getType()));
        setStageOfOpsAfter(mark, stage);
        gradients.push_back({parameter.name, total});
      }
    }
  }

  /// The function returns the loss, then the gradients, each named and
  /// marked with its parameter.
  void rewriteResults() {
    Operation *terminator = getTerminator();
    DictionaryAttr lossAttrs = func.getResultAttrDict(*lossIndex);
    SmallVector<Value> results{loss};
    for (auto &[name, gradient] : gradients)
      results.push_back(gradient);
    terminator->setOperands(results);
    func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                   ValueRange(results).getTypes()));
    SmallVector<DictionaryAttr> attrs{lossAttrs};
    attrs.resize(results.size());
    func.setAllResultAttrs(attrs);
    for (auto [index, gradient] : llvm::enumerate(gradients)) {
      setResultName(func, index + 1, (kGradientPrefix + gradient.first).str());
      setGradientOf(func, index + 1, gradient.first);
    }
  }

  /// Drops the forward ops only the dropped results needed and any backward
  /// op a rule built but no gradient used.
  void eraseDeadOps() {
    // Users follow their operands' definers, so one sweep from the end
    // erases whole dead chains.
    SmallVector<Operation *> ops;
    for (Operation &op : func.getBody().front().without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (isOpTriviallyDead(op))
        op->erase();
  }

  /// An error at the function's location. Not attached to the function, so
  /// that a tool does not print the whole model with it.
  InFlightDiagnostic error(const Twine &message = {}) {
    return emitError(func.getLoc(), message);
  }

  Operation *getTerminator() { return func.getBody().front().getTerminator(); }

  func::FuncOp func;
  StringRef lossName;
  StringRef freeze;
  double lossScale;
  std::optional<unsigned> lossIndex;
  Value loss;
  SmallVector<Parameter> parameters;
  llvm::DenseSet<Value> varied, useful;
  llvm::DenseMap<Value, Value> cotangents;
  /// Each gradient result: its parameter's name and value.
  SmallVector<std::pair<std::string, Value>> gradients;
};

struct AutodiffPass : public cleave::impl::AutodiffPassBase<AutodiffPass> {
  using AutodiffPassBase::AutodiffPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal()) {
      emitError(module.getLoc(), "cleave-autodiff: no function @")
          << entry << " with a body to differentiate";
      return signalPassFailure();
    }
    if (!func.getBody().hasOneBlock()) {
      emitError(func.getLoc(),
                "cleave-autodiff differentiates functions of one block");
      return signalPassFailure();
    }
    if (lossScale < 0) {
      emitError(module.getLoc(), "cleave-autodiff: loss-scale=")
          << lossScale << ": the loss scale must be positive (0: none)";
      return signalPassFailure();
    }
    if (failed(ReverseModeDifferentiator(func, loss, freeze, lossScale).run()))
      signalPassFailure();
  }
};

} // namespace
