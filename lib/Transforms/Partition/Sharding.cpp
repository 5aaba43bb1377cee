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

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

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

bool cleave::writesInPlace(OpOperand &use) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
  return dps && dps.isDpsInit(&use);
}

ValueSharding cleave::getFirstReaderLayout(Operation *stored) {
  auto splitOf = [](Operation *op, unsigned index,
                    bool result) -> ValueSharding {
    std::optional<int64_t> loop = getTpLoop(op);
    if (!loop)
      return ValueSharding::replicated();
    FailureOr<OpLoopSharding> layout = getLoopSharding(op, *loop);
    if (failed(layout))
      return ValueSharding::replicated();
    return result ? layout->results[index] : layout->operands[index];
  };
  if (getTpLoop(stored))
    return splitOf(stored, 0, /*result=*/true);
  OpOperand *first = nullptr;
  for (OpOperand &use : stored->getResult(0).getUses()) {
    Operation *reader = use.getOwner();
    if (reader->getBlock() != stored->getBlock())
      continue;
    if (!first || reader->isBeforeInBlock(first->getOwner()) ||
        (reader == first->getOwner() &&
         use.getOperandNumber() < first->getOperandNumber()))
      first = &use;
  }
  if (!first)
    return ValueSharding::replicated();
  return splitOf(first->getOwner(), first->getOperandNumber(),
                 /*result=*/false);
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

/// The outer factor of the batch in dimension `e` of a reshape's result of
/// shape `result`, when the `before` elements that precede the samples in
/// the element order (see `BatchTrace`) end inside `e` and leave whole
/// samples in it; nothing otherwise.
static std::optional<int64_t> batchOuterIn(ArrayRef<int64_t> result,
                                           int64_t e, int64_t before,
                                           int64_t batchSize) {
  int64_t prefix = 1;
  for (int64_t d = 0; d < e; ++d)
    prefix *= result[d];
  if (prefix > before || before % prefix != 0)
    return std::nullopt;
  int64_t outer = before / prefix;
  if (result[e] % (outer * batchSize) != 0)
    return std::nullopt;
  return outer;
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
  auto keep = [&](Operation *op, OpLoopSharding loop, int64_t outer) {
    for (auto [index, result] : llvm::enumerate(op->getResults()))
      if (index < loop.results.size() && loop.results[index].isSplit()) {
        trace.dims[result] = loop.results[index].dim;
        if (outer != 1)
          trace.outer[result] = outer;
      }
    trace.loops[op] = std::move(loop);
  };
  for (Operation &op : body.without_terminator()) {
    bool readsBatch = llvm::any_of(op.getOperands(), [&](Value operand) {
      return trace.dims.count(operand);
    });
    if (!readsBatch)
      continue;

    // A reshape keeps the batch wherever the element order puts it, even in
    // a dimension its loops do not pair with the operand's.
    if (isa<ReshapeOp, FlattenOp>(op)) {
      Value input = op.getOperand(0), output = op.getResult(0);
      auto inputType = cast<RankedTensorType>(input.getType());
      auto outputType = dyn_cast<RankedTensorType>(output.getType());
      if (!outputType || !inputType.hasStaticShape() ||
          !outputType.hasStaticShape()) {
        markBarrier(&op);
        continue;
      }
      int64_t inputDim = trace.getDim(input);
      int64_t before = trace.getOuter(input);
      for (int64_t d = 0; d < inputDim; ++d)
        before *= inputType.getDimSize(d);
      // The dimension the reshape's own loops pair with the operand's batch
      // dimension, when the batch fits there (a batch of 1 fits in any unit
      // dimension), else the first dimension it fits in.
      ArrayRef<int64_t> shape = outputType.getShape();
      std::optional<int64_t> resultDim, outer;
      for (const OpLoopSharding &l : getShardableLoops(&op))
        if (l.operands[0] == ValueSharding::split(inputDim) &&
            l.results[0].isSplit())
          if ((outer = batchOuterIn(shape, l.results[0].dim, before,
                                    trace.batchSize))) {
            resultDim = l.results[0].dim;
            break;
          }
      bool paired = resultDim.has_value();
      for (int64_t e = 0; !resultDim && e < outputType.getRank(); ++e)
        if ((outer = batchOuterIn(shape, e, before, trace.batchSize)))
          resultDim = e;
      if (!resultDim) {
        markBarrier(&op);
        continue;
      }
      OpLoopSharding loop;
      loop.loop = *resultDim;
      loop.extent = shape[*resultDim];
      loop.operands = {ValueSharding::split(inputDim)};
      loop.results = {ValueSharding::split(*resultDim)};
      if (!paired)
        trace.movedBatch[&op] = {inputDim, *resultDim};
      keep(&op, std::move(loop), *outer);
      continue;
    }

    std::optional<OpLoopSharding> batchLoop;
    std::optional<int64_t> outer;
    for (OpLoopSharding &loop : getShardableLoops(&op)) {
      std::optional<int64_t> loopOuter;
      bool keeps =
          llvm::all_of(llvm::enumerate(op.getOperands()), [&](auto indexed) {
            auto [index, operand] = indexed;
            int64_t dim = trace.getDim(operand);
            if (dim < 0)
              return true;
            if (index >= loop.operands.size())
              return false;
            const ValueSharding &sharding = loop.operands[index];
            if (!sharding.isSplit() || sharding.dim != dim)
              return false;
            // Every batch operand must interleave its samples alike.
            int64_t o = trace.getOuter(operand);
            if (loopOuter && *loopOuter != o)
              return false;
            loopOuter = o;
            return true;
          });
      keeps = keeps && llvm::none_of(loop.results, [](const ValueSharding &s) {
                return s.isPartial();
              });
      // An operand without the batch is cut into equal blocks along with
      // the batch ones, which are blocks of samples only when the samples
      // are the major factor of the dimension.
      keeps = keeps && (*loopOuter == 1 ||
                        llvm::none_of(llvm::enumerate(op.getOperands()),
                                      [&](auto indexed) {
                                        auto [index, operand] = indexed;
                                        return trace.getDim(operand) < 0 &&
                                               index < loop.operands.size() &&
                                               loop.operands[index].isSplit();
                                      }));
      if (keeps) {
        batchLoop = loop;
        outer = loopOuter;
        break;
      }
    }
    if (!batchLoop) {
      markBarrier(&op);
      continue;
    }
    keep(&op, std::move(*batchLoop), *outer);
  }
  return trace;
}
