//===- PrintDeviceProgram.cpp - the text form of a device program -*- C++
//-*-===//
//
// `cleave-translate --print-device-program`: the memory plan (tensors,
// weights, stash regions) and the entries with their steps, one line each,
// for people and for lit tests.
//
//===----------------------------------------------------------------------===//

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Conversion/DeviceProgram.h"
#include "cleave/Conversion/KernelInterface.h"
#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace cleave;

static StringRef getSpaceName(MemorySpace space) {
  switch (space) {
  case MemorySpace::Arena:
    return "arena";
  case MemorySpace::Weights:
    return "weights";
  case MemorySpace::Input:
    return "input";
  case MemorySpace::Output:
    return "output";
  case MemorySpace::Persistent:
    return "persistent";
  }
  return "";
}

static void printNode(const FusedLoop &loop, int index, raw_ostream &os) {
  const ScalarNode &node = loop.nodes[index];
  switch (node.kind) {
  case ScalarNode::Kind::Load:
    os << "t" << loop.loads[node.loadIndex].tensor;
    return;
  case ScalarNode::Kind::Literal:
    os << node.literal;
    return;
  case ScalarNode::Kind::Cast:
    os << "cast<" << getDTypeName(node.dtype) << ">(";
    printNode(loop, node.args[0], os);
    os << ")";
    return;
  case ScalarNode::Kind::Call:
    os << node.function << "(";
    llvm::interleaveComma(node.args, os,
                          [&](int arg) { printNode(loop, arg, os); });
    os << ")";
    return;
  }
}

static void printTensorList(ArrayRef<int> tensors, raw_ostream &os) {
  os << "(";
  llvm::interleaveComma(tensors, os, [&](int t) { os << "t" << t; });
  os << ")";
}

static void printStep(int index, const ProgramStep &step, raw_ostream &os) {
  os << "step " << index << " ";
  if (step.loop) {
    os << "loop t" << step.loop->output << " = ";
    if (const auto &reduction = step.loop->reduction) {
      os << "reduce " << reduction->combine
         << (reduction->square ? " of squares" : "")
         << (reduction->mean ? ", mean" : "")
         << (reduction->sqrt ? ", sqrt" : "") << " over [";
      llvm::interleaveComma(reduction->axes, os);
      os << "] of ";
    }
    printNode(*step.loop, step.loop->root, os);
  } else {
    const KernelCall &call = *step.call;
    os << "kernel " << call.kernel << " (";
    llvm::interleaveComma(call.inputs, os, [&](int t) {
      if (t < 0)
        os << "none";
      else
        os << "t" << t;
    });
    os << ") -> ";
    printTensorList(call.outputs, os);
    if (!call.ints.empty()) {
      os << " ints [";
      llvm::interleaveComma(call.ints, os);
      os << "]";
    }
    if (!call.floats.empty()) {
      os << " floats [";
      llvm::interleaveComma(call.floats, os);
      os << "]";
    }
  }
  os << "  // " << step.summary;
  if (!step.node.empty())
    os << " \"" << step.node << "\"";
  os << "\n";
}

void cleave::printDeviceProgram(const DeviceProgram &program, raw_ostream &os) {
  os << "program: " << program.entries.size() << " entries, arena "
     << program.arenaBytes << " bytes (unplanned "
     << program.unplannedArenaBytes << "), weights " << program.weightBytes
     << " bytes, persistent " << program.persistentBytes << " bytes\n";
  for (auto [index, tensor] : llvm::enumerate(program.tensors)) {
    os << "tensor t" << index << " " << getDTypeName(tensor.dtype) << "[";
    llvm::interleaveComma(tensor.shape, os);
    os << "] " << getSpaceName(tensor.space) << " " << tensor.offset;
    if (tensor.stash >= 0)
      os << " stash s" << tensor.stash;
    os << "\n";
  }
  for (const WeightEntry &weight : program.weights) {
    if (!weight.writable)
      continue;
    os << "writable weight \"" << weight.name << "\" weights " << weight.offset
       << " -> persistent " << weight.persistentOffset << ", " << weight.bytes
       << " bytes\n";
  }
  for (auto [index, stash] : llvm::enumerate(program.stashes))
    os << "stash s" << index << " t" << stash.tensor << " arena "
       << stash.offset << ", " << stash.slots << " slots of " << stash.stride
       << " bytes\n";
  for (const ProgramEntry &entry : program.entries) {
    os << "entry " << entry.name << " phase " << entry.phase << ": "
       << entry.steps.size() << " steps, " << entry.inPlaceSteps
       << " in place, inputs ";
    printTensorList(entry.inputs, os);
    os << " outputs ";
    printTensorList(entry.outputs, os);
    os << "\n";
    for (auto [index, step] : llvm::enumerate(entry.steps))
      printStep(static_cast<int>(index), step, os);
  }
}

void cleave::registerDeviceProgramDialects(DialectRegistry &registry) {
  registry.insert<CleaveDialect, func::FuncDialect, tensor::TensorDialect>();
  registerCostInterfaceExternalModels(registry);
  registerKernelInterfaceExternalModels(registry);
}

void cleave::registerDeviceProgramTranslation() {
  static llvm::cl::opt<std::string> functionName(
      "program-function",
      llvm::cl::desc("The function to lower (default: the public one)"),
      llvm::cl::init(""));
  static llvm::cl::opt<int64_t> stashSlots(
      "stash-slots",
      llvm::cl::desc("Microbatches in flight: the slots of each stash region"),
      llvm::cl::init(1));
  TranslateFromMLIRRegistration registration(
      "print-device-program",
      "Lower to a device program and print its memory plan and steps",
      [](ModuleOp module, raw_ostream &os) -> LogicalResult {
        FailureOr<func::FuncOp> func = getProgramFunction(module, functionName);
        if (failed(func))
          return failure();
        if (stashSlots < 1)
          return module.emitError("--stash-slots must be at least 1"),
                 failure();
        DeviceProgramOptions options;
        options.stashSlots = stashSlots;
        FailureOr<DeviceProgram> program = buildDeviceProgram(*func, options);
        if (failed(program))
          return failure();
        printDeviceProgram(*program, os);
        return success();
      },
      registerDeviceProgramDialects);
}
