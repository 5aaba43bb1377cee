//===- GradientBuilder.cpp - derivative rule helpers ------------*- C++ -*-===//

#include "cleave/Transforms/Autodiff/GradientInterface.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace cleave;

ArrayRef<int64_t> cleave::getShape(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

Type cleave::getElementType(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

static Attribute getScalarAttr(Type elementType, double value) {
  if (auto floatType = dyn_cast<FloatType>(elementType))
    return FloatAttr::get(floatType, value);
  return IntegerAttr::get(elementType, static_cast<int64_t>(value));
}

Value GradientBuilder::splat(double value, RankedTensorType type) {
  auto attr =
      DenseElementsAttr::get(type, getScalarAttr(type.getElementType(), value));
  return ConstantOp::create(builder, loc, attr);
}

Value GradientBuilder::scalar(double value, Type elementType) {
  return splat(value, RankedTensorType::get({}, elementType));
}

Value GradientBuilder::scalarLike(double value, Value like) {
  return scalar(value, getElementType(like));
}

Value GradientBuilder::add(Value lhs, Value rhs) {
  return create<AddOp>(lhs, rhs);
}

Value GradientBuilder::sub(Value lhs, Value rhs) {
  return create<SubOp>(lhs, rhs);
}

Value GradientBuilder::mul(Value lhs, Value rhs) {
  return create<MulOp>(lhs, rhs);
}

Value GradientBuilder::div(Value lhs, Value rhs) {
  return create<DivOp>(lhs, rhs);
}

Value GradientBuilder::neg(Value value) { return create<NegOp>(value); }

Value GradientBuilder::scale(Value value, double factor) {
  return mul(value, scalarLike(factor, value));
}

Value GradientBuilder::select(Value condition, Value onTrue, Value onFalse) {
  return create<WhereOp>(condition, onTrue, onFalse);
}

Value GradientBuilder::selectOrZero(Value condition, Value value) {
  return select(condition, value, scalarLike(0.0, value));
}

Value GradientBuilder::cast(Value value, Type elementType) {
  if (getElementType(value) == elementType)
    return value;
  return create<CastOp>(RankedTensorType::get(getShape(value), elementType),
                        value);
}

Value GradientBuilder::allReduceSum(Value value, StringRef axis,
                                    int64_t groupSize) {
  return AllReduceOp::create(builder, loc, value, builder.getStringAttr(axis),
                             builder.getI64IntegerAttr(groupSize),
                             builder.getStringAttr("sum"));
}

Value GradientBuilder::reshape(Value value, ArrayRef<int64_t> shape) {
  if (getShape(value) == shape)
    return value;
  return create<ReshapeOp>(RankedTensorType::get(shape, getElementType(value)),
                           value);
}

Value GradientBuilder::transpose(Value value, ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return value;
  return create<TransposeOp>(value, perm);
}

Value GradientBuilder::transposeLastTwo(Value value) {
  int64_t rank = getShape(value).size();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 2], perm[rank - 1]);
  return transpose(value, perm);
}

Value GradientBuilder::broadcastTo(Value value, ArrayRef<int64_t> shape) {
  if (getShape(value) == shape)
    return value;
  return create<ExpandOp>(RankedTensorType::get(shape, getElementType(value)),
                          value);
}

Value GradientBuilder::reduceSum(Value value, ArrayRef<int64_t> axes,
                                 bool keepdims) {
  if (axes.empty())
    return value;
  return create<ReduceSumOp>(value, axes, keepdims);
}

Value GradientBuilder::reduceMean(Value value, ArrayRef<int64_t> axes,
                                  bool keepdims) {
  if (axes.empty())
    return value;
  return create<ReduceMeanOp>(value, axes, keepdims);
}

Value GradientBuilder::sumToShape(Value value, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = getShape(value);
  if (from == shape)
    return value;
  int64_t added = from.size() - shape.size();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, added));
  for (auto [i, size] : llvm::enumerate(shape))
    if (size == 1 && from[added + i] != 1)
      axes.push_back(added + i);
  // Only added dimensions: reducing them away leaves `shape`.
  bool onlyAdded = static_cast<int64_t>(axes.size()) == added;
  return reshape(reduceSum(value, axes, /*keepdims=*/!onlyAdded), shape);
}

Value GradientBuilder::keepReducedDims(Value value, ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> axes, bool keepdims) {
  if (keepdims)
    return value;
  SmallVector<int64_t> kept(shape);
  for (int64_t axis : axes)
    kept[axis] = 1;
  // Dimensions removed from the front come back by broadcasting alone.
  bool leading = llvm::equal(axes, llvm::seq<int64_t>(0, axes.size()));
  return leading ? value : reshape(value, kept);
}

Value GradientBuilder::expandReduced(Value value, ArrayRef<int64_t> shape,
                                     ArrayRef<int64_t> axes, bool keepdims) {
  return broadcastTo(keepReducedDims(value, shape, axes, keepdims), shape);
}
