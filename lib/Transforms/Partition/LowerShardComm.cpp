//===- LowerShardComm.cpp - shard collectives to cleave ops -----*- C++ -*-===//
//
// `cleave-lower-shard-comm`: the last step of the SPMD rewrite. Upstream
// `shard` collectives name grid axes by index; codegen and the runtime know
// mesh axes by name and group sizes, which the cleave ops carry. Each
// collective is one conversion pattern; the conversion target makes the
// whole `shard` dialect but its grids illegal, so none survives the pass.
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
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"

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

/// The mesh axis and group size of a collective over some axes of its grid.
struct Group {
  StringAttr axis;
  IntegerAttr size;
};

/// Resolves the group of `op`, a collective over `axes` of grid `gridName`,
/// or emits an error on `op` naming the axis that has no mesh group. Only
/// `allowBatch` collectives may run over the batch axis.
FailureOr<Group> resolveGroup(Operation *op, FlatSymbolRefAttr gridName,
                              ArrayRef<GridAxis> axes,
                              SymbolTableCollection &symbols,
                              bool allowBatch = false) {
  auto grid = symbols.lookupNearestSymbolFrom<shard::GridOp>(op, gridName);
  if (!grid)
    return op->emitOpError() << "refers to unknown grid " << gridName;
  if (axes.size() != 1)
    return op->emitOpError()
           << "runs over " << axes.size()
           << " grid axes; cleave collectives run over one mesh axis";
  std::string axisName = getGridAxisName(grid, axes.front());
  if (axisName == kBatchAxisName && !allowBatch)
    return op->emitOpError()
           << "would move data between the blocks of the batch (the "
              "data-parallel replicas and microbatches), which run apart";
  rt::MeshAxis meshAxis;
  if (axisName != kBatchAxisName && !rt::parseMeshAxis(axisName, meshAxis))
    return op->emitOpError()
           << "runs over grid axis '" << axisName
           << "', which is not a mesh axis (pp, dp or tp); name the grid's "
              "axes with `"
           << CleaveDialect::AxesAttrHelper::getNameStr() << "`";
  Builder b(op->getContext());
  return Group{b.getStringAttr(axisName),
               b.getI64IntegerAttr(grid.getShape()[axes.front()])};
}

/// A pattern that lowers one upstream collective, resolving its group
/// through the grids of the module.
template <typename SourceOp>
class CollectiveLowering : public OpConversionPattern<SourceOp> {
public:
  CollectiveLowering(MLIRContext *context, SymbolTableCollection &symbols)
      : OpConversionPattern<SourceOp>(context), symbols(symbols) {}

protected:
  FailureOr<Group> resolve(SourceOp op, bool allowBatch = false) const {
    return resolveGroup(op, op.getGridAttr(), op.getGridAxes(), symbols,
                        allowBatch);
  }

private:
  SymbolTableCollection &symbols;
};

/// `shard.all_reduce` becomes `cleave.all_reduce`, or, when its only user
/// keeps one block of the result along the same axis, `cleave.reduce_scatter`
/// in place of that `shard.all_slice`.
struct AllReduceLowering : CollectiveLowering<shard::AllReduceOp> {
  using CollectiveLowering::CollectiveLowering;

  LogicalResult
  matchAndRewrite(shard::AllReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Group> group = resolve(op);
    if (failed(group))
      return failure();
    std::optional<StringRef> kind = spellReduction(op.getReduction());
    if (!kind)
      return op.emitOpError()
             << "reduces with a kind cleave collectives do not support";
    StringAttr reduction = rewriter.getStringAttr(*kind);
    if (shard::AllSliceOp slice = getScatteringSlice(op)) {
      rewriter.setInsertionPoint(slice);
      rewriter.replaceOpWithNewOp<ReduceScatterOp>(
          slice, slice.getResult().getType(), adaptor.getInput(), group->axis,
          group->size,
          rewriter.getI64IntegerAttr(slice.getSliceAxis().getSExtValue()),
          reduction);
      rewriter.eraseOp(op);
      return success();
    }
    rewriter.replaceOpWithNewOp<AllReduceOp>(
        op, adaptor.getInput(), group->axis, group->size, reduction);
    return success();
  }

private:
  /// The all-slice that is the only user of `op` and slices along its axes.
  static shard::AllSliceOp getScatteringSlice(shard::AllReduceOp op) {
    if (!op->hasOneUse())
      return {};
    auto slice = dyn_cast<shard::AllSliceOp>(*op->user_begin());
    if (!slice || slice.getGridAttr() != op.getGridAttr() ||
        slice.getGridAxes() != op.getGridAxes())
      return {};
    return slice;
  }
};

/// `shard.all_gather` becomes `cleave.all_gather`.
struct AllGatherLowering : CollectiveLowering<shard::AllGatherOp> {
  using CollectiveLowering::CollectiveLowering;

  LogicalResult
  matchAndRewrite(shard::AllGatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Group> group = resolve(op);
    if (failed(group))
      return failure();
    rewriter.replaceOpWithNewOp<AllGatherOp>(
        op, op.getResult().getType(), adaptor.getInput(), group->axis,
        group->size,
        rewriter.getI64IntegerAttr(op.getGatherAxis().getSExtValue()));
    return success();
  }
};

/// `shard.all_slice` becomes `cleave.all_slice`. Taking a block along the
/// batch axis moves nothing: each block takes its own (the runtime's
/// batch_slice), so the batch axis is allowed here.
struct AllSliceLowering : CollectiveLowering<shard::AllSliceOp> {
  using CollectiveLowering::CollectiveLowering;

  LogicalResult
  matchAndRewrite(shard::AllSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Group> group = resolve(op, /*allowBatch=*/true);
    if (failed(group))
      return failure();
    rewriter.replaceOpWithNewOp<AllSliceOp>(
        op, op.getResult().getType(), adaptor.getInput(), group->axis,
        group->size,
        rewriter.getI64IntegerAttr(op.getSliceAxis().getSExtValue()));
    return success();
  }
};

/// `shard.all_to_all` becomes `cleave.all_to_all`.
struct AllToAllLowering : CollectiveLowering<shard::AllToAllOp> {
  using CollectiveLowering::CollectiveLowering;

  LogicalResult
  matchAndRewrite(shard::AllToAllOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Group> group = resolve(op);
    if (failed(group))
      return failure();
    rewriter.replaceOpWithNewOp<AllToAllOp>(
        op, op.getResult().getType(), adaptor.getInput(), group->axis,
        group->size,
        rewriter.getI64IntegerAttr(op.getSplitAxis().getSExtValue()),
        rewriter.getI64IntegerAttr(op.getConcatAxis().getSExtValue()));
    return success();
  }
};

/// The `tensor.cast`s that resharding leaves between equal static types.
struct ReshardingCastFolding : OpConversionPattern<tensor::CastOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tensor::CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getSource());
    return success();
  }
};

/// Whatever `shard` op no pattern above lowers has no cleave counterpart.
/// It runs last, so an op that a pattern refused keeps that pattern's
/// reason (the first error on an op is the one reported).
struct UnsupportedShardOp : ConversionPattern {
  explicit UnsupportedShardOp(MLIRContext *context)
      : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/0, context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (isa<shard::ShardDialect>(op->getDialect()))
      op->emitOpError() << "has no cleave communication op to lower to";
    return failure();
  }
};

struct LowerShardCommPass
    : public cleave::impl::LowerShardCommPassBase<LowerShardCommPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();

    ConversionTarget target(*context);
    target.addIllegalDialect<shard::ShardDialect>();
    // Grids stay while collectives refer to them; unused ones go below.
    target.addLegalOp<shard::GridOp>();
    // Casts that change the type are not resharding's, and not ours.
    target.addDynamicallyLegalOp<tensor::CastOp>([](tensor::CastOp cast) {
      return cast.getSource().getType() != cast.getType();
    });
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });

    SymbolTableCollection symbols;
    RewritePatternSet patterns(context);
    patterns.add<AllReduceLowering, AllGatherLowering, AllSliceLowering,
                 AllToAllLowering>(context, symbols);
    patterns.add<ReshardingCastFolding, UnsupportedShardOp>(context);

    if (failed(convertReportingOnce(target, std::move(patterns))))
      return signalPassFailure();

    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      if (SymbolTable::symbolKnownUseEmpty(grid, module))
        grid.erase();
  }

private:
  /// Applies the conversion. A pattern that refuses an op says why; the
  /// driver's "failed to legalize" that follows on the same op would only
  /// repeat it, so the first error on an op is the one reported.
  LogicalResult convertReportingOnce(ConversionTarget &target,
                                     RewritePatternSet &&patterns) {
    llvm::DenseSet<Location> reported;
    ScopedDiagnosticHandler handler(&getContext(), [&](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error)
        return failure();
      // Handled (dropped) if the op has had its error already.
      return success(!reported.insert(diag.getLocation()).second);
    });
    return applyPartialConversion(getOperation(), target, std::move(patterns));
  }
};

} // namespace
