//===- OptimizerUpdate.cpp - the update of a training step ------*- C++ -*-===//
//
// `cleave-optimizer-update`: after the backward ops, the loss and every
// gradient are added into persistent accumulators (one step sums several
// microbatches); then one fused update per parameter (`cleave.sgd_update` or
// `cleave.adam_update`) writes the parameter and its optimizer state in place
// from the mean gradient, the accumulators are cleared, and the function
// returns the mean loss: a whole training step. Data-parallel replicas
// all-reduce the sums before the update, so that each updates alike.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Autodiff/Passes.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"
#include "cleave/Transforms/Autodiff/LossScaling.h"
#include "cleave/Transforms/Autodiff/TrainingOptions.h"
#include "cleave/Transforms/Partition/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <numeric>
#include <set>

namespace cleave {
#define GEN_PASS_DEF_OPTIMIZERUPDATEPASS
#include "cleave/Transforms/Autodiff/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

/// PyTorch's clip_grad_norm_ adds this to the norm before dividing by it.
constexpr double kClipEpsilon = 1e-6;

/// A parameter and the gradient the function returns for it.
struct TrainedParameter {
  std::string name;
  WeightOp weight;
  Value gradient;
  /// In a pipelined step, the stage that holds this copy of the parameter
  /// and updates it.
  std::optional<int64_t> stage;
  /// What the update writes: the weight, or under ZeRO this replica's
  /// block of it (a copy, gathered and assigned back after the update).
  Value target;
  /// Under ZeRO with tensor-parallel devices, the dimension they split the
  /// parameter along (-1: whole on each of them); see ZeroRows.
  int64_t splitDim = -1;
};

/// What dynamic loss scaling gives one pipeline stage's update (the whole
/// update without stages): the reciprocal of the loss scale, the scale,
/// and the overflow flag (buildOverflowFlag) that every rank shares.
struct StageLossScale {
  Value unscale;
  Value scale;
  Value overflow;
};

struct OptimizerUpdatePass
    : public cleave::impl::OptimizerUpdatePassBase<OptimizerUpdatePass> {
  using OptimizerUpdatePassBase::OptimizerUpdatePassBase;

  /// The stage functions the step is outlined into: the pipeline stages, or
  /// under the interleaved schedule the virtual stages (1 without stages).
  int64_t stageFunctions = 1;
  /// The tensor-parallel devices of each replica (1 without a plan).
  int64_t tensorParallel = 1;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (optimizer != kSgdOptimizer && optimizer != kAdamOptimizer &&
        optimizer != kAdamWOptimizer) {
      emitError(module.getLoc(), "optimizer=")
          << optimizer << ": the optimizer is sgd, adam or adamw";
      return signalPassFailure();
    }
    if (fromPlan) {
      std::optional<rt::MeshShape> mesh = getMesh(module);
      std::optional<int64_t> planned = getMicrobatches(module);
      if (!mesh || !planned) {
        emitError(module.getLoc(), "from-plan: the module has no plan "
                                   "(cleave.mesh and cleave.microbatches) to "
                                   "take the microbatches and replicas from");
        return signalPassFailure();
      }
      microbatches = *planned;
      replicas = mesh->dp;
      tensorParallel = mesh->tp;
    }
    if (zeroFromPlan)
      if (std::optional<int64_t> planned = getZeroStage(module))
        zero = *planned;
    if (microbatches < 1) {
      emitError(module.getLoc(), "microbatches=")
          << static_cast<int64_t>(microbatches)
          << ": the number of microbatches must be positive";
      return signalPassFailure();
    }
    if (replicas < 1) {
      emitError(module.getLoc(), "replicas=")
          << static_cast<int64_t>(replicas)
          << ": the number of data-parallel replicas must be positive";
      return signalPassFailure();
    }
    if (zero < 0 || zero > 2) {
      emitError(module.getLoc(), "zero=")
          << static_cast<int64_t>(zero)
          << ": the ZeRO stage is 0 (every replica holds the whole optimizer "
             "state), 1 (the state is sharded over the replicas) or 2 (the "
             "gradient sums too)";
      return signalPassFailure();
    }
    if (lossScale < 0) {
      emitError(module.getLoc(), "loss-scale=")
          << static_cast<double>(lossScale)
          << ": the loss scale must be positive (0: none)";
      return signalPassFailure();
    }
    if (lossScale > 0 && lossScaleGrowthInterval < 1) {
      emitError(module.getLoc(), "loss-scale-growth-interval=")
          << static_cast<int64_t>(lossScaleGrowthInterval)
          << ": the loss scale grows after at least one good step";
      return signalPassFailure();
    }
    if (bucketBytes < 0) {
      emitError(module.getLoc(), "bucket-bytes=")
          << static_cast<int64_t>(bucketBytes)
          << ": a bucket holds zero or more bytes of gradient sums (0: each "
             "its own)";
      return signalPassFailure();
    }
    if (zero > 0 && replicas == 1) {
      emitError(module.getLoc(), "zero=")
          << static_cast<int64_t>(zero)
          << " shards the training state over data-parallel replicas, and "
             "replicas=1";
      return signalPassFailure();
    }
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal() || !func.getBody().hasOneBlock()) {
      emitError(module.getLoc(), "cleave-optimizer-update: no function @")
          << entry << " of one block to update the parameters of";
      return signalPassFailure();
    }
    FailureOr<SmallVector<TrainedParameter>> parameters =
        collectParameters(func);
    if (failed(parameters))
      return signalPassFailure();
    int64_t stages = getPipelineStages(module);
    // Under the interleaved schedule the clipping norm, the overflow flag and
    // a shared parameter's sum are built per model chunk (virtual stage);
    // cleave-group-chunks sums a device's chunks before their reduction
    // along pp.
    stageFunctions = std::max(stages, getNumStagesWithin(func));
    SmallVector<TrainedParameter> chunkCopies =
        takeChunkCopies(*parameters, stages);
    if (zero > 0 && tensorParallel > 1)
      findSplitDims(*parameters, chunkCopies);
    Operation *terminator = func.getBody().front().getTerminator();
    OpBuilder opBuilder(terminator);
    GradientBuilder builder(opBuilder,
                            NameLoc::get(opBuilder.getStringAttr(optimizer)));
    // The microbatch's loss and gradients go into the step's sums. Under
    // ZeRO stage 2 each microbatch's gradient is reduce-scattered at once,
    // and a replica sums only its block.
    // With replicas (and no ZeRO), each gradient sum's reduction over them
    // starts as soon as the sum is final, in the last microbatch's backward
    // right after the gradient is made, and overlaps the rest of the
    // backward; the update waits for it.
    bool overlap = overlapReduction && zero == 0 && replicas > 1;
    SmallVector<Value> sums;
    for (auto [index, parameter] : llvm::enumerate(*parameters)) {
      Operation *mark = terminator->getPrevNode();
      Value gradient = parameter.gradient;
      if (zero == 2)
        gradient = reduceScatterBlock(builder, gradient, parameter.splitDim);
      parameter.gradient =
          accumulate(builder, gradient, "grad:" + parameter.name);
      if (overlap)
        parameter.gradient = ReduceStartOp::create(
            opBuilder, builder.getLoc(), parameter.gradient, "dp", replicas,
            "sum", static_cast<int64_t>(index));
      sums.push_back(parameter.gradient);
      setStageOfOpsAfter(mark, parameter.stage);
      if (overlap)
        moveAfterDefinition(mark->getNextNode(), terminator, gradient);
    }
    // A later chunk's copy adds its gradient into the first chunk's sum
    // (one accumulator of the device program), as the microbatch's backward
    // makes it; the first chunk's backward of the microbatch comes after
    // it, so the sum is whole when the first chunk reduces it.
    for (TrainedParameter &copy : chunkCopies) {
      Operation *mark = terminator->getPrevNode();
      Value gradient = copy.gradient;
      if (zero == 2)
        gradient = reduceScatterBlock(builder, gradient, copy.splitDim);
      accumulate(builder, gradient, "grad:" + copy.name);
      setStageOfOpsAfter(mark, copy.stage);
      setWritable(copy.weight);
    }
    if (overlap)
      gatherIntoBuckets(func);
    StringAttr lossName = getResultName(func, 0);
    Value lossSum =
        accumulate(builder, terminator->getOperand(0),
                   "loss.sum:" + (lossName ? lossName.str() : "loss"));
    cast<AccumulateOp>(lossSum.getDefiningOp()).setLoss(true);
    sums.push_back(lossSum);

    // The update reads the sums over every replica: whole, or under ZeRO
    // this replica's block of them, with its block of the parameter. A
    // parameter that several pipeline stages hold (each with its own reads'
    // gradient) sums theirs along pp too (sumSharedCopies).
    for (TrainedParameter &parameter : *parameters) {
      Operation *mark = terminator->getPrevNode();
      if (zero > 0) {
        if (zero == 1)
          parameter.gradient = reduceScatterBlock(builder, parameter.gradient,
                                                  parameter.splitDim);
        parameter.target = localBlock(builder, parameter.weight.getOutput(),
                                      parameter.splitDim);
      } else if (overlap) {
        auto start = parameter.gradient.getDefiningOp<ReduceStartOp>();
        parameter.gradient = ReduceWaitOp::create(
            opBuilder, builder.getLoc(), parameter.gradient, start.getId());
        parameter.target = parameter.weight.getOutput();
      } else {
        parameter.gradient = sumOverReplicas(builder, parameter.gradient);
        parameter.target = parameter.weight.getOutput();
      }
      setStageOfOpsAfter(mark, parameter.stage);
    }
    sumSharedCopies(builder, *parameters, stages, terminator);
    Value stepLoss = sumOverReplicas(builder, lossSum);

    SmallVector<StageLossScale> lossScales;
    if (lossScale > 0)
      lossScales = buildLossScales(builder, *parameters, stages, terminator);
    SmallVector<Value> scales = buildGradientScales(
        builder, *parameters, stages, terminator, lossScales);
    if (lossScale > 0)
      unscaleGradients(builder, *parameters, scales, lossScales, terminator);
    for (auto [parameter, scale] : llvm::zip(*parameters, scales)) {
      Operation *mark = terminator->getPrevNode();
      Value updated = buildUpdate(builder, parameter, scale);
      if (zero > 0)
        gatherInto(builder, updated, parameter.weight.getOutput(),
                   parameter.splitDim);
      setStageOfOpsAfter(mark, parameter.stage);
    }
    for (auto [stage, read] : llvm::enumerate(lossScales)) {
      // A device updates its scale once: under the interleaved schedule its
      // last chunk does, after every chunk has read the scale.
      if (static_cast<int64_t>(stage) + stages < stageFunctions)
        continue;
      Operation *mark = terminator->getPrevNode();
      buildLossScaleUpdate(builder, read.scale, read.overflow,
                           lossScaleGrowthInterval);
      setStageOfOpsAfter(mark, getStageIndex(stages, stage));
    }
    Type lossElement = getElementTypeOrSelf(lossSum.getType());
    // A new value even when it divides by 1: the sum itself is cleared
    // below.
    Value meanLoss = DivOp::create(
        opBuilder, builder.getLoc(), stepLoss,
        builder.scalar(static_cast<double>(getContributions()), lossElement));
    // Emptied after every read, for the next step's first microbatch (a
    // reduced sum after its wait).
    for (Value &sum : sums)
      if (auto start = sum.getDefiningOp<ReduceStartOp>())
        sum =
            cast<ReduceWaitOp>(*start->getUsers().begin()).getNewAccumulator();
    for (Value sum : sums) {
      auto clear = ClearOp::create(opBuilder, builder.getLoc(), sum);
      if (std::optional<int64_t> stage = getStage(sum.getDefiningOp()))
        setStage(clear, *stage);
    }
    terminator->setOperand(0, meanLoss);
    keepOnlyLoss(func);
  }

  /// Gathers the started reductions into buckets of about `bucketBytes`,
  /// in the order the backward starts them, a pipeline stage's apart (each
  /// stage is a program of its own): a bucket is one message, which begins
  /// with its last start. A stage's first bucket holds at most 1 MiB, so
  /// that its reduction begins early in the backward.
  void gatherIntoBuckets(func::FuncOp func) {
    constexpr int64_t kFirstBucketBytes = 1 << 20;
    struct Bucket {
      int64_t id = 0;
      int64_t bytes = 0;
      int64_t limit = 0;
      ReduceStartOp last;
    };
    std::map<int64_t, Bucket> open;
    std::set<int64_t> stagesSeen;
    int64_t buckets = 0;
    for (auto start : func.getBody().front().getOps<ReduceStartOp>()) {
      int64_t stage = getStage(start).value_or(-1);
      auto found = open.find(stage);
      if (found == open.end()) {
        Bucket bucket;
        bucket.id = buckets++;
        bucket.limit = stagesSeen.insert(stage).second
                           ? std::min<int64_t>(bucketBytes, kFirstBucketBytes)
                           : bucketBytes;
        found = open.emplace(stage, bucket).first;
      }
      Bucket &bucket = found->second;
      bucket.bytes += getTensorBytes(start.getAccumulator().getType());
      bucket.last = start;
      start.setId(static_cast<uint64_t>(bucket.id));
      if (bucket.bytes >= bucket.limit) {
        start.setLast(true);
        open.erase(found);
      }
    }
    for (auto &[stage, bucket] : open)
      bucket.last.setLast(true);
  }

  /// Moves the ops from `first` up to (not including) `end` to right after
  /// the definition of `value`, keeping their order: an accumulation and
  /// the start of its reduction run as soon as the gradient is made.
  static void moveAfterDefinition(Operation *first, Operation *end,
                                  Value value) {
    Operation *def = value.getDefiningOp();
    if (!def || !first || first == end)
      return;
    Operation *after = def;
    for (Operation *op = first, *next = nullptr; op != end; op = next) {
      next = op->getNextNode();
      op->moveAfter(after);
      after = op;
    }
  }

  /// Adds `value` into a new accumulator named `name`; the sum after it.
  Value accumulate(GradientBuilder &b, Value value, const std::string &name) {
    OpBuilder &builder = b.getBuilder();
    Value sum = StateOp::create(builder, b.getLoc(), value.getType(),
                                builder.getStringAttr(name));
    return AccumulateOp::create(builder, b.getLoc(), value, sum);
  }

  /// How many microbatch losses and gradients a step's sums hold: every
  /// replica's microbatches.
  int64_t getContributions() const { return microbatches * replicas; }

  /// The block length of a tensor of `elements` elements cut into one
  /// block per replica (the last padded with zeros).
  int64_t getBlockLength(int64_t elements) const {
    return (elements + replicas - 1) / replicas;
  }

  /// Under ZeRO with tensor-parallel devices, the dimension each
  /// parameter is split along, as `cleave-shard-step` will split it: the
  /// layout its first reader in the forward needs. A parameter with copies
  /// (on several pipeline stages, or model chunks of one device) is cut
  /// whole, so that the copies' blocks hold the same elements whatever
  /// their splits.
  static void findSplitDims(MutableArrayRef<TrainedParameter> parameters,
                            MutableArrayRef<TrainedParameter> copies) {
    llvm::StringMap<int> held;
    for (const TrainedParameter &parameter :
         llvm::concat<TrainedParameter>(parameters, copies))
      ++held[parameter.name];
    for (TrainedParameter &parameter :
         llvm::concat<TrainedParameter>(parameters, copies)) {
      ValueSharding layout = getFirstReaderLayout(parameter.weight);
      if (held[parameter.name] == 1 && layout.isSplit())
        parameter.splitDim = layout.dim;
    }
  }

  // ZeroRows: how ZeRO cuts a parameter into one block per replica. A
  // parameter is flattened into one row, or, when the tensor-parallel
  // devices split it along `splitDim`, into one row per device's part of
  // it ([A, S, R] -> [A, tp, S/tp * R] -> [tp, A * S/tp * R]), so that the
  // rows split like the parameter and each device cuts its own part into
  // the replicas' blocks. A row is padded with zeros to a whole number of
  // blocks.

  /// The rows of a parameter split along `splitDim` (-1: whole).
  int64_t getRows(int64_t splitDim) const {
    return splitDim >= 0 ? tensorParallel : 1;
  }

  /// The type of one replica's block of `value`, a parameter or a tensor
  /// of its shape.
  RankedTensorType getBlockType(Value value, int64_t splitDim) const {
    auto type = cast<RankedTensorType>(value.getType());
    int64_t rows = getRows(splitDim);
    int64_t block = getBlockLength(type.getNumElements() / rows);
    if (rows == 1)
      return RankedTensorType::get({block}, type.getElementType());
    return RankedTensorType::get({rows, block}, type.getElementType());
  }

  /// The elements of `shape` before dimension `splitDim` (`A` above).
  static int64_t getOuterElements(ArrayRef<int64_t> shape, int64_t splitDim) {
    int64_t outer = 1;
    for (int64_t size : shape.take_front(splitDim))
      outer *= size;
    return outer;
  }

  /// `value`, of a parameter's shape, as its rows.
  Value toRows(GradientBuilder &b, Value value, int64_t splitDim) {
    ArrayRef<int64_t> shape = getShape(value);
    int64_t elements = cast<RankedTensorType>(value.getType()).getNumElements();
    if (splitDim < 0)
      return b.reshape(value, {elements});
    int64_t rows = getRows(splitDim);
    int64_t outer = getOuterElements(shape, splitDim);
    int64_t inner = elements / (outer * rows);
    if (outer == 1)
      return b.reshape(value, {rows, inner});
    Value grouped = b.reshape(value, {outer, rows, inner});
    return b.reshape(b.transpose(grouped, {1, 0, 2}), {rows, outer * inner});
  }

  /// Rows of length `length` (toRows) back in a parameter's `shape`.
  Value fromRows(GradientBuilder &b, Value rows, ArrayRef<int64_t> shape,
                 int64_t splitDim) {
    if (splitDim < 0)
      return b.reshape(rows, shape);
    int64_t outer = getOuterElements(shape, splitDim);
    if (outer == 1)
      return b.reshape(rows, shape);
    int64_t inner = getShape(rows).back() / outer;
    Value grouped = b.reshape(rows, {getRows(splitDim), outer, inner});
    return b.reshape(b.transpose(grouped, {1, 0, 2}), shape);
  }

  /// `value`, of a parameter's shape, as its rows padded with zeros to one
  /// block per replica.
  Value flattenToBlocks(GradientBuilder &b, Value value, int64_t splitDim) {
    Value rows = toRows(b, value, splitDim);
    int64_t rank = getShape(rows).size();
    int64_t length = getShape(rows).back();
    int64_t padded = getBlockLength(length) * replicas;
    if (padded == length)
      return rows;
    SmallVector<int64_t> pads(2 * rank, 0);
    pads.back() = padded - length;
    return b.create<PadOp>(rows, pads, StringRef("constant"),
                           llvm::APFloat(0.0));
  }

  /// This replica's block of `sum` summed over the replicas (ZeRO: each
  /// replica updates one block of every parameter).
  Value reduceScatterBlock(GradientBuilder &b, Value sum, int64_t splitDim) {
    OpBuilder &builder = b.getBuilder();
    Value rows = flattenToBlocks(b, sum, splitDim);
    return ReduceScatterOp::create(
        builder, b.getLoc(), getBlockType(sum, splitDim), rows,
        builder.getStringAttr("dp"), builder.getI64IntegerAttr(replicas),
        builder.getI64IntegerAttr(getShape(rows).size() - 1),
        builder.getStringAttr("sum"));
  }

  /// A copy of this replica's block of `value` (no communication).
  Value localBlock(GradientBuilder &b, Value value, int64_t splitDim) {
    OpBuilder &builder = b.getBuilder();
    Value rows = flattenToBlocks(b, value, splitDim);
    return AllSliceOp::create(
        builder, b.getLoc(), getBlockType(value, splitDim), rows,
        builder.getStringAttr("dp"), builder.getI64IntegerAttr(replicas),
        builder.getI64IntegerAttr(getShape(rows).size() - 1));
  }

  /// Gathers every replica's updated block and writes the whole parameter
  /// into `weight`, which the next step's forward reads.
  void gatherInto(GradientBuilder &b, Value block, Value weight,
                  int64_t splitDim) {
    OpBuilder &builder = b.getBuilder();
    auto type = cast<RankedTensorType>(weight.getType());
    int64_t rows = getRows(splitDim);
    int64_t length = type.getNumElements() / rows;
    int64_t padded = getBlockLength(length) * replicas;
    SmallVector<int64_t> gatheredShape = {padded};
    if (rows > 1)
      gatheredShape.insert(gatheredShape.begin(), rows);
    int64_t dim = gatheredShape.size() - 1;
    Value gathered = AllGatherOp::create(
        builder, b.getLoc(),
        RankedTensorType::get(gatheredShape, type.getElementType()), block,
        builder.getStringAttr("dp"), builder.getI64IntegerAttr(replicas),
        builder.getI64IntegerAttr(dim));
    if (padded != length) {
      SmallVector<int64_t> starts(gatheredShape.size(), 0);
      SmallVector<int64_t> ends(gatheredShape);
      SmallVector<int64_t> steps(gatheredShape.size(), 1);
      ends.back() = length;
      gathered = b.create<SliceOp>(gathered, starts, ends, steps);
    }
    AssignOp::create(builder, b.getLoc(),
                     fromRows(b, gathered, type.getShape(), splitDim), weight);
  }

  /// `sum` added up over the data-parallel replicas (itself with one).
  Value sumOverReplicas(GradientBuilder &b, Value sum) {
    return replicas == 1 ? sum : b.allReduceSum(sum, "dp", replicas);
  }

  /// The gradient results, each with the one weight op of its parameter
  /// (the others that read it are merged into it) made writable.
  FailureOr<SmallVector<TrainedParameter>>
  collectParameters(func::FuncOp func) {
    llvm::StringMap<SmallVector<WeightOp>> weights;
    func.walk(
        [&](WeightOp weight) { weights[weight.getName()].push_back(weight); });
    Operation *terminator = func.getBody().front().getTerminator();
    SmallVector<TrainedParameter> parameters;
    llvm::StringMap<unsigned> seen;
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      StringAttr of = getGradientOf(func, i);
      if (!of)
        continue;
      auto found = weights.find(of.getValue());
      if (found == weights.end())
        return emitError(func.getLoc(), "result ")
               << i << " is the gradient of '" << of.getValue() << "', which @"
               << func.getSymName() << " does not read";
      // In a pipelined step each stage that reads the parameter has a
      // gradient, in the order of the stages, and updates its own copy.
      Value gradient = terminator->getOperand(i);
      std::set<int64_t> readers;
      for (WeightOp weight : found->second)
        if (std::optional<int64_t> stage = getStage(weight))
          readers.insert(*stage);
      unsigned copy = seen[of.getValue()]++;
      std::optional<int64_t> stage;
      if (copy < readers.size())
        stage = *std::next(readers.begin(), copy);
      else if (copy > 0)
        return emitError(func.getLoc(), "result ")
               << i << " is gradient " << copy + 1 << " of '" << of.getValue()
               << "', which " << readers.size() << " pipeline stages read";
      SmallVector<WeightOp> reads;
      for (WeightOp weight : found->second)
        if (!stage || getStage(weight) == stage)
          reads.push_back(weight);
      WeightOp weight = reads.front();
      auto type = cast<RankedTensorType>(weight.getType());
      if (!type.getElementType().isF32())
        return emitError(weight.getLoc(), "optimizer=")
               << optimizer << ": parameter '" << of.getValue()
               << "' is a tensor of " << type.getElementType()
               << "; the updates compute float32 parameters";
      for (WeightOp other : llvm::drop_begin(reads)) {
        other.getOutput().replaceAllUsesWith(weight.getOutput());
        llvm::erase(found->second, other);
        other.erase();
      }
      // The copies hold the same values: what this stage reads of another
      // stage's copy (a backward op reading the weight) reads its own.
      if (stage)
        for (WeightOp other : found->second)
          if (other != weight)
            other.getOutput().replaceUsesWithIf(
                weight.getOutput(), [&](OpOperand &use) {
                  return getStage(use.getOwner()) == stage;
                });
      setWritable(weight);
      parameters.push_back({of.getValue().str(), weight, gradient, stage});
    }
    if (parameters.empty())
      return emitError(func.getLoc(), "cleave-optimizer-update: @")
             << func.getSymName()
             << " returns no gradient (cleave.gradient_of) to update by; run "
                "cleave-autodiff first";
    return parameters;
  }

  /// A parameter that several pipeline stages read has a copy on each,
  /// with its reads' gradient: the copies' gradients add up by an
  /// all-reduce along pp, in which every stage function takes part (a
  /// stage without a copy with zeros; under the interleaved schedule every
  /// model chunk, whose parts cleave-group-chunks adds per device). A
  /// shared parameter's all-reduces are built together, in the order of
  /// the parameters, so that every stage reaches them in one order.
  void sumSharedCopies(GradientBuilder &b,
                       MutableArrayRef<TrainedParameter> parameters,
                       int64_t stages, Operation *terminator) {
    llvm::MapVector<StringRef, SmallVector<TrainedParameter *>> copies;
    for (TrainedParameter &parameter : parameters)
      copies[parameter.name].push_back(&parameter);
    for (auto &[name, held] : copies) {
      if (held.size() < 2)
        continue;
      auto type = cast<RankedTensorType>(held.front()->gradient.getType());
      for (int64_t stage = 0; stage < stageFunctions; ++stage) {
        Operation *mark = terminator->getPrevNode();
        auto copy = llvm::find_if(held, [&](TrainedParameter *parameter) {
          return parameter->stage == stage;
        });
        if (copy != held.end())
          (*copy)->gradient = b.allReduceSum((*copy)->gradient, "pp", stages);
        else
          b.allReduceSum(b.zeros(type), "pp", stages);
        setStageOfOpsAfter(mark, stage);
      }
    }
  }

  /// Under the interleaved schedule a device holds several model chunks
  /// (stages above pp - 1 are virtual). A parameter whose copies lie on
  /// several chunks of one device is one tensor there (the device
  /// program's writable weights and accumulators of one name are one), so
  /// the device updates it once: its first chunk's copy is the device's
  /// parameter, and the later chunks' copies are taken out of `parameters`
  /// and returned. They only add their gradients into the first chunk's
  /// accumulator; their chunks take part in the parameter's reductions
  /// along pp with zeros, as a chunk without a copy does.
  SmallVector<TrainedParameter>
  takeChunkCopies(SmallVector<TrainedParameter> &parameters, int64_t stages) {
    SmallVector<TrainedParameter> copies;
    if (stageFunctions <= stages)
      return copies;
    std::map<std::pair<std::string, int64_t>, int64_t> first;
    for (const TrainedParameter &parameter : parameters) {
      int64_t stage = parameter.stage.value_or(0);
      auto [it, inserted] =
          first.try_emplace({parameter.name, stage % stages}, stage);
      if (!inserted)
        it->second = std::min(it->second, stage);
    }
    SmallVector<TrainedParameter> kept;
    for (TrainedParameter &parameter : parameters) {
      int64_t stage = parameter.stage.value_or(0);
      if (first.at({parameter.name, stage % stages}) == stage)
        kept.push_back(std::move(parameter));
      else
        copies.push_back(std::move(parameter));
    }
    parameters = std::move(kept);
    return copies;
  }

  /// The pipeline stages the plan split the function into (1 without a
  /// plan).
  static int64_t getPipelineStages(ModuleOp module) {
    std::optional<rt::MeshShape> mesh = getMesh(module);
    return mesh ? mesh->pp : 1;
  }

  /// What each parameter's accumulated gradient is multiplied by: 1 /
  /// (microbatches x replicas) (the mean), times the clipping factor min(1,
  /// max / (norm + eps)) of the mean gradients' global 2-norm. In a
  /// pipelined step each stage holds its parameters' gradients: each adds
  /// its squares, the stages all-reduce the sums along pp, and each computes
  /// the factor for its own parameters. Under the interleaved schedule each
  /// model chunk adds its squares, and cleave-group-chunks adds up a
  /// device's chunks before their one reduction along pp.
  /// The ops are built before `terminator`.
  SmallVector<Value> buildGradientScales(GradientBuilder &b,
                                         ArrayRef<TrainedParameter> parameters,
                                         int64_t stages, Operation *terminator,
                                         ArrayRef<StageLossScale> lossScales) {
    auto unscaleOf = [&](int64_t stage) {
      return lossScales.empty() ? Value() : lossScales[stage].unscale;
    };
    if (clipGradNorm <= 0 || stages == 1)
      return SmallVector<Value>(
          parameters.size(),
          buildGradientScale(b, parameters, stages, unscaleOf(0)));
    SmallVector<Value> scales(parameters.size());
    llvm::StringSet<> counted;
    for (int64_t stage = 0; stage < stageFunctions; ++stage) {
      // A parameter every stage holds counts once, on the first.
      SmallVector<TrainedParameter> own;
      for (const TrainedParameter &parameter : parameters)
        if (parameter.stage.value_or(0) == stage &&
            counted.insert(parameter.name).second)
          own.push_back(parameter);
      Operation *mark = terminator->getPrevNode();
      Value scale = buildGradientScale(b, own, stages, unscaleOf(stage));
      setStageOfOpsAfter(mark, stage);
      for (auto [index, parameter] : llvm::enumerate(parameters))
        if (parameter.stage.value_or(0) == stage)
          scales[index] = scale;
    }
    return scales;
  }

  /// The scale of `parameters` (buildGradientScales), whose squares add up
  /// over `stages` pipeline stages. Under loss scaling the norm is of the
  /// gradients times `unscale`; the scale itself is unscaled afterwards
  /// (unscaleGradients).
  Value buildGradientScale(GradientBuilder &b,
                           ArrayRef<TrainedParameter> parameters,
                           int64_t stages, Value unscale) {
    Type f32 = b.getBuilder().getF32Type();
    int64_t contributions = getContributions();
    double mean = 1.0 / static_cast<double>(contributions);
    if (clipGradNorm <= 0)
      return b.scalar(mean, f32);
    Value sumOfSquares;
    for (const TrainedParameter &parameter : parameters) {
      ArrayRef<int64_t> shape = getShape(parameter.gradient);
      SmallVector<int64_t> all(shape.size());
      std::iota(all.begin(), all.end(), 0);
      Value squares = b.create<ReduceSumSquareOp>(parameter.gradient, all,
                                                  /*keepdims=*/false);
      sumOfSquares = sumOfSquares ? b.add(sumOfSquares, squares) : squares;
    }
    // A stage that trains nothing adds nothing.
    if (!sumOfSquares)
      sumOfSquares = b.scalar(0.0, f32);
    // Under ZeRO each replica holds a block of every gradient: the squares
    // add up over the replicas.
    if (zero > 0)
      sumOfSquares = sumOverReplicas(b, sumOfSquares);
    if (stages > 1)
      sumOfSquares = b.allReduceSum(sumOfSquares, "pp", stages);
    Value norm = b.create<SqrtOp>(sumOfSquares);
    if (contributions > 1)
      norm = b.mul(norm, b.scalar(mean, f32));
    if (unscale)
      norm = b.mul(norm, unscale);
    Value padded = b.add(norm, b.scalar(kClipEpsilon, f32));
    Value factor = b.div(b.scalar(clipGradNorm, f32), padded);
    Value clip = b.create<MinOp>(factor, b.scalar(1.0, f32));
    return contributions > 1 ? b.mul(clip, b.scalar(mean, f32)) : clip;
  }

  /// The stage of the ops of pipeline stage `index` (none without stages).
  static std::optional<int64_t> getStageIndex(int64_t stages, int64_t index) {
    return stages > 1 ? std::optional<int64_t>(index) : std::nullopt;
  }

  /// Per pipeline stage (one without stages), the loss scale of the step
  /// and the overflow flag of the gradients the stage updates, summed over
  /// the replicas that each hold a block of them (ZeRO) and over the
  /// stages, so that every rank skips the same steps.
  SmallVector<StageLossScale>
  buildLossScales(GradientBuilder &b, ArrayRef<TrainedParameter> parameters,
                  int64_t stages, Operation *terminator) {
    Type f32 = b.getBuilder().getF32Type();
    SmallVector<StageLossScale> scales;
    for (int64_t stage = 0; stage < stageFunctions; ++stage) {
      SmallVector<Value> gradients;
      for (const TrainedParameter &parameter : parameters)
        if (parameter.stage.value_or(0) == stage)
          gradients.push_back(parameter.gradient);
      Operation *mark = terminator->getPrevNode();
      StageLossScale read;
      read.scale = buildLossScale(b, lossScale);
      read.unscale = b.div(b.scalar(1.0, f32), read.scale);
      read.overflow = buildOverflowFlag(b, gradients);
      if (zero > 0)
        read.overflow = sumOverReplicas(b, read.overflow);
      if (stages > 1)
        read.overflow = b.allReduceSum(read.overflow, "pp", stages);
      setStageOfOpsAfter(mark, getStageIndex(stages, stage));
      scales.push_back(read);
    }
    return scales;
  }

  /// Multiplies each stage's gradient scales by the reciprocal of its loss
  /// scale and adds its overflow flag: NaN on an overflow, which makes the
  /// updates skip the step.
  void unscaleGradients(GradientBuilder &b,
                        ArrayRef<TrainedParameter> parameters,
                        MutableArrayRef<Value> scales,
                        ArrayRef<StageLossScale> lossScales,
                        Operation *terminator) {
    llvm::DenseMap<std::pair<Value, int64_t>, Value> unscaled;
    for (auto [parameter, scale] : llvm::zip(parameters, scales)) {
      int64_t stage = parameter.stage.value_or(0);
      Value &done = unscaled[{scale, stage}];
      if (!done) {
        Operation *mark = terminator->getPrevNode();
        const StageLossScale &read = lossScales[stage];
        done = b.add(b.mul(scale, read.unscale), read.overflow);
        setStageOfOpsAfter(mark, parameter.stage);
      }
      scale = done;
    }
  }

  /// The schedule's attributes, shared by both updates.
  void addSchedule(OpBuilder &builder, NamedAttrList &attrs) {
    attrs.append("learning_rate", builder.getF64FloatAttr(learningRate));
    attrs.append("warmup_steps", builder.getI64IntegerAttr(warmupSteps));
    attrs.append("decay_steps", builder.getI64IntegerAttr(decaySteps));
    attrs.append("min_lr_ratio", builder.getF64FloatAttr(minLrRatio));
  }

  /// Updates `parameter.target` and its optimizer state; returns the
  /// target after the update.
  Value buildUpdate(GradientBuilder &b, TrainedParameter &parameter,
                    Value scale) {
    OpBuilder &builder = b.getBuilder();
    auto type = cast<RankedTensorType>(parameter.target.getType());
    auto state = [&](StringRef what, RankedTensorType stateType) {
      return StateOp::create(
          builder, b.getLoc(), stateType,
          builder.getStringAttr(optimizer + "." + what + ":" + parameter.name));
    };
    Value step = state("step", RankedTensorType::get({}, builder.getF32Type()));
    Value weight = parameter.target;
    NamedAttrList attrs;
    addSchedule(builder, attrs);
    attrs.append("weight_decay", builder.getF64FloatAttr(weightDecay));
    if (optimizer == kSgdOptimizer) {
      attrs.append("momentum", builder.getF64FloatAttr(momentum));
      attrs.append("dampening", builder.getF64FloatAttr(0.0));
      attrs.append("nesterov", builder.getBoolAttr(nesterov));
      // Plain SGD reads no buffer, so it keeps none.
      Value buffer = momentum != 0 ? state("momentum_buffer", type) : Value();
      return SgdUpdateOp::create(builder, b.getLoc(), parameter.gradient, scale,
                                 weight, buffer, step, attrs)
          .getNewParameter();
    }
    attrs.append("beta1", builder.getF64FloatAttr(beta1));
    attrs.append("beta2", builder.getF64FloatAttr(beta2));
    attrs.append("epsilon", builder.getF64FloatAttr(epsilon));
    attrs.append("decoupled",
                 builder.getBoolAttr(optimizer == kAdamWOptimizer));
    Value first = state("exp_avg", type);
    Value second = state("exp_avg_sq", type);
    return AdamUpdateOp::create(builder, b.getLoc(), parameter.gradient, scale,
                                weight, first, second, step, attrs)
        .getNewParameter();
  }

  /// The function returns the loss (its first result) alone.
  void keepOnlyLoss(func::FuncOp func) {
    Operation *terminator = func.getBody().front().getTerminator();
    DictionaryAttr lossAttrs = func.getResultAttrDict(0);
    terminator->setOperands(terminator->getOperand(0));
    func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                   terminator->getOperandTypes()));
    func.setAllResultAttrs(ArrayRef<DictionaryAttr>{lossAttrs});
  }
};

} // namespace
