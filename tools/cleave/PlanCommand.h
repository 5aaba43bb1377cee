//===- PlanCommand.h - the `cleave plan` subcommand -------------*- C++ -*-===//
//
// `cleave plan MODEL.onnx --target T --devices N ...`: imports the model,
// simplifies it as `cleave import` does (`cleave-simplify`), splits its fused
// projections (`cleave-split-projections`), runs the auto-parallel planner
// and prints the plan as a table, as plan.json or as an HTML report,
// optionally with a Chrome trace of the predicted schedule.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TOOLS_CLEAVE_PLANCOMMAND_H
#define CLEAVE_TOOLS_CLEAVE_PLANCOMMAND_H

#include "CommonOptions.h"

#include "cleave/Plan/Plan.h"
#include "cleave/Support/OptionBinder.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace cleave {

/// The options of `cleave plan`; constructing it registers them.
struct PlanCommand {
  llvm::cl::SubCommand command{
      "plan", "Choose how to split a model over a cluster and predict how "
              "it runs"};
  llvm::cl::opt<std::string> model{llvm::cl::Positional, llvm::cl::Required,
                                   llvm::cl::desc("<model.onnx>"),
                                   llvm::cl::sub(command)};
  llvm::cl::opt<std::string> target{
      "target", llvm::cl::Required,
      llvm::cl::desc("Target preset (targets/NAME.json) or target file"),
      llvm::cl::value_desc("name|path"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> targetsDir{
      "targets-dir",
      llvm::cl::desc("Directory of the target presets (default: "
                     "share/cleave/targets next to bin/)"),
      llvm::cl::value_desc("dir"), llvm::cl::sub(command)};
  llvm::cl::opt<int64_t> devices{
      "devices", llvm::cl::desc("Devices to plan for (default: the target's)"),
      llvm::cl::value_desc("N"), llvm::cl::sub(command)};
  llvm::cl::opt<int64_t> devicesPerNode{
      "devices-per-node",
      llvm::cl::desc("Devices per node (default: the target's)"),
      llvm::cl::value_desc("K"), llvm::cl::sub(command)};
  /// --pp, --tp, --dp, --microbatches, --batch, --objective, ...
  /// (PlanOptions::bindOptions).
  BoundOptions<PlanOptions, CommandLineOptionGroup> plan{command};
  llvm::cl::opt<std::string> format{
      "format",
      llvm::cl::desc("Output format: text (default), json (plan.json) or "
                     "html (a self-contained report)"),
      llvm::cl::init("text"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> output{
      "o", llvm::cl::desc("Write the plan to this file (default: stdout)"),
      llvm::cl::value_desc("file"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> trace{
      "trace",
      llvm::cl::desc("Write a Chrome trace of the predicted schedule here"),
      llvm::cl::value_desc("file"), llvm::cl::sub(command)};
  llvm::cl::list<std::string> inputShapes{
      "input-shape",
      llvm::cl::desc("Bind the shape of graph input NAME, e.g. "
                     "input_ids=1x128 (repeatable)"),
      llvm::cl::value_desc("NAME=DIMS"), llvm::cl::sub(command)};
  /// --quiet, --verbose, --dump-ir.
  CommonOptions common{command};
};

/// Runs `cleave plan`; returns the process exit code.
int runPlanCommand(PlanCommand &command);

} // namespace cleave

#endif // CLEAVE_TOOLS_CLEAVE_PLANCOMMAND_H
