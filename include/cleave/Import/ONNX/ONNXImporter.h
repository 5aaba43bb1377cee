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

#include <cstdint>
#include <string>
#include <utility>

namespace cleave {

/// Options of one import.
struct ONNXImportOptions {
  /// Static shapes for graph inputs, by input name. They replace the model's
  /// dynamic (and any declared) dimensions of those inputs.
  llvm::SmallVector<std::pair<std::string, llvm::SmallVector<int64_t>>>
      inputShapes;
  /// Initializers with at most this many elements become `cleave.constant`
  /// (their values are needed to fold shape computations); larger ones are
  /// `cleave.weight` references.
  int64_t maxInlineElements = 64;
  /// Name of the function that holds the imported graph.
  std::string functionName = "main";
};

/// Parses `--input-shape` text `NAME=2x32` (a scalar is `NAME=`) into `opts`.
/// Returns false and sets `error` when the text is malformed.
bool parseInputShapeOption(llvm::StringRef text, ONNXImportOptions &opts,
                           std::string &error);

/// Imports the ONNX model at `path` into a new module. Diagnostics (with the
/// file or ONNX node as location) go to the context's diagnostic engine; on
/// any error the result is null.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXModel(llvm::StringRef path, mlir::MLIRContext &context,
                const ONNXImportOptions &opts);

/// Registers `--import-onnx` with mlir-translate's registry.
void registerONNXImportTranslation();

} // namespace cleave

#endif // CLEAVE_IMPORT_ONNX_ONNXIMPORTER_H
