//===- GroupChunks.cpp - one function per device of chunks ------*- C++ -*-===//
//
// `cleave-group-chunks`: under the interleaved schedule each device runs
// several model chunks (virtual stages). Their stage functions merge into
// one device function, whose ops say which chunk they belong to, so that
// the device program has one arena, one weight file and one persistent
// memory for the device, and an entry per chunk and phase.
//
// The update is one entry for all of a device's chunks. Each chunk builds
// its part of every reduction along the pipeline (clipping's sum of
// squares, loss scaling's overflow flag, a shared parameter's gradient); a
// device takes part in each reduction once, with the sum of its chunks'
// parts.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Passes.h"

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Dialect/Cleave/IR/TrainingPhases.h"
#include "cleave/Transforms/Partition/Contract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseSet.h"

#include <map>
#include <vector>

namespace cleave {
#define GEN_PASS_DEF_GROUPCHUNKSPASS
#include "cleave/Transforms/Partition/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

/// A graph port of a device function: the chunk function that has it, and
/// its position there.
struct Port {
  func::FuncOp func;
  unsigned position = 0;
};

/// Whether every value `op` (and the ops nested in it) reads is defined
/// outside `pending`.
bool isReady(Operation *op, const llvm::DenseSet<Operation *> &pending) {
  WalkResult result = op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && pending.contains(def))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// The update of a device's chunks: the k-th reduction along pp of each
/// chunk's update is its part of the k-th reduction of the step (every
/// chunk builds the same ones, in the same order). Their parts are added
/// and reduced once, and every chunk reads the result. The update's ops
/// then run each chunk as far as it can, in chunk order, and a merged
/// reduction as soon as every chunk has built its part; after the last
/// reduction each chunk runs to its end in chunk order, so that what the
/// last chunk alone updates (the loss scale) comes after every chunk's
/// reads. A device without such reductions keeps its chunks' order.
LogicalResult
mergeChunkReductions(func::FuncOp func, int64_t device, int64_t pp,
                     llvm::DenseMap<Operation *, StepPhase> &expected) {
  Block &block = func.getBody().front();
  llvm::DenseMap<Operation *, StepPhase> phases =
      classifyStepPhases(block, /*trainingStep=*/true);
  // A chunk's update ops, and among them its reductions along pp.
  struct ChunkUpdate {
    int64_t chunk = 0;
    SmallVector<Operation *> ops;
    SmallVector<AllReduceOp> parts;
  };
  std::map<int64_t, ChunkUpdate> byChunk;
  for (Operation &op : block.without_terminator()) {
    auto phase = phases.find(&op);
    if (phase == phases.end() || phase->second != StepPhase::Update)
      continue;
    ChunkUpdate &update = byChunk[getChunk(&op).value_or(0)];
    update.ops.push_back(&op);
    if (auto reduce = dyn_cast<AllReduceOp>(op);
        reduce && reduce.getAxis() == "pp")
      update.parts.push_back(reduce);
  }
  if (byChunk.size() < 2 || byChunk.begin()->second.parts.empty())
    return success();
  // In chunk order.
  std::vector<ChunkUpdate> updates;
  for (auto &[chunk, update] : byChunk) {
    update.chunk = chunk;
    updates.push_back(std::move(update));
  }
  int64_t chunks = static_cast<int64_t>(updates.size());
  ChunkUpdate &first = updates.front();
  size_t count = first.parts.size();
  for (const ChunkUpdate &update : llvm::drop_begin(updates))
    if (update.parts.size() != count)
      return func.emitError()
             << "model chunk " << update.chunk << " of device " << device
             << " reduces " << update.parts.size()
             << " values along pp in its update and chunk " << first.chunk
             << " " << count
             << ": a device takes part in each reduction once, with the sum "
                "of its chunks' parts";

  OpBuilder builder(func.getContext());
  const ChunkUpdate &last = updates.back();
  SmallVector<SmallVector<Operation *>> merged;
  for (size_t k = 0; k < count; ++k) {
    AllReduceOp reduceLast = last.parts[k];
    builder.setInsertionPoint(reduceLast);
    SmallVector<Operation *> ops;
    Value sum = first.parts[k].getInput();
    for (const ChunkUpdate &update : llvm::drop_begin(updates)) {
      AllReduceOp part = update.parts[k];
      if (part.getType() != sum.getType() || part.getReduction() != "sum" ||
          first.parts[k].getReduction() != "sum")
        return part.emitOpError()
               << "is reduction " << k << " along pp of model chunk "
               << update.chunk << ", a " << part.getReduction() << " of "
               << part.getType() << ", and chunk " << first.chunk << "'s a "
               << first.parts[k].getReduction() << " of " << sum.getType()
               << ": a device's chunks add their parts of one sum";
      auto add = AddOp::create(builder, part.getLoc(), sum.getType(), sum,
                               part.getInput());
      ops.push_back(add);
      sum = add.getResult();
    }
    auto reduce = cast<AllReduceOp>(builder.clone(*reduceLast));
    reduce.getInputMutable().assign(sum);
    ops.push_back(reduce);
    for (Operation *op : ops) {
      setChunk(op, last.chunk);
      setStage(op, last.chunk * pp + device);
      expected[op] = StepPhase::Update;
    }
    for (ChunkUpdate &update : updates) {
      AllReduceOp part = update.parts[k];
      part.getOutput().replaceAllUsesWith(reduce.getOutput());
      llvm::erase(update.ops, part.getOperation());
      expected.erase(part);
      part.erase();
    }
    merged.push_back(std::move(ops));
  }

  llvm::DenseSet<Operation *> pending;
  for (const ChunkUpdate &update : updates)
    pending.insert(update.ops.begin(), update.ops.end());
  for (ArrayRef<Operation *> ops : merged)
    pending.insert(ops.begin(), ops.end());
  Operation *terminator = block.getTerminator();
  auto place = [&](Operation *op) {
    op->moveBefore(terminator);
    pending.erase(op);
  };
  SmallVector<size_t> next(chunks, 0);
  size_t nextMerged = 0;
  while (!pending.empty()) {
    bool progress = false;
    for (int64_t c = 0; c < chunks; ++c)
      for (size_t &i = next[c];
           i < updates[c].ops.size() && isReady(updates[c].ops[i], pending);
           ++i) {
        place(updates[c].ops[i]);
        progress = true;
      }
    if (nextMerged < merged.size() &&
        llvm::all_of(merged[nextMerged], [&](Operation *op) {
          // The adds and the reduction read each other in order.
          return llvm::all_of(op->getOperands(), [&](Value operand) {
            Operation *def = operand.getDefiningOp();
            return !def || !pending.contains(def) ||
                   llvm::is_contained(merged[nextMerged], def);
          });
        })) {
      for (Operation *op : merged[nextMerged++])
        place(op);
      progress = true;
    }
    if (!progress)
      return func.emitError()
             << "the update of device " << device
             << "'s model chunks reads a reduction along pp before every "
                "chunk has built its part";
  }
  return success();
}

/// Checks that every op of device `device`'s function runs in the phase of
/// the step it ran in on its own chunk (`expected`; the merged reductions
/// are the update's): an op that moved, such as a reduction along pp that
/// would run once per microbatch on one device and once per step on its
/// peers, would make the pipeline wait forever.
LogicalResult
checkPhases(func::FuncOp func, int64_t device,
            const llvm::DenseMap<Operation *, StepPhase> &expected) {
  auto name = [](StepPhase phase) {
    switch (phase) {
    case StepPhase::Forward:
      return "forward";
    case StepPhase::Backward:
      return "backward";
    case StepPhase::Update:
      return "update";
    }
    llvm_unreachable("every phase is handled");
  };
  Block &block = func.getBody().front();
  llvm::DenseMap<Operation *, StepPhase> phases =
      classifyStepPhases(block, /*trainingStep=*/true);
  for (Operation &op : block.without_terminator()) {
    auto phase = expected.find(&op);
    if (phase == expected.end())
      continue;
    StepPhase now = phases.lookup(&op);
    if (now != phase->second)
      return op.emitError() << "runs in the " << name(phase->second)
                            << " phase of its model chunk's step, but in the "
                            << name(now) << " phase of device " << device
                            << "'s, where its chunks run together";
  }
  return success();
}

/// Builds the function of device `device` from its chunks' functions (by
/// chunk; a chunk without a function holds no ops).
LogicalResult mergeChunks(ModuleOp module, int64_t device,
                          ArrayRef<std::pair<int64_t, func::FuncOp>> chunks,
                          int64_t pp) {
  std::map<int64_t, Port> inputs, outputs;
  for (auto [chunk, func] : chunks) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      std::optional<int64_t> index = getInputIndex(func, i);
      if (!index)
        return func.emitOpError("argument ")
               << i << " is not a graph input (no cleave.input)";
      auto [it, inserted] = inputs.try_emplace(*index, Port{func, i});
      if (!inserted &&
          it->second.func.getArgument(it->second.position).getType() !=
              func.getArgument(i).getType())
        return func.emitOpError("reads graph input ")
               << *index << " as another type than @"
               << it->second.func.getSymName() << " does";
    }
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      std::optional<int64_t> index = getOutputIndex(func, i);
      if (!index)
        return func.emitOpError("result ")
               << i << " is not a graph output (no cleave.output)";
      if (!outputs.try_emplace(*index, Port{func, i}).second)
        return func.emitOpError("writes graph output ")
               << *index << ", which @" << outputs[*index].func.getSymName()
               << " writes too";
    }
  }

  SmallVector<Type> argTypes, resultTypes;
  for (auto &[index, port] : inputs)
    argTypes.push_back(port.func.getArgument(port.position).getType());
  for (auto &[index, port] : outputs)
    resultTypes.push_back(port.func.getResultTypes()[port.position]);
  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  func::FuncOp first = chunks.front().second;
  Location loc = first.getLoc();
  auto merged =
      func::FuncOp::create(builder, loc, ("stage_" + Twine(device)).str(),
                           builder.getFunctionType(argTypes, resultTypes));
  setStage(merged, device);
  for (auto [position, entry] : llvm::enumerate(inputs))
    merged.setArgAttrs(position, function_interface_impl::getArgAttrs(
                                     entry.second.func, entry.second.position));
  for (auto [position, entry] : llvm::enumerate(outputs))
    merged.setResultAttrs(position,
                          function_interface_impl::getResultAttrs(
                              entry.second.func, entry.second.position));

  Block *block = merged.addEntryBlock();
  OpBuilder inner = OpBuilder::atBlockEnd(block);
  std::map<int64_t, Value> returned;
  // The phase of each op in its chunk's step, which it keeps in the
  // device's.
  bool trainingStep = isTrainingStepModule(module);
  llvm::DenseMap<Operation *, StepPhase> expected;
  for (auto [chunk, func] : chunks) {
    IRMapping mapping;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      int64_t index = *getInputIndex(func, i);
      auto position = std::distance(inputs.begin(), inputs.find(index));
      mapping.map(func.getArgument(i), block->getArgument(position));
    }
    int64_t virtualStage = chunk * pp + device;
    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, StepPhase> phases;
    if (trainingStep)
      phases = classifyStepPhases(body, /*trainingStep=*/true);
    for (Operation &op : body.without_terminator()) {
      Operation *copy = inner.clone(op, mapping);
      setStage(copy, virtualStage);
      setChunk(copy, chunk);
      if (trainingStep)
        expected[copy] = phases.lookup(&op);
    }
    for (auto [i, value] : llvm::enumerate(body.getTerminator()->getOperands()))
      returned[*getOutputIndex(func, i)] = mapping.lookupOrDefault(value);
  }
  SmallVector<Value> results;
  for (auto &[index, value] : returned)
    results.push_back(value);
  func::ReturnOp::create(inner, loc, results);
  if (!trainingStep)
    return success();
  if (failed(mergeChunkReductions(merged, device, pp, expected)))
    return failure();
  return checkPhases(merged, device, expected);
}

struct GroupChunksPass
    : public cleave::impl::GroupChunksPassBase<GroupChunksPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!getMesh(module))
      return;
    FailureOr<PlanContract> contract = readPlanContract(module);
    if (failed(contract))
      return signalPassFailure();
    int64_t chunks = contract->getNumChunks();
    if (chunks == 1)
      return;
    int64_t pp = contract->pp;
    if (pp < 2) {
      module.emitError() << "`cleave.schedule = \"" << contract->schedule.str()
                         << "\"` runs model chunks on pipeline stages, but "
                            "the plan has one stage: a chunk would send to "
                            "its own device";
      return signalPassFailure();
    }
    std::map<int64_t, SmallVector<std::pair<int64_t, func::FuncOp>>> devices;
    SmallVector<func::FuncOp> stageFunctions;
    for (auto func : module.getOps<func::FuncOp>()) {
      std::optional<int64_t> stage = getStage(func);
      if (!stage || func.isExternal())
        continue;
      if (*stage >= contract->getNumVirtualStages()) {
        func.emitError() << "@" << func.getSymName() << " is stage " << *stage
                         << ", but the plan's pipeline has "
                         << contract->getNumVirtualStages() << " stages";
        return signalPassFailure();
      }
      if (!func.getBody().hasOneBlock()) {
        func.emitError() << "a stage function must have one block";
        return signalPassFailure();
      }
      devices[*stage % pp].push_back({*stage / pp, func});
      stageFunctions.push_back(func);
    }
    for (auto &[device, funcs] : devices) {
      llvm::sort(funcs, [](const auto &a, const auto &b) {
        return a.first < b.first;
      });
      for (auto [chunk, func] : funcs)
        func.setSymName(("chunk_" + Twine(chunk * pp + device)).str());
    }
    for (auto &[device, funcs] : devices)
      if (failed(mergeChunks(module, device, funcs, pp)))
        return signalPassFailure();
    for (func::FuncOp func : stageFunctions)
      func.erase();
  }
};

} // namespace
