//===- ShardingSearch.cpp - tensor-parallel layout of one segment -*- C++
//-*-===//
//
// One simulator (`SegmentSimulator`) defines what an assignment costs; the
// dynamic program and `evaluateSegmentSharding` both step it, so the search
// optimises exactly the cost that the plan reports.
//
//===----------------------------------------------------------------------===//

#include "cleave/Plan/ShardingSearch.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

using namespace mlir;
using namespace cleave;

//===----------------------------------------------------------------------===//
// Resharding
//===----------------------------------------------------------------------===//

ReshardStep cleave::getReshardStep(const ValueSharding &from,
                                   const ValueSharding &to,
                                   bool allowReduceScatter) {
  ValueSharding replicated = ValueSharding::replicated();
  if (from.kind == to.kind && (!from.isSplit() || from.dim == to.dim))
    return {std::nullopt, from};
  if (from.isReplicated())
    return {std::nullopt, replicated};
  if (to.isReplicated() || to.isPartial())
    return {from.isPartial() ? CollectiveKind::AllReduce
                             : CollectiveKind::AllGather,
            replicated};
  // `to` is a split.
  if (from.isPartial()) {
    if (allowReduceScatter)
      return {CollectiveKind::ReduceScatter, to};
    return {CollectiveKind::AllReduce, replicated};
  }
  return {CollectiveKind::AllGather, replicated};
}

//===----------------------------------------------------------------------===//
// Building the search model
//===----------------------------------------------------------------------===//

static FailureOr<SmallVector<int64_t>> staticShape(Value value,
                                                   Operation *user) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return user->emitError() << "planning needs statically shaped tensors; a "
                                "value has type "
                             << value.getType();
  return SmallVector<int64_t>(type.getShape());
}

static bool isViewOp(Operation *op) {
  auto cost = dyn_cast<CostInterface>(op);
  return cost && cost.isView();
}

/// Whether `op` only moves or combines elements: every loop of its
/// `ShardingInterface` is parallel and it does not run on matrix units.
static bool isPointwiseLike(Operation *op) {
  auto cost = dyn_cast<CostInterface>(op);
  if (cost && cost.usesMatrixUnits())
    return false;
  auto sharding = dyn_cast<shard::ShardingInterface>(op);
  if (!sharding)
    return false;
  return llvm::all_of(sharding.getLoopIteratorTypes(),
                      [](utils::IteratorType type) {
                        return type == utils::IteratorType::parallel;
                      });
}

/// Whether `op` looks rows of a parameter up (an embedding): it may split
/// the table's other dimensions, like a contraction its weight, so it ends
/// the residual stream rather than belonging to it.
static bool isParameterLookup(const SegmentOp &op) {
  return isa<GatherOp>(op.op) && !op.operands.empty() &&
         op.operands.front().kind == SegmentOperand::Kind::Parameter;
}

/// Marks the ops that compute the segment's outputs from its last
/// contractions (or embedding lookups): walking back from each output
/// through pointwise-like ops.
static void markResidualStream(SegmentShardingModel &model) {
  SmallVector<int64_t> worklist;
  for (const SegmentValue &value : model.values)
    if (value.isOutput && value.definition >= 0)
      worklist.push_back(value.definition);
  while (!worklist.empty()) {
    int64_t step = worklist.pop_back_val();
    SegmentOp &op = model.ops[step];
    if (op.onResidualStream || !isPointwiseLike(op.op) || isParameterLookup(op))
      continue;
    op.onResidualStream = true;
    for (const SegmentOperand &operand : op.operands)
      if (operand.kind == SegmentOperand::Kind::Activation &&
          model.values[operand.index].definition >= 0)
        worklist.push_back(model.values[operand.index].definition);
  }
}

/// Marks the activations that `CostOptions::fusePointwise` keeps out of
/// memory: defined in the segment by an op that is not a view, not an
/// output, read by exactly one op (a view of it counts as a reader), and that
/// op is pointwise-like. A reduction (softmax, a normalization) reads its
/// operand from memory, so a pointwise chain ends in one write.
static void markFusedPointwise(SegmentShardingModel &model) {
  SmallVector<int64_t> readers(model.values.size(), 0);
  SmallVector<int64_t> lastReader(model.values.size(), -1);
  for (auto [step, op] : llvm::enumerate(model.ops)) {
    op.fusedOperands.assign(op.operands.size(), false);
    op.fusedResults.assign(op.results.size(), false);
    for (const SegmentOperand &operand : op.operands) {
      if (operand.kind != SegmentOperand::Kind::Activation ||
          lastReader[operand.index] == static_cast<int64_t>(step))
        continue;
      ++readers[operand.index];
      lastReader[operand.index] = static_cast<int64_t>(step);
    }
  }
  for (auto [step, op] : llvm::enumerate(model.ops)) {
    if (isViewOp(op.op) || !isPointwiseLike(op.op))
      continue;
    for (auto [index, operand] : llvm::enumerate(op.operands)) {
      if (operand.kind != SegmentOperand::Kind::Activation)
        continue;
      const SegmentValue &value = model.values[operand.index];
      if (value.definition < 0 || value.isOutput ||
          value.bufferRoot != operand.index || readers[operand.index] != 1 ||
          value.lastUse != static_cast<int64_t>(step))
        continue;
      SegmentOp &producer = model.ops[value.definition];
      if (isViewOp(producer.op))
        continue;
      op.fusedOperands[index] = true;
      for (auto [resultIndex, result] : llvm::enumerate(producer.results))
        if (result == operand.index)
          producer.fusedResults[resultIndex] = true;
    }
  }
}

/// The initializer a weight or a window of one reads.
static std::optional<StringRef> getWeightName(Operation *op) {
  if (auto weight = dyn_cast_or_null<WeightOp>(op))
    return weight.getName();
  if (auto slice = dyn_cast_or_null<WeightSliceOp>(op))
    return slice.getName();
  return std::nullopt;
}

/// A parameter as a segment holds it.
static SegmentParameter describeParameter(Value value, ArrayRef<int64_t> shape,
                                          const CostOptions &costOptions,
                                          const llvm::Regex *frozen) {
  SegmentParameter parameter;
  parameter.value = value;
  parameter.shape.assign(shape.begin(), shape.end());
  parameter.bytes = getHeldTensorBytes(value.getType(), costOptions);
  parameter.elements = getNumElements(value.getType());
  std::optional<StringRef> name =
      getWeightName(getBufferRoot(value).getDefiningOp());
  parameter.trainable =
      name &&
      isa<FloatType>(
          cast<RankedTensorType>(value.getType()).getElementType()) &&
      !(frozen && frozen->match(*name));
  return parameter;
}

FailureOr<SegmentShardingModel> cleave::buildSegmentShardingModel(
    const SegmentedModel &model, int64_t segmentIndex,
    const TargetDescription &target, const CostOptions &costOptions,
    const llvm::Regex *frozen, bool training) {
  const ModelSegment &segment = model.segments[segmentIndex];
  SegmentShardingModel result;
  int64_t numOps = segment.numOps();
  llvm::DenseMap<Value, int64_t> valueIndex;
  llvm::DenseMap<Value, int64_t> parameterIndex;

  auto addValue = [&](Value value, int64_t definition,
                      Operation *owner) -> LogicalResult {
    FailureOr<SmallVector<int64_t>> shape = staticShape(value, owner);
    if (failed(shape))
      return failure();
    SegmentValue info;
    info.value = value;
    info.shape = *shape;
    info.bytes = getHeldTensorBytes(value.getType(), costOptions);
    info.batchDim = model.getBatchDim(value);
    info.definition = definition;
    info.lastUse = definition;
    info.bufferRoot = static_cast<int64_t>(result.values.size());
    valueIndex[value] = info.bufferRoot;
    result.values.push_back(std::move(info));
    return success();
  };

  for (Value input : segment.inputs)
    if (failed(addValue(input, -1, model.function)))
      return failure();

  for (int64_t step = 0; step < numOps; ++step) {
    Operation *op = model.ops[segment.firstOp + step];
    FailureOr<OpCost> cost = getOpCost(op, target, costOptions);
    if (failed(cost))
      return failure();

    SegmentOp info;
    info.op = op;
    info.cost = *cost;
    auto costInterface = cast<CostInterface>(op);
    info.readsWholeOperands =
        costInterface.getBytesRead() == detail::defaultBytesRead(op);
    info.usesMatrixUnits = costInterface.usesMatrixUnits();
    for (Value operand : op->getOperands()) {
      SegmentOperand use;
      if (auto it = valueIndex.find(operand); it != valueIndex.end()) {
        use.kind = SegmentOperand::Kind::Activation;
        use.index = it->second;
        SegmentValue &value = result.values[use.index];
        value.lastUse = std::max(value.lastUse, step);
        info.scalesWithBatch |= value.batchDim >= 0;
      } else if (isa<RankedTensorType>(operand.getType()) &&
                 isParameterValue(operand)) {
        FailureOr<SmallVector<int64_t>> shape = staticShape(operand, op);
        if (failed(shape))
          return failure();
        auto [it, inserted] =
            parameterIndex.try_emplace(operand, result.parameters.size());
        if (inserted)
          result.parameters.push_back(
              describeParameter(operand, *shape, costOptions, frozen));
        use.kind = SegmentOperand::Kind::Parameter;
        use.index = it->second;
      }
      info.operands.push_back(use);
    }
    // Uses nested in the op's regions keep their values live too.
    op->walk([&](Operation *nested) {
      if (nested == op)
        return;
      for (Value operand : nested->getOperands())
        if (auto it = valueIndex.find(operand); it != valueIndex.end())
          result.values[it->second].lastUse =
              std::max(result.values[it->second].lastUse, step);
    });
    for (Value value : op->getResults()) {
      if (failed(addValue(value, step, op)))
        return failure();
      int64_t index = static_cast<int64_t>(result.values.size()) - 1;
      info.results.push_back(index);
      info.scalesWithBatch |= result.values[index].batchDim >= 0;
      if (isViewOp(op) && !info.operands.empty() &&
          info.operands[0].kind == SegmentOperand::Kind::Activation)
        result.values[index].bufferRoot =
            result.values[info.operands[0].index].bufferRoot;
    }

    ShardingStrategy replicated;
    replicated.operands.assign(op->getNumOperands(),
                               ValueSharding::replicated());
    replicated.results.assign(op->getNumResults(), ValueSharding::replicated());
    info.strategies.push_back(std::move(replicated));
    for (OpLoopSharding &loop : getShardableLoops(op)) {
      if (loop.operands.size() != op->getNumOperands() ||
          loop.results.size() != op->getNumResults())
        continue;
      ShardingStrategy strategy;
      strategy.loop = loop.loop;
      for (auto [operand, layout] : llvm::zip(op->getOperands(), loop.operands))
        strategy.splitsTokenDim |=
            layout.isSplit() && model.isTokenDim(operand, layout.dim);
      for (auto [result, layout] : llvm::zip(op->getResults(), loop.results))
        strategy.splitsTokenDim |=
            layout.isSplit() && model.isTokenDim(result, layout.dim);
      strategy.operands = std::move(loop.operands);
      strategy.results = std::move(loop.results);
      info.strategies.push_back(std::move(strategy));
    }
    result.ops.push_back(std::move(info));
  }

  for (Value output : segment.outputs) {
    SegmentValue &value = result.values[valueIndex.lookup(output)];
    value.isOutput = true;
    value.lastUse = numOps;
  }
  for (SegmentValue &value : result.values)
    if (value.definition < 0 || value.isOutput)
      value.sequenceDim = model.getSequenceDim(value.value);
  markResidualStream(result);
  if (pricesPointwiseFused(costOptions, target.device, training))
    markFusedPointwise(result);
  return result;
}

//===----------------------------------------------------------------------===//
// The simulator
//===----------------------------------------------------------------------===//

namespace {

/// Layout codes: one byte per activation.
constexpr uint8_t kReplicated = 0;
constexpr uint8_t kPartial = 1;
constexpr uint8_t kSplitBase = 2;
constexpr uint8_t kDead = 0xff;

uint8_t encode(const ValueSharding &sharding) {
  if (sharding.isReplicated())
    return kReplicated;
  if (sharding.isPartial())
    return kPartial;
  return static_cast<uint8_t>(kSplitBase + sharding.dim);
}

ValueSharding decode(uint8_t code) {
  if (code == kReplicated)
    return ValueSharding::replicated();
  if (code == kPartial)
    return ValueSharding::partial(shard::ReductionKind::Sum);
  return ValueSharding::split(code - kSplitBase);
}

/// What the simulator records besides time, when asked.
struct SimulationRecord {
  llvm::SmallVector<SegmentCollective> collectives;
  /// Largest per-device bytes each activation takes in any layout.
  llvm::SmallVector<int64_t> valueBytes;
  llvm::SmallVector<SegmentCollective> gradientReductions;
  /// (parameter, layout code) pairs held.
  llvm::DenseSet<std::pair<int64_t, uint8_t>> weightLayouts;
  llvm::SmallVector<double> opTimes;
};

/// Steps a segment's layout state through its ops under a context.
class SegmentSimulator {
public:
  SegmentSimulator(const SegmentShardingModel &model,
                   const ShardingContext &context)
      : model(model), context(context) {
    dying.resize(model.numOps() + 1);
    for (auto [index, value] : llvm::enumerate(model.values))
      if (!value.isOutput)
        dying[std::max<int64_t>(value.lastUse, 0)].push_back(
            static_cast<int64_t>(index));
    opTimes.resize(model.numOps());
    opMissTimes.resize(model.numOps());
    if (context.training) {
      backwardOpTimes.resize(model.numOps());
      backwardOpMissTimes.resize(model.numOps());
    }
    for (int64_t op = 0; op < model.numOps(); ++op)
      for (int64_t strategy = 0,
                   e = static_cast<int64_t>(model.ops[op].strategies.size());
           strategy < e; ++strategy) {
        if (!isStrategyValid(model, op, strategy, context)) {
          opTimes[op].push_back(std::numeric_limits<double>::infinity());
          opMissTimes[op].push_back(0);
          if (context.training) {
            backwardOpTimes[op].push_back(0);
            backwardOpMissTimes[op].push_back(0);
          }
          continue;
        }
        OpWork work = getOpWork(op, strategy);
        Roofline forward = work.roofline(1, 1);
        opTimes[op].push_back(forward.time());
        opMissTimes[op].push_back(forward.missTime);
        if (context.training) {
          BackwardFactors factors =
              getBackwardFactors(model.ops[op].usesMatrixUnits);
          Roofline backward = work.roofline(factors.flops, factors.bytes);
          backwardOpTimes[op].push_back(backward.time());
          backwardOpMissTimes[op].push_back(backward.missTime);
        }
      }
  }

  /// The state before the first op: inputs as they pass between segments,
  /// everything else not yet defined.
  std::string initialState() const {
    std::string state(model.values.size(), static_cast<char>(kDead));
    for (auto [index, value] : llvm::enumerate(model.values))
      if (value.definition < 0)
        state[index] =
            static_cast<char>(encode(getBoundaryLayout(value, context)));
    return state;
  }

  bool isValid(int64_t op, int64_t strategy) const {
    return std::isfinite(opTimes[op][strategy]);
  }

  /// Runs op `op` with strategy `strategy` on `state`. Adds to `objective`
  /// its time (compute and collectives), the collective penalties and the
  /// weight penalty; returns the first two.
  double applyOp(std::string &state, int64_t op, int64_t strategy,
                 double &objective, SimulationRecord *record) const {
    const SegmentOp &info = model.ops[op];
    const ShardingStrategy &chosen = info.strategies[strategy];
    double time = opTimes[op][strategy];
    if (record)
      record->opTimes.push_back(time);
    if (context.training)
      time += backwardOpTimes[op][strategy];
    for (auto [index, use] : llvm::enumerate(info.operands)) {
      const ValueSharding &required = chosen.operands[index];
      if (use.kind == SegmentOperand::Kind::Parameter) {
        const SegmentParameter &parameter = model.parameters[use.index];
        objective += context.weightBytePenalty *
                     static_cast<double>(parameterBytes(parameter, required));
        if (record)
          record->weightLayouts.insert({use.index, encode(required)});
        if (context.training && chosen.loop >= 0 && parameter.trainable &&
            required.isReplicated())
          time += reduceGradient(op, index, parameter.bytes, record);
        continue;
      }
      if (use.kind != SegmentOperand::Kind::Activation)
        continue;
      time += reshard(state, use.index, required, op, record);
    }
    for (auto [index, value] : llvm::enumerate(info.results)) {
      state[value] = static_cast<char>(encode(chosen.results[index]));
      if (record)
        noteBytes(*record, value, chosen.results[index]);
    }
    for (int64_t value : dying[op])
      state[value] = static_cast<char>(kDead);
    objective += time;
    return time;
  }

  /// Lays every output out as it passes between segments; adds the time
  /// (and the collective penalties) to `objective` and returns it.
  double finish(std::string &state, double &objective,
                SimulationRecord *record) const {
    double time = 0;
    for (auto [index, value] : llvm::enumerate(model.values))
      if (value.isOutput)
        time += reshard(state, index, getBoundaryLayout(value, context),
                        model.numOps(), record);
    objective += time;
    return time;
  }

  double opTime(int64_t op, int64_t strategy) const {
    return opTimes[op][strategy];
  }

  double opMissTime(int64_t op, int64_t strategy) const {
    return opMissTimes[op][strategy];
  }

  /// The op's backward's `missTime`, in a training context (0 otherwise).
  double backwardOpMissTime(int64_t op, int64_t strategy) const {
    return context.training ? backwardOpMissTimes[op][strategy] : 0.0;
  }

  /// The op's backward, in a training context (0 otherwise).
  double backwardOpTime(int64_t op, int64_t strategy) const {
    return context.training ? backwardOpTimes[op][strategy] : 0.0;
  }

  /// The backward pass's answer to a collective of the forward.
  double conjugateTime(const SegmentCollective &collective) const {
    return collectiveTime(getConjugateCollective(collective.kind),
                          collective.bytes, context.tp, context.crossesNodes,
                          *context.target);
  }

  /// Weight bytes per device the op's parameter operands take under
  /// `strategy`, counted per use.
  int64_t parameterUseBytes(int64_t op, int64_t strategy) const {
    const SegmentOp &info = model.ops[op];
    const ShardingStrategy &chosen = info.strategies[strategy];
    int64_t bytes = 0;
    for (auto [index, use] : llvm::enumerate(info.operands))
      if (use.kind == SegmentOperand::Kind::Parameter)
        bytes +=
            parameterBytes(model.parameters[use.index], chosen.operands[index]);
    return bytes;
  }

  /// Bytes of activation `value` per device in `layout` at the microbatch.
  int64_t valueBytes(int64_t value, const ValueSharding &layout) const {
    const SegmentValue &info = model.values[value];
    double bytes = static_cast<double>(info.bytes) *
                   (info.batchDim >= 0 ? context.batchScale : 1.0);
    if (layout.isSplit())
      bytes /= static_cast<double>(context.tp);
    return static_cast<int64_t>(std::llround(bytes));
  }

  int64_t parameterBytes(const SegmentParameter &parameter,
                         const ValueSharding &layout) const {
    return layout.isSplit() ? parameter.bytes / context.tp : parameter.bytes;
  }

  void noteBytes(SimulationRecord &record, int64_t value,
                 const ValueSharding &layout) const {
    record.valueBytes[value] =
        std::max(record.valueBytes[value], valueBytes(value, layout));
  }

private:
  /// The all-reduce of the gradient of operand `operand` of op `step`, a
  /// parameter of `bytes`, that the backward needs (the op's split loop
  /// leaves each device a part of it); returns the seconds it takes plus
  /// the collective penalty.
  double reduceGradient(int64_t step, int64_t operand, int64_t bytes,
                        SimulationRecord *record) const {
    SegmentCollective reduction{CollectiveKind::AllReduce, step, operand, bytes,
                                0};
    reduction.time = collectiveTime(reduction.kind, bytes, context.tp,
                                    context.crossesNodes, *context.target);
    if (record)
      record->gradientReductions.push_back(reduction);
    return reduction.time + context.collectivePenalty;
  }

  /// Reshards `value` as op `step` requires; returns the seconds it takes
  /// plus the collective penalty.
  double reshard(std::string &state, int64_t value,
                 const ValueSharding &required, int64_t step,
                 SimulationRecord *record) const {
    auto code = static_cast<uint8_t>(state[value]);
    assert(code != kDead && "reading a value that is not live");
    ReshardStep reshardStep =
        getReshardStep(decode(code), required, context.sequenceParallel);
    state[value] = static_cast<char>(encode(reshardStep.result));
    if (!reshardStep.collective)
      return 0;
    int64_t bytes = valueBytes(value, ValueSharding::replicated());
    SegmentCollective collective{*reshardStep.collective, step, value, bytes,
                                 0};
    collective.time = collectiveTime(collective.kind, bytes, context.tp,
                                     context.crossesNodes, *context.target);
    double time = collective.time;
    if (context.training)
      time += conjugateTime(collective);
    if (record) {
      record->collectives.push_back(collective);
      noteBytes(*record, value, reshardStep.result);
    }
    return time + context.collectivePenalty;
  }

  /// The share of an activation's bytes that one device touches.
  double share(int64_t value, const ValueSharding &layout) const {
    const SegmentValue &info = model.values[value];
    double factor = info.batchDim >= 0 ? context.batchScale : 1.0;
    return layout.isSplit() ? factor / static_cast<double>(context.tp) : factor;
  }

  /// What one device of the group computes and moves for an op.
  struct OpWork {
    double flops = 0;
    double bytes = 0;
    Precision precision = Precision::F32;
    const DeviceDescription *device = nullptr;

    /// The share of the multiprocessors a matrix product keeps busy
    /// (`getMatmulTileEfficiency`); 1 for other ops.
    double tileEfficiency = 1;
    KernelClass kernelClass = KernelClass::Other;
    /// A convolution's output positions per image (0 for other ops).
    double pixels = 0;
    /// The bytes of a convolution's reorders between NCHW and the CPU
    /// kernels' channel blocks (`ChannelBlocking`).
    double reorderBytes = 0;

    /// The roofline of the work with its FLOPs and bytes scaled.
    Roofline roofline(double flopsFactor, double bytesFactor) const {
      return getRoofline(flops * flopsFactor / tileEfficiency,
                         bytes * bytesFactor, precision, *device, kernelClass,
                         pixels, reorderBytes * bytesFactor);
    }
  };

  /// How well a matrix product's share of the output fills the device
  /// (cleave.matmul and cleave.gemm; 1 for other ops).
  double getTileEfficiency(const SegmentOp &info,
                           const ShardingStrategy &chosen) const {
    if (!isa<MatMulOp, GemmOp>(info.op) || info.results.size() != 1)
      return 1.0;
    int64_t result = info.results.front();
    const SegmentValue &value = model.values[result];
    const ValueSharding &layout = chosen.results.front();
    SmallVector<double, 4> dims;
    for (auto [dim, size] : llvm::enumerate(value.shape)) {
      double extent = static_cast<double>(size);
      if (static_cast<int64_t>(dim) == value.batchDim)
        extent *= context.batchScale;
      if (layout.isSplit() && layout.dim == static_cast<int64_t>(dim))
        extent /= static_cast<double>(context.tp);
      dims.push_back(extent);
    }
    auto rhs = dyn_cast<RankedTensorType>(info.op->getOperand(1).getType());
    bool batchedRhs = isa<MatMulOp>(info.op) && rhs && rhs.getRank() > 2;
    return getMatmulTileEfficiency(getMatmulOutputShape(dims, batchedRhs),
                                   context.target->device);
  }

  OpWork getOpWork(int64_t op, int64_t strategy) const {
    const SegmentOp &info = model.ops[op];
    const ShardingStrategy &chosen = info.strategies[strategy];
    double flops = static_cast<double>(info.cost.flops);
    if (info.scalesWithBatch)
      flops *= context.batchScale;
    if (chosen.loop >= 0)
      flops /= static_cast<double>(context.tp);

    double written = 0, writtenWhole = 0, fusedWritten = 0;
    for (auto [index, value] : llvm::enumerate(info.results)) {
      double bytes = static_cast<double>(model.values[value].bytes);
      double shard = bytes * share(value, chosen.results[index]);
      written += shard;
      writtenWhole += bytes;
      if (!info.fusedResults.empty() && info.fusedResults[index])
        fusedWritten += shard;
    }
    double writeShare = writtenWhole > 0 ? written / writtenWhole : 1.0;

    double read = 0;
    if (info.readsWholeOperands) {
      llvm::SmallDenseSet<std::pair<int, int64_t>, 4> seen;
      for (auto [index, use] : llvm::enumerate(info.operands)) {
        if (use.kind == SegmentOperand::Kind::Other ||
            (!info.fusedOperands.empty() && info.fusedOperands[index]) ||
            !seen.insert({static_cast<int>(use.kind), use.index}).second)
          continue;
        const ValueSharding &layout = chosen.operands[index];
        if (use.kind == SegmentOperand::Kind::Parameter)
          read += static_cast<double>(
              parameterBytes(model.parameters[use.index], layout));
        else
          read += static_cast<double>(model.values[use.index].bytes) *
                  share(use.index, layout);
      }
    } else {
      read = static_cast<double>(info.cost.bytesRead) * writeShare;
    }
    double bytes = std::max(
        0.0, read + static_cast<double>(info.cost.bytesWritten) * writeShare -
                 fusedWritten);
    // A convolution's channels padded to whole blocks count as the tiles of
    // a matrix product do.
    return {flops,
            bytes,
            info.cost.precision,
            &context.target->device,
            (info.usesMatrixUnits ? getTileEfficiency(info, chosen) : 1.0) *
                info.cost.blocking.efficiency,
            info.cost.kernelClass,
            info.cost.pixels,
            info.cost.blocking.reorderBytes * writeShare};
  }

  const SegmentShardingModel &model;
  const ShardingContext &context;
  /// Activations whose last read is each step.
  std::vector<llvm::SmallVector<int64_t, 2>> dying;
  /// Per op and strategy: the forward's time and `missTime`, and in a
  /// training context the backward's.
  std::vector<llvm::SmallVector<double, 4>> opTimes;
  std::vector<llvm::SmallVector<double, 4>> opMissTimes;
  std::vector<llvm::SmallVector<double, 4>> backwardOpTimes;
  std::vector<llvm::SmallVector<double, 4>> backwardOpMissTimes;
};

} // namespace

ValueSharding cleave::getBoundaryLayout(ArrayRef<int64_t> shape,
                                        int64_t sequenceDim,
                                        const ShardingContext &context) {
  if (!context.sequenceParallel || context.tp <= 1 || sequenceDim < 0 ||
      sequenceDim >= static_cast<int64_t>(shape.size()) ||
      shape[sequenceDim] % context.tp != 0)
    return ValueSharding::replicated();
  return ValueSharding::split(sequenceDim);
}

bool cleave::isStrategyValid(const SegmentShardingModel &model, int64_t op,
                             int64_t strategy, const ShardingContext &context) {
  if (strategy == 0)
    return true;
  if (context.tp <= 1)
    return false;
  const SegmentOp &info = model.ops[op];
  const ShardingStrategy &chosen = info.strategies[strategy];
  if (!context.sequenceParallel &&
      (chosen.splitsTokenDim || info.onResidualStream))
    return false;
  auto divides = [&](ArrayRef<int64_t> shape, int64_t batchDim,
                     const ValueSharding &layout) {
    if (!layout.isSplit())
      return true;
    if (layout.dim < 0 || layout.dim >= static_cast<int64_t>(shape.size()))
      return false;
    double size = static_cast<double>(shape[layout.dim]);
    if (layout.dim == batchDim)
      size *= context.batchScale;
    auto rounded = static_cast<int64_t>(std::llround(size));
    return std::abs(size - static_cast<double>(rounded)) < 1e-6 &&
           rounded > 0 && rounded % context.tp == 0;
  };
  for (auto [index, use] : llvm::enumerate(info.operands)) {
    if (use.kind == SegmentOperand::Kind::Activation) {
      const SegmentValue &value = model.values[use.index];
      if (!divides(value.shape, value.batchDim, chosen.operands[index]))
        return false;
    } else if (use.kind == SegmentOperand::Kind::Parameter) {
      if (!divides(model.parameters[use.index].shape, -1,
                   chosen.operands[index]))
        return false;
    }
  }
  for (auto [index, value] : llvm::enumerate(info.results))
    if (!divides(model.values[value].shape, model.values[value].batchDim,
                 chosen.results[index]))
      return false;
  return true;
}

/// The most bytes live at once, from each buffer's live range and largest
/// per-device size.
static int64_t peakLiveBytes(const SegmentShardingModel &model,
                             ArrayRef<int64_t> valueBytes) {
  int64_t numSteps = model.numOps() + 1;
  SmallVector<int64_t> first(model.values.size(), 0);
  SmallVector<int64_t> last(model.values.size(), -1);
  SmallVector<int64_t> bytes(model.values.size(), 0);
  for (auto [index, value] : llvm::enumerate(model.values)) {
    int64_t root = value.bufferRoot;
    if (root == static_cast<int64_t>(index))
      first[root] = std::max<int64_t>(value.definition, 0);
    last[root] =
        std::max(last[root], std::max(value.lastUse, value.definition));
    bytes[root] = std::max(bytes[root], valueBytes[index]);
  }
  SmallVector<int64_t> delta(numSteps + 1, 0);
  for (size_t root = 0; root < model.values.size(); ++root) {
    if (last[root] < first[root])
      continue;
    delta[first[root]] += bytes[root];
    delta[std::min(last[root], numSteps - 1) + 1] -= bytes[root];
  }
  int64_t live = 0, peak = 0;
  for (int64_t change : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return peak;
}

/// Bytes of the buffers the segment's ops define, and of those that are
/// its outputs, each at its largest per-device size.
static std::pair<int64_t, int64_t>
definedBytes(const SegmentShardingModel &model, ArrayRef<int64_t> valueBytes) {
  SmallVector<int64_t> bytes(model.values.size(), 0);
  for (auto [index, value] : llvm::enumerate(model.values))
    bytes[value.bufferRoot] =
        std::max(bytes[value.bufferRoot], valueBytes[index]);
  int64_t defined = 0, outputs = 0;
  for (auto [index, value] : llvm::enumerate(model.values)) {
    if (value.bufferRoot != static_cast<int64_t>(index) || value.definition < 0)
      continue;
    defined += bytes[index];
    if (value.isOutput)
      outputs += bytes[index];
  }
  return {defined, outputs};
}

FailureOr<SegmentCost>
cleave::evaluateSegmentSharding(const SegmentShardingModel &model,
                                const SegmentAssignment &assignment,
                                const ShardingContext &context) {
  if (static_cast<int64_t>(assignment.size()) != model.numOps())
    return failure();
  SegmentSimulator simulator(model, context);
  SimulationRecord record;
  record.valueBytes.assign(model.values.size(), 0);
  for (auto [index, value] : llvm::enumerate(model.values))
    if (value.definition < 0)
      simulator.noteBytes(record, index, getBoundaryLayout(value, context));

  SegmentCost cost;
  std::string state = simulator.initialState();
  double objective = 0;
  for (int64_t op = 0; op < model.numOps(); ++op) {
    if (assignment[op] < 0 ||
        assignment[op] >=
            static_cast<int64_t>(model.ops[op].strategies.size()) ||
        !simulator.isValid(op, assignment[op]))
      return failure();
    simulator.applyOp(state, op, assignment[op], objective, &record);
    cost.computeTime += simulator.opTime(op, assignment[op]);
    cost.backwardComputeTime += simulator.backwardOpTime(op, assignment[op]);
    cost.opMissTimes.push_back(simulator.opMissTime(op, assignment[op]));
    cost.missTime += cost.opMissTimes.back();
    cost.backwardMissTime += simulator.backwardOpMissTime(op, assignment[op]);
  }
  simulator.finish(state, objective, &record);
  for (const SegmentCollective &collective : record.collectives) {
    cost.collectiveTime += collective.time;
    if (context.training)
      cost.backwardCollectiveTime += simulator.conjugateTime(collective);
  }
  for (const SegmentCollective &reduction : record.gradientReductions)
    cost.backwardCollectiveTime += reduction.time;

  for (const auto &[parameter, code] : record.weightLayouts) {
    const SegmentParameter &info = model.parameters[parameter];
    int64_t bytes = simulator.parameterBytes(info, decode(code));
    cost.weightBytes += bytes;
    if (!info.trainable)
      continue;
    int64_t elements =
        decode(code).isSplit() ? info.elements / context.tp : info.elements;
    cost.trainable +=
        {elements, bytes, bytes < 4 * elements ? 4 * elements : 0};
  }
  for (const SegmentCollective &collective : record.collectives)
    cost.largestMessageBytes =
        std::max(cost.largestMessageBytes, collective.bytes);
  cost.peakActivationBytes = peakLiveBytes(model, record.valueBytes);
  std::tie(cost.definedActivationBytes, cost.outputActivationBytes) =
      definedBytes(model, record.valueBytes);
  cost.objective =
      cost.searchedTime() +
      context.weightBytePenalty * static_cast<double>(cost.weightBytes) +
      context.collectivePenalty *
          static_cast<double>(record.collectives.size() +
                              record.gradientReductions.size());
  cost.opTimes = std::move(record.opTimes);
  cost.collectives = std::move(record.collectives);
  cost.gradientReductions = std::move(record.gradientReductions);
  return cost;
}

namespace {
/// A state of the dynamic program: the layouts of the activations, the best
/// objective that reaches them, and how.
struct SearchNode {
  std::string state;
  double objective = 0;
  int32_t parent = -1;
  int32_t strategy = -1;
};
} // namespace

SegmentSharding cleave::searchSegmentSharding(const SegmentShardingModel &model,
                                              const ShardingContext &context,
                                              int64_t maxStates) {
  SegmentSimulator simulator(model, context);
  SegmentSharding result;

  std::vector<std::vector<SearchNode>> layers(model.numOps() + 1);
  layers[0].push_back({simulator.initialState(), 0, -1, -1});
  for (int64_t op = 0; op < model.numOps(); ++op) {
    std::vector<SearchNode> &next = layers[op + 1];
    llvm::StringMap<int32_t> index;
    auto numStrategies = static_cast<int64_t>(model.ops[op].strategies.size());
    for (auto [parent, node] : llvm::enumerate(layers[op])) {
      for (int64_t strategy = 0; strategy < numStrategies; ++strategy) {
        if (!simulator.isValid(op, strategy))
          continue;
        std::string state = node.state;
        double objective = node.objective;
        simulator.applyOp(state, op, strategy, objective, nullptr);
        auto [it, inserted] =
            index.try_emplace(state, static_cast<int32_t>(next.size()));
        if (inserted) {
          next.push_back({std::move(state), objective,
                          static_cast<int32_t>(parent),
                          static_cast<int32_t>(strategy)});
        } else if (objective < next[it->second].objective) {
          next[it->second].objective = objective;
          next[it->second].parent = static_cast<int32_t>(parent);
          next[it->second].strategy = static_cast<int32_t>(strategy);
        }
      }
    }
    if (static_cast<int64_t>(next.size()) > maxStates) {
      std::nth_element(next.begin(), next.begin() + maxStates, next.end(),
                       [](const SearchNode &a, const SearchNode &b) {
                         return a.objective < b.objective;
                       });
      next.resize(maxStates);
      result.exact = false;
    }
  }

  int32_t best = -1;
  double bestObjective = std::numeric_limits<double>::infinity();
  for (auto [index, node] : llvm::enumerate(layers.back())) {
    std::string state = node.state;
    double objective = node.objective;
    simulator.finish(state, objective, nullptr);
    if (objective < bestObjective) {
      bestObjective = objective;
      best = static_cast<int32_t>(index);
    }
  }

  result.assignment.assign(model.numOps(), 0);
  for (int64_t op = model.numOps(); op > 0 && best >= 0; --op) {
    const SearchNode &node = layers[op][best];
    result.assignment[op - 1] = node.strategy;
    best = node.parent;
  }
  // The replicated assignment is always valid, so evaluation succeeds.
  result.cost = *evaluateSegmentSharding(model, result.assignment, context);
  return result;
}

namespace {
/// One way to reach a state of the front search.
struct FrontLabel {
  /// Seconds (with the collective penalty) and weight bytes so far.
  double time = 0;
  int64_t weight = 0;
  int32_t parentNode = -1;
  int32_t parentLabel = -1;
  int32_t strategy = -1;
};

struct FrontNode {
  std::string state;
  std::vector<FrontLabel> labels;
};

bool dominates(const FrontLabel &a, const FrontLabel &b) {
  return a.time <= b.time && a.weight <= b.weight;
}

/// Adds `label` unless another dominates it, dropping those it dominates.
void insertLabel(std::vector<FrontLabel> &labels, const FrontLabel &label) {
  for (const FrontLabel &kept : labels)
    if (dominates(kept, label))
      return;
  llvm::erase_if(
      labels, [&](const FrontLabel &kept) { return dominates(label, kept); });
  labels.push_back(label);
}

/// Keeps at most `limit` of `labels` (sorted by weight), the extremes and
/// evenly spaced ones between.
bool thinLabels(std::vector<FrontLabel> &labels, size_t limit) {
  if (labels.size() <= limit)
    return false;
  llvm::sort(labels, [](const FrontLabel &a, const FrontLabel &b) {
    return a.weight < b.weight;
  });
  std::vector<FrontLabel> kept;
  for (size_t i = 0; i < limit; ++i)
    kept.push_back(labels[i * (labels.size() - 1) / (limit - 1)]);
  labels = std::move(kept);
  return true;
}
} // namespace

std::vector<SegmentSharding>
cleave::searchSegmentShardingFront(const SegmentShardingModel &model,
                                   const ShardingContext &context,
                                   int64_t maxStates, int64_t maxPoints) {
  constexpr size_t kMaxLabels = 32;
  // Time and weights are kept apart, so the simulator prices no bytes.
  ShardingContext timeOnly = context;
  timeOnly.weightBytePenalty = 0;
  SegmentSimulator simulator(model, timeOnly);
  bool exact = true;

  std::vector<std::vector<FrontNode>> layers(model.numOps() + 1);
  layers[0].push_back({simulator.initialState(), {FrontLabel()}});
  for (int64_t op = 0; op < model.numOps(); ++op) {
    std::vector<FrontNode> &next = layers[op + 1];
    llvm::StringMap<int32_t> index;
    auto numStrategies = static_cast<int64_t>(model.ops[op].strategies.size());
    for (auto [parentNode, node] : llvm::enumerate(layers[op])) {
      for (int64_t strategy = 0; strategy < numStrategies; ++strategy) {
        if (!simulator.isValid(op, strategy))
          continue;
        std::string state = node.state;
        double added = 0;
        simulator.applyOp(state, op, strategy, added, nullptr);
        int64_t bytes = simulator.parameterUseBytes(op, strategy);
        auto [it, inserted] =
            index.try_emplace(state, static_cast<int32_t>(next.size()));
        if (inserted)
          next.push_back({std::move(state), {}});
        std::vector<FrontLabel> &labels = next[it->second].labels;
        for (auto [parentLabel, label] : llvm::enumerate(node.labels))
          insertLabel(labels, {label.time + added, label.weight + bytes,
                               static_cast<int32_t>(parentNode),
                               static_cast<int32_t>(parentLabel),
                               static_cast<int32_t>(strategy)});
      }
    }
    for (FrontNode &node : next)
      exact &= !thinLabels(node.labels, kMaxLabels);
    if (static_cast<int64_t>(next.size()) > maxStates) {
      auto fastest = [](const FrontNode &node) {
        double best = std::numeric_limits<double>::infinity();
        for (const FrontLabel &label : node.labels)
          best = std::min(best, label.time);
        return best;
      };
      std::nth_element(next.begin(), next.begin() + maxStates, next.end(),
                       [&](const FrontNode &a, const FrontNode &b) {
                         return fastest(a) < fastest(b);
                       });
      next.resize(maxStates);
      exact = false;
    }
  }

  // The front over every final state, fastest first.
  struct Ending {
    double time;
    int64_t weight;
    int32_t node, label;
  };
  std::vector<Ending> endings;
  for (auto [nodeIndex, node] : llvm::enumerate(layers.back())) {
    std::string state = node.state;
    double added = 0;
    simulator.finish(state, added, nullptr);
    for (auto [labelIndex, label] : llvm::enumerate(node.labels))
      endings.push_back({label.time + added, label.weight,
                         static_cast<int32_t>(nodeIndex),
                         static_cast<int32_t>(labelIndex)});
  }
  llvm::sort(endings, [](const Ending &a, const Ending &b) {
    return a.time != b.time ? a.time < b.time : a.weight < b.weight;
  });
  std::vector<Ending> front;
  for (const Ending &ending : endings)
    if (front.empty() || ending.weight < front.back().weight)
      front.push_back(ending);
  if (static_cast<int64_t>(front.size()) > maxPoints) {
    std::vector<Ending> spread;
    for (int64_t i = 0; i < maxPoints; ++i)
      spread.push_back(front[i * (front.size() - 1) / (maxPoints - 1)]);
    front = std::move(spread);
    exact = false;
  }

  std::vector<SegmentSharding> result;
  for (const Ending &ending : front) {
    SegmentSharding sharding;
    sharding.exact = exact;
    sharding.assignment.assign(model.numOps(), 0);
    int32_t node = ending.node, label = ending.label;
    for (int64_t op = model.numOps(); op > 0; --op) {
      const FrontLabel &step = layers[op][node].labels[label];
      sharding.assignment[op - 1] = step.strategy;
      node = step.parentNode;
      label = step.parentLabel;
    }
    sharding.cost =
        *evaluateSegmentSharding(model, sharding.assignment, context);
    // Counting a weight once per layout (not per use) can reorder points.
    bool dominated = llvm::any_of(result, [&](const SegmentSharding &kept) {
      return kept.cost.searchedTime() <= sharding.cost.searchedTime() &&
             kept.cost.weightBytes <= sharding.cost.weightBytes;
    });
    if (!dominated)
      result.push_back(std::move(sharding));
  }
  return result;
}
