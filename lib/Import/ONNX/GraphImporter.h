//===- GraphImporter.h - one ONNX model to one cleave module ----*- C++ -*-===//
//
// The importer walks the main graph of a parsed ModelProto in order: graph
// inputs become function arguments, initializers become `cleave.weight` (or
// small `cleave.constant`) ops, each node goes through its handler, and the
// graph outputs are returned.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_IMPORT_ONNX_GRAPHIMPORTER_H
#define CLEAVE_LIB_IMPORT_ONNX_GRAPHIMPORTER_H

#include "OpHandlers.h"
#include "WireFormat.h"

#include "cleave/Import/ONNX/ONNXImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <string>

namespace cleave {
class WeightOp;
} // namespace cleave

namespace cleave::onnx_import {

/// The cleave element type of ONNX `TensorProto.DataType` `dataType`, or null
/// when cleave does not represent it.
mlir::Type convertElementType(mlir::MLIRContext *context, int32_t dataType);

/// ONNX's name of `dataType` ("FLOAT", "STRING", ...).
std::string getDataTypeName(int32_t dataType);

/// Renders a shape as `2x3x?` (`?` is a dynamic dimension, a scalar is `[]`).
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Renders integers as `[1, -1, 4]`.
std::string formatList(llvm::ArrayRef<int64_t> values);

/// Imports one model: owns the builder, the value map and the handler table,
/// and gives handlers (through NodeBinder) the values and tensors they need.
class GraphImporter {
public:
  /// `modelPath` is the absolute path of the file `layout` was scanned from;
  /// `displayPath` is how diagnostics name it.
  GraphImporter(mlir::MLIRContext &context, const ONNXImportOptions &options,
                llvm::StringRef modelPath, llvm::StringRef displayPath,
                const onnx::ModelProto &model, const ModelLayout &layout);

  mlir::OwningOpRef<mlir::ModuleOp> import();

  //===--------------------------------------------------------------------===//
  // Services for node handlers (through NodeBinder)
  //===--------------------------------------------------------------------===//

  mlir::OpBuilder &getBuilder() { return builder; }
  int64_t getOpset() const { return opset; }

  /// The value named `name`, materialising an initializer on first use.
  /// Null (with no diagnostic) when no value has that name; failure when
  /// materialising it failed (with a diagnostic).
  mlir::FailureOr<mlir::Value> lookupValue(llvm::StringRef name);
  /// True when some value (possibly a pending initializer) is named `name`.
  bool isDefined(llvm::StringRef name) const { return values.contains(name); }
  /// Binds `name` to `value`, defined by `definer` ("node 'X'"). When the
  /// name is already bound, fails and sets `previous` to its definer.
  mlir::LogicalResult defineValue(llvm::StringRef name, mlir::Value value,
                                  llvm::StringRef definer,
                                  std::string &previous);
  /// True when a node input or graph output reads `name`.
  bool isConsumed(llvm::StringRef name) const {
    return consumed.contains(name);
  }
  /// The value of `weight` when it is small enough to be a constant (a
  /// float initializer imported as a weight for training that a node needs
  /// as a constant), read from its file; null when it is larger.
  mlir::FailureOr<mlir::DenseElementsAttr> readSmallWeight(WeightOp weight);
  /// Imports a tensor-valued attribute of node `nodeIndex`.
  mlir::FailureOr<mlir::Value>
  importAttributeTensor(const onnx::TensorProto &tensor, unsigned nodeIndex,
                        unsigned attributeIndex, llvm::StringRef valueName,
                        mlir::Location loc);

private:
  mlir::Location fileLoc();
  mlir::Location nodeLoc(llvm::StringRef nodeName);
  std::string nodeDisplayName(const onnx::NodeProto &node, unsigned index);

  mlir::LogicalResult checkModel();
  mlir::LogicalResult checkSupportedOps();
  mlir::LogicalResult collectInitializers();
  mlir::LogicalResult
  resolveInputTypes(llvm::SmallVectorImpl<const onnx::ValueInfoProto *> &args,
                    llvm::SmallVectorImpl<mlir::Type> &types);
  mlir::LogicalResult importNodes();
  mlir::LogicalResult importOutputs(mlir::func::FuncOp func);
  void setModuleAttributes(mlir::ModuleOp module);
  /// Erases the ops of `block` whose results are unused and that have no
  /// side effects.
  void eraseDeadOps(mlir::Block &block);

  /// Imports `tensor` as a constant or weight named `valueName`; `payloads`
  /// says where its bytes lie in the model file (null when unknown) and
  /// `kind` names it in diagnostics ("initializer", "constant").
  mlir::FailureOr<mlir::Value> importTensor(const onnx::TensorProto &tensor,
                                            const TensorPayloads *payloads,
                                            llvm::StringRef valueName,
                                            llvm::StringRef kind,
                                            mlir::Location loc);
  mlir::FailureOr<mlir::Value>
  importExternalTensor(const onnx::TensorProto &tensor,
                       mlir::RankedTensorType type, uint64_t byteSize,
                       llvm::StringRef valueName, llvm::StringRef kind,
                       mlir::Location loc);
  /// Whether a tensor of `type` imported as `kind` ("initializer",
  /// "constant") becomes a constant rather than a weight.
  bool isInlined(mlir::RankedTensorType type, llvm::StringRef kind) const;
  mlir::Value createWeight(mlir::RankedTensorType type,
                           llvm::StringRef valueName, llvm::StringRef file,
                           uint64_t offset, uint64_t length,
                           mlir::Location loc);
  /// Fails, with a diagnostic from `fail`, when `path` (an external-data
  /// file named `location`) resolves outside the model's directory.
  mlir::LogicalResult checkInsideModelDirectory(
      llvm::StringRef path, llvm::StringRef location,
      llvm::function_ref<mlir::InFlightDiagnostic()> fail);
  /// The size of `path` (cached), or failure with a diagnostic.
  mlir::FailureOr<uint64_t> getFileSize(llvm::StringRef path,
                                        llvm::StringRef tensorName,
                                        mlir::Location loc);

  mlir::MLIRContext &context;
  const ONNXImportOptions &options;
  std::string modelPath;
  std::string displayPath;
  const onnx::ModelProto &model;
  const ModelLayout &layout;
  mlir::OpBuilder builder;
  OpHandlerTable handlers;
  int64_t opset = 0;

  /// A value name: bound to an IR value, or an initializer not yet
  /// materialised.
  struct ValueEntry {
    mlir::Value value;
    int initializer = -1;
    std::string definer;
  };
  llvm::StringMap<ValueEntry> values;
  llvm::StringSet<> consumed;
  llvm::StringMap<uint64_t> fileSizes;
  /// Weights referenced so far, and their bytes (for --verbose).
  int64_t numWeights = 0;
  uint64_t weightBytes = 0;
};

} // namespace cleave::onnx_import

#endif // CLEAVE_LIB_IMPORT_ONNX_GRAPHIMPORTER_H
