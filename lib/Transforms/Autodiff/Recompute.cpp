//===- Recompute.cpp - activation recomputation -----------------*- C++ -*-===//
//
// `cleave-recompute`: the backward of a training step recomputes the
// forward activations it reads from the forward's segment boundaries, so
// that only the boundaries are stashed between the two phases.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Autodiff/Passes.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Dialect/Cleave/IR/TrainingPhases.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/DenseSet.h"

#include <map>

namespace cleave {
#define GEN_PASS_DEF_RECOMPUTEPASS
#include "cleave/Transforms/Autodiff/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

/// The mark of a recomputed op.
constexpr llvm::StringLiteral kRecomputedAttr = "cleave.recomputed";

/// A value computed per sample: a tensor that is not a parameter.
bool isActivation(Value value) {
  return isa<RankedTensorType>(value.getType()) && !isParameterValue(value);
}

class Recomputation {
public:
  Recomputation(Block &block,
                const llvm::DenseMap<Operation *, StepPhase> &phases,
                bool onlyPlanned)
      : block(block), phases(phases), onlyPlanned(onlyPlanned) {}

  void run() {
    findBoundaries();
    for (Operation &op : llvm::make_early_inc_range(block)) {
      auto phase = phases.find(&op);
      if (phase == phases.end() || phase->second != StepPhase::Backward)
        continue;
      for (OpOperand &operand : op.getOpOperands())
        if (isRecomputed(operand.get()))
          operand.set(recompute(operand.get(), &op));
    }
  }

private:
  bool isForward(Operation *op) const {
    auto phase = phases.find(op);
    return phase != phases.end() && phase->second == StepPhase::Forward;
  }

  /// Whether the backward reads `value` from a recomputation: a forward
  /// activation that is no boundary, computed by an op without effects.
  bool isRecomputed(Value value) const {
    Operation *def = value.getDefiningOp();
    return def && isForward(def) && isActivation(value) &&
           !boundaries.contains(value) && isMemoryEffectFree(def) &&
           !isa<AccumulateOp>(def) && (!onlyPlanned || isPlannedRecompute(def));
  }

  /// Values that depend on an activation carried through the forward (not
  /// only on the graph inputs and the weights).
  bool isCarried(Value value) const { return carried.contains(value); }

  /// The forward's boundaries: where one carried activation is live, that
  /// activation; and every forward value that is not carried.
  void findBoundaries() {
    SmallVector<Operation *> forward;
    llvm::DenseMap<Operation *, int64_t> indexOf;
    for (Operation &op : block.without_terminator())
      if (isForward(&op)) {
        indexOf[&op] = static_cast<int64_t>(forward.size());
        forward.push_back(&op);
      }
    // Carried: an activation that depends on the graph inputs and on the
    // weights both (the hidden states); what depends on one of them only
    // (masks, position tables) is kept where the forward computed it.
    llvm::DenseSet<Value> fromInput, fromWeight;
    for (Operation *op : forward) {
      bool input = llvm::any_of(op->getOperands(), [&](Value v) {
        return isa<BlockArgument>(v) || fromInput.contains(v);
      });
      bool weight = isa<WeightOp, WeightSliceOp>(op) ||
                    llvm::any_of(op->getOperands(), [&](Value v) {
                      return fromWeight.contains(v);
                    });
      for (Value result : op->getResults()) {
        if (input)
          fromInput.insert(result);
        if (weight)
          fromWeight.insert(result);
        if (!isActivation(result))
          continue;
        if (input && weight)
          carried.insert(result);
        else
          boundaries.insert(result);
      }
    }
    // Live ranges of the carried values over the forward's order: from
    // their op to their last forward reader.
    std::map<int64_t, SmallVector<Value>> endsAt;
    for (auto [index, op] : llvm::enumerate(forward))
      for (Value result : op->getResults()) {
        if (!isCarried(result))
          continue;
        int64_t last = static_cast<int64_t>(index);
        for (Operation *user : result.getUsers())
          if (auto found = indexOf.find(user); found != indexOf.end())
            last = std::max(last, found->second);
        endsAt[last].push_back(result);
      }
    llvm::DenseSet<Value> live;
    for (auto [index, op] : llvm::enumerate(forward)) {
      for (Value result : op->getResults())
        if (isCarried(result))
          live.insert(result);
      if (auto ends = endsAt.find(static_cast<int64_t>(index));
          ends != endsAt.end())
        for (Value value : ends->second)
          live.erase(value);
      if (live.size() == 1 && !isJoined(*live.begin()))
        boundaries.insert(*live.begin());
    }
  }

  /// Whether `value` is the carried activation between two segments the
  /// plan recomputes from one stash: the backward recomputes it too.
  bool isJoined(Value value) const {
    Operation *def = value.getDefiningOp();
    return onlyPlanned && def && isPlannedRecompute(def) &&
           isRecomputeJoined(def);
  }

  /// The recomputed `value`, cloned (with the recomputed operands it needs)
  /// before `reader` unless an earlier reader had it cloned.
  Value recompute(Value value, Operation *reader) {
    // Post-order over the ops to clone, with an explicit stack: a segment is
    // as long as the model's block.
    SmallVector<std::pair<Operation *, bool>> stack;
    stack.push_back({value.getDefiningOp(), false});
    OpBuilder builder(reader);
    while (!stack.empty()) {
      auto [op, expanded] = stack.pop_back_val();
      if (clones.contains(op->getResult(0)))
        continue;
      if (!expanded) {
        stack.push_back({op, true});
        for (Value operand : op->getOperands())
          if (isRecomputed(operand) && !clones.contains(operand))
            stack.push_back({operand.getDefiningOp(), false});
        continue;
      }
      Operation *clone = builder.clone(*op, clones);
      clone->setAttr(kRecomputedAttr, builder.getUnitAttr());
    }
    return clones.lookup(value);
  }

  Block &block;
  const llvm::DenseMap<Operation *, StepPhase> &phases;
  /// Whether only the plan's marked ops are recomputed.
  bool onlyPlanned;
  llvm::DenseSet<Value> carried, boundaries;
  /// Each forward value recomputed so far, mapped to its clone.
  IRMapping clones;
};

struct RecomputePass : public cleave::impl::RecomputePassBase<RecomputePass> {
  using RecomputePassBase::RecomputePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal() || !func.getBody().hasOneBlock()) {
      emitError(module.getLoc(), "cleave-recompute: no function @")
          << entry << " of one block to recompute in";
      return signalPassFailure();
    }
    Block &block = func.getBody().front();
    llvm::DenseMap<Operation *, StepPhase> phases = classifyStepPhases(block);
    if (phases.empty()) {
      emitError(func.getLoc(), "cleave-recompute: @")
          << func.getSymName()
          << " is not a training step (it accumulates no gradient); run "
             "cleave-optimizer-update first";
      return signalPassFailure();
    }
    Recomputation(block, phases, fromPlan).run();
  }
};

} // namespace
