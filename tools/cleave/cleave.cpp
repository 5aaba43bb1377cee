//===- cleave.cpp - the cleave command-line tool ----------------*- C++ -*-===//
//
// `cleave SUBCOMMAND ...`: the user-facing driver. Every subcommand calls the
// same library entry points (importer, registered pipelines) that
// cleave-translate, cleave-opt and the Python package use.
//
//===----------------------------------------------------------------------===//

#include "CalibrateCommand.h"
#include "CommonOptions.h"
#include "CompileCommand.h"
#include "ExportCommand.h"
#include "PlanCommand.h"

#include "cleave/Analysis/ModelSummary.h"
#include "cleave/Dialect/Cleave/Transforms/Pipelines.h"
#include "cleave/Import/ONNX/ONNXImporter.h"
#include "cleave/InitAll.h"
#include "cleave/rt/RunCommand.h"
#include "cleave/rt/TrainCommand.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

/// The `import` subcommand: ONNX model → cleave IR, with a summary.
struct ImportCommand {
  cl::SubCommand command{"import",
                         "Import an ONNX model and summarise its cleave IR"};
  cl::opt<std::string> model{cl::Positional, cl::Required,
                             cl::desc("<model.onnx>"), cl::sub(command)};
  cl::list<std::string> inputShapes{
      "input-shape",
      cl::desc("Bind the shape of graph input NAME, e.g. input_ids=1x128 "
               "(repeatable; a scalar is NAME=)"),
      cl::value_desc("NAME=DIMS"), cl::sub(command)};
  cl::opt<std::string> output{
      "o", cl::desc("Write the imported IR to this file ('-' for stdout)"),
      cl::value_desc("file"), cl::sub(command)};
  cl::opt<bool> noSimplify{
      "no-simplify",
      cl::desc("Keep the IR as imported (skip the cleave-simplify pipeline)"),
      cl::sub(command)};
  /// --quiet (no summary either), --verbose, --dump-ir.
  cleave::CommonOptions common{command};
};

/// The `ops` subcommand: the ONNX operators the importer supports.
struct OpsCommand {
  cl::SubCommand command{"ops", "List the supported ONNX operators and opsets"};
};

} // namespace

static void printError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "cleave") << message << "\n";
}

static int runImport(ImportCommand &cmd) {
  MLIRContext context;
  DialectRegistry registry;
  cleave::registerAllDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  cleave::ONNXImportOptions options;
  for (const std::string &text : cmd.inputShapes) {
    std::string error;
    if (!cleave::parseInputShapeOption(text, options, error)) {
      printError("--input-shape '" + text + "': " + error);
      return 1;
    }
  }
  auto observer = cleave::PipelineObserver::create(cmd.common, "cleave");
  if (!observer)
    return 1;
  options.progress = &observer->getProgress();

  OwningOpRef<ModuleOp> module =
      cleave::importONNXModel(cmd.model, context, options);
  if (!module || failed(observer->dump(*module, "import")))
    return 1;

  if (!cmd.noSimplify) {
    PassManager pm(&context);
    observer->observe(pm);
    cleave::buildSimplifyPipeline(pm);
    if (failed(pm.run(*module)) || observer->hasFailed())
      return 1;
  }

  if (!cmd.output.empty()) {
    std::string error;
    auto file = openOutputFile(cmd.output, &error);
    if (!file) {
      printError("-o '" + cmd.output + "': " + error);
      return 1;
    }
    module->print(file->os());
    file->os() << "\n";
    file->keep();
  }

  if (observer->isQuiet())
    return 0;
  FailureOr<cleave::ModelSummary> summary =
      cleave::summarizeModel(*module, options.functionName);
  if (failed(summary))
    return 1;
  llvm::outs() << "model: " << cmd.model << "\n";
  cleave::printModelSummary(*summary, llvm::outs());
  return 0;
}

int main(int argc, char **argv) {
  // `cleave run` belongs to the runtime (the same code as cleave-worker), so
  // it parses its own options; so does `cleave train`.
  if (argc >= 2 && llvm::StringRef(argv[1]) == "run")
    return cleave::rt::runCommand(argc, argv);
  if (argc >= 2 && llvm::StringRef(argv[1]) == "train")
    return cleave::rt::trainCommand(argc, argv);
  llvm::InitLLVM init(argc, argv);
  ImportCommand importCmd;
  OpsCommand opsCmd;
  cleave::PlanCommand planCmd;
  cleave::CompileCommand compileCmd;
  cleave::ExportCommand exportCmd;
  cleave::CalibrateCommand calibrateCmd;
  cl::ParseCommandLineOptions(
      argc, argv,
      "cleave: ahead-of-time model partitioning compiler\n\n"
      "  cleave import MODEL.onnx [--input-shape NAME=DIMS]... [-o FILE]\n"
      "  cleave plan MODEL.onnx --target T [--devices N] "
      "[--format text|json|html]\n"
      "  cleave compile MODEL.onnx -o BUNDLE [--target cpu|h100-sxm|...]\n"
      "  cleave run BUNDLE --input NAME=FILE... --output-dir DIR\n"
      "  cleave train BUNDLE --data DIR --steps N [--checkpoint-dir DIR]\n"
      "  cleave export CHECKPOINT -o TRAINED.onnx [--model MODEL.onnx]\n"
      "  cleave calibrate --target cpu -o MY-CPU.json [--threads N] "
      "[--march L] [--quick]\n"
      "  cleave ops\n");

  if (importCmd.command)
    return runImport(importCmd);
  if (planCmd.command)
    return cleave::runPlanCommand(planCmd);
  if (compileCmd.command)
    return cleave::runCompileCommand(compileCmd);
  if (exportCmd.command)
    return cleave::runExportCommand(exportCmd);
  if (calibrateCmd.command)
    return cleave::runCalibrateCommand(calibrateCmd);
  if (opsCmd.command) {
    cleave::printSupportedONNXOps(llvm::outs());
    return 0;
  }
  printError("no subcommand given; run 'cleave --help'");
  return 1;
}
