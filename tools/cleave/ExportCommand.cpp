//===- ExportCommand.cpp - the `cleave export` subcommand -----------------===//

#include "ExportCommand.h"

#include "cleave/Import/ONNX/TrainedModel.h"
#include "cleave/rt/Checkpoint.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

using namespace cleave;

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "cleave export") << message << "\n";
  return 1;
}

int cleave::runExportCommand(ExportCommand &command) {
  rt::CheckpointInfo info;
  std::map<std::string, rt::Tensor> parameters;
  std::string error;
  if (!rt::readCheckpointParameters(command.checkpoint, info, parameters,
                                    error))
    return fail(error);

  // The manifest of a bundle names its model by file name only; the model
  // is looked for beside the bundle, where `cleave compile` users keep it.
  std::string modelPath = command.model;
  if (modelPath.empty()) {
    llvm::SmallString<256> beside = llvm::sys::path::parent_path(info.bundle);
    llvm::sys::path::append(beside, info.model);
    if (info.model.empty() || !llvm::sys::fs::is_regular_file(beside))
      return fail(command.checkpoint + ": its bundle " + info.bundle +
                  " was compiled from '" + info.model + "', which is not at " +
                  beside + "; name the model with --model ORIGINAL.onnx");
    modelPath = beside.str().str();
  }

  std::map<std::string, InitializerValue> values;
  for (const auto &[name, tensor] : parameters) {
    InitializerValue value;
    value.dtype = rt::dtypeName(tensor.dtype());
    value.shape = tensor.shape();
    value.bytes.assign(static_cast<const char *>(tensor.data()),
                       tensor.byteSize());
    values.emplace(name, std::move(value));
  }
  TrainedModelOptions options;
  options.externalThreshold = command.externalThreshold;
  if (llvm::Error error = writeModelWithInitializers(modelPath, command.output,
                                                     values, options))
    return fail(llvm::toString(std::move(error)));
  llvm::outs() << "wrote " << command.output << ": " << modelPath << " with "
               << values.size() << " trained parameters of step "
               << info.position.step << "\n";
  return 0;
}
