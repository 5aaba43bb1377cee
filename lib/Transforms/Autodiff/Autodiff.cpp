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
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Autodiff/Passes.h"

#include "GradientRules.h"

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Regex.h"

namespace cleave {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "cleave/Transforms/Autodiff/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;
using cleave::detail::getNodeName;

std::string cleave::detail::getNodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string name = getNodeName(inner); !name.empty())
        return name;
  return "";
}

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
  ReverseModeDifferentiator(func::FuncOp func, StringRef lossName,
                            StringRef freeze)
      : func(func), lossName(lossName), freeze(freeze) {}

  LogicalResult run() {
    if (failed(findLoss()) || failed(collectParameters()))
      return failure();
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

  /// Adds `gradient` to the cotangent of `value`.
  void accumulate(GradientBuilder &builder, Value value, Value gradient) {
    Value &total = cotangents[value];
    total = total ? builder.add(total, gradient) : gradient;
  }

  /// The reverse sweep: seeds the loss with 1 and runs each active op's
  /// rule, last op first, so that a value's cotangent is complete (every
  /// use has contributed) before its definer reads it.
  LogicalResult buildBackward() {
    OpBuilder opBuilder(getTerminator());
    GradientBuilder builder(opBuilder, getGradientLoc(loss.getLoc()));
    cotangents[loss] =
        builder.splat(1.0, cast<RankedTensorType>(loss.getType()));
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
    return success();
  }

  /// One gradient per parameter: the sum of its weight ops' cotangents, or
  /// zeros when the loss does not depend on it.
  void sumParameterGradients() {
    OpBuilder opBuilder(getTerminator());
    GradientBuilder builder(opBuilder, func.getLoc());
    for (const Parameter &parameter : parameters) {
      Value total;
      WeightOp first = parameter.uses.front();
      builder.setLoc(getGradientLoc(first.getLoc()));
      for (WeightOp weight : parameter.uses)
        if (Value cotangent = cotangents.lookup(weight.getOutput()))
          total = total ? builder.add(total, cotangent) : cotangent;
      if (!total)
        total = builder.zeros(cast<RankedTensorType>(first.getType()));
      gradients.push_back(total);
    }
  }

  /// The function returns the loss, then the gradients, each named and
  /// marked with its parameter.
  void rewriteResults() {
    Operation *terminator = getTerminator();
    DictionaryAttr lossAttrs = func.getResultAttrDict(*lossIndex);
    SmallVector<Value> results{loss};
    results.append(gradients);
    terminator->setOperands(results);
    func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                   ValueRange(results).getTypes()));
    SmallVector<DictionaryAttr> attrs{lossAttrs};
    attrs.resize(results.size());
    func.setAllResultAttrs(attrs);
    for (auto [index, parameter] : llvm::enumerate(parameters)) {
      setResultName(func, index + 1, (kGradientPrefix + parameter.name).str());
      setGradientOf(func, index + 1, parameter.name);
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
  std::optional<unsigned> lossIndex;
  Value loss;
  SmallVector<Parameter> parameters;
  llvm::DenseSet<Value> varied, useful;
  llvm::DenseMap<Value, Value> cotangents;
  SmallVector<Value> gradients;
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
    if (failed(ReverseModeDifferentiator(func, loss, freeze).run()))
      signalPassFailure();
  }
};

} // namespace
