//===- Segmentation.cpp - the model cut into repeated segments --*- C++ -*-===//
//
// Cut points come from one liveness sweep over the op sequence; identical
// segments are found by hashing a canonical encoding of each segment in which
// values are named by position, not identity.
//
//===----------------------------------------------------------------------===//

#include "cleave/Plan/Segmentation.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Transforms/Partition/Sharding.h"

#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/Hashing.h"

using namespace mlir;
using namespace cleave;

bool cleave::isActivation(Value value) {
  return isa<RankedTensorType>(value.getType()) && !isParameterValue(value);
}

/// Whether `op` only produces parameters (a weight, a constant, a view of
/// one), so that it does no per-sample work and belongs to no segment.
static bool isParameterOp(Operation *op) {
  if (op->getNumResults() == 0)
    return false;
  return llvm::all_of(op->getResults(),
                      [](Value result) { return isParameterValue(result); });
}

namespace {

/// Where each activation is defined and last used, in planned-op indices:
/// arguments are defined at -1, uses by the terminator count as `ops.size()`.
struct Liveness {
  llvm::DenseMap<Value, int64_t> definition;
  llvm::DenseMap<Value, int64_t> lastUse;
};

} // namespace

static Liveness computeLiveness(Block &body, const SegmentedModel &model) {
  Liveness liveness;
  auto numOps = static_cast<int64_t>(model.ops.size());
  for (BlockArgument argument : body.getArguments())
    if (isActivation(argument)) {
      liveness.definition[argument] = -1;
      liveness.lastUse[argument] = -1;
    }
  for (auto [index, op] : llvm::enumerate(model.ops))
    for (Value result : op->getResults())
      if (isActivation(result)) {
        liveness.definition[result] = index;
        liveness.lastUse[result] = index;
      }

  auto recordUse = [&](Operation *user, int64_t position) {
    for (Value operand : user->getOperands()) {
      auto it = liveness.lastUse.find(operand);
      if (it != liveness.lastUse.end())
        it->second = std::max(it->second, position);
    }
  };
  for (auto [index, op] : llvm::enumerate(model.ops))
    op->walk([&](Operation *user) { recordUse(user, index); });
  recordUse(body.getTerminator(), numOps);
  return liveness;
}

/// Where the batch runs (Sharding.h's `traceBatch`).
static void traceBatchDims(Block &body, SegmentedModel &model) {
  BatchTrace trace = traceBatch(body, isActivation);
  model.batchSize = trace.batchSize;
  model.batchBarrier = trace.barrier;
  if (!trace.barrier)
    for (auto [index, value] :
         llvm::enumerate(body.getTerminator()->getOperands()))
      if (trace.getDim(value) < 0 || trace.getOuter(value) != 1) {
        model.batchOutput = index;
        break;
      }
  model.batchSplittable = !trace.barrier && model.batchOutput < 0;
  model.batchDims = std::move(trace.dims);
}

/// The operand and result dimensions each loop of `op` indexes: from the
/// affine maps of its `ShardingInterface` when it has them, otherwise from
/// the layouts its splittable loops give. Entry `[loop][value]` is the
/// dimension of value (operands, then results) the loop indexes, or -1.
static SmallVector<SmallVector<int64_t>> getLoopDims(Operation *op) {
  SmallVector<SmallVector<int64_t>> loopDims;
  unsigned numValues = op->getNumOperands() + op->getNumResults();
  if (auto sharding = dyn_cast<shard::ShardingInterface>(op)) {
    SmallVector<AffineMap> maps = sharding.getIndexingMaps();
    size_t numLoops = sharding.getLoopIteratorTypes().size();
    if (maps.size() == numValues) {
      loopDims.assign(numLoops, SmallVector<int64_t>(numValues, -1));
      for (auto [value, map] : llvm::enumerate(maps))
        for (auto [dim, expr] : llvm::enumerate(map.getResults()))
          if (auto loop = dyn_cast<AffineDimExpr>(expr))
            loopDims[loop.getPosition()][value] = dim;
      return loopDims;
    }
  }
  for (const OpLoopSharding &loop : getShardableLoops(op)) {
    SmallVector<int64_t> dims(numValues, -1);
    for (auto [index, layout] : llvm::enumerate(loop.operands))
      if (layout.isSplit() && index < op->getNumOperands())
        dims[index] = layout.dim;
    for (auto [index, layout] : llvm::enumerate(loop.results))
      if (layout.isSplit() && index < op->getNumResults())
        dims[op->getNumOperands() + index] = layout.dim;
    loopDims.push_back(std::move(dims));
  }
  return loopDims;
}

/// Whether the function returns `value`.
static bool isFunctionResult(Value value) {
  return llvm::any_of(value.getUsers(), [](Operation *user) {
    return user->hasTrait<OpTrait::IsTerminator>();
  });
}

int64_t SegmentedModel::getSequenceDim(Value value) const {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || isFunctionResult(value))
    return -1;
  int64_t batchDim = getBatchDim(value);
  for (int64_t dim = 0, rank = type.getRank(); dim < rank; ++dim)
    if (dim != batchDim && isTokenDim(value, dim) && !type.isDynamicDim(dim) &&
        type.getDimSize(dim) > 1)
      return dim;
  return -1;
}

/// Traces the token dimensions from the arguments through every op.
static void traceTokenDims(Block &body, SegmentedModel &model) {
  for (BlockArgument argument : body.getArguments())
    if (auto type = dyn_cast<RankedTensorType>(argument.getType());
        type && isActivation(argument) && type.getRank() > 0)
      model.tokenDims[argument] = type.getRank() >= 64
                                      ? ~uint64_t(0)
                                      : (uint64_t(1) << type.getRank()) - 1;

  for (Operation *op : model.ops) {
    bool readsTokens = llvm::any_of(op->getOperands(), [&](Value operand) {
      return model.tokenDims.count(operand);
    });
    if (!readsTokens)
      continue;
    unsigned numOperands = op->getNumOperands();
    for (ArrayRef<int64_t> dims : getLoopDims(op)) {
      bool tokenLoop = false;
      for (unsigned i = 0; i < numOperands && !tokenLoop; ++i)
        tokenLoop = model.isTokenDim(op->getOperand(i), dims[i]);
      if (!tokenLoop)
        continue;
      for (auto [index, result] : llvm::enumerate(op->getResults())) {
        int64_t dim = dims[numOperands + index];
        if (dim >= 0 && dim < 64)
          model.tokenDims[result] |= uint64_t(1) << dim;
      }
    }
  }
}

namespace {

/// Builds the canonical encoding of a segment: op names, inherent
/// attributes, result types, and operands named by where they come from (a
/// result of the segment, an input of the segment, or a parameter by order
/// of first use and type).
class SegmentKeyBuilder {
public:
  SegmentKeyBuilder(const SegmentedModel &model, const ModelSegment &segment)
      : model(model), segment(segment) {}

  std::vector<uintptr_t> build() {
    for (auto [index, input] : llvm::enumerate(segment.inputs)) {
      localNames[input] = {kInput, static_cast<uintptr_t>(index)};
      add(kInput, model.getBatchDim(input) + 1);
      add(kInput, model.tokenDims.lookup(input));
    }
    for (int64_t i = segment.firstOp; i <= segment.lastOp; ++i) {
      Operation *op = model.ops[i];
      add(kOp, reinterpret_cast<uintptr_t>(op->getName().getAsOpaquePointer()));
      Attribute inherent = op->getPropertiesStorageSize()
                               ? op->getPropertiesAsAttribute()
                               : Attribute(op->getAttrDictionary());
      add(kAttr, reinterpret_cast<uintptr_t>(inherent.getAsOpaquePointer()));
      for (Value operand : op->getOperands())
        addOperand(operand);
      for (auto [index, result] : llvm::enumerate(op->getResults())) {
        add(kResult,
            reinterpret_cast<uintptr_t>(result.getType().getAsOpaquePointer()));
        localNames[result] = {static_cast<uintptr_t>(i - segment.firstOp),
                              static_cast<uintptr_t>(index)};
      }
    }
    for (Value output : segment.outputs) {
      auto [op, index] = localNames.lookup(output);
      add(kOutput, op);
      add(kOutput, index);
      // A result of the function leaves its segment whole; any other output
      // may pass on split (`getSequenceDim`).
      add(kOutput, isFunctionResult(output));
    }
    return std::move(key);
  }

private:
  enum : uintptr_t { kInput = 1, kOp, kAttr, kResult, kParameter, kOutput };

  void add(uintptr_t tag, uintptr_t value) {
    key.push_back(tag);
    key.push_back(value);
  }

  void addOperand(Value operand) {
    auto local = localNames.find(operand);
    if (local != localNames.end()) {
      add(local->second.first, local->second.second);
      return;
    }
    auto [it, inserted] = parameters.try_emplace(operand, parameters.size());
    add(kParameter, it->second);
    add(kParameter,
        reinterpret_cast<uintptr_t>(operand.getType().getAsOpaquePointer()));
  }

  const SegmentedModel &model;
  const ModelSegment &segment;
  std::vector<uintptr_t> key;
  /// Values defined in or entering the segment: (op offset, result) or
  /// (kInput, input index).
  llvm::DenseMap<Value, std::pair<uintptr_t, uintptr_t>> localNames;
  llvm::DenseMap<Value, uintptr_t> parameters;
};

} // namespace

static void findSegmentBoundaries(SegmentedModel &model,
                                  const Liveness &liveness,
                                  int64_t minSegments) {
  auto numOps = static_cast<int64_t>(model.ops.size());
  // liveAcross[c]: activations defined at or before op c and used after it.
  std::vector<int64_t> delta(numOps + 1, 0);
  for (const auto &[value, definition] : liveness.definition) {
    int64_t lastUse = liveness.lastUse.lookup(value);
    if (lastUse <= definition)
      continue;
    delta[std::max<int64_t>(definition, 0)] += 1;
    delta[std::min(lastUse, numOps)] -= 1;
  }
  std::vector<int64_t> liveAcross(numOps, 0);
  int64_t live = 0;
  for (int64_t cut = 0; cut < numOps; ++cut) {
    live += delta[cut];
    liveAcross[cut] = live;
  }

  // Cuts where one activation is live. A model with no such point (an
  // encoder-decoder, whose decoder reads its own hidden state and the
  // encoder's output) that must give more than one segment is cut where the
  // fewest activations are live instead: the least to send between stages.
  // A point with none splits unrelated work and is never a cut.
  int64_t cutLive = 1;
  if (minSegments > 1) {
    int64_t fewest = 0;
    for (int64_t cut = 0; cut + 1 < numOps; ++cut)
      if (liveAcross[cut] >= 1 && (fewest == 0 || liveAcross[cut] < fewest))
        fewest = liveAcross[cut];
    cutLive = std::max<int64_t>(fewest, 1);
  }
  int64_t first = 0;
  for (int64_t cut = 0; cut < numOps; ++cut) {
    if (liveAcross[cut] == cutLive || cut + 1 == numOps) {
      ModelSegment segment;
      segment.firstOp = first;
      segment.lastOp = cut;
      model.segments.push_back(segment);
      first = cut + 1;
    }
  }
}

static void collectSegmentPorts(SegmentedModel &model,
                                const Liveness &liveness) {
  for (ModelSegment &segment : model.segments) {
    for (const auto &[value, definition] : liveness.definition)
      if (definition >= 0 && definition <= segment.lastOp &&
          liveness.lastUse.lookup(value) > segment.lastOp)
        segment.liveAfter.push_back(value);
    // In program order, not the map's.
    llvm::sort(segment.liveAfter, [&](Value a, Value b) {
      int64_t da = liveness.definition.lookup(a),
              db = liveness.definition.lookup(b);
      if (da != db)
        return da < db;
      return cast<OpResult>(a).getResultNumber() <
             cast<OpResult>(b).getResultNumber();
    });
    llvm::SmallPtrSet<Value, 4> seen;
    for (int64_t i = segment.firstOp; i <= segment.lastOp; ++i) {
      model.ops[i]->walk([&](Operation *user) {
        for (Value operand : user->getOperands()) {
          auto it = liveness.definition.find(operand);
          if (it != liveness.definition.end() && it->second < segment.firstOp &&
              seen.insert(operand).second)
            segment.inputs.push_back(operand);
        }
      });
      for (Value result : model.ops[i]->getResults())
        if (isActivation(result) &&
            liveness.lastUse.lookup(result) > segment.lastOp)
          segment.outputs.push_back(result);
    }
  }
}

static void groupIdenticalSegments(SegmentedModel &model) {
  llvm::DenseMap<unsigned, llvm::SmallVector<int64_t, 1>> classesByHash;
  std::vector<std::vector<uintptr_t>> classKeys;
  for (auto [index, segment] : llvm::enumerate(model.segments)) {
    std::vector<uintptr_t> key = SegmentKeyBuilder(model, segment).build();
    unsigned hash = llvm::hash_combine_range(key.begin(), key.end());
    llvm::SmallVector<int64_t, 1> &candidates = classesByHash[hash];
    auto match = llvm::find_if(candidates, [&](int64_t candidate) {
      return classKeys[candidate] == key;
    });
    if (match != candidates.end()) {
      segment.segmentClass = *match;
      ++model.classes[*match].numInstances;
      continue;
    }
    segment.segmentClass = static_cast<int64_t>(model.classes.size());
    candidates.push_back(segment.segmentClass);
    classKeys.push_back(std::move(key));
    model.classes.push_back({static_cast<int64_t>(index), 1});
  }
}

FailureOr<SegmentedModel> cleave::segmentModel(func::FuncOp function,
                                               int64_t minSegments) {
  if (function.isExternal() || !function.getBody().hasOneBlock())
    return mlir::emitError(function.getLoc())
           << "planning needs a function with a body of one block";
  Block &body = function.getBody().front();

  SegmentedModel model;
  model.function = function;
  for (Operation &op : body.without_terminator()) {
    if (isParameterOp(&op))
      continue;
    model.opIndex[&op] = static_cast<int64_t>(model.ops.size());
    model.ops.push_back(&op);
  }
  if (model.ops.empty())
    return mlir::emitError(function.getLoc())
           << "planning needs a function that computes "
              "something; '"
           << function.getName() << "' has no ops";

  Liveness liveness = computeLiveness(body, model);
  traceBatchDims(body, model);
  traceTokenDims(body, model);
  findSegmentBoundaries(model, liveness, minSegments);
  collectSegmentPorts(model, liveness);
  groupIdenticalSegments(model);
  return model;
}
