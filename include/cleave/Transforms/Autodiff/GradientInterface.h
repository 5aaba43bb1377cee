//===- GradientInterface.h - vector-Jacobian products -----------*- C++ -*-===//
//
// Declares `cleave::GradientInterface` (generated from GradientInterface.td),
// what its rules read and write (`OpGradients`), the builder they build
// cleave ops with (`GradientBuilder`), and the registration of the external
// models that implement it.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSFORMS_AUTODIFF_GRADIENTINTERFACE_H
#define CLEAVE_TRANSFORMS_AUTODIFF_GRADIENTINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace cleave {

/// The cotangents one op's rule reads and writes.
struct OpGradients {
  /// One per result: the cotangent of the loss with respect to it, of the
  /// result's type; null for a result that is not a float tensor.
  llvm::SmallVector<mlir::Value> results;
  /// One per operand: whether its cotangent is needed (the operand depends
  /// on a trainable parameter and is a float tensor).
  llvm::SmallVector<bool> wanted;
  /// One per operand, filled by the rule: the cotangent, of the operand's
  /// type; null where it is not wanted or the operand has no derivative.
  llvm::SmallVector<mlir::Value> operands;
};

/// Builds cleave ops at one insertion point and location, with the shape
/// bookkeeping that derivative rules share. Values are ranked tensors of
/// static shape; elementwise helpers broadcast as the cleave ops do.
class GradientBuilder {
public:
  GradientBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : builder(builder), loc(loc) {}

  mlir::OpBuilder &getBuilder() { return builder; }
  mlir::Location getLoc() const { return loc; }
  void setLoc(mlir::Location newLoc) { loc = newLoc; }

  /// Creates `OpT` at the insertion point (folding it when it folds) and
  /// returns its single result.
  template <typename OpT, typename... Args> mlir::Value create(Args &&...args) {
    return builder.createOrFold<OpT>(loc, std::forward<Args>(args)...);
  }

  /// A 0-d constant `value` of `elementType`, which broadcasts against any
  /// tensor of that element type.
  mlir::Value scalar(double value, mlir::Type elementType);
  /// `scalar(value, <element type of like>)`.
  mlir::Value scalarLike(double value, mlir::Value like);
  /// A tensor of `type` filled with `value`.
  mlir::Value splat(double value, mlir::RankedTensorType type);
  /// A tensor of `type` filled with zeros.
  mlir::Value zeros(mlir::RankedTensorType type) { return splat(0.0, type); }

  mlir::Value add(mlir::Value lhs, mlir::Value rhs);
  mlir::Value sub(mlir::Value lhs, mlir::Value rhs);
  mlir::Value mul(mlir::Value lhs, mlir::Value rhs);
  mlir::Value div(mlir::Value lhs, mlir::Value rhs);
  mlir::Value neg(mlir::Value value);
  /// `value * factor` for a constant factor.
  mlir::Value scale(mlir::Value value, double factor);
  /// `condition ? onTrue : onFalse`, broadcasting all three.
  mlir::Value select(mlir::Value condition, mlir::Value onTrue,
                     mlir::Value onFalse);
  /// `condition ? value : 0`.
  mlir::Value selectOrZero(mlir::Value condition, mlir::Value value);
  /// `value` converted to `elementType` (itself when it has it).
  mlir::Value cast(mlir::Value value, mlir::Type elementType);
  /// The sum of `value` over the `groupSize` devices of its group along
  /// mesh axis `axis` (`dp`, `tp`), which every one of them gets.
  mlir::Value allReduceSum(mlir::Value value, llvm::StringRef axis,
                           int64_t groupSize);

  /// `value` reinterpreted with shape `shape` (itself when it has it).
  mlir::Value reshape(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  /// `value` with its dimensions permuted by `perm`.
  mlir::Value transpose(mlir::Value value, llvm::ArrayRef<int64_t> perm);
  /// `value` with its last two dimensions swapped.
  mlir::Value transposeLastTwo(mlir::Value value);
  /// `value` broadcast (numpy style) to `shape`.
  mlir::Value broadcastTo(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  /// The sum of `value` over `axes`.
  mlir::Value reduceSum(mlir::Value value, llvm::ArrayRef<int64_t> axes,
                        bool keepdims);
  /// The mean of `value` over `axes`.
  mlir::Value reduceMean(mlir::Value value, llvm::ArrayRef<int64_t> axes,
                         bool keepdims);
  /// The adjoint of broadcasting: sums `value` over the dimensions that
  /// broadcasting a tensor of shape `shape` to `value`'s shape added or
  /// stretched, and returns it with shape `shape`.
  mlir::Value sumToShape(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  /// `value`, a reduction over `axes` of a tensor of shape `shape`, in a
  /// shape that broadcasts against `shape` (the reduced dimensions of size
  /// 1, or absent when they lead).
  mlir::Value keepReducedDims(mlir::Value value, llvm::ArrayRef<int64_t> shape,
                              llvm::ArrayRef<int64_t> axes, bool keepdims);
  /// The adjoint of a reduction over `axes` of a tensor of shape `shape`:
  /// `value` (the reduction's cotangent, reduced dimensions kept or not as
  /// `keepdims` says) broadcast back to `shape`.
  mlir::Value expandReduced(mlir::Value value, llvm::ArrayRef<int64_t> shape,
                            llvm::ArrayRef<int64_t> axes, bool keepdims);

private:
  mlir::OpBuilder &builder;
  mlir::Location loc;
};

/// The shape of a ranked tensor value.
llvm::ArrayRef<int64_t> getShape(mlir::Value value);
/// The element type of a ranked tensor value.
mlir::Type getElementType(mlir::Value value);

/// Attaches the gradient external models to the cleave ops that have a
/// rule. Tools call this through `cleave::registerAllDialects`.
void registerGradientInterfaceExternalModels(mlir::DialectRegistry &registry);

} // namespace cleave

#include "cleave/Transforms/Autodiff/GradientInterface.h.inc"

#endif // CLEAVE_TRANSFORMS_AUTODIFF_GRADIENTINTERFACE_H
