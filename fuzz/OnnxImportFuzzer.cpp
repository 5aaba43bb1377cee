//===- OnnxImportFuzzer.cpp - bytes as an ONNX model file --------*- C++
//-*-===//
//
// The input is the model file `cleave import` opens: importONNXModel parses
// the protobuf, scans its wire format for the weights' offsets and imports
// the graph into the cleave dialect. The buffer is named as a file in a
// temporary directory that holds one external-data file, `weights.bin`
// (4 KiB), so that external-data references resolve there and nowhere else.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"

#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"
#include "cleave/Import/ONNX/ONNXImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

llvm::SmallString<128> directory;

void removeDirectory() { (void)llvm::sys::fs::remove_directories(directory); }

std::string makeModelPath() {
  if (llvm::sys::fs::createUniqueDirectory("cleave-fuzz-onnx", directory))
    std::abort();
  std::atexit(removeDirectory);
  llvm::SmallString<128> weights(directory);
  llvm::sys::path::append(weights, "weights.bin");
  std::error_code error;
  llvm::raw_fd_ostream os(weights, error);
  if (error)
    std::abort();
  for (int i = 0; i < 4096; ++i)
    os << static_cast<char>(i);
  llvm::SmallString<128> model(directory);
  llvm::sys::path::append(model, "model.onnx");
  return std::string(model);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string modelPath = makeModelPath();
  static cleave::fuzz::FuzzContext<cleave::CleaveDialect, func::FuncDialect>
      contexts;

  MLIRContext &context = contexts.next();
  llvm::MemoryBufferRef buffer(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), modelPath);
  cleave::ONNXImportOptions options;
  OwningOpRef<ModuleOp> module =
      cleave::importONNXModel(buffer, context, options);
  // What the importer returns must be valid IR; a refused model is null.
  if (module && failed(verify(*module)))
    std::abort();
  return 0;
}
