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
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

using namespace mlir;
using namespace cleave;

StringRef cleave::getMemorySpaceName(MemorySpace space) {
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

void cleave::printProgramNumber(double value, raw_ostream &os) {
  if (std::isnan(value)) {
    os << "nan";
    return;
  }
  if (std::isinf(value)) {
    os << (value < 0 ? "-inf" : "inf");
    return;
  }
  // The shortest of 15 or 17 significant digits that reads back exactly.
  char text[32];
  std::snprintf(text, sizeof(text), "%.15g", value);
  if (std::strtod(text, nullptr) != value)
    std::snprintf(text, sizeof(text), "%.17g", value);
  os << text;
}

static void printQuoted(StringRef text, raw_ostream &os) {
  os << '"';
  llvm::printEscapedString(text, os);
  os << '"';
}

/// Prints the expression rooted at `root`. A node whose element type is not
/// the one its reader expects (the enclosing call's, or `expected` for the
/// root) carries it as a `:dtype` suffix; loads never do (they have their
/// tensor's). Iterative: a fused chain is as deep as the model is long.
static void printExpression(const FusedLoop &loop, int root, DType expected,
                            raw_ostream &os) {
  struct Frame {
    int node;
    DType expected;
    size_t nextArg = 0;
  };
  SmallVector<Frame> stack{{root, expected}};
  auto printSuffix = [&](const ScalarNode &node, DType reader) {
    if (node.kind != ScalarNode::Kind::Cast && node.dtype != reader)
      os << ":" << getDTypeName(node.dtype);
  };
  while (!stack.empty()) {
    Frame &frame = stack.back();
    const ScalarNode &node = loop.nodes[frame.node];
    if (frame.nextArg == 0) {
      switch (node.kind) {
      case ScalarNode::Kind::Load:
        os << "t" << loop.loads[node.loadIndex].tensor;
        stack.pop_back();
        continue;
      case ScalarNode::Kind::Literal:
        printProgramNumber(node.literal, os);
        printSuffix(node, frame.expected);
        stack.pop_back();
        continue;
      case ScalarNode::Kind::Cast:
        os << "cast<" << getDTypeName(node.dtype) << ">(";
        break;
      case ScalarNode::Kind::Call:
        os << node.function << "(";
        break;
      }
    }
    if (frame.nextArg < node.args.size()) {
      if (frame.nextArg > 0)
        os << ", ";
      int arg = node.args[frame.nextArg++];
      stack.push_back({arg, node.dtype});
      continue;
    }
    os << ")";
    printSuffix(node, frame.expected);
    stack.pop_back();
  }
}

static void printTensorList(ArrayRef<int> tensors, raw_ostream &os) {
  os << "(";
  llvm::interleaveComma(tensors, os, [&](int t) {
    if (t < 0)
      os << "none";
    else
      os << "t" << t;
  });
  os << ")";
}

static void printNameList(ArrayRef<std::string> names, raw_ostream &os) {
  os << "(";
  llvm::interleaveComma(
      names, os, [&](const std::string &name) { printQuoted(name, os); });
  os << ")";
}

std::optional<double> cleave::getReductionIdentity(StringRef combine) {
  if (combine == "add")
    return 0.0;
  if (combine == "mul")
    return 1.0;
  if (combine == "max")
    return -std::numeric_limits<double>::infinity();
  if (combine == "min")
    return std::numeric_limits<double>::infinity();
  return std::nullopt;
}

static void printStep(const DeviceProgram &program, int index,
                      const ProgramStep &step, raw_ostream &os) {
  os << "step " << index << " ";
  if (step.loop) {
    const FusedLoop &loop = *step.loop;
    DType outputType = program.tensors[loop.output].dtype;
    os << "loop t" << loop.output << " = ";
    if (const auto &reduction = loop.reduction) {
      os << "reduce " << reduction->combine
         << (reduction->square ? " of squares" : "")
         << (reduction->mean ? ", mean" : "")
         << (reduction->sqrt ? ", sqrt" : "");
      if (getReductionIdentity(reduction->combine) != reduction->init) {
        os << " from ";
        printProgramNumber(reduction->init, os);
      }
      os << " over [";
      llvm::interleaveComma(reduction->axes, os);
      os << "] of ";
      printExpression(loop, loop.root, outputType, os);
      os << " in [";
      llvm::interleaveComma(loop.iterationShape, os);
      os << "]";
    } else {
      printExpression(loop, loop.root, outputType, os);
      if (loop.block)
        os << " blocked " << loop.block;
    }
  } else {
    const KernelCall &call = *step.call;
    os << "kernel " << call.kernel << " ";
    printTensorList(call.inputs, os);
    os << " -> ";
    printTensorList(call.outputs, os);
    if (!call.ints.empty()) {
      os << " ints [";
      llvm::interleaveComma(call.ints, os);
      os << "]";
    }
    if (!call.floats.empty()) {
      os << " floats [";
      llvm::interleaveComma(call.floats, os, [&](double value) {
        printProgramNumber(value, os);
      });
      os << "]";
    }
  }
  os << "  // " << step.summary;
  if (!step.node.empty()) {
    os << " ";
    printQuoted(step.node, os);
  }
  os << "\n";
}

static void printWeight(const WeightEntry &weight, raw_ostream &os) {
  if (weight.writable)
    os << "writable ";
  os << "weight ";
  printQuoted(weight.name, os);
  os << " weights " << weight.offset;
  if (weight.writable)
    os << " -> persistent " << weight.persistentOffset;
  os << ", " << weight.bytes << " bytes";
  if (!weight.file.empty()) {
    os << ", file ";
    printQuoted(weight.file, os);
    os << " at " << weight.fileOffset;
    if (!weight.window.empty()) {
      os << ", window [";
      llvm::interleaveComma(weight.window, os);
      os << "] at [";
      llvm::interleaveComma(weight.starts, os);
      os << "] of [";
      llvm::interleaveComma(weight.shape, os);
      os << "] of " << weight.elementBytes << "-byte elements";
      if (weight.splitDim >= 0)
        os << ", split " << weight.splitDim;
    }
  } else {
    os << ", data ";
    os << (weight.data.empty()
               ? "\"\""
               : "\"" +
                     llvm::toHex(
                         StringRef(weight.data.data(), weight.data.size())) +
                     "\"");
  }
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
    os << "] " << getMemorySpaceName(tensor.space) << " " << tensor.offset;
    if (tensor.stash >= 0)
      os << " stash s" << tensor.stash;
    os << " ";
    printQuoted(tensor.name, os);
    os << "\n";
  }
  for (const WeightEntry &weight : program.weights)
    printWeight(weight, os);
  for (auto [index, stash] : llvm::enumerate(program.stashes))
    os << "stash s" << index << " t" << stash.tensor << " arena "
       << stash.offset << ", " << stash.slots << " slots of " << stash.stride
       << " bytes\n";
  for (const ProgramEntry &entry : program.entries) {
    os << "entry " << entry.name << " phase " << entry.phase;
    if (entry.chunk > 0)
      os << " chunk " << entry.chunk;
    os << ": " << entry.steps.size() << " steps, " << entry.inPlaceSteps
       << " in place, inputs ";
    printTensorList(entry.inputs, os);
    os << " outputs ";
    printTensorList(entry.outputs, os);
    os << " named ";
    printNameList(entry.inputNames, os);
    os << " ";
    printNameList(entry.outputNames, os);
    os << "\n";
    for (auto [index, step] : llvm::enumerate(entry.steps))
      printStep(program, static_cast<int>(index), step, os);
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
  static llvm::cl::opt<bool> fuseKernelEpilogues(
      "fuse-kernel-epilogues",
      llvm::cl::desc("Let convolutions and matrix products apply the bias, "
                     "residual add and activation that follow them, as "
                     "compiled programs do"),
      llvm::cl::init(false));
  static llvm::cl::opt<int64_t> convBlock(
      "conv-block",
      llvm::cl::desc("Keep the activations between convolutions in nChw<N>c "
                     "(8 or 16), as CPU programs do; 0 keeps NCHW"),
      llvm::cl::init(0));
  static llvm::cl::opt<int64_t> stashSlots(
      "stash-slots",
      llvm::cl::desc("Microbatches in flight: the slots of each stash region"),
      llvm::cl::init(1));
  TranslateFromMLIRRegistration print(
      "print-device-program",
      "Lower to a device program and print its memory plan and steps",
      [](ModuleOp module, raw_ostream &os) -> LogicalResult {
        FailureOr<func::FuncOp> func = getProgramFunction(module, functionName);
        if (failed(func))
          return failure();
        if (stashSlots < 1)
          return module.emitError("--stash-slots must be at least 1"),
                 failure();
        if (convBlock != 0 && convBlock != 8 && convBlock != 16)
          return module.emitError("--conv-block must be 0, 8 or 16"), failure();
        DeviceProgramOptions options;
        options.stashSlots = stashSlots;
        options.fuseKernelEpilogues = fuseKernelEpilogues;
        options.convBlock = convBlock;
        FailureOr<DeviceProgram> program = buildDeviceProgram(*func, options);
        if (failed(program))
          return failure();
        printDeviceProgram(*program, os);
        return success();
      },
      registerDeviceProgramDialects);
  TranslateRegistration parse(
      "parse-device-program",
      "Read a device program's text form, verify it and print it again",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr, raw_ostream &os,
         MLIRContext *context) -> LogicalResult {
        FailureOr<DeviceProgram> program =
            parseDeviceProgram(*sourceMgr, context);
        if (failed(program))
          return failure();
        printDeviceProgram(*program, os);
        return success();
      });
}
