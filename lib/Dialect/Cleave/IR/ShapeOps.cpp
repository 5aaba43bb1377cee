//===- ShapeOps.cpp - placeholder bodies, replaced by the real ones ----*- C++
//-*-===//

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace cleave;

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult
ConcatOp::inferReturnTypes(MLIRContext *context,
                           std::optional<Location> location, Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location,
                           "ConcatOp: type inference not implemented");
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult ConstantOfShapeOp::verify() { return success(); }

OpFoldResult ConstantOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult
ConstantOp::inferReturnTypes(MLIRContext *context,
                             std::optional<Location> location, Adaptor adaptor,
                             SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location,
                           "ConstantOp: type inference not implemented");
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult ExpandOp::verify() { return success(); }

LogicalResult
FlattenOp::inferReturnTypes(MLIRContext *context,
                            std::optional<Location> location, Adaptor adaptor,
                            SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location,
                           "FlattenOp: type inference not implemented");
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult
GatherOp::inferReturnTypes(MLIRContext *context,
                           std::optional<Location> location, Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location,
                           "GatherOp: type inference not implemented");
}

LogicalResult
PadOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                        Adaptor adaptor,
                        SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "PadOp: type inference not implemented");
}

LogicalResult PadOp::verify() { return success(); }

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult RangeOp::verify() { return success(); }

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult ReshapeOp::verify() { return success(); }

LogicalResult ResizeOp::verify() { return success(); }

OpFoldResult ShapeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult
ShapeOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "ShapeOp: type inference not implemented");
}

LogicalResult ShapeOp::verify() { return success(); }

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult
SliceOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "SliceOp: type inference not implemented");
}

LogicalResult
SplitOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "SplitOp: type inference not implemented");
}

OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult
SqueezeOp::inferReturnTypes(MLIRContext *context,
                            std::optional<Location> location, Adaptor adaptor,
                            SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location,
                           "SqueezeOp: type inference not implemented");
}

LogicalResult
TileOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                         Adaptor adaptor,
                         SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location, "TileOp: type inference not implemented");
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult
TransposeOp::inferReturnTypes(MLIRContext *context,
                              std::optional<Location> location, Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location,
                           "TransposeOp: type inference not implemented");
}

OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) { return {}; }

LogicalResult
UnsqueezeOp::inferReturnTypes(MLIRContext *context,
                              std::optional<Location> location, Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  return emitOptionalError(location,
                           "UnsqueezeOp: type inference not implemented");
}

LogicalResult WeightOp::verify() { return success(); }

FailureOr<SmallVector<int64_t>>
cleave::resolveReshape(ArrayRef<int64_t> inputShape, ArrayRef<int64_t> target,
                       bool allowZero, std::string &error) {
  llvm::raw_string_ostream os(error);
  SmallVector<int64_t> result;
  result.reserve(target.size());
  std::optional<size_t> inferredIndex;
  bool hasZero = false;
  for (auto [i, dim] : llvm::enumerate(target)) {
    if (dim == -1) {
      if (inferredIndex) {
        os << "reshape target has more than one -1 (entries " << *inferredIndex
           << " and " << i << ")";
        return failure();
      }
      inferredIndex = i;
      result.push_back(ShapedType::kDynamic);
      continue;
    }
    if (dim < -1) {
      os << "reshape target entry " << i << " is " << dim
         << "; entries must be >= -1";
      return failure();
    }
    if (dim == 0 && !allowZero) {
      if (i >= inputShape.size()) {
        os << "reshape target entry " << i
           << " is 0 (copy the input dimension) but the input has rank "
           << inputShape.size();
        return failure();
      }
      result.push_back(inputShape[i]);
      continue;
    }
    hasZero |= dim == 0;
    result.push_back(dim);
  }
  if (allowZero && hasZero && inferredIndex) {
    os << "reshape target has both 0 and -1 while allowzero is set";
    return failure();
  }

  // A dynamic input dimension leaves the element count unknown: the -1 entry
  // stays dynamic and the counts cannot be compared.
  if (ShapedType::isDynamicShape(inputShape))
    return result;
  int64_t inputCount = ShapedType::getNumElements(inputShape);
  int64_t knownCount = 1;
  bool knownDynamic = false;
  for (auto [i, dim] : llvm::enumerate(result)) {
    if (inferredIndex && i == *inferredIndex)
      continue;
    if (ShapedType::isDynamic(dim)) {
      knownDynamic = true;
      continue;
    }
    knownCount *= dim;
  }
  if (knownDynamic)
    return result;

  if (inferredIndex) {
    if (knownCount == 0) {
      os << "reshape target has a -1 next to dimensions with zero elements; "
            "the -1 cannot be inferred";
      return failure();
    }
    if (inputCount % knownCount != 0) {
      os << "reshape of " << inputCount
         << " elements cannot infer -1: " << inputCount
         << " is not a multiple of " << knownCount;
      return failure();
    }
    result[*inferredIndex] = inputCount / knownCount;
    return result;
  }
  if (knownCount != inputCount) {
    os << "reshape changes the element count from " << inputCount << " to "
       << knownCount;
    return failure();
  }
  return result;
}
