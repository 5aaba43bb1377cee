//===- ONNXImporter.h - ONNX model to cleave IR -----------------*- C++ -*-===//
//
// The public entry points of the ONNX importer. This header is free of
// protobuf and ONNX includes; only lib/Import/ONNX sees those.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_IMPORT_ONNX_ONNXIMPORTER_H
#define CLEAVE_IMPORT_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBufferRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <utility>

namespace cleave {

class ProgressReporter;

/// Options of one import.
struct ONNXImportOptions {
  /// Static shapes for graph inputs, by input name. They bind the model's
  /// dynamic dimensions of those inputs; a rank or a static dimension that
  /// disagrees with the model's declaration is an error.
  llvm::SmallVector<std::pair<std::string, llvm::SmallVector<int64_t>>>
      inputShapes;
  /// Initializers with at most this many elements become `cleave.constant`
  /// (their values are needed to fold shape computations); larger ones are
  /// `cleave.weight` references.
  int64_t maxInlineElements = 64;
  /// The float weights are the parameters training updates: float
  /// initializers become `cleave.weight` whatever their size (when their
  /// bytes lie in a file as they are), and float tensors of Constant nodes
  /// become constants whatever theirs. A node that needs a small float
  /// initializer as a constant (a Clip bound) reads its few bytes.
  bool floatInitializersAsWeights = false;
  /// Name of the function that holds the imported graph.
  std::string functionName = "main";
  /// Where to show the progress of long imports; null shows nothing.
  ProgressReporter *progress = nullptr;
};

/// Parses `--input-shape` text `NAME=2x32` (a scalar is `NAME=`) into `opts`.
/// Returns false and sets `error` when the text is malformed.
bool parseInputShapeOption(llvm::StringRef text, ONNXImportOptions &opts,
                           std::string &error);

/// Imports the ONNX model at `path` into a new module. Diagnostics (with the
/// file or ONNX node as location) go to the context's diagnostic engine; on
/// any error the result is null.
///
/// The module holds `func.func @<functionName>` whose arguments are the graph
/// inputs and whose results are the graph outputs (each with a `cleave.name`
/// attribute carrying its ONNX name); the module carries the producer, opset
/// and path of the model as `cleave.onnx_*` attributes. Initializers are
/// referenced by their byte range in the model file or its external-data
/// files; importing reads no weight bytes.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXModel(llvm::StringRef path, mlir::MLIRContext &context,
                const ONNXImportOptions &opts);

/// Imports a model whose file is already in memory. `buffer` must hold the
/// whole file named by its identifier: weights are referenced by their
/// offsets in that file.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXModel(llvm::MemoryBufferRef buffer, mlir::MLIRContext &context,
                const ONNXImportOptions &opts);

/// Writes the Markdown table of the supported ONNX operators: for each, the
/// opsets it is read at and the cleave ops it becomes (docs/onnx-operators.md
/// is this output).
void printSupportedONNXOps(llvm::raw_ostream &os);

/// Registers `--import-onnx` (with its `--input-shape` option) and
/// `--onnx-operator-table` with mlir-translate's registry.
void registerONNXImportTranslation();

} // namespace cleave

#endif // CLEAVE_IMPORT_ONNX_ONNXIMPORTER_H
