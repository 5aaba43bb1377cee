//===- CommonOptions.cpp - options every pipeline subcommand takes --------===//

#include "CommonOptions.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/WithColor.h"

#include <chrono>

using namespace cleave;
namespace cl = llvm::cl;

CommonOptions::CommonOptions(cl::SubCommand &command)
    : quiet("quiet",
            cl::desc("Print nothing but errors (no summary, no progress)"),
            cl::sub(command)),
      verbose("verbose",
              cl::desc("Report each step and pass with its size and time"),
              cl::sub(command)),
      dumpIR("dump-ir",
             cl::desc("Write the IR after each pipeline step into this "
                      "directory (NN-STEP.mlir)"),
             cl::value_desc("dir"), cl::sub(command)) {}

std::unique_ptr<PipelineObserver>
PipelineObserver::create(const CommonOptions &options, llvm::StringRef tool) {
  auto fail = [&](const llvm::Twine &message) {
    llvm::WithColor::error(llvm::errs(), tool) << message << "\n";
    return nullptr;
  };
  if (options.quiet && options.verbose)
    return fail("--quiet and --verbose contradict each other; give one");
  Verbosity verbosity = options.quiet     ? Verbosity::Quiet
                        : options.verbose ? Verbosity::Verbose
                                          : Verbosity::Normal;
  std::unique_ptr<PipelineObserver> observer(new PipelineObserver(verbosity));
  if (options.dumpIR.getNumOccurrences()) {
    llvm::Expected<std::unique_ptr<IRDumpDirectory>> dumps =
        IRDumpDirectory::create(options.dumpIR);
    if (!dumps)
      return fail(llvm::toString(dumps.takeError()));
    observer->dumps = std::move(*dumps);
  }
  return observer;
}

mlir::LogicalResult PipelineObserver::dump(mlir::Operation *op,
                                           llvm::StringRef step) {
  if (!dumps)
    return mlir::success();
  return dumps->dump(op, step);
}

namespace {
/// Reports each pass and its wall time under --verbose.
class PassTimeReporter : public mlir::PassInstrumentation {
public:
  explicit PassTimeReporter(ProgressReporter &progress) : progress(progress) {}

  void runBeforePass(mlir::Pass *pass, mlir::Operation *) override {
    starts.push_back(std::chrono::steady_clock::now());
  }
  void runAfterPass(mlir::Pass *pass, mlir::Operation *) override {
    report(pass, "");
  }
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *) override {
    report(pass, " (failed)");
  }

private:
  void report(mlir::Pass *pass, llvm::StringRef suffix) {
    if (starts.empty())
      return;
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - starts.back())
                         .count();
    starts.pop_back();
    // Nested pipelines run inside an adaptor pass; its own line would only
    // repeat the sum of theirs.
    if (pass->getName().contains("OpToOpPassAdaptor"))
      return;
    llvm::StringRef name =
        pass->getArgument().empty() ? pass->getName() : pass->getArgument();
    progress.remark(
        llvm::formatv("pass {0}: {1:f3} s{2}", name, seconds, suffix));
  }

  ProgressReporter &progress;
  std::vector<std::chrono::steady_clock::time_point> starts;
};
} // namespace

void PipelineObserver::observe(mlir::PassManager &passManager) {
  if (dumps)
    dumps->attach(passManager);
  if (progress.isVerbose()) {
    // Times are per pass run; keep them in order.
    passManager.getContext()->disableMultithreading();
    passManager.addInstrumentation(
        std::make_unique<PassTimeReporter>(progress));
  }
}
