//===- PrintDeviceProgram.cpp - the text form of a device program -*- C++
//-*-===//
//
// `cleave-translate --print-device-program`: the memory plan and the steps of
// a lowered program, one line each, for people and for lit tests.
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

void cleave::printDeviceProgram(const DeviceProgram &program, raw_ostream &os) {
  os << "program: " << program.steps.size() << " steps, arena "
     << program.arenaBytes << " bytes (unplanned "
     << program.unplannedArenaBytes << "), weights " << program.weightBytes
     << " bytes, " << program.inPlaceSteps << " in place\n";
  for (auto [index, tensor] : llvm::enumerate(program.tensors)) {
    os << "tensor t" << index << " " << getDTypeName(tensor.dtype) << "[";
    llvm::interleaveComma(tensor.shape, os);
    os << "] " << getSpaceName(tensor.space) << " " << tensor.offset << "\n";
  }
  for (auto [index, step] : llvm::enumerate(program.steps)) {
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
      os << ") -> (";
      llvm::interleaveComma(call.outputs, os, [&](int t) { os << "t" << t; });
      os << ")";
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
  TranslateFromMLIRRegistration registration(
      "print-device-program",
      "Lower to a device program and print its memory plan and steps",
      [](ModuleOp module, raw_ostream &os) -> LogicalResult {
        FailureOr<func::FuncOp> func = getProgramFunction(module, functionName);
        if (failed(func))
          return failure();
        FailureOr<DeviceProgram> program = buildDeviceProgram(*func);
        if (failed(program))
          return failure();
        printDeviceProgram(*program, os);
        return success();
      },
      registerDeviceProgramDialects);
}
