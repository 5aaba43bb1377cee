//===- ExportCommand.h - the `cleave export` subcommand ----------*- C++
//-*-===//
//
// `cleave export CHECKPOINT -o trained.onnx [--model ORIGINAL.onnx]`: the
// model a training bundle was compiled from, with the parameters of a
// checkpoint (`cleave train`, `Trainer.save`) in place of its initializers.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TOOLS_CLEAVE_EXPORTCOMMAND_H
#define CLEAVE_TOOLS_CLEAVE_EXPORTCOMMAND_H

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace cleave {

/// The options of `cleave export`; constructing it registers them.
struct ExportCommand {
  llvm::cl::SubCommand command{
      "export", "Write the ONNX model with the trained parameters of a "
                "checkpoint"};
  llvm::cl::opt<std::string> checkpoint{
      llvm::cl::Positional, llvm::cl::Required,
      llvm::cl::desc("<checkpoint directory>"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> output{
      "o", llvm::cl::Required, llvm::cl::desc("The ONNX model to write"),
      llvm::cl::value_desc("file.onnx"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> model{
      "model",
      llvm::cl::desc("The ONNX model the bundle was compiled from (default: "
                     "the model the bundle names, beside the bundle)"),
      llvm::cl::value_desc("file.onnx"), llvm::cl::sub(command)};
  llvm::cl::opt<uint64_t> externalThreshold{
      "external-threshold",
      llvm::cl::desc("Store initializers of at least this many bytes in "
                     "OUTPUT.data beside the output (default 1024)"),
      llvm::cl::init(1024), llvm::cl::value_desc("bytes"),
      llvm::cl::sub(command)};
};

int runExportCommand(ExportCommand &command);

} // namespace cleave

#endif // CLEAVE_TOOLS_CLEAVE_EXPORTCOMMAND_H
