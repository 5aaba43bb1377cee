//===- ShardPlan.cpp - plan choices as shard annotations --------*- C++ -*-===//
//
// `cleave-shard-plan`: every tensor of the entry function gets the
// annotations `shard-partition` needs, from the loop the plan split (or none)
// on each op. The annotations are complete, so no propagation runs: the plan,
// not upstream's heuristics, decides every layout.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Passes.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Partition/Contract.h"
#include "cleave/Transforms/Partition/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"

namespace cleave {
#define GEN_PASS_DEF_SHARDPLANPASS
#include "cleave/Transforms/Partition/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

using mlir::shard::GridAxis;
using mlir::shard::Sharding;

namespace {

/// Whether `op` defines a parameter: a value that lives for the whole run
/// and that the plan may store split to save memory.
bool isParameterSource(Operation *op) {
  return isa<WeightOp, WeightSliceOp, ConstantOp>(op);
}

bool isAnnotated(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() > 0;
}

/// The shardings each op asks of its operands and gives its results.
struct OpShardings {
  std::vector<Sharding> operands;
  std::vector<Sharding> results;
};

class ShardPlanner {
public:
  ShardPlanner(func::FuncOp func, shard::GridOp grid, int64_t tp)
      : func(func), grid(grid), tp(tp),
        gridRef(FlatSymbolRefAttr::get(grid.getSymNameAttr())) {}

  LogicalResult run() {
    Block &body = func.getBody().front();
    for (Operation &op : body.without_terminator())
      if (failed(chooseShardings(&op)))
        return failure();
    followUsers(body);
    annotate(body);
    return success();
  }

private:
  Sharding replicated() const {
    return Sharding::get(
        gridRef,
        {shard::GridAxesAttr::get(gridRef.getContext(), ArrayRef<GridAxis>{})});
  }

  /// The shardings of `op` under its `cleave.tp_loop`, or replicated.
  LogicalResult chooseShardings(Operation *op) {
    OpShardings &chosen = shardings[op];
    chosen.operands.assign(op->getNumOperands(), replicated());
    chosen.results.assign(op->getNumResults(), replicated());
    auto loopAttr = op->getAttrOfType<IntegerAttr>(kTpLoopAttrName);
    // A constant is whole on every device of an SPMD program whatever the
    // plan says; its users take their slice.
    if (!loopAttr || tp == 1 || isa<ConstantOp>(op))
      return success();
    int64_t loop = loopAttr.getInt();
    auto shardingOp = dyn_cast<shard::ShardingInterface>(op);
    if (!shardingOp)
      return op->emitOpError()
             << "has `" << kTpLoopAttrName << "` but cannot be sharded";
    SmallVector<OpLoopSharding> loops = getShardableLoops(op, tp);
    if (!llvm::any_of(loops,
                      [&](const OpLoopSharding &l) { return l.loop == loop; }))
      return op->emitOpError()
             << "cannot split loop " << loop << " over " << tp
             << " tensor-parallel devices: the loop is not splittable or a "
                "dimension it splits does not divide by "
             << tp;
    shard::ShardingArray loopAxes(shardingOp.getLoopIteratorTypes().size());
    loopAxes[loop] = {GridAxis(0)};
    FailureOr<std::vector<Sharding>> annotations =
        shardingOp.getShardingAnnotations(
            shard::ShardingOption(std::move(loopAxes), gridRef));
    if (failed(annotations))
      return op->emitOpError() << "cannot split loop " << loop;
    auto normalise = [&](const Sharding &s) { return s ? s : replicated(); };
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      chosen.operands[i] = normalise((*annotations)[i]);
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      chosen.results[i] = normalise((*annotations)[op->getNumOperands() + i]);
    return success();
  }

  /// The sharding the user of `use` needs; whole for users the plan does
  /// not describe (the return).
  Sharding neededBy(OpOperand &use) {
    auto it = shardings.find(use.getOwner());
    if (it == shardings.end())
      return replicated();
    return it->second.operands[use.getOperandNumber()];
  }

  /// Parameters without a loop of their own are stored the way all their
  /// users need them, when the users agree; otherwise whole.
  void followUsers(Block &body) {
    for (Operation &op : body.without_terminator()) {
      if (!isParameterSource(&op) || isa<ConstantOp>(op) ||
          op.hasAttr(kTpLoopAttrName) || !isAnnotated(op.getResult(0)))
        continue;
      std::optional<Sharding> common;
      bool agree = true;
      for (OpOperand &use : op.getResult(0).getUses()) {
        Sharding needed = neededBy(use);
        if (common && !(*common == needed))
          agree = false;
        common = needed;
      }
      if (agree && common)
        shardings[&op].results[0] = *common;
    }
  }

  /// One `shard.sharding` per distinct sharding, at the top of the body.
  Value shardingValue(const Sharding &sharding, OpBuilder &builder) {
    for (auto &[known, value] : shardingValues)
      if (known == sharding)
        return value;
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&func.getBody().front());
    Value value =
        shard::ShardingOp::create(builder, func.getLoc(), sharding).getResult();
    shardingValues.emplace_back(sharding, value);
    return value;
  }

  /// Annotates `value` with the sharding its definition gives it, then each
  /// use with the sharding its user needs.
  void annotateValue(Value value, const Sharding &defined, OpBuilder &builder) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : value.getUses())
      uses.push_back(&use);
    llvm::stable_sort(uses, [](OpOperand *a, OpOperand *b) {
      return a->getOwner() != b->getOwner() &&
             a->getOwner()->isBeforeInBlock(b->getOwner());
    });
    // The sharding first: it goes to the top of the body, so an argument's
    // annotation must follow it (not precede the shardings made for earlier
    // arguments).
    Value definedSharding = shardingValue(defined, builder);
    if (Operation *def = value.getDefiningOp())
      builder.setInsertionPointAfter(def);
    else
      builder.setInsertionPointAfter(definedSharding.getDefiningOp());
    auto result =
        shard::ShardOp::create(builder, value.getLoc(), value, definedSharding,
                               /*annotate_for_users=*/false);
    // One annotation per distinct sharding the users need, before the first
    // of them, so that a resharding several users need happens once.
    std::vector<std::pair<Sharding, Value>> annotations;
    for (OpOperand *use : uses) {
      Sharding needed = neededBy(*use);
      auto known = llvm::find_if(annotations, [&](const auto &entry) {
        return entry.first == needed;
      });
      if (known == annotations.end()) {
        builder.setInsertionPoint(use->getOwner());
        Value sharding = shardingValue(needed, builder);
        Value annotated =
            shard::ShardOp::create(builder, value.getLoc(), result, sharding,
                                   /*annotate_for_users=*/true);
        known = annotations.insert(annotations.end(), {needed, annotated});
      }
      use->set(known->second);
    }
  }

  void annotate(Block &body) {
    OpBuilder builder(func.getContext());
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (BlockArgument arg : body.getArguments())
      if (isAnnotated(arg))
        annotateValue(arg, replicated(), builder);
    for (Operation *op : ops)
      for (OpResult result : op->getResults())
        if (isAnnotated(result))
          annotateValue(result, shardings[op].results[result.getResultNumber()],
                        builder);
  }

  func::FuncOp func;
  shard::GridOp grid;
  int64_t tp;
  FlatSymbolRefAttr gridRef;
  llvm::DenseMap<Operation *, OpShardings> shardings;
  std::vector<std::pair<Sharding, Value>> shardingValues;
};

struct ShardPlanPass : public cleave::impl::ShardPlanPassBase<ShardPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<PlanContract> contract = readPlanContract(module);
    if (failed(contract))
      return signalPassFailure();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal()) {
      module.emitError() << "the plan's entry function @" << entry
                         << " is missing";
      return signalPassFailure();
    }
    if (!func.getBody().hasOneBlock()) {
      func.emitError() << "a planned function must have one block";
      return signalPassFailure();
    }
    if (SymbolTable::lookupSymbolIn(module, kTpAxisName)) {
      module.emitError() << "the symbol @" << kTpAxisName
                         << " is taken; it names the tensor-parallel grid";
      return signalPassFailure();
    }

    OpBuilder builder(module.getBodyRegion());
    auto grid =
        shard::GridOp::create(builder, module.getLoc(), kTpAxisName,
                              builder.getDenseI64ArrayAttr({contract->tp}));
    grid->setAttr(kGridAxesAttrName,
                  builder.getStrArrayAttr({StringRef(kTpAxisName)}));

    if (failed(ShardPlanner(func, grid, contract->tp).run()))
      return signalPassFailure();
  }
};

} // namespace
