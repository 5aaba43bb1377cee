//===- ShardStep.cpp - the backward and update split like the forward -----===//
//
// `cleave-shard-step`: the plan chooses the tensor-parallel loop of each op
// of a training step's forward (`cleave.tp_loop`); this pass chooses it for
// the ops that the backward and the update added, so that the whole step is
// one SPMD function for `cleave-shard-plan` and `shard-partition`.
//
// Each op, in program order, takes the split (or none) that moves the fewest
// bytes: its operands arrive in the layouts their definitions give them; a
// whole operand is sliced for free, a split one is gathered (its bytes) or
// moved to another split (its bytes over the group); a split reduction loop
// costs the all-reduce of its results (twice their bytes). On equal cost the
// op stays whole. Megatron's conjugate collectives follow from the layouts
// rather than from rules per model: the gradient of a column-parallel
// matmul's input contracts over the split output features (an all-reduce,
// the backward of the forward's identity), the gradient of a row-parallel
// matmul's input is split like its weight (no communication, the backward of
// the forward's all-reduce), and each weight's gradient comes out split like
// the weight.
//
// Parameters and optimizer state that no decided op has read yet take the
// layout of their first reader, so that the accumulation, the update and
// the clearing of a split parameter's gradient all run on the parameter's
// block.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Passes.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Dialect/Cleave/IR/TrainingPhases.h"
#include "cleave/Transforms/Partition/Contract.h"
#include "cleave/Transforms/Partition/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <limits>

namespace cleave {
#define GEN_PASS_DEF_SHARDSTEPPASS
#include "cleave/Transforms/Partition/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

/// Every operand and result of `op` whole.
OpLoopSharding wholeOp(Operation *op) {
  OpLoopSharding whole;
  whole.operands.assign(op->getNumOperands(), ValueSharding::replicated());
  whole.results.assign(op->getNumResults(), ValueSharding::replicated());
  return whole;
}

/// Ops that define a tensor kept from one step to the next, whose layout
/// follows its readers.
bool isStoredTensor(Operation *op) {
  return isa<WeightOp, WeightSliceOp, StateOp>(op);
}

double byteSize(Value value) {
  return static_cast<double>(getTensorBytes(value.getType()));
}

class StepSharder {
public:
  StepSharder(Block &body, int64_t tp) : body(body), tp(tp) {}

  LogicalResult run() {
    llvm::DenseMap<Operation *, StepPhase> phases = classifyStepPhases(body);
    for (Operation &op : body.without_terminator()) {
      if (isStoredTensor(&op) && !getTpLoop(&op)) {
        undecided.insert(op.getResult(0));
        continue;
      }
      // A constant is whole on every device; its readers slice it. So is
      // the sum of a parameter that several stages hold, all-reduced along
      // pp: the stages may split their copies differently, and their
      // programs must bring the same bytes.
      auto stageReduce = dyn_cast<AllReduceOp>(op);
      if (isa<ConstantOp>(op) ||
          (stageReduce && stageReduce.getAxis() == "pp")) {
        record(&op, wholeOp(&op));
        continue;
      }
      auto phase = phases.find(&op);
      bool planned =
          phase != phases.end() && phase->second == StepPhase::Forward;
      if (planned || getTpLoop(&op)) {
        FailureOr<OpLoopSharding> layout = plannedLayout(&op);
        if (failed(layout))
          return failure();
        record(&op, *layout);
        continue;
      }
      FailureOr<OpLoopSharding> chosen = choose(&op);
      if (failed(chosen))
        return failure();
      setTpLoop(&op, chosen->loop >= 0 ? std::optional<int64_t>(chosen->loop)
                                       : std::nullopt);
      record(&op, *chosen);
    }
    return success();
  }

private:
  /// The layout the plan gave `op`: its `cleave.tp_loop` split, or whole.
  FailureOr<OpLoopSharding> plannedLayout(Operation *op) {
    std::optional<int64_t> loop = getTpLoop(op);
    if (!loop)
      return wholeOp(op);
    FailureOr<OpLoopSharding> layout = getLoopSharding(op, *loop);
    if (failed(layout))
      return op->emitOpError()
             << "has `" << CleaveDialect::TpLoopAttrHelper::getNameStr()
             << " = " << *loop << "`, which is not a loop it can split";
    return layout;
  }

  /// The layout `value` is in once decided (whole by default: arguments).
  ValueSharding layoutOf(Value value) const {
    auto known = layouts.find(value);
    return known == layouts.end() ? ValueSharding::replicated() : known->second;
  }

  /// The bytes that bring `value` from the layout it has into `needed`.
  double moveCost(Value value, const ValueSharding &needed) const {
    if (undecided.contains(value))
      return 0;
    ValueSharding have = layoutOf(value);
    if (have == needed || have.isReplicated())
      return 0;
    if (needed.isReplicated())
      return byteSize(value);
    return byteSize(value) / tp;
  }

  double cost(Operation *op, const OpLoopSharding &layout) const {
    double bytes = 0;
    for (OpOperand &use : op->getOpOperands()) {
      const ValueSharding &needed = layout.operands[use.getOperandNumber()];
      // A tensor written in place is written where it is stored.
      if (writesInPlace(use) && !undecided.contains(use.get()) &&
          layoutOf(use.get()) != needed)
        return std::numeric_limits<double>::infinity();
      bytes += moveCost(use.get(), needed);
    }
    for (auto [result, given] : llvm::zip(op->getResults(), layout.results))
      if (given.isPartial())
        bytes += 2 * byteSize(result);
    return bytes;
  }

  /// The cheapest layout of `op`: whole, or one of its loops split.
  FailureOr<OpLoopSharding> choose(Operation *op) const {
    OpLoopSharding best = wholeOp(op);
    double bestCost = cost(op, best);
    for (OpLoopSharding &candidate : getShardableLoops(op, tp)) {
      double candidateCost = cost(op, candidate);
      if (candidateCost < bestCost) {
        best = std::move(candidate);
        bestCost = candidateCost;
      }
    }
    if (std::isinf(bestCost))
      return op->emitOpError()
             << "writes in place a tensor stored split over the " << tp
             << " tensor-parallel devices, but none of its loops splits it "
                "that way";
    return best;
  }

  /// Records the layouts `op` gives its results (a partial result is
  /// all-reduced, so whole) and fixes those of the stored tensors it is the
  /// first to read.
  void record(Operation *op, const OpLoopSharding &layout) {
    for (auto [operand, needed] : llvm::zip(op->getOperands(), layout.operands))
      if (undecided.erase(operand))
        layouts[operand] = needed;
    for (auto [result, given] : llvm::zip(op->getResults(), layout.results))
      layouts[result] = given.isPartial() ? ValueSharding::replicated() : given;
  }

  Block &body;
  int64_t tp;
  llvm::DenseMap<Value, ValueSharding> layouts;
  llvm::DenseSet<Value> undecided;
};

struct ShardStepPass : public cleave::impl::ShardStepPassBase<ShardStepPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<PlanContract> contract = readPlanContract(module);
    if (failed(contract))
      return signalPassFailure();
    FailureOr<func::FuncOp> planned = getPlannedFunction(module, entry);
    if (failed(planned))
      return signalPassFailure();
    func::FuncOp func = *planned;
    Block &body = func.getBody().front();
    if (classifyStepPhases(body).empty()) {
      func.emitError() << "is not a training step: it accumulates no loss or "
                          "gradient (run cleave-optimizer-update first)";
      return signalPassFailure();
    }
    if (contract->tp == 1)
      return;
    if (failed(StepSharder(body, contract->tp).run()))
      signalPassFailure();
  }
};

} // namespace
