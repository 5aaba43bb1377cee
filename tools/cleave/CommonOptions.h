//===- CommonOptions.h - options every pipeline subcommand takes -*- C++
//-*-===//
//
// `--quiet`, `--verbose` and `--dump-ir DIR` mean the same on every
// subcommand that runs a pipeline (import, plan, ...). A subcommand declares
// a `CommonOptions` member on its `cl::SubCommand` and, when it runs, makes
// a `PipelineObserver` from it: the progress reporter to hand to library
// options, the IR dumps between steps, and per-pass times under --verbose.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TOOLS_CLEAVE_COMMONOPTIONS_H
#define CLEAVE_TOOLS_CLEAVE_COMMONOPTIONS_H

#include "cleave/Support/IRDump.h"
#include "cleave/Support/Progress.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"

#include <memory>
#include <string>

namespace cleave {

/// The options; constructing it registers them on `command`.
struct CommonOptions {
  explicit CommonOptions(llvm::cl::SubCommand &command);

  llvm::cl::opt<bool> quiet;
  llvm::cl::opt<bool> verbose;
  llvm::cl::opt<std::string> dumpIR;
};

/// What the common options set up for one run of a subcommand.
class PipelineObserver {
public:
  /// Checks the options and creates the dump directory; on a bad option
  /// prints an error that names it (prefixed by `tool`) and returns null.
  static std::unique_ptr<PipelineObserver> create(const CommonOptions &options,
                                                  llvm::StringRef tool);

  ProgressReporter &getProgress() { return progress; }
  bool isQuiet() const { return progress.getVerbosity() == Verbosity::Quiet; }

  /// Under --dump-ir, writes `op` as the IR after `step`.
  mlir::LogicalResult dump(mlir::Operation *op, llvm::StringRef step);

  /// Under --dump-ir, dumps after every pass of `passManager`; under
  /// --verbose, reports the time of each pass.
  void observe(mlir::PassManager &passManager);

  /// Whether a dump failed during a pass pipeline (the error is out).
  bool hasFailed() const { return dumps && dumps->hasFailed(); }

private:
  explicit PipelineObserver(Verbosity verbosity)
      : progress(ProgressReporter::forStandardError(verbosity)) {}

  ProgressReporter progress;
  std::unique_ptr<IRDumpDirectory> dumps;
};

} // namespace cleave

#endif // CLEAVE_TOOLS_CLEAVE_COMMONOPTIONS_H
