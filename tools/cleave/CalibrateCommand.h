//===- CalibrateCommand.h - `cleave calibrate` -----------------*- C++ -*-===//
//
// `cleave calibrate --target cpu -o my-cpu.json [--threads N] [--march L]
// [--quick]`: times cleave's CPU kernels on this machine and writes the
// preset with its device figures replaced by what they reached, its `isa`
// by the level they ran at, plus a `calibration` object of throughput by
// kernel class and size (docs/targets.md), which the cost model then
// prices ops from.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TOOLS_CLEAVE_CALIBRATECOMMAND_H
#define CLEAVE_TOOLS_CLEAVE_CALIBRATECOMMAND_H

#include "llvm/Support/CommandLine.h"

#include <string>

namespace cleave {

/// The options of `cleave calibrate`; constructing it registers them.
struct CalibrateCommand {
  llvm::cl::SubCommand command{
      "calibrate", "Measure this machine's CPU kernels and write a target "
                   "file calibrated to them"};
  llvm::cl::opt<std::string> target{
      "target", llvm::cl::Required,
      llvm::cl::desc("The cpu target preset (targets/NAME.json) or target "
                     "file to start from"),
      llvm::cl::value_desc("name|path"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> targetsDir{
      "targets-dir",
      llvm::cl::desc("Directory of the target presets (default: "
                     "share/cleave/targets next to bin/)"),
      llvm::cl::value_desc("dir"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> output{
      "o", llvm::cl::Required, llvm::cl::desc("The target file to write"),
      llvm::cl::value_desc("file.json"), llvm::cl::sub(command)};
  llvm::cl::opt<int> threads{
      "threads",
      llvm::cl::desc("Kernel threads of the rank measured (default 0: all "
                     "cores, as `cleave run` gives one rank)"),
      llvm::cl::init(0), llvm::cl::value_desc("N"), llvm::cl::sub(command)};
  llvm::cl::opt<double> maxDrift{
      "max-drift",
      llvm::cl::desc("Fail, writing nothing, when the reference matrix "
                     "product's speed moved by more than this percentage "
                     "during the calibration (default: only warn above 10%)"),
      llvm::cl::init(-1), llvm::cl::value_desc("percent"),
      llvm::cl::sub(command)};
  llvm::cl::opt<std::string> march{
      "march",
      llvm::cl::desc("The instruction set to measure at and to build the "
                     "calibrated target's bundles for: x86-64, x86-64-v2, "
                     "x86-64-v3 or x86-64-v4 (default: this CPU's highest; "
                     "the target file's isa becomes it)"),
      llvm::cl::value_desc("level"), llvm::cl::sub(command)};
  llvm::cl::opt<bool> quick{
      "quick",
      llvm::cl::desc("Measure fewer, smaller problems for a few seconds "
                     "(for tests; the figures are rougher)"),
      llvm::cl::sub(command)};
};

int runCalibrateCommand(CalibrateCommand &command);

} // namespace cleave

#endif // CLEAVE_TOOLS_CLEAVE_CALIBRATECOMMAND_H
