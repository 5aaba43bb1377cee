//===- TrainedModel.h - an ONNX model with trained weights -------*- C++
//-*-===//
//
// `cleave export`: the model a bundle was compiled from, written again with
// the values a training run reached in place of its initializers, so that
// any ONNX runtime runs the trained model.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_IMPORT_ONNX_TRAINEDMODEL_H
#define CLEAVE_IMPORT_ONNX_TRAINEDMODEL_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cleave {

/// The new value of an initializer: its element type (NumPy's name), shape
/// and little-endian, row-major bytes.
struct InitializerValue {
  std::string dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

struct TrainedModelOptions {
  /// Initializers of at least this many bytes are stored as external data,
  /// in one file beside the output named after it (`OUTPUT.data`); smaller
  /// ones inside the model.
  uint64_t externalThreshold = 1024;
};

/// Writes the ONNX model at `modelPath` to `outputPath` with the
/// initializers named in `values` replaced by them. Each must name an
/// initializer of the model's graph with the same element type and shape;
/// the error names the model and the initializer otherwise. Initializers
/// the source keeps as external data are copied into the output's data
/// file, so that the output does not depend on the source's files. Both
/// files are written under temporary names and renamed into place.
llvm::Error writeModelWithInitializers(
    llvm::StringRef modelPath, llvm::StringRef outputPath,
    const std::map<std::string, InitializerValue> &values,
    const TrainedModelOptions &options = {});

} // namespace cleave

#endif // CLEAVE_IMPORT_ONNX_TRAINEDMODEL_H
