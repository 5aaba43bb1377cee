//===- ModelSummary.cpp - what an imported model holds ----------*- C++ -*-===//

#include "cleave/Analysis/ModelSummary.h"
#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace mlir;
using namespace cleave;

static std::string portName(StringAttr name, unsigned index) {
  if (name)
    return name.str();
  return "#" + std::to_string(index);
}

FailureOr<ModelSummary> cleave::summarizeModel(ModuleOp module,
                                               StringRef functionName) {
  auto func = module.lookupSymbol<func::FuncOp>(functionName);
  if (!func)
    return module.emitError() << "no function '" << functionName << "'";

  ModelSummary summary;
  summary.functionName = functionName.str();
  FunctionType type = func.getFunctionType();
  for (auto [i, input] : llvm::enumerate(type.getInputs()))
    summary.inputs.push_back({portName(getArgName(func, i), i), input});
  for (auto [i, output] : llvm::enumerate(type.getResults()))
    summary.outputs.push_back({portName(getResultName(func, i), i), output});

  func.walk([&](Operation *op) {
    if (op == func.getOperation() || isa<func::ReturnOp>(op))
      return;
    ++summary.numOps;
    ++summary.opCounts[op->getName().getStringRef()];
    if (auto weight = dyn_cast<WeightOp>(op)) {
      ++summary.numWeights;
      summary.numParameters += weight.getType().getNumElements();
      summary.weightBytes += weight.getLength();
      summary.weightFiles[weight.getFile()] += weight.getLength();
    } else if (isa<ConstantOp>(op)) {
      ++summary.numConstants;
    }
  });
  return summary;
}

/// Formats a count of bytes with a binary unit.
static std::string formatBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  unsigned unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (unit == 0)
    os << bytes << " B";
  else
    os << llvm::format("%.2f ", value) << units[unit];
  return text;
}

static std::string formatCount(int64_t count) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (count >= 1000000000)
    os << llvm::format("%.2fB", count / 1e9);
  else if (count >= 1000000)
    os << llvm::format("%.2fM", count / 1e6);
  else if (count >= 1000)
    os << llvm::format("%.1fK", count / 1e3);
  else
    os << count;
  return text;
}

static void printPorts(StringRef title, ArrayRef<ModelPort> ports,
                       llvm::raw_ostream &os) {
  size_t width = 0;
  for (const ModelPort &port : ports)
    width = std::max(width, port.name.size());
  os << title << ":\n";
  for (const ModelPort &port : ports) {
    os << "  " << port.name;
    os.indent(width - port.name.size() + 2);
    os << port.type << "\n";
  }
}

void cleave::printModelSummary(const ModelSummary &summary,
                               llvm::raw_ostream &os) {
  printPorts("inputs", summary.inputs, os);
  printPorts("outputs", summary.outputs, os);

  os << "operations: " << summary.numOps << "\n";
  SmallVector<std::pair<StringRef, int64_t>> counts(summary.opCounts.begin(),
                                                    summary.opCounts.end());
  llvm::stable_sort(
      counts, [](const auto &a, const auto &b) { return a.second > b.second; });
  size_t width = 0;
  for (const auto &[name, count] : counts)
    width = std::max(width, name.size());
  for (const auto &[name, count] : counts) {
    os << "  " << name;
    os.indent(width - name.size() + 2);
    os << llvm::format_decimal(count, 6) << "\n";
  }

  os << "weights: " << summary.numWeights << " tensors, "
     << formatCount(summary.numParameters) << " parameters, "
     << formatBytes(summary.weightBytes) << " on disk (not loaded)\n";
  for (const auto &[file, bytes] : summary.weightFiles)
    os << "  " << file << "  " << formatBytes(bytes) << "\n";
  os << "constants: " << summary.numConstants << "\n";
}
