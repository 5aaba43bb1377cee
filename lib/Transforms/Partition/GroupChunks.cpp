//===- GroupChunks.cpp - one function per device of chunks ------*- C++ -*-===//
//
// `cleave-group-chunks`: under the interleaved schedule each device runs
// several model chunks (virtual stages). Their stage functions merge into
// one device function, whose ops say which chunk they belong to, so that
// the device program has one arena, one weight file and one persistent
// memory for the device, and an entry per chunk and phase.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Passes.h"

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Partition/Contract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <map>

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
  for (auto [chunk, func] : chunks) {
    IRMapping mapping;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      int64_t index = *getInputIndex(func, i);
      auto position = std::distance(inputs.begin(), inputs.find(index));
      mapping.map(func.getArgument(i), block->getArgument(position));
    }
    int64_t virtualStage = chunk * pp + device;
    Block &body = func.getBody().front();
    for (Operation &op : body.without_terminator()) {
      Operation *copy = inner.clone(op, mapping);
      setStage(copy, virtualStage);
      setChunk(copy, chunk);
    }
    for (auto [i, value] : llvm::enumerate(body.getTerminator()->getOperands()))
      returned[*getOutputIndex(func, i)] = mapping.lookupOrDefault(value);
  }
  SmallVector<Value> results;
  for (auto &[index, value] : returned)
    results.push_back(value);
  func::ReturnOp::create(inner, loc, results);
  return success();
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
