//===- IRDump.h - the IR after each pipeline step, in files -----*- C++ -*-===//
//
// `--dump-ir DIR` keeps the IR between the steps of a command: the importer's
// output, the module after every pass, the planned module. Files are
// numbered in the order they were written and named after the step that
// produced them (`00-import.mlir`, `01-cleave-fold-shapes.mlir`, ...), so
// `ls DIR` reads as the pipeline and `diff` between neighbours shows what a
// pass did.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_SUPPORT_IRDUMP_H
#define CLEAVE_SUPPORT_IRDUMP_H

#include "mlir/IR/Operation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <string>

namespace cleave {

/// A directory that receives numbered IR files.
class IRDumpDirectory {
public:
  /// Creates `path` (with its parents) when it does not exist. The error
  /// names the directory and why it cannot be used.
  static llvm::Expected<std::unique_ptr<IRDumpDirectory>>
  create(llvm::StringRef path);

  /// Writes `op` as the next file, named after `step`. On failure, emits an
  /// error naming the file and returns failure.
  mlir::LogicalResult dump(mlir::Operation *op, llvm::StringRef step);

  /// Makes `passManager` dump its top-level operation after every pass (and
  /// after a pass that fails, as `NN-PASS-failed.mlir`). Disables
  /// multithreading on its context, so that files follow the pass order.
  /// The directory must outlive the pass manager.
  void attach(mlir::PassManager &passManager);

  /// Whether some dump could not be written (an error was emitted).
  bool hasFailed() const { return failed; }
  llvm::StringRef getPath() const { return path; }

private:
  explicit IRDumpDirectory(std::string path) : path(std::move(path)) {}

  std::string path;
  unsigned next = 0;
  bool failed = false;
  std::mutex mutex;
};

} // namespace cleave

#endif // CLEAVE_SUPPORT_IRDUMP_H
