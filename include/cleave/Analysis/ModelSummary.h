//===- ModelSummary.h - what an imported model holds ------------*- C++ -*-===//
//
// A short account of an imported model for people at a terminal: its
// interface, its operations by kind and the weights it references.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_ANALYSIS_MODELSUMMARY_H
#define CLEAVE_ANALYSIS_MODELSUMMARY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace cleave {

/// One graph input or output.
struct ModelPort {
  std::string name;
  mlir::Type type;
};

struct ModelSummary {
  std::string functionName;
  llvm::SmallVector<ModelPort> inputs;
  llvm::SmallVector<ModelPort> outputs;
  /// Operation counts keyed by op name, in order of first appearance.
  llvm::MapVector<llvm::StringRef, int64_t> opCounts;
  int64_t numOps = 0;
  int64_t numWeights = 0;
  int64_t numParameters = 0;
  int64_t weightBytes = 0;
  /// Files that hold weight bytes, with the bytes referenced in each.
  llvm::MapVector<llvm::StringRef, int64_t> weightFiles;
  int64_t numConstants = 0;
};

/// Summarises the function `functionName` of `module`. Fails (with a
/// diagnostic on the module) when there is no such function.
llvm::FailureOr<ModelSummary> summarizeModel(mlir::ModuleOp module,
                                             llvm::StringRef functionName);

/// Prints `summary` as aligned text.
void printModelSummary(const ModelSummary &summary, llvm::raw_ostream &os);

} // namespace cleave

#endif // CLEAVE_ANALYSIS_MODELSUMMARY_H
