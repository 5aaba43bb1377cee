//===- ShardPlan.cpp - plan choices as shard annotations --------*- C++ -*-===//
//
// `cleave-shard-plan`: every tensor of the entry function gets the
// annotations `shard-partition` needs, from the loop the plan split (or none)
// on each op. The annotations are complete, so no propagation runs: the plan,
// not upstream's heuristics, decides every layout.
//
// With several data-parallel replicas or microbatches the grid gets a second
// axis, `batch`, of dp x microbatches blocks, and every op that reads the
// batch splits its batch loop over it: the programs then compute one block
// of the batch, and the runtime feeds them block after block.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Passes.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Dialect/Cleave/IR/TrainingPhases.h"
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
  return isa<WeightOp, WeightSliceOp, ConstantOp, StateOp>(op);
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
  ShardPlanner(func::FuncOp func, shard::GridOp grid, int64_t tp,
               int64_t batchParts)
      : func(func), grid(grid), tp(tp), batchParts(batchParts),
        tpAxis(batchParts > 1 ? 1 : 0),
        gridRef(FlatSymbolRefAttr::get(grid.getSymNameAttr())) {}

  LogicalResult run() {
    Block &body = func.getBody().front();
    if (batchParts > 1 && failed(traceBatchBlocks(body)))
      return failure();
    for (Operation &op : body.without_terminator())
      if (failed(chooseShardings(&op)))
        return failure();
    if (failed(followUsers(body)) || failed(checkInPlaceWrites(body)))
      return failure();
    annotate(body);
    return success();
  }

private:
  Sharding replicated() const {
    return Sharding::get(
        gridRef,
        {shard::GridAxesAttr::get(gridRef.getContext(), ArrayRef<GridAxis>{})});
  }

  /// Where the batch runs; fails, naming the op or output, when a block of
  /// it cannot be computed apart from the others.
  LogicalResult traceBatchBlocks(Block &body) {
    trace = traceBatch(body, [](Value value) {
      return isa<RankedTensorType>(value.getType());
    });
    if (trace.barrier)
      return trace.barrier->emitOpError()
             << "mixes the samples of the batch, so the batch cannot be cut "
                "into the "
             << batchParts
             << " blocks of the data-parallel replicas and microbatches "
                "(pin --dp 1 --microbatches 1)";
    auto returnOp = body.getTerminator();
    for (auto [index, value] : llvm::enumerate(returnOp->getOperands())) {
      if (trace.getDim(value) < 0)
        return returnOp->emitOpError()
               << "returns output #" << index
               << ", which does not carry the batch, so the batch cannot be "
                  "cut into the "
               << batchParts
               << " blocks of the data-parallel replicas and microbatches "
                  "(pin --dp 1 --microbatches 1)";
      if (int64_t outer = trace.getOuter(value); outer != 1)
        return returnOp->emitOpError()
               << "returns output #" << index << ", whose dimension "
               << trace.getDim(value) << " interleaves the samples of the "
               << "batch below " << outer
               << " rows of another dimension, so the batch cannot be cut "
                  "into the "
               << batchParts
               << " blocks of the data-parallel replicas and microbatches "
                  "(pin --dp 1 --microbatches 1)";
    }
    // Every dimension that holds the batch holds a multiple of its samples:
    // the samples must divide, named at the first op that reads them.
    if (trace.batchSize % batchParts != 0)
      for (Operation &op : body.without_terminator())
        if (trace.loops.count(&op))
          return op.emitOpError()
                 << "holds " << trace.batchSize
                 << " samples of the batch, which do not divide into "
                 << batchParts << " blocks (dp x microbatches)";
    for (auto &[op, dims] : trace.movedBatch)
      setBatchDims(op, dims);
    for (BlockArgument argument : body.getArguments())
      if (int64_t dim = trace.getDim(argument); dim >= 0)
        setArgBatchDim(func, argument.getArgNumber(), dim);
    for (auto [index, value] : llvm::enumerate(returnOp->getOperands()))
      setResultBatchDim(func, index, trace.getDim(value));
    return success();
  }

  /// `value` cut into the blocks of the batch axis, or whole when it does
  /// not carry the batch.
  Sharding batchBlocks(Value value) const {
    int64_t dim = trace.getDim(value);
    if (batchParts == 1 || dim < 0)
      return replicated();
    MLIRContext *ctx = gridRef.getContext();
    SmallVector<shard::GridAxesAttr> axes(
        dim + 1, shard::GridAxesAttr::get(ctx, ArrayRef<GridAxis>{}));
    axes[dim] = shard::GridAxesAttr::get(ctx, {GridAxis(0)});
    return Sharding::get(gridRef, axes);
  }

  /// The shardings of `op` under its batch loop and its `cleave.tp_loop`,
  /// or replicated.
  LogicalResult chooseShardings(Operation *op) {
    OpShardings &chosen = shardings[op];
    chosen.operands.assign(op->getNumOperands(), replicated());
    chosen.results.assign(op->getNumResults(), replicated());
    std::optional<int64_t> tpLoop = getTpLoop(op);
    auto batchLoop = trace.loops.find(op);
    bool splitsBatch = batchParts > 1 && batchLoop != trace.loops.end();
    // A constant is whole on every device of an SPMD program whatever the
    // plan says; its users take their slice.
    bool splitsTp = tpLoop && tp > 1 && !isa<ConstantOp>(op);
    if (!splitsBatch && !splitsTp)
      return success();
    auto shardingOp = dyn_cast<shard::ShardingInterface>(op);
    if (!shardingOp)
      return op->emitOpError()
             << "has `" << CleaveDialect::TpLoopAttrHelper::getNameStr()
             << "` but cannot be sharded";
    shard::ShardingArray loopAxes(shardingOp.getLoopIteratorTypes().size());
    if (splitsBatch)
      loopAxes[batchLoop->second.loop].push_back(GridAxis(0));
    if (splitsTp) {
      int64_t loop = *tpLoop;
      SmallVector<OpLoopSharding> loops = getShardableLoops(op, tp);
      if (!llvm::any_of(loops, [&](const OpLoopSharding &l) {
            return l.loop == loop;
          }))
        return op->emitOpError()
               << "cannot split loop " << loop << " over " << tp
               << " tensor-parallel devices: the loop is not splittable or a "
                  "dimension it splits does not divide by "
               << tp;
      loopAxes[loop].push_back(GridAxis(tpAxis));
    }
    FailureOr<std::vector<Sharding>> annotations =
        shardingOp.getShardingAnnotations(
            shard::ShardingOption(std::move(loopAxes), gridRef));
    if (failed(annotations))
      return op->emitOpError() << "cannot split its loops as planned";
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
      return batchBlocks(use.get());
    return it->second.operands[use.getOperandNumber()];
  }

  /// Parameters without a loop of their own are stored the way all their
  /// users need them, when the users agree; otherwise whole. A tensor that
  /// ops write in place (a trained parameter, optimizer state) is stored
  /// the way its writers need it, so that they write the stored tensor and
  /// not a resharded copy; they must agree.
  LogicalResult followUsers(Block &body) {
    for (Operation &op : body.without_terminator()) {
      if (!isParameterSource(&op) || isa<ConstantOp>(op) || getTpLoop(&op) ||
          !isAnnotated(op.getResult(0)))
        continue;
      std::optional<Sharding> written;
      Operation *firstWriter = nullptr;
      SmallVector<OpOperand *> writes;
      for (OpOperand &use : op.getResult(0).getUses())
        if (writesInPlace(use))
          writes.push_back(&use);
      llvm::stable_sort(writes, [](OpOperand *a, OpOperand *b) {
        return a->getOwner()->isBeforeInBlock(b->getOwner());
      });
      for (OpOperand *write : writes) {
        OpOperand &use = *write;
        Sharding needed = neededBy(use);
        if (written && !(*written == needed))
          return use.getOwner()->emitOpError()
                 << "writes in place a tensor that " << firstWriter->getName()
                 << " writes in another layout";
        written = needed;
        firstWriter = use.getOwner();
      }
      if (written) {
        shardings[&op].results[0] = *written;
        continue;
      }
      std::optional<Sharding> common;
      bool agree = true;
      for (OpOperand &use : op.getResult(0).getUses()) {
        Sharding needed = neededBy(use);
        if (common && !(*common == needed))
          agree = false;
        common = needed;
      }
      // A parameter is the same for every block of the batch: users that
      // cut it along the batch take their block from the whole.
      if (agree && common && !splitsOverBatch(*common))
        shardings[&op].results[0] = *common;
    }
    return success();
  }

  /// The sharding `value` is defined with.
  Sharding definedSharding(Value value) {
    if (auto result = dyn_cast<OpResult>(value)) {
      auto it = shardings.find(result.getOwner());
      if (it != shardings.end())
        return it->second.results[result.getResultNumber()];
    }
    return batchBlocks(value);
  }

  /// Every tensor written in place is written in the layout it has: a
  /// resharding in between would make the op write a copy.
  LogicalResult checkInPlaceWrites(Block &body) {
    for (Operation &op : body.without_terminator())
      for (OpOperand &use : op.getOpOperands())
        if (isAnnotated(use.get()) && writesInPlace(use) &&
            !(definedSharding(use.get()) == neededBy(use)))
          return op.emitOpError()
                 << "writes operand #" << use.getOperandNumber()
                 << " in place in another layout than the tensor has, so it "
                    "would write a resharded copy";
    return success();
  }

  bool splitsOverBatch(const Sharding &sharding) const {
    if (batchParts == 1)
      return false;
    for (shard::GridAxesAttr axes : sharding.getSplitAxes())
      if (llvm::is_contained(axes.asArrayRef(), GridAxis(0)))
        return true;
    return false;
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
        annotateValue(arg, batchBlocks(arg), builder);
    for (Operation *op : ops)
      for (OpResult result : op->getResults())
        if (isAnnotated(result))
          annotateValue(result, shardings[op].results[result.getResultNumber()],
                        builder);
  }

  func::FuncOp func;
  shard::GridOp grid;
  int64_t tp;
  /// Blocks of the batch (dp x microbatches); 1 when it is not cut.
  int64_t batchParts;
  /// The grid axis of tensor parallelism: 1 after the batch axis, else 0.
  int64_t tpAxis;
  FlatSymbolRefAttr gridRef;
  BatchTrace trace;
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
    FailureOr<func::FuncOp> planned = getPlannedFunction(module, entry);
    if (failed(planned))
      return signalPassFailure();
    func::FuncOp func = *planned;
    if (SymbolTable::lookupSymbolIn(module, kTpAxisName)) {
      module.emitError() << "the symbol @" << kTpAxisName
                         << " is taken; it names the tensor-parallel grid";
      return signalPassFailure();
    }

    // A training step's function is one microbatch of one replica: the
    // replicas and microbatches repeat it rather than cut its batch.
    bool trainingStep = !classifyStepPhases(func.getBody().front()).empty();
    // Nothing of a training step is split without tensor-parallel devices.
    if (trainingStep && contract->tp == 1)
      return;
    int64_t batchParts =
        trainingStep ? 1 : contract->dp * contract->microbatches;
    OpBuilder builder(module.getBodyRegion());
    shard::GridOp grid;
    if (batchParts > 1) {
      grid = shard::GridOp::create(
          builder, module.getLoc(), kTpAxisName,
          builder.getDenseI64ArrayAttr({batchParts, contract->tp}));
      setGridAxes(grid, {kBatchAxisName, kTpAxisName});
    } else {
      grid = shard::GridOp::create(builder, module.getLoc(), kTpAxisName,
                                   builder.getDenseI64ArrayAttr({contract->tp}));
      setGridAxes(grid, {kTpAxisName});
    }

    if (failed(
            ShardPlanner(func, grid, contract->tp, batchParts).run()))
      return signalPassFailure();
  }
};

} // namespace
