//===- TrainingPhases.cpp - the phases of a training step -------*- C++ -*-===//

#include "cleave/Dialect/Cleave/IR/TrainingPhases.h"
#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace cleave;

llvm::DenseMap<Operation *, StepPhase>
cleave::classifyStepPhases(Block &block, bool trainingStep) {
  llvm::DenseMap<Operation *, StepPhase> phases;
  if (!trainingStep &&
      llvm::none_of(block.without_terminator(),
                    [](Operation &op) { return isa<AccumulateOp>(op); }))
    return phases;
  Operation *terminator = block.getTerminator();
  // The update: what reads an accumulated sum (block order defines before
  // use), then what only the update reads; the returned values are the
  // update's. A reduction of a sum that starts as soon as the sum is final
  // is the backward's, as the accumulation is; its wait is the update's. A
  // collective over constants joins the update too: a pipeline stage
  // without parameters still takes part in the update's all-reduces along
  // pp (the sum of squares of clipping, the overflow flag of loss scaling)
  // with a constant 0, and must do so when its peers do, once a step. So
  // does a collective over what pure ops compute from constants alone (a
  // device of the interleaved schedule adds its chunks' constant parts).
  llvm::DenseSet<Operation *> update;
  auto accumulates = [](Operation *op) {
    return isa<AccumulateOp, ReduceStartOp>(op);
  };
  auto readsUpdate = [&](Value value) {
    Operation *def = value.getDefiningOp();
    return def && (accumulates(def) || update.contains(def));
  };
  llvm::DenseSet<Operation *> fromConstants;
  auto isConstant = [&](Value value) {
    Operation *def = value.getDefiningOp();
    return def && fromConstants.contains(def);
  };
  for (Operation &op : block.without_terminator()) {
    if (isa<ConstantOp>(op) ||
        (op.getNumOperands() != 0 && op.getNumRegions() == 0 &&
         isMemoryEffectFree(&op) && llvm::all_of(op.getOperands(), isConstant)))
      fromConstants.insert(&op);
    if (accumulates(&op))
      continue;
    bool collectiveOfConstants =
        isa<AllReduceOp>(op) && llvm::all_of(op.getOperands(), isConstant);
    if (collectiveOfConstants || llvm::any_of(op.getOperands(), readsUpdate))
      update.insert(&op);
  }
  // A pure op whose result nothing reads (such a stage's unused unscaling
  // factor) does not hold its operands out of the update; it joins the
  // update when it reads from it.
  auto isDead = [&](Operation *op) {
    return op != terminator && op->use_empty() && isMemoryEffectFree(op);
  };
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    if (update.contains(&op) || accumulates(&op) || op.use_empty())
      continue;
    bool onlyUpdate = llvm::all_of(op.getUsers(), [&](Operation *user) {
      return user == terminator || update.contains(user) || isDead(user);
    });
    if (onlyUpdate && !llvm::all_of(op.getUsers(), isDead))
      update.insert(&op);
  }
  for (Operation &op : block.without_terminator())
    if (isDead(&op) && llvm::any_of(op.getOperands(), readsUpdate))
      update.insert(&op);
  // The forward: the loss's accumulation, the activations a pipeline stage
  // sends on to later stages and receives from earlier ones, and what they
  // depend on. A transfer is of the stage of its function, or on a device
  // function of the interleaved schedule of its own (virtual) stage.
  std::optional<int64_t> functionStage;
  if (Operation *parent = block.getParentOp())
    functionStage = getStage(parent);
  auto isForwardRoot = [&](Operation &op) {
    if (auto accumulate = dyn_cast<AccumulateOp>(op))
      return static_cast<bool>(accumulate.getLoss());
    std::optional<int64_t> stage = getStage(&op);
    if (!stage)
      stage = functionStage;
    if (!stage)
      return false;
    if (auto send = dyn_cast<SendOp>(op))
      return send.getPeerAttr().getInt() > *stage;
    if (auto recv = dyn_cast<RecvOp>(op))
      return recv.getPeerAttr().getInt() < *stage;
    return false;
  };
  llvm::DenseSet<Operation *> forward;
  SmallVector<Operation *> worklist;
  for (Operation &op : block.without_terminator())
    if (isForwardRoot(op))
      worklist.push_back(&op);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!forward.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
  }
  for (Operation &op : block.without_terminator())
    phases[&op] = update.contains(&op)    ? StepPhase::Update
                  : forward.contains(&op) ? StepPhase::Forward
                                          : StepPhase::Backward;
  return phases;
}

bool cleave::isTrainingStepModule(Operation *module) {
  return module->walk([](AccumulateOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}
