//===- OutlineStages.cpp - one function per pipeline stage ------*- C++ -*-===//
//
// `cleave-outline-stages`: the ops of the entry function move, by stage, into
// `@stage_<s>`, and every value that crosses a stage boundary becomes an
// explicit `cleave.send` / `cleave.recv` pair.
//
// The order of the transfers is what makes the schedule deadlock-free by
// construction (and `cleave-verify-partition` checks it): a stage receives
// everything before it computes and sends everything after, sends in
// increasing destination order and receives in increasing source order, and
// both ends of a pair order their transfers by the value's definition.
//
// A training step (TrainingPhases.h) is outlined the same way: its
// activations flow to later stages in the forward, its gradients to earlier
// stages in the backward, and since each phase becomes an entry of its own
// (the phase of a send or receive follows from its direction), each entry
// receives before it computes and sends after.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Passes.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Dialect/Cleave/IR/TrainingPhases.h"
#include "cleave/Transforms/Partition/Contract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseMap.h"

#include <set>

namespace cleave {
#define GEN_PASS_DEF_OUTLINESTAGESPASS
#include "cleave/Transforms/Partition/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

/// Ops that every stage that uses their value holds a copy of, rather than
/// receiving it: parameters, whose bytes a stage loads once.
bool isDuplicatedSource(Operation *op) {
  return op->getNumOperands() == 0 &&
         isa<WeightOp, WeightSliceOp, ConstantOp>(op);
}

class StageOutliner {
public:
  StageOutliner(ModuleOp module, func::FuncOp entry,
                std::optional<int64_t> maxStages)
      : module(module), entry(entry), maxStages(maxStages) {}

  LogicalResult run() {
    Block &body = entry.getBody().front();
    if (failed(assignStages(body)))
      return failure();
    collectTransfers(body);
    build(body);
    entry.erase();
    return success();
  }

private:
  /// Gives every op a stage: its own, else that of the op defining its first
  /// operand, else that of its first user. Checks that stages are
  /// non-negative and that no value flows backwards.
  LogicalResult assignStages(Block &body) {
    SmallVector<Operation *> pending;
    for (Operation &op : body.without_terminator()) {
      if (std::optional<int64_t> stage = getStage(&op)) {
        if (*stage < 0)
          return op.emitOpError() << "has a negative stage";
        stages[&op] = *stage;
        continue;
      }
      Operation *def =
          op.getNumOperands() ? op.getOperand(0).getDefiningOp() : nullptr;
      if (def && stages.count(def))
        stages[&op] = stages[def];
      else
        pending.push_back(&op);
    }
    // Ops without a stage or an operand-defining op: the first user decides.
    for (Operation *op : llvm::reverse(pending)) {
      std::optional<int64_t> stage;
      for (Operation *user : op->getUsers())
        if (auto it = stages.find(user); it != stages.end())
          if (!stage || it->second < *stage)
            stage = it->second;
      if (!stage)
        stage = 0;
      stages[op] = *stage;
    }
    llvm::DenseMap<Operation *, StepPhase> phases = classifyStepPhases(body);
    for (Operation &op : body.without_terminator()) {
      numStages = std::max(numStages, stages[&op] + 1);
      if (maxStages && stages[&op] >= *maxStages)
        return op.emitOpError()
               << "is in stage " << stages[&op] << ", but the plan has "
               << *maxStages << " pipeline stages";
      for (Value operand : op.getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || isDuplicatedSource(def) || stages[def] == stages[&op])
          continue;
        if (failed(checkCrossing(def, &op, phases)))
          return failure();
      }
    }
    return success();
  }

  /// Whether a value of `def`'s stage may reach `user` on another. Without
  /// phases (inference) values flow to later stages only. In a training
  /// step the forward's activations flow to later stages, and the
  /// backward's gradients (and what the backward reads of the forward) to
  /// earlier ones; the update reads only its own stage's values.
  LogicalResult
  checkCrossing(Operation *def, Operation *user,
                const llvm::DenseMap<Operation *, StepPhase> &phases) {
    int64_t from = stages[def], to = stages[user];
    if (phases.empty()) {
      if (from < to)
        return success();
      return user->emitOpError()
             << "in stage " << to << " uses a value of stage " << from
             << "; values may only flow to later stages";
    }
    StepPhase defPhase = phases.lookup(def), userPhase = phases.lookup(user);
    if (userPhase == StepPhase::Update)
      return user->emitOpError()
             << "updates stage " << to << "'s state from a value of stage "
             << from
             << "; each stage's update reads only what the stage computed";
    if (from < to && defPhase != StepPhase::Forward)
      return user->emitOpError()
             << "in stage " << to << " uses a backward value of stage " << from
             << "; the backward's values may only flow to earlier stages";
    if (from > to && userPhase != StepPhase::Backward)
      return user->emitOpError()
             << "in the forward of stage " << to << " uses a value of stage "
             << from << "; the forward's values may only flow to later stages";
    return success();
  }

  /// The stages other than `stage` that use `value`.
  std::set<int64_t> consumerStages(Value value, int64_t stage) {
    std::set<int64_t> consumers;
    for (Operation *user : value.getUsers())
      if (auto it = stages.find(user);
          it != stages.end() && it->second != stage)
        consumers.insert(it->second);
    return consumers;
  }

  /// One tag per (value, destination stage), in definition order.
  void collectTransfers(Block &body) {
    int64_t nextTag = 0;
    for (Operation &op : body.without_terminator()) {
      if (isDuplicatedSource(&op))
        continue;
      int64_t stage = stages[&op];
      for (Value result : op.getResults())
        for (int64_t consumer : consumerStages(result, stage))
          transfers.push_back({result, stage, consumer, nextTag++});
    }
  }

  void build(Block &body) {
    OpBuilder builder(entry);
    MLIRContext *ctx = module.getContext();
    auto returnOp = cast<func::ReturnOp>(body.getTerminator());

    for (int64_t stage = 0; stage < numStages; ++stage) {
      // Arguments: the entry arguments the stage uses.
      SmallVector<BlockArgument> args;
      for (BlockArgument arg : body.getArguments())
        if (llvm::any_of(arg.getUsers(), [&](Operation *user) {
              auto it = stages.find(user);
              return it != stages.end() && it->second == stage;
            }))
          args.push_back(arg);
      // Results: the returned values the stage defines (an entry argument
      // that is returned as is goes out of the last stage).
      SmallVector<std::pair<Value, int64_t>> results;
      for (OpOperand &operand : returnOp->getOpOperands()) {
        Operation *def = operand.get().getDefiningOp();
        int64_t owner = def ? stages[def] : numStages - 1;
        if (owner == stage)
          results.push_back({operand.get(), operand.getOperandNumber()});
      }

      SmallVector<Type> argTypes, resultTypes;
      for (BlockArgument arg : args)
        argTypes.push_back(arg.getType());
      for (auto &[value, index] : results)
        resultTypes.push_back(value.getType());
      auto func = func::FuncOp::create(
          builder, entry.getLoc(), ("stage_" + Twine(stage)).str(),
          FunctionType::get(ctx, argTypes, resultTypes));
      setStage(func, stage);
      for (auto [i, arg] : llvm::enumerate(args)) {
        setInputIndex(func, i, arg.getArgNumber());
        if (StringAttr name = getArgName(entry, arg.getArgNumber()))
          setArgName(func, i, name.getValue());
        if (std::optional<int64_t> dim =
                getArgBatchDim(entry, arg.getArgNumber()))
          setArgBatchDim(func, i, *dim);
      }
      for (auto [i, result] : llvm::enumerate(results)) {
        setOutputIndex(func, i, result.second);
        if (StringAttr name = getResultName(entry, result.second))
          setResultName(func, i, name.getValue());
        if (std::optional<int64_t> dim =
                getResultBatchDim(entry, result.second))
          setResultBatchDim(func, i, *dim);
      }

      Block *block = func.addEntryBlock();
      OpBuilder inner = OpBuilder::atBlockBegin(block);
      IRMapping mapping;
      for (auto [arg, newArg] : llvm::zip(args, block->getArguments()))
        mapping.map(arg, newArg);

      // Receive, by source stage, then by definition.
      std::vector<const Transfer *> incoming;
      for (const Transfer &t : transfers)
        if (t.to == stage)
          incoming.push_back(&t);
      llvm::stable_sort(incoming, [](const Transfer *a, const Transfer *b) {
        return a->from < b->from;
      });
      for (const Transfer *t : incoming) {
        Value received = RecvOp::create(
            inner, t->value.getLoc(), t->value.getType(),
            inner.getI64IntegerAttr(t->from), inner.getI64IntegerAttr(t->tag));
        mapping.map(t->value, received);
      }

      // Compute: the stage's ops in program order, and copies of the
      // parameters it uses from other stages.
      for (Operation &op : body.without_terminator()) {
        if (stages[&op] == stage) {
          cloneInto(op, inner, mapping);
          continue;
        }
        if (isDuplicatedSource(&op) &&
            consumerStages(op.getResult(0), stages[&op]).count(stage))
          cloneInto(op, inner, mapping);
      }

      // Send, by destination stage, then by definition.
      std::vector<const Transfer *> outgoing;
      for (const Transfer &t : transfers)
        if (t.from == stage)
          outgoing.push_back(&t);
      llvm::stable_sort(outgoing, [](const Transfer *a, const Transfer *b) {
        return a->to < b->to;
      });
      for (const Transfer *t : outgoing)
        SendOp::create(inner, t->value.getLoc(), mapping.lookup(t->value),
                       inner.getI64IntegerAttr(t->to),
                       inner.getI64IntegerAttr(t->tag));

      SmallVector<Value> returned;
      for (auto &[value, index] : results)
        returned.push_back(mapping.lookup(value));
      func::ReturnOp::create(inner, returnOp.getLoc(), returned);
    }
  }

  /// Clones `op` without its plan attributes, which the stage function now
  /// carries.
  void cloneInto(Operation &op, OpBuilder &builder, IRMapping &mapping) {
    Operation *copy = builder.clone(op, mapping);
    removeStage(copy);
    setTpLoop(copy, std::nullopt);
  }

  struct Transfer {
    Value value;
    int64_t from;
    int64_t to;
    int64_t tag;
  };

  ModuleOp module;
  func::FuncOp entry;
  /// The plan's pipeline stages (pp, times the model chunks of the
  /// interleaved schedule), when the module has a plan.
  std::optional<int64_t> maxStages;
  llvm::DenseMap<Operation *, int64_t> stages;
  int64_t numStages = 1;
  std::vector<Transfer> transfers;
};

struct OutlineStagesPass
    : public cleave::impl::OutlineStagesPassBase<OutlineStagesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal()) {
      module.emitError() << "the entry function @" << entry << " is missing";
      return signalPassFailure();
    }
    if (!func.getBody().hasOneBlock()) {
      func.emitError() << "a function to outline must have one block";
      return signalPassFailure();
    }
    std::optional<int64_t> maxStages;
    if (getMesh(module)) {
      FailureOr<PlanContract> contract = readPlanContract(module);
      if (failed(contract))
        return signalPassFailure();
      maxStages = contract->getNumVirtualStages();
    }
    if (failed(StageOutliner(module, func, maxStages).run()))
      signalPassFailure();
  }
};

} // namespace
