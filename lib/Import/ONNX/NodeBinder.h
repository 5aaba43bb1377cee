//===- NodeBinder.h - what an op handler sees of its node -------*- C++ -*-===//
//
// The binder reads one ONNX node's inputs and attributes (with defaults),
// builds the cleave ops that replace it and binds the node's outputs. Every
// failure is a diagnostic that names the node, so handlers only propagate
// `failure()`.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_IMPORT_ONNX_NODEBINDER_H
#define CLEAVE_LIB_IMPORT_ONNX_NODEBINDER_H

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallBitVector.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <set>
#include <string>

namespace cleave::onnx_import {

class GraphImporter;

/// The view of one node that its handler works through. Readers fail with a
/// diagnostic at the node; builders infer, verify and fold the new ops.
class NodeBinder {
public:
  NodeBinder(GraphImporter &importer, const onnx::NodeProto &node,
             unsigned nodeIndex, mlir::Location loc, llvm::StringRef name);

  //===--------------------------------------------------------------------===//
  // The node
  //===--------------------------------------------------------------------===//

  llvm::StringRef getOpType() const { return node.op_type(); }
  /// The model's default-domain opset.
  int64_t getOpset() const;
  mlir::Location getLoc() const { return loc; }
  mlir::OpBuilder &getBuilder();
  mlir::MLIRContext *getContext() { return loc.getContext(); }

  /// An error at the node, prefixed with "node 'NAME' (OpType): ".
  mlir::InFlightDiagnostic emitError();

  /// Fails, naming the attribute, when the node gives one attribute twice.
  mlir::LogicalResult checkUniqueAttributes();
  /// After the handler: fails, naming them, when the node has attributes
  /// or inputs the handler never looked at. An unknown attribute (a
  /// misspelt `stride`) must not silently leave the default in place.
  mlir::LogicalResult checkEverythingRead();

  //===--------------------------------------------------------------------===//
  // Inputs
  //===--------------------------------------------------------------------===//

  /// Reading the count takes every input as read (variadic operators).
  unsigned getNumInputs() const {
    inputsRead = node.input_size();
    return node.input_size();
  }
  /// True when input `index` is given (ONNX marks an omitted optional input
  /// with an empty name or by leaving it off the end).
  bool hasInput(unsigned index) const;

  /// A required input.
  mlir::LogicalResult input(unsigned index, mlir::Value &value);
  /// An optional input; `value` is null when it is omitted.
  mlir::LogicalResult optionalInput(unsigned index, mlir::Value &value);
  /// Every input, none of them omitted (variadic operators).
  mlir::LogicalResult allInputs(llvm::SmallVectorImpl<mlir::Value> &values);

  /// Input `index` as a constant; configuration inputs (shapes, axes, pads,
  /// ...) must fold to one. `role` names the input in diagnostics.
  mlir::LogicalResult constantInput(unsigned index, llvm::StringRef role,
                                    mlir::DenseElementsAttr &value);
  /// A constant integer input as int64 values.
  mlir::LogicalResult constantInts(unsigned index, llvm::StringRef role,
                                   llvm::SmallVectorImpl<int64_t> &values);
  /// A constant numeric input (float or integer) as doubles.
  mlir::LogicalResult constantDoubles(unsigned index, llvm::StringRef role,
                                      llvm::SmallVectorImpl<double> &values);

  //===--------------------------------------------------------------------===//
  // Attributes. Each reader fails (with a diagnostic) when the attribute is
  // present with another type, and otherwise yields the default.
  //===--------------------------------------------------------------------===//

  const onnx::AttributeProto *findAttr(llvm::StringRef name) const;
  bool hasAttr(llvm::StringRef name) const { return findAttr(name); }
  /// Accepts an attribute that does not change what cleave computes (a
  /// random seed in inference), so that checkEverythingRead passes it.
  void ignoreAttr(llvm::StringRef name) const { (void)findAttr(name); }

  mlir::LogicalResult intAttr(llvm::StringRef name, int64_t &value,
                              int64_t defaultValue);
  mlir::LogicalResult requiredIntAttr(llvm::StringRef name, int64_t &value);
  mlir::LogicalResult floatAttr(llvm::StringRef name, float &value,
                                float defaultValue);
  mlir::LogicalResult optionalFloatAttr(llvm::StringRef name,
                                        std::optional<float> &value);
  mlir::LogicalResult stringAttr(llvm::StringRef name, std::string &value,
                                 llvm::StringRef defaultValue);
  /// An `ints` attribute; empty when absent.
  mlir::LogicalResult intsAttr(llvm::StringRef name,
                               llvm::SmallVectorImpl<int64_t> &values);
  mlir::LogicalResult floatsAttr(llvm::StringRef name,
                                 llvm::SmallVectorImpl<float> &values);
  mlir::LogicalResult stringsAttr(llvm::StringRef name,
                                  llvm::SmallVectorImpl<std::string> &values);
  /// A `tensor` attribute imported as a constant (or a weight when large).
  mlir::LogicalResult tensorAttr(llvm::StringRef name, mlir::Value &value);

  //===--------------------------------------------------------------------===//
  // Outputs
  //===--------------------------------------------------------------------===//

  unsigned getNumOutputs() const { return node.output_size(); }
  /// True when output `index` is named and some node or graph output reads
  /// it.
  bool isOutputUsed(unsigned index) const;
  /// The name of output `index` ("" when omitted).
  llvm::StringRef getOutputName(unsigned index) const;
  /// Fails when an output at or after `first` is used; `what` says what
  /// cleave does not represent.
  mlir::LogicalResult rejectUsedOutputs(unsigned first, llvm::StringRef what);
  /// Binds the node's outputs to `values` (omitted outputs are skipped).
  mlir::LogicalResult bindOutputs(mlir::ValueRange values);

  //===--------------------------------------------------------------------===//
  // Building cleave ops
  //===--------------------------------------------------------------------===//

  /// Builds `OpTy`. Without `resultTypes` the op infers them; inference
  /// failures become diagnostics at the node instead of aborting. The new op
  /// is verified and folded, so the values may be constants.
  template <typename OpTy>
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  createMulti(mlir::ValueRange operands,
              llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
              mlir::TypeRange resultTypes = {}) {
    mlir::OperationState state(loc, OpTy::getOperationName());
    state.addOperands(operands);
    state.addAttributes(attrs);
    if (!attrs.empty()) {
      mlir::OpaqueProperties properties =
          &state.getOrAddProperties<typename OpTy::Properties>();
      if (mlir::failed(setProperties(state, properties)))
        return mlir::failure();
    }
    if (!resultTypes.empty()) {
      state.addTypes(resultTypes);
    } else if constexpr (OpTy::template hasTrait<
                             mlir::InferTypeOpInterface::Trait>()) {
      llvm::SmallVector<mlir::Type> inferred;
      mlir::DictionaryAttr dict = state.attributes.getDictionary(getContext());
      if (mlir::failed(reportFailures([&] {
            return OpTy::inferReturnTypes(getContext(), loc, state.operands,
                                          dict, state.getRawProperties(),
                                          state.regions, inferred);
          })))
        return mlir::failure();
      state.addTypes(inferred);
    }
    return createVerifiedAndFolded(state);
  }

  /// Single-result form of createMulti.
  template <typename OpTy>
  mlir::FailureOr<mlir::Value>
  create(mlir::ValueRange operands,
         llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
         mlir::Type resultType = {}) {
    auto values = createMulti<OpTy>(operands, attrs,
                                    resultType ? mlir::TypeRange(resultType)
                                               : mlir::TypeRange());
    if (mlir::failed(values))
      return mlir::failure();
    return values->front();
  }

  /// Builds `OpTy` and binds its results to the node's outputs.
  template <typename OpTy>
  mlir::LogicalResult
  replaceWith(mlir::ValueRange operands,
              llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
              mlir::TypeRange resultTypes = {}) {
    auto values = createMulti<OpTy>(operands, attrs, resultTypes);
    if (mlir::failed(values))
      return mlir::failure();
    return bindOutputs(*values);
  }

  /// A `cleave.constant` holding `value`.
  mlir::Value constant(mlir::DenseElementsAttr value);
  /// A rank-0 constant of `elementType` (float or integer) holding `value`.
  mlir::Value scalarConstant(mlir::Type elementType, double value);
  /// A rank-0 constant of integer type `elementType` holding `value`.
  mlir::Value intScalarConstant(mlir::Type elementType, int64_t value);

  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute value) {
    return getBuilder().getNamedAttr(name, value);
  }

  //===--------------------------------------------------------------------===//
  // Shared checks
  //===--------------------------------------------------------------------===//

  /// Normalises `axis` (negative counts from the end) against `rank`.
  mlir::LogicalResult normalizeAxis(int64_t &axis, int64_t rank,
                                    llvm::StringRef what);
  /// Normalises, sorts and checks the uniqueness of `axes`.
  mlir::LogicalResult normalizeAxes(llvm::SmallVectorImpl<int64_t> &axes,
                                    int64_t rank, llvm::StringRef what);
  /// Fails unless dimension `dim` of `value` is static.
  mlir::LogicalResult requireStaticDim(mlir::Value value, int64_t dim,
                                       llvm::StringRef what);

  static mlir::RankedTensorType getType(mlir::Value value) {
    return llvm::cast<mlir::RankedTensorType>(value.getType());
  }

private:
  mlir::LogicalResult setProperties(mlir::OperationState &state,
                                    mlir::OpaqueProperties properties);
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  createVerifiedAndFolded(mlir::OperationState &state);
  /// Fails when a result of `op` has more bytes than cleave can address
  /// (checked before folding, which would build its value).
  mlir::LogicalResult checkResultSizes(mlir::Operation *op);
  /// Runs `fn`; the errors it emits are collected and, on failure, reported
  /// as one error at the node.
  mlir::LogicalResult
  reportFailures(llvm::function_ref<mlir::LogicalResult()> fn);
  const onnx::AttributeProto *
  findTypedAttr(llvm::StringRef name, onnx::AttributeProto_AttributeType type,
                mlir::LogicalResult &status);

  GraphImporter &importer;
  const onnx::NodeProto &node;
  unsigned nodeIndex;
  mlir::Location loc;
  std::string name;
  /// What the handler looked at: inputs [0, inputsRead), the attributes of
  /// the node it found, and every attribute name it asked for.
  mutable unsigned inputsRead = 0;
  mutable llvm::SmallBitVector attrsRead;
  mutable std::set<std::string> attrNamesAsked;
};

} // namespace cleave::onnx_import

#endif // CLEAVE_LIB_IMPORT_ONNX_NODEBINDER_H
