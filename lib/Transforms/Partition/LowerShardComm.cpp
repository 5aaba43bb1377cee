//===- LowerShardComm.cpp - shard collectives to cleave ops -----*- C++ -*-===//
//
// `cleave-lower-shard-comm`: the last step of the SPMD rewrite. Upstream
// `shard` collectives name grid axes by index; codegen and the runtime know
// mesh axes by name and group sizes, which the cleave ops carry.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Passes.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Partition/Contract.h"
#include "cleave/Transforms/Partition/Sharding.h"
#include "cleave/rt/Mesh.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace cleave {
#define GEN_PASS_DEF_LOWERSHARDCOMMPASS
#include "cleave/Transforms/Partition/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

using mlir::shard::GridAxis;
using mlir::shard::ReductionKind;

namespace {

/// The spelling of a reduction in cleave collectives, if it has one.
std::optional<StringRef> spellReduction(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return StringRef("sum");
  case ReductionKind::Product:
    return StringRef("product");
  case ReductionKind::Max:
    return StringRef("max");
  case ReductionKind::Min:
    return StringRef("min");
  case ReductionKind::Average:
    return StringRef("average");
  default:
    return std::nullopt;
  }
}

/// The mesh axis and group size of a collective over `axes` of its grid.
struct Group {
  StringAttr axis;
  IntegerAttr size;
};

class CommLowering {
public:
  explicit CommLowering(ModuleOp module) : module(module) {}

  LogicalResult run() {
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<shard::AllReduceOp, shard::AllGatherOp, shard::AllSliceOp,
              shard::AllToAllOp, tensor::CastOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      if (failed(lower(op)))
        return failure();

    // Whatever shard op is left has no cleave counterpart.
    WalkResult remaining = module.walk([&](Operation *op) {
      if (isa<shard::GridOp>(op) || !isa<shard::ShardDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitOpError() << "has no cleave communication op to lower to";
      return WalkResult::interrupt();
    });
    if (remaining.wasInterrupted())
      return failure();
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      if (SymbolTable::symbolKnownUseEmpty(grid, module))
        grid.erase();
    return success();
  }

private:
  FailureOr<Group> groupOf(Operation *op, FlatSymbolRefAttr gridName,
                           ArrayRef<GridAxis> axes,
                           bool batchAllowed = false) {
    auto grid = symbols.lookupNearestSymbolFrom<shard::GridOp>(op, gridName);
    if (!grid)
      return op->emitOpError() << "refers to unknown grid " << gridName;
    if (axes.size() != 1)
      return op->emitOpError()
             << "runs over " << axes.size()
             << " grid axes; cleave collectives run over one mesh axis";
    std::string axisName = getGridAxisName(grid, axes.front());
    if (axisName == kBatchAxisName && !batchAllowed)
      return op->emitOpError()
             << "would move data between the blocks of the batch (the "
                "data-parallel replicas and microbatches), which run apart";
    rt::MeshAxis meshAxis;
    if (axisName != kBatchAxisName && !rt::parseMeshAxis(axisName, meshAxis))
      return op->emitOpError()
             << "runs over grid axis '" << axisName
             << "', which is not a mesh axis (pp, dp or tp); name the grid's "
                "axes with `"
             << kGridAxesAttrName << "`";
    Builder b(op->getContext());
    return Group{b.getStringAttr(axisName),
                 b.getI64IntegerAttr(grid.getShape()[axes.front()])};
  }

  LogicalResult lower(Operation *op) {
    // Erased already: folded into a reduce-scatter.
    if (lowered.contains(op))
      return success();
    OpBuilder builder(op);
    Builder b(op->getContext());
    Location loc = op->getLoc();
    Value replacement;

    if (auto cast = dyn_cast<tensor::CastOp>(op)) {
      // Resharding casts between equal static types; anything else is not
      // ours to remove.
      if (cast.getSource().getType() != cast.getType())
        return success();
      replacement = cast.getSource();
    } else if (auto reduce = dyn_cast<shard::AllReduceOp>(op)) {
      FailureOr<Group> group =
          groupOf(op, reduce.getGridAttr(), reduce.getGridAxes());
      if (failed(group))
        return failure();
      std::optional<StringRef> kind = spellReduction(reduce.getReduction());
      if (!kind)
        return op->emitOpError() << "reduces with a kind cleave collectives "
                                    "do not support";
      // An all-reduce whose only user keeps one block of the result along
      // the same axis is a reduce-scatter.
      if (reduce->hasOneUse())
        if (auto slice = dyn_cast<shard::AllSliceOp>(*reduce->user_begin());
            slice && slice.getGridAttr() == reduce.getGridAttr() &&
            slice.getGridAxes() == reduce.getGridAxes()) {
          OpBuilder sliceBuilder(slice);
          Value scattered = ReduceScatterOp::create(
              sliceBuilder, slice.getLoc(), slice.getResult().getType(),
              reduce.getInput(), group->axis, group->size,
              b.getI64IntegerAttr(slice.getSliceAxis().getSExtValue()),
              b.getStringAttr(*kind));
          slice.getResult().replaceAllUsesWith(scattered);
          lowered.insert(slice);
          slice.erase();
          reduce.erase();
          return success();
        }
      replacement =
          AllReduceOp::create(builder, loc, reduce.getInput(), group->axis,
                              group->size, b.getStringAttr(*kind));
    } else if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
      FailureOr<Group> group =
          groupOf(op, gather.getGridAttr(), gather.getGridAxes());
      if (failed(group))
        return failure();
      replacement = AllGatherOp::create(
          builder, loc, gather.getResult().getType(), gather.getInput(),
          group->axis, group->size,
          b.getI64IntegerAttr(gather.getGatherAxis().getSExtValue()));
    } else if (auto slice = dyn_cast<shard::AllSliceOp>(op)) {
      // Taking a block along the batch axis moves nothing: each block takes
      // its own (the runtime's batch_slice).
      FailureOr<Group> group =
          groupOf(op, slice.getGridAttr(), slice.getGridAxes(),
                  /*batchAllowed=*/true);
      if (failed(group))
        return failure();
      replacement = AllSliceOp::create(
          builder, loc, slice.getResult().getType(), slice.getInput(),
          group->axis, group->size,
          b.getI64IntegerAttr(slice.getSliceAxis().getSExtValue()));
    } else if (auto toAll = dyn_cast<shard::AllToAllOp>(op)) {
      FailureOr<Group> group =
          groupOf(op, toAll.getGridAttr(), toAll.getGridAxes());
      if (failed(group))
        return failure();
      replacement = AllToAllOp::create(
          builder, loc, toAll.getResult().getType(), toAll.getInput(),
          group->axis, group->size,
          b.getI64IntegerAttr(toAll.getSplitAxis().getSExtValue()),
          b.getI64IntegerAttr(toAll.getConcatAxis().getSExtValue()));
    }
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
    return success();
  }

  ModuleOp module;
  SymbolTableCollection symbols;
  /// All-slices folded into a reduce-scatter and erased before their turn;
  /// only compared, never dereferenced.
  llvm::DenseSet<Operation *> lowered;
};

struct LowerShardCommPass
    : public cleave::impl::LowerShardCommPassBase<LowerShardCommPass> {
  void runOnOperation() override {
    if (failed(CommLowering(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
