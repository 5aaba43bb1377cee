//===- Sharding.cpp - what splitting one loop does to an op -----*- C++ -*-===//
//
// The planner's view of `shard::ShardingInterface`: it asks the interface for
// the annotations of a one-loop sharding option and reads them back as split
// dimensions. Going through the interface (rather than through the cleave
// models directly) keeps the answer the same as what `shard-partition` will
// do, for cleave ops and for any other op that implements it.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Sharding.h"

#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace cleave;

using mlir::shard::GridAxis;
using mlir::shard::ReductionKind;
using mlir::shard::Sharding;
using mlir::utils::IteratorType;

/// Reads the layout of one value from its annotation on a one-axis grid.
static ValueSharding fromAnnotation(Value value, const Sharding &sharding) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!sharding || !type || type.getRank() == 0)
    return ValueSharding::replicated();
  for (auto [dim, axes] : llvm::enumerate(sharding.getSplitAxes()))
    if (!axes.empty())
      return ValueSharding::split(dim);
  return ValueSharding::replicated();
}

FailureOr<OpLoopSharding> cleave::getLoopSharding(Operation *op, int64_t loop) {
  auto shardingOp = dyn_cast<shard::ShardingInterface>(op);
  if (!shardingOp)
    return failure();
  SmallVector<IteratorType> types = shardingOp.getLoopIteratorTypes();
  if (loop < 0 || loop >= static_cast<int64_t>(types.size()))
    return failure();

  OpLoopSharding result;
  result.loop = loop;
  result.iteratorType = types[loop];
  ReductionKind reduction = ReductionKind::Sum;
  if (types[loop] == IteratorType::reduction) {
    SmallVector<ReductionKind> kinds =
        shardingOp.getReductionLoopIteratorKinds();
    int64_t index =
        llvm::count(ArrayRef(types).take_front(loop), IteratorType::reduction);
    if (index >= static_cast<int64_t>(kinds.size()) ||
        kinds[index] == ReductionKind::Generic)
      return failure();
    reduction = kinds[index];
  }

  // Only the split axes matter here, so a placeholder grid name serves.
  shard::ShardingArray loopAxes(types.size());
  loopAxes[loop] = {GridAxis(0)};
  shard::ShardingOption option(std::move(loopAxes),
                               FlatSymbolRefAttr::get(op->getContext(), "tp"));
  FailureOr<std::vector<Sharding>> annotations =
      shardingOp.getShardingAnnotations(option);
  if (failed(annotations) ||
      annotations->size() != op->getNumOperands() + op->getNumResults())
    return failure();

  for (auto [operand, sharding] : llvm::zip(op->getOperands(), *annotations))
    result.operands.push_back(fromAnnotation(operand, sharding));
  for (auto [value, sharding] :
       llvm::zip(op->getResults(),
                 ArrayRef(*annotations).drop_front(op->getNumOperands()))) {
    ValueSharding layout = fromAnnotation(value, sharding);
    if (types[loop] == IteratorType::reduction)
      layout = ValueSharding::partial(reduction);
    result.results.push_back(layout);
  }

  // The extent is that of the split result dimension (a reshape's operand
  // dimension may be a different size), else of a split operand dimension
  // (a reduction loop).
  auto noteExtent = [&](ValueRange values, ArrayRef<ValueSharding> layouts) {
    for (auto [value, layout] : llvm::zip(values, layouts))
      if (layout.isSplit() && result.extent == 0)
        result.extent =
            cast<RankedTensorType>(value.getType()).getDimSize(layout.dim);
  };
  noteExtent(op->getResults(), result.results);
  noteExtent(op->getOperands(), result.operands);
  // A loop that splits no value (a unit loop no dimension uses) is no choice.
  if (result.extent == 0)
    return failure();
  return result;
}

SmallVector<OpLoopSharding> cleave::getShardableLoops(Operation *op,
                                                      int64_t numShards) {
  SmallVector<OpLoopSharding> loops;
  auto shardingOp = dyn_cast<shard::ShardingInterface>(op);
  if (!shardingOp)
    return loops;
  int64_t numLoops = shardingOp.getLoopIteratorTypes().size();
  for (int64_t loop = 0; loop < numLoops; ++loop) {
    FailureOr<OpLoopSharding> sharding = getLoopSharding(op, loop);
    if (failed(sharding))
      continue;
    auto divides = [&](Value value, const ValueSharding &layout) {
      if (!layout.isSplit())
        return true;
      int64_t size =
          cast<RankedTensorType>(value.getType()).getDimSize(layout.dim);
      return !ShapedType::isDynamic(size) && size % numShards == 0;
    };
    bool ok = true;
    for (auto [value, layout] :
         llvm::zip(op->getOperands(), sharding->operands))
      ok &= divides(value, layout);
    for (auto [value, layout] : llvm::zip(op->getResults(), sharding->results))
      ok &= divides(value, layout);
    if (ok)
      loops.push_back(std::move(*sharding));
  }
  return loops;
}

BatchTrace cleave::traceBatch(Block &body,
                              llvm::function_ref<bool(Value)> isActivation) {
  BatchTrace trace;
  for (BlockArgument argument : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (!type || type.getRank() == 0 || type.isDynamicDim(0))
      continue;
    trace.batchSize = type.getDimSize(0);
    break;
  }
  for (BlockArgument argument : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (type && type.getRank() > 0 &&
        type.getDimSize(0) == trace.batchSize && isActivation(argument))
      trace.dims[argument] = 0;
  }

  auto markBarrier = [&](Operation *op) {
    if (!trace.barrier)
      trace.barrier = op;
  };
  for (Operation &op : body.without_terminator()) {
    bool readsBatch = llvm::any_of(op.getOperands(), [&](Value operand) {
      return trace.dims.count(operand);
    });
    if (!readsBatch)
      continue;
    std::optional<OpLoopSharding> batchLoop;
    for (OpLoopSharding &loop : getShardableLoops(&op)) {
      bool keeps =
          llvm::all_of(llvm::enumerate(op.getOperands()), [&](auto indexed) {
            auto [index, operand] = indexed;
            int64_t dim = trace.getDim(operand);
            if (dim < 0)
              return true;
            if (index >= loop.operands.size())
              return false;
            const ValueSharding &sharding = loop.operands[index];
            return sharding.isSplit() && sharding.dim == dim;
          });
      keeps = keeps && llvm::none_of(loop.results, [](const ValueSharding &s) {
                return s.isPartial();
              });
      if (keeps) {
        batchLoop = loop;
        break;
      }
    }
    if (!batchLoop) {
      markBarrier(&op);
      continue;
    }
    for (auto [index, result] : llvm::enumerate(op.getResults()))
      if (index < batchLoop->results.size() &&
          batchLoop->results[index].isSplit())
        trace.dims[result] = batchLoop->results[index].dim;
    trace.loops[&op] = std::move(*batchLoop);
  }
  return trace;
}
