//===- ConstantEval.h - evaluate elementwise ops on constants ---*- C++ -*-===//
//
// Evaluates elementwise functions over dense constants with ONNX broadcasting,
// for the folders of the cleave ops. Private to the dialect library.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_DIALECT_CLEAVE_IR_CONSTANTEVAL_H
#define CLEAVE_LIB_DIALECT_CLEAVE_IR_CONSTANTEVAL_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace cleave {

/// The most elements a fold may materialise when its result is not a splat.
/// Folding trades compile-time memory for run-time work; shape computations
/// are tiny, so a bound this low loses nothing that matters and guarantees a
/// fold never copies a large tensor into the IR.
constexpr int64_t kMaxFoldedElements = 4096;

/// Whether integer elements of `type` are read as unsigned. `i1` is a boolean
/// and extends to 0 or 1.
inline bool isUnsignedElement(mlir::IntegerType type) {
  return type.isUnsigned() || type.getWidth() == 1;
}

/// Maps each element of a broadcast result, by row-major index, to the
/// row-major index of the operand element it reads.
class BroadcastIndexer {
public:
  /// `operandShape` must broadcast (unidirectionally) to `resultShape`.
  BroadcastIndexer(llvm::ArrayRef<int64_t> operandShape,
                   llvm::ArrayRef<int64_t> resultShape);

  /// Whether `operandShape` broadcasts unidirectionally to `resultShape`.
  static bool broadcastsTo(llvm::ArrayRef<int64_t> operandShape,
                           llvm::ArrayRef<int64_t> resultShape);

  int64_t operandIndex(int64_t resultIndex) const;

private:
  llvm::SmallVector<int64_t> resultShape;
  /// The operand's stride along each result dimension: 0 where it broadcasts.
  llvm::SmallVector<int64_t> operandStrides;
};

/// The elements of a dense constant as `T` (APInt or APFloat), read at the
/// positions of the broadcast result they contribute to.
template <typename T> class BroadcastElements {
public:
  BroadcastElements(mlir::DenseElementsAttr attr,
                    llvm::ArrayRef<int64_t> resultShape)
      : indexer(attr.getType().getShape(), resultShape) {
    if (attr.isSplat())
      splat = attr.getSplatValue<T>();
    else
      values = llvm::to_vector(attr.getValues<T>());
  }

  T operator[](int64_t resultIndex) const {
    return splat ? *splat : values[indexer.operandIndex(resultIndex)];
  }

private:
  BroadcastIndexer indexer;
  std::optional<T> splat;
  llvm::SmallVector<T> values;
};

/// Evaluates `fn` elementwise over `operands` broadcast to `resultType`. `fn`
/// takes an `ArrayRef<In>` holding one element per operand and returns the
/// `Out` result element, or nullopt to refuse the fold (an undefined result
/// such as integer division by zero). Returns null when an operand does not
/// broadcast to the result or the result is too large to fold.
template <typename In, typename Out, typename Fn>
mlir::DenseElementsAttr
evaluateElementwise(llvm::ArrayRef<mlir::DenseElementsAttr> operands,
                    mlir::ShapedType resultType, Fn &&fn) {
  if (!resultType.hasStaticShape())
    return {};
  for (mlir::DenseElementsAttr operand : operands)
    if (!BroadcastIndexer::broadcastsTo(operand.getType().getShape(),
                                        resultType.getShape()))
      return {};

  llvm::SmallVector<In> args;
  if (llvm::all_of(operands,
                   [](mlir::DenseElementsAttr a) { return a.isSplat(); })) {
    for (mlir::DenseElementsAttr operand : operands)
      args.push_back(operand.getSplatValue<In>());
    std::optional<Out> element = fn(llvm::ArrayRef<In>(args));
    if (!element)
      return {};
    return mlir::DenseElementsAttr::get(resultType, llvm::ArrayRef(*element));
  }

  int64_t numElements = resultType.getNumElements();
  if (numElements > kMaxFoldedElements)
    return {};
  llvm::SmallVector<BroadcastElements<In>> readers;
  for (mlir::DenseElementsAttr operand : operands)
    readers.emplace_back(operand, resultType.getShape());
  llvm::SmallVector<Out> results;
  results.reserve(numElements);
  for (int64_t i = 0; i < numElements; ++i) {
    args.clear();
    for (const BroadcastElements<In> &reader : readers)
      args.push_back(reader[i]);
    std::optional<Out> element = fn(llvm::ArrayRef<In>(args));
    if (!element)
      return {};
    results.push_back(std::move(*element));
  }
  return mlir::DenseElementsAttr::get(resultType, results);
}

} // namespace cleave

#endif // CLEAVE_LIB_DIALECT_CLEAVE_IR_CONSTANTEVAL_H
