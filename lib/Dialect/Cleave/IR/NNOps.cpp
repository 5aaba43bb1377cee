//===- NNOps.cpp - contraction, conv, pool, norm, reduce ops ----*- C++ -*-===//
//
// Type inference and verifiers of the neural-network family. Shape errors are
// found while inferring the result type, which runs both when a builder
// leaves the result type to the op and when the verifier checks a written
// one, so every message is worded like an op verifier message.
//
//===----------------------------------------------------------------------===//

#include "OpDiagnostics.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace cleave;
using namespace cleave::detail;

namespace {

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

/// Whether two dimensions may be equal at run time.
bool dimsCompatible(int64_t lhs, int64_t rhs) {
  return ShapedType::isDynamic(lhs) || ShapedType::isDynamic(rhs) || lhs == rhs;
}

/// Returns `value` as a ranked tensor type, or null after an error naming
/// `what` when it is not one (only builders can get here: the op's operand
/// constraints reject unranked tensors before inference runs).
template <typename OpT>
RankedTensorType getRankedType(std::optional<Location> loc, Value value,
                               StringRef what) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    (void)emitOpErrorAt<OpT>(loc, what, " must be a ranked tensor, got ",
                             value.getType());
  return type;
}

/// Checks that every present operand has the element type of `reference`.
template <typename OpT>
LogicalResult
verifySameElementType(std::optional<Location> loc, RankedTensorType reference,
                      StringRef referenceName,
                      ArrayRef<std::pair<Value, StringRef>> others) {
  for (auto [value, name] : others) {
    if (!value)
      continue;
    Type elementType = getElementTypeOrSelf(value.getType());
    if (elementType != reference.getElementType())
      return emitOpErrorAt<OpT>(
          loc, name, " element type (", elementType, ") must equal ",
          referenceName, " element type (", reference.getElementType(), ")");
  }
  return success();
}

/// Checks that `param` (named `name`) is a 1-D tensor of `size` elements, the
/// shape of ONNX's per-channel parameters.
template <typename OpT>
LogicalResult verifyChannelParam(std::optional<Location> loc, Value param,
                                 StringRef name, int64_t size) {
  auto type = getRankedType<OpT>(loc, param, name);
  if (!type)
    return failure();
  if (type.getRank() != 1 || !dimsCompatible(type.getDimSize(0), size))
    return emitOpErrorAt<OpT>(loc, name, " must have shape [", formatDim(size),
                              "] (the input channels), got ",
                              formatShape(type.getShape()));
  return success();
}

//===----------------------------------------------------------------------===//
// Spatial windows (conv, conv_transpose, pooling)
//===----------------------------------------------------------------------===//

/// The window attributes of a conv or pooling op, checked against the
/// number of spatial dimensions.
struct WindowAttrs {
  ArrayRef<int64_t> strides;
  ArrayRef<int64_t> pads;
  ArrayRef<int64_t> dilations;
};

/// Checks attribute lengths (one value per spatial dimension, two for pads)
/// and ranges (positive strides and dilations, non-negative pads).
template <typename OpT>
LogicalResult verifyWindowAttrs(std::optional<Location> loc,
                                const WindowAttrs &attrs, int64_t spatialRank) {
  auto checkLength = [&](ArrayRef<int64_t> values, StringRef name,
                         int64_t expected) -> LogicalResult {
    if (static_cast<int64_t>(values.size()) == expected)
      return success();
    return emitOpErrorAt<OpT>(loc, name, " has ", values.size(),
                              " values, expected ", expected, " for ",
                              spatialRank, " spatial dimensions");
  };
  auto checkRange = [&](ArrayRef<int64_t> values, StringRef name,
                        int64_t min) -> LogicalResult {
    for (auto [i, value] : llvm::enumerate(values))
      if (value < min)
        return emitOpErrorAt<OpT>(loc, name, "[", i, "] (", value, ") must be ",
                                  min == 0 ? "non-negative" : "positive");
    return success();
  };
  if (failed(checkLength(attrs.strides, "strides", spatialRank)) ||
      failed(checkLength(attrs.pads, "pads", 2 * spatialRank)) ||
      failed(checkLength(attrs.dilations, "dilations", spatialRank)) ||
      failed(checkRange(attrs.strides, "strides", 1)) ||
      failed(checkRange(attrs.pads, "pads", 0)) ||
      failed(checkRange(attrs.dilations, "dilations", 1)))
    return failure();
  return success();
}

/// Checks that `input` has a batch, a channel and at least one spatial
/// dimension.
template <typename OpT>
LogicalResult verifyWindowInputRank(std::optional<Location> loc,
                                    RankedTensorType input) {
  if (input.getRank() >= 3)
    return success();
  return emitOpErrorAt<OpT>(loc,
                            "input must have rank at least 3 (N x C x "
                            "spatial dimensions), got rank ",
                            input.getRank());
}

/// The output size of spatial dimension `dim` of a strided window sliding
/// over an explicitly padded input (conv and pooling). `ceilMode` rounds the
/// window count up, then drops a last window that would start in the end
/// padding, as onnxruntime and the ONNX reference implementation do.
template <typename OpT>
FailureOr<int64_t> slidingWindowSize(std::optional<Location> loc,
                                     const WindowAttrs &attrs, size_t dim,
                                     int64_t inputSize, int64_t kernelSize,
                                     bool ceilMode) {
  if (ShapedType::isDynamic(inputSize) || ShapedType::isDynamic(kernelSize))
    return ShapedType::kDynamic;
  size_t spatialRank = attrs.strides.size();
  int64_t padBegin = attrs.pads[dim];
  int64_t padEnd = attrs.pads[spatialRank + dim];
  int64_t stride = attrs.strides[dim];
  // Sizes, pads and dilations come from the model: a window that does not
  // fit int64_t is refused, not wrapped.
  int64_t dilatedKernel, padded;
  if (llvm::MulOverflow(kernelSize - 1, attrs.dilations[dim], dilatedKernel) ||
      llvm::AddOverflow(dilatedKernel, int64_t(1), dilatedKernel) ||
      llvm::AddOverflow(inputSize, padBegin, padded) ||
      llvm::AddOverflow(padded, padEnd, padded))
    return emitOpErrorAt<OpT>(loc, "spatial dimension ", dim,
                              ": the padded input or the dilated kernel has "
                              "more elements than a dimension can hold");
  int64_t span = padded - dilatedKernel;
  if (span < 0)
    return emitOpErrorAt<OpT>(
        loc, "spatial dimension ", dim, ": padded input size (", padded,
        ") is smaller than the dilated kernel size (", dilatedKernel, ")");
  if (!ceilMode)
    return span / stride + 1;
  int64_t size = span / stride + (span % stride != 0) + 1;
  // inputSize + padBegin fits, as a part of `padded`.
  int64_t lastStart;
  if (!llvm::MulOverflow(size - 1, stride, lastStart) &&
      lastStart >= inputSize + padBegin)
    --size;
  return size;
}

/// Infers the result type of max_pool and average_pool.
template <typename OpT, typename AdaptorT>
LogicalResult inferPoolType(std::optional<Location> loc, AdaptorT adaptor,
                            SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = getRankedType<OpT>(loc, adaptor.getInput(), "input");
  if (!inputType || failed(verifyWindowInputRank<OpT>(loc, inputType)))
    return failure();
  int64_t spatialRank = inputType.getRank() - 2;
  ArrayRef<int64_t> kernel = adaptor.getKernelShape();
  if (static_cast<int64_t>(kernel.size()) != spatialRank)
    return emitOpErrorAt<OpT>(loc, "kernel_shape has ", kernel.size(),
                              " values, expected ", spatialRank, " for ",
                              spatialRank, " spatial dimensions");
  for (auto [i, size] : llvm::enumerate(kernel))
    if (size < 1)
      return emitOpErrorAt<OpT>(loc, "kernel_shape[", i, "] (", size,
                                ") must be positive");
  WindowAttrs attrs{adaptor.getStrides(), adaptor.getPads(),
                    adaptor.getDilations()};
  if (failed(verifyWindowAttrs<OpT>(loc, attrs, spatialRank)))
    return failure();

  ArrayRef<int64_t> inputShape = inputType.getShape();
  SmallVector<int64_t> shape(inputShape.take_front(2));
  for (int64_t i = 0; i < spatialRank; ++i) {
    FailureOr<int64_t> size = slidingWindowSize<OpT>(
        loc, attrs, i, inputShape[2 + i], kernel[i], adaptor.getCeilMode());
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

/// Infers the result type of the global pooling ops: every spatial dimension
/// becomes 1.
template <typename OpT, typename AdaptorT>
LogicalResult inferGlobalPoolType(std::optional<Location> loc, AdaptorT adaptor,
                                  SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = getRankedType<OpT>(loc, adaptor.getInput(), "input");
  if (!inputType)
    return failure();
  if (inputType.getRank() < 2)
    return emitOpErrorAt<OpT>(loc,
                              "input must have rank at least 2 (N x C x "
                              "spatial dimensions), got rank ",
                              inputType.getRank());
  SmallVector<int64_t> shape(inputType.getShape());
  std::fill(shape.begin() + 2, shape.end(), 1);
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

/// Checks the input of a per-channel normalisation (at least `N x C`) and
/// each of its per-channel parameters, then infers the input's type.
template <typename OpT>
LogicalResult inferChannelNormType(std::optional<Location> loc, Value input,
                                   ArrayRef<std::pair<Value, StringRef>> params,
                                   SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = getRankedType<OpT>(loc, input, "input");
  if (!inputType)
    return failure();
  if (inputType.getRank() < 2)
    return emitOpErrorAt<OpT>(
        loc, "input must have rank at least 2 (N x C x ...), got rank ",
        inputType.getRank());
  int64_t channels = inputType.getDimSize(1);
  for (auto [param, name] : params)
    if (failed(verifyChannelParam<OpT>(loc, param, name, channels)))
      return failure();
  inferredReturnTypes.push_back(inputType);
  return success();
}

/// Checks that `param` broadcasts (numpy style, towards the normalised
/// shape only) to `normalisedShape`.
template <typename OpT>
LogicalResult verifyTrailingNormParam(std::optional<Location> loc, Value param,
                                      StringRef name,
                                      ArrayRef<int64_t> normalisedShape) {
  auto type = getRankedType<OpT>(loc, param, name);
  if (!type)
    return failure();
  ArrayRef<int64_t> shape = type.getShape();
  bool broadcasts = shape.size() <= normalisedShape.size();
  for (size_t i = 0; broadcasts && i < shape.size(); ++i) {
    int64_t dim = shape[shape.size() - 1 - i];
    int64_t target = normalisedShape[normalisedShape.size() - 1 - i];
    broadcasts = dim == 1 || dimsCompatible(dim, target);
  }
  if (broadcasts)
    return success();
  return emitOpErrorAt<OpT>(loc, name, " shape ", formatShape(shape),
                            " does not broadcast to the normalised shape ",
                            formatShape(normalisedShape));
}

//===----------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------===//

/// Checks that the softmax `axis` is a dimension of `input`.
LogicalResult verifySoftmaxAxis(Operation *op, Type input, int64_t axis) {
  int64_t rank = cast<RankedTensorType>(input).getRank();
  if (axis >= 0 && axis < rank)
    return success();
  return op->emitOpError("axis (")
         << axis << ") must be in [0, " << rank << ")";
}

/// Infers the result type of a reduction over sorted, unique, non-negative
/// `axes`; an empty `axes` reduces nothing.
template <typename OpT>
LogicalResult inferReduceType(std::optional<Location> loc,
                              typename OpT::Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = getRankedType<OpT>(loc, adaptor.getInput(), "input");
  if (!inputType)
    return failure();
  int64_t rank = inputType.getRank();
  ArrayRef<int64_t> axes = adaptor.getAxes();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= rank)
      return emitOpErrorAt<OpT>(loc, "axes[", i, "] (", axis,
                                ") must be in [0, ", rank, ")");
    if (i > 0 && axis <= axes[i - 1])
      return emitOpErrorAt<OpT>(loc, "axes must be sorted and unique, got ",
                                formatShape(axes));
  }
  SmallVector<int64_t> shape;
  for (auto [dim, size] : llvm::enumerate(inputType.getShape())) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(dim)))
      shape.push_back(size);
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult
MatMulOp::inferReturnTypes(MLIRContext *context,
                           std::optional<Location> location, Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  auto lhsType = getRankedType<MatMulOp>(location, adaptor.getLhs(), "lhs");
  auto rhsType = getRankedType<MatMulOp>(location, adaptor.getRhs(), "rhs");
  if (!lhsType || !rhsType)
    return failure();
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOpErrorAt<MatMulOp>(
        location, "matmul_c3: lhs element type (", lhsType.getElementType(),
        ") must equal rhs element type (", rhsType.getElementType(), ")");
  if (lhsType.getRank() == 0 || rhsType.getRank() == 0)
    return emitOpErrorAt<MatMulOp>(
        location, "operands must be at least 1-D, got ranks ",
        lhsType.getRank(), " and ", rhsType.getRank());

  // Promote 1-D operands to matrices (a row vector on the left, a column
  // vector on the right); the inserted dimension is dropped again below.
  SmallVector<int64_t> lhs(lhsType.getShape());
  SmallVector<int64_t> rhs(rhsType.getShape());
  bool lhsIsVector = lhs.size() == 1;
  bool rhsIsVector = rhs.size() == 1;
  if (lhsIsVector)
    lhs.insert(lhs.begin(), 1);
  if (rhsIsVector)
    rhs.push_back(1);

  int64_t lhsContracted = lhs[lhs.size() - 1];
  int64_t rhsContracted = rhs[rhs.size() - 2];
  if (!dimsCompatible(lhsContracted, rhsContracted))
    return emitOpErrorAt<MatMulOp>(
        location, "matmul_c1: lhs dimension ", lhsType.getRank() - 1, " (",
        lhsContracted, ") must equal rhs dimension ",
        rhsIsVector ? 0 : rhsType.getRank() - 2, " (", rhsContracted, ")");

  ArrayRef<int64_t> lhsBatch = ArrayRef<int64_t>(lhs).drop_back(2);
  ArrayRef<int64_t> rhsBatch = ArrayRef<int64_t>(rhs).drop_back(2);
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(lhsBatch, rhsBatch);
  if (failed(shape))
    return emitOpErrorAt<MatMulOp>(location, "matmul_c2: batch dimensions ",
                                   formatShape(lhsBatch), " and ",
                                   formatShape(rhsBatch), " do not broadcast");
  if (!lhsIsVector)
    shape->push_back(lhs[lhs.size() - 2]);
  if (!rhsIsVector)
    shape->push_back(rhs[rhs.size() - 1]);
  inferredReturnTypes.push_back(
      RankedTensorType::get(*shape, lhsType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

LogicalResult
GemmOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                         Adaptor adaptor,
                         SmallVectorImpl<Type> &inferredReturnTypes) {
  auto aType = getRankedType<GemmOp>(location, adaptor.getA(), "a");
  auto bType = getRankedType<GemmOp>(location, adaptor.getB(), "b");
  if (!aType || !bType)
    return failure();
  if (aType.getRank() != 2 || bType.getRank() != 2)
    return emitOpErrorAt<GemmOp>(location,
                                 "gemm_c1: a and b must be 2-D, got ranks ",
                                 aType.getRank(), " and ", bType.getRank());
  if (failed(verifySameElementType<GemmOp>(
          location, aType, "a",
          {{adaptor.getB(), "gemm_c4: b"}, {adaptor.getC(), "gemm_c4: c"}})))
    return failure();

  bool transA = adaptor.getTransA();
  bool transB = adaptor.getTransB();
  int64_t m = aType.getDimSize(transA ? 1 : 0);
  int64_t aContracted = aType.getDimSize(transA ? 0 : 1);
  int64_t bContracted = bType.getDimSize(transB ? 1 : 0);
  int64_t n = bType.getDimSize(transB ? 0 : 1);
  if (!dimsCompatible(aContracted, bContracted))
    return emitOpErrorAt<GemmOp>(
        location, "gemm_c2: contracted dimension of a (", aContracted,
        ") must equal that of b (", bContracted, ")");

  if (Value c = adaptor.getC()) {
    auto cType = getRankedType<GemmOp>(location, c, "c");
    if (!cType)
      return failure();
    // `c` broadcasts towards the result only: each of its dimensions is 1 or
    // the result's.
    int64_t result[] = {m, n};
    ArrayRef<int64_t> cShape = cType.getShape();
    bool broadcasts = cShape.size() <= 2;
    for (size_t i = 0; broadcasts && i < cShape.size(); ++i) {
      int64_t dim = cShape[cShape.size() - 1 - i];
      broadcasts = dim == 1 || dimsCompatible(dim, result[1 - i]);
    }
    if (!broadcasts)
      return emitOpErrorAt<GemmOp>(
          location, "gemm_c3: c shape ", formatShape(cShape),
          " does not broadcast to the result shape ", formatShape(result));
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get({m, n}, aType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ConvOp
//===----------------------------------------------------------------------===//

LogicalResult
ConvOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                         Adaptor adaptor,
                         SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = getRankedType<ConvOp>(location, adaptor.getInput(), "input");
  auto weightType =
      getRankedType<ConvOp>(location, adaptor.getWeight(), "weight");
  if (!inputType || !weightType ||
      failed(verifyWindowInputRank<ConvOp>(location, inputType)))
    return failure();
  if (weightType.getRank() != inputType.getRank())
    return emitOpErrorAt<ConvOp>(
        location, "weight rank (", weightType.getRank(),
        ") must equal input rank (", inputType.getRank(), ")");
  if (failed(verifySameElementType<ConvOp>(
          location, inputType, "input",
          {{adaptor.getWeight(), "weight"}, {adaptor.getBias(), "bias"}})))
    return failure();
  int64_t spatialRank = inputType.getRank() - 2;
  WindowAttrs attrs{adaptor.getStrides(), adaptor.getPads(),
                    adaptor.getDilations()};
  if (failed(verifyWindowAttrs<ConvOp>(location, attrs, spatialRank)))
    return failure();

  // The group count splits the input channels among the filters:
  // weight is M x C/group x k1 x ... x kn.
  int64_t group = static_cast<int64_t>(adaptor.getGroup());
  if (group < 1)
    return emitOpErrorAt<ConvOp>(location, "group (", group,
                                 ") must be positive");
  int64_t inChannels = inputType.getDimSize(1);
  int64_t outChannels = weightType.getDimSize(0);
  int64_t channelsPerGroup = weightType.getDimSize(1);
  int64_t product;
  if (!ShapedType::isDynamic(inChannels) &&
      !ShapedType::isDynamic(channelsPerGroup) &&
      (llvm::MulOverflow(channelsPerGroup, group, product) ||
       inChannels != product))
    return emitOpErrorAt<ConvOp>(
        location, "input channels (", inChannels, ") must equal weight dim 1 (",
        channelsPerGroup, ") times group (", group, ")");
  if (!ShapedType::isDynamic(outChannels) && outChannels % group != 0)
    return emitOpErrorAt<ConvOp>(location, "output channels (weight dim 0, ",
                                 outChannels, ") must be divisible by group (",
                                 group, ")");
  if (Value bias = adaptor.getBias()) {
    auto biasType = getRankedType<ConvOp>(location, bias, "bias");
    if (!biasType)
      return failure();
    if (biasType.getRank() != 1 ||
        !dimsCompatible(biasType.getDimSize(0), outChannels))
      return emitOpErrorAt<ConvOp>(
          location, "bias must have shape [", formatDim(outChannels),
          "] (weight dim 0), got ", formatShape(biasType.getShape()));
  }

  SmallVector<int64_t> shape = {inputType.getDimSize(0), outChannels};
  for (int64_t i = 0; i < spatialRank; ++i) {
    int64_t kernel = weightType.getDimSize(2 + i);
    if (kernel == 0)
      return emitOpErrorAt<ConvOp>(location, "weight dim ", 2 + i,
                                   " (kernel size) must be positive");
    FailureOr<int64_t> size = slidingWindowSize<ConvOp>(
        location, attrs, i, inputType.getDimSize(2 + i), kernel,
        /*ceilMode=*/false);
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ConvTransposeOp
//===----------------------------------------------------------------------===//

LogicalResult ConvTransposeOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  using OpT = ConvTransposeOp;
  auto inputType = getRankedType<OpT>(location, adaptor.getInput(), "input");
  auto weightType = getRankedType<OpT>(location, adaptor.getWeight(), "weight");
  if (!inputType || !weightType ||
      failed(verifyWindowInputRank<OpT>(location, inputType)))
    return failure();
  if (weightType.getRank() != inputType.getRank())
    return emitOpErrorAt<OpT>(location, "weight rank (", weightType.getRank(),
                              ") must equal input rank (", inputType.getRank(),
                              ")");
  if (failed(verifySameElementType<OpT>(
          location, inputType, "input",
          {{adaptor.getWeight(), "weight"}, {adaptor.getBias(), "bias"}})))
    return failure();
  int64_t spatialRank = inputType.getRank() - 2;
  WindowAttrs attrs{adaptor.getStrides(), adaptor.getPads(),
                    adaptor.getDilations()};
  if (failed(verifyWindowAttrs<OpT>(location, attrs, spatialRank)))
    return failure();
  ArrayRef<int64_t> outputPadding = adaptor.getOutputPadding();
  if (static_cast<int64_t>(outputPadding.size()) != spatialRank)
    return emitOpErrorAt<OpT>(location, "output_padding has ",
                              outputPadding.size(), " values, expected ",
                              spatialRank, " for ", spatialRank,
                              " spatial dimensions");
  for (auto [i, padding] : llvm::enumerate(outputPadding)) {
    // A larger output padding would select positions that no input element
    // contributes to.
    int64_t stride = attrs.strides[i];
    int64_t dilation = attrs.dilations[i];
    if (padding < 0 || (padding >= stride && padding >= dilation))
      return emitOpErrorAt<OpT>(location, "output_padding[", i, "] (", padding,
                                ") must be non-negative and less than the "
                                "stride (",
                                stride, ") or the dilation (", dilation, ")");
  }

  // weight is C x M/group x k1 x ... x kn.
  int64_t group = static_cast<int64_t>(adaptor.getGroup());
  if (group < 1)
    return emitOpErrorAt<OpT>(location, "group (", group, ") must be positive");
  int64_t inChannels = inputType.getDimSize(1);
  if (!dimsCompatible(inChannels, weightType.getDimSize(0)))
    return emitOpErrorAt<OpT>(location, "input channels (", inChannels,
                              ") must equal weight dim 0 (",
                              weightType.getDimSize(0), ")");
  if (!ShapedType::isDynamic(inChannels) && inChannels % group != 0)
    return emitOpErrorAt<OpT>(location, "input channels (", inChannels,
                              ") must be divisible by group (", group, ")");
  int64_t outChannels = weightType.getDimSize(1);
  if (!ShapedType::isDynamic(outChannels) &&
      llvm::MulOverflow(outChannels, group, outChannels))
    return emitOpErrorAt<OpT>(
        location, "weight dim 1 (", weightType.getDimSize(1), ") times group (",
        group, ") is more channels than a dimension can hold");
  if (Value bias = adaptor.getBias()) {
    auto biasType = getRankedType<OpT>(location, bias, "bias");
    if (!biasType)
      return failure();
    if (biasType.getRank() != 1 ||
        !dimsCompatible(biasType.getDimSize(0), outChannels))
      return emitOpErrorAt<OpT>(location, "bias must have shape [",
                                formatDim(outChannels),
                                "] (weight dim 1 times group), got ",
                                formatShape(biasType.getShape()));
  }

  SmallVector<int64_t> shape = {inputType.getDimSize(0), outChannels};
  for (int64_t i = 0; i < spatialRank; ++i) {
    int64_t in = inputType.getDimSize(2 + i);
    int64_t kernel = weightType.getDimSize(2 + i);
    if (kernel == 0)
      return emitOpErrorAt<OpT>(location, "weight dim ", 2 + i,
                                " (kernel size) must be positive");
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    // stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1
    // - pads, refused when a step does not fit int64_t.
    int64_t size, dilatedKernel;
    if (llvm::MulOverflow(attrs.strides[i], in - 1, size) ||
        llvm::AddOverflow(size, outputPadding[i], size) ||
        llvm::MulOverflow(kernel - 1, attrs.dilations[i], dilatedKernel) ||
        llvm::AddOverflow(size, dilatedKernel, size) ||
        llvm::AddOverflow(size, int64_t(1), size) ||
        llvm::SubOverflow(size, attrs.pads[i], size) ||
        llvm::SubOverflow(size, attrs.pads[spatialRank + i], size))
      return emitOpErrorAt<OpT>(location, "spatial dimension ", i,
                                ": the output has more elements than a "
                                "dimension can hold");
    if (size < 1)
      return emitOpErrorAt<OpT>(location, "spatial dimension ", i,
                                ": pads remove the whole output (size ", size,
                                ")");
    shape.push_back(size);
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

LogicalResult
MaxPoolOp::inferReturnTypes(MLIRContext *context,
                            std::optional<Location> location, Adaptor adaptor,
                            SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferPoolType<MaxPoolOp>(location, adaptor, inferredReturnTypes);
}

LogicalResult AveragePoolOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferPoolType<AveragePoolOp>(location, adaptor, inferredReturnTypes);
}

LogicalResult GlobalAveragePoolOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferGlobalPoolType<GlobalAveragePoolOp>(location, adaptor,
                                                  inferredReturnTypes);
}

LogicalResult GlobalMaxPoolOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferGlobalPoolType<GlobalMaxPoolOp>(location, adaptor,
                                              inferredReturnTypes);
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

LogicalResult
BatchNormOp::inferReturnTypes(MLIRContext *context,
                              std::optional<Location> location, Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferChannelNormType<BatchNormOp>(
      location, adaptor.getInput(),
      {{adaptor.getScale(), "scale"},
       {adaptor.getBias(), "bias"},
       {adaptor.getMean(), "mean"},
       {adaptor.getVariance(), "variance"}},
      inferredReturnTypes);
}

LogicalResult InstanceNormOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferChannelNormType<InstanceNormOp>(
      location, adaptor.getInput(),
      {{adaptor.getScale(), "scale"}, {adaptor.getBias(), "bias"}},
      inferredReturnTypes);
}

LogicalResult
GroupNormOp::inferReturnTypes(MLIRContext *context,
                              std::optional<Location> location, Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  if (failed(inferChannelNormType<GroupNormOp>(
          location, adaptor.getInput(),
          {{adaptor.getScale(), "scale"}, {adaptor.getBias(), "bias"}},
          inferredReturnTypes)))
    return failure();
  int64_t groups = static_cast<int64_t>(adaptor.getNumGroups());
  if (groups < 1)
    return emitOpErrorAt<GroupNormOp>(location, "num_groups (", groups,
                                      ") must be positive");
  int64_t channels =
      cast<RankedTensorType>(adaptor.getInput().getType()).getDimSize(1);
  if (!ShapedType::isDynamic(channels) && channels % groups != 0)
    return emitOpErrorAt<GroupNormOp>(location, "input channels (", channels,
                                      ") must be divisible by num_groups (",
                                      groups, ")");
  return success();
}

LogicalResult
LayerNormOp::inferReturnTypes(MLIRContext *context,
                              std::optional<Location> location, Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType =
      getRankedType<LayerNormOp>(location, adaptor.getInput(), "input");
  if (!inputType)
    return failure();
  int64_t rank = inputType.getRank();
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= rank)
    return emitOpErrorAt<LayerNormOp>(location, "axis (", axis,
                                      ") must be in [0, ", rank, ")");
  ArrayRef<int64_t> normalised = inputType.getShape().drop_front(axis);
  if (failed(verifyTrailingNormParam<LayerNormOp>(location, adaptor.getScale(),
                                                  "scale", normalised)))
    return failure();
  if (Value bias = adaptor.getBias())
    if (failed(verifyTrailingNormParam<LayerNormOp>(location, bias, "bias",
                                                    normalised)))
      return failure();
  inferredReturnTypes.push_back(inputType);
  return success();
}

LogicalResult
RmsNormOp::inferReturnTypes(MLIRContext *context,
                            std::optional<Location> location, Adaptor adaptor,
                            SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType =
      getRankedType<RmsNormOp>(location, adaptor.getInput(), "input");
  if (!inputType)
    return failure();
  int64_t rank = inputType.getRank();
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  // rms_norm_c1
  if (axis < 0 || axis >= rank)
    return emitOpErrorAt<RmsNormOp>(location, "rms_norm_c1: axis (", axis,
                                    ") must be in [0, ", rank, ")");
  // rms_norm_c2
  if (failed(verifyTrailingNormParam<RmsNormOp>(
          location, adaptor.getScale(), "rms_norm_c2: scale",
          inputType.getShape().drop_front(axis))))
    return failure();
  // rms_norm_c3
  Type scaleElement = getElementTypeOrSelf(adaptor.getScale().getType());
  if (scaleElement != inputType.getElementType())
    return emitOpErrorAt<RmsNormOp>(
        location, "rms_norm_c3: scale element type (", scaleElement,
        ") must be the input element type (", inputType.getElementType(), ")");
  // rms_norm_c4
  float epsilon = adaptor.getEpsilon().convertToFloat();
  if (!(epsilon >= 0.0f) || std::isinf(epsilon))
    return emitOpErrorAt<RmsNormOp>(location, "rms_norm_c4: epsilon (", epsilon,
                                    ") must be finite and non-negative");
  inferredReturnTypes.push_back(inputType);
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return verifySoftmaxAxis(*this, getInput().getType(),
                           static_cast<int64_t>(getAxis()));
}

namespace {

/// `softmax(x - reduce_max(x))` along the softmax's axis (the shift some
/// exports write out) is `softmax(x)`, bit for bit: the kernels subtract
/// each line's maximum themselves, and on the shifted line that maximum is
/// 0, so each exponent is the same `x - max` either way. The shift's two
/// passes over the scores go (when nothing else reads them). Not for
/// log-softmax, whose result `x - (max + log(sum))` rounds otherwise.
struct DropMaximumShift : public OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SoftmaxOp softmax,
                                PatternRewriter &rewriter) const override {
    auto sub = softmax.getInput().getDefiningOp<SubOp>();
    if (!sub)
      return rewriter.notifyMatchFailure(softmax, "no subtraction before");
    auto maximum = sub.getRhs().getDefiningOp<ReduceMaxOp>();
    if (!maximum || maximum.getInput() != sub.getLhs())
      return rewriter.notifyMatchFailure(softmax, "not x - reduce_max(x)");
    if (sub.getLhs().getType() != softmax.getType() || !maximum.getKeepdims() ||
        maximum.getAxes().size() != 1 ||
        maximum.getAxes().front() != static_cast<int64_t>(softmax.getAxis()))
      return rewriter.notifyMatchFailure(
          softmax, "the maximum is not the line's along the softmax's axis");
    rewriter.modifyOpInPlace(
        softmax, [&] { softmax.getInputMutable().assign(sub.getLhs()); });
    return success();
  }
};

} // namespace

void SoftmaxOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<DropMaximumShift>(context);
}

LogicalResult LogSoftmaxOp::verify() {
  return verifySoftmaxAxis(*this, getInput().getType(),
                           static_cast<int64_t>(getAxis()));
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Whether `shape` broadcasts numpy-style (right-aligned, unidirectionally)
/// to `target`.
static bool broadcastsToShape(ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> target) {
  if (shape.size() > target.size())
    return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t dim = shape[shape.size() - 1 - i];
    if (dim != 1 && !dimsCompatible(dim, target[target.size() - 1 - i]))
      return false;
  }
  return true;
}

/// Checks `dim` of a rank-3 `hidden` against `heads`: a positive divisor.
template <typename OpT>
static LogicalResult verifyHeadsDivide(std::optional<Location> loc,
                                       StringRef label, StringRef what,
                                       int64_t hidden, int64_t heads) {
  if (heads <= 0)
    return emitOpErrorAt<OpT>(loc, label, ": ", what, " (", heads,
                              ") must be positive");
  if (!ShapedType::isDynamic(hidden) && hidden % heads != 0)
    return emitOpErrorAt<OpT>(loc, label, ": hidden size ", hidden,
                              " is not a multiple of ", what, " (", heads, ")");
  return success();
}

int64_t RotaryEmbeddingOp::getHeads() {
  auto type = cast<RankedTensorType>(getInput().getType());
  return type.getRank() == 4 ? type.getDimSize(1) : int64_t(getNumHeads());
}

int64_t RotaryEmbeddingOp::getHeadSize() {
  auto type = cast<RankedTensorType>(getInput().getType());
  if (type.getRank() == 4)
    return type.getDimSize(3);
  int64_t hidden = type.getDimSize(2);
  return ShapedType::isDynamic(hidden) ? hidden : hidden / getHeads();
}

int64_t RotaryEmbeddingOp::getRotaryDim() {
  int64_t dim = getRotaryEmbeddingDim();
  return dim == 0 ? getHeadSize() : dim;
}

LogicalResult RotaryEmbeddingOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  using Op = RotaryEmbeddingOp;
  auto inputType = getRankedType<Op>(location, adaptor.getInput(), "input");
  auto cosType = getRankedType<Op>(location, adaptor.getCos(), "cos");
  auto sinType = getRankedType<Op>(location, adaptor.getSin(), "sin");
  if (!inputType || !cosType || !sinType)
    return failure();
  // rotary_embedding_c1
  int64_t rank = inputType.getRank();
  if (rank != 3 && rank != 4)
    return emitOpErrorAt<Op>(location,
                             "rotary_embedding_c1: input must have rank 3 or "
                             "4, got rank ",
                             rank);
  // rotary_embedding_c2
  int64_t numHeads = adaptor.getNumHeads();
  int64_t batch = inputType.getDimSize(0);
  int64_t sequence = inputType.getDimSize(rank == 4 ? 2 : 1);
  int64_t headSize;
  if (rank == 4) {
    if (numHeads != 0 && !dimsCompatible(numHeads, inputType.getDimSize(1)))
      return emitOpErrorAt<Op>(location, "rotary_embedding_c2: num_heads (",
                               numHeads, ") differs from the input's ",
                               formatDim(inputType.getDimSize(1)), " heads");
    headSize = inputType.getDimSize(3);
  } else {
    if (failed(verifyHeadsDivide<Op>(location, "rotary_embedding_c2",
                                     "num_heads", inputType.getDimSize(2),
                                     numHeads)))
      return failure();
    int64_t hidden = inputType.getDimSize(2);
    headSize = ShapedType::isDynamic(hidden) ? hidden : hidden / numHeads;
  }
  // rotary_embedding_c3
  int64_t rotaryDim = adaptor.getRotaryEmbeddingDim();
  if (rotaryDim < 0 ||
      (!ShapedType::isDynamic(headSize) && rotaryDim > headSize))
    return emitOpErrorAt<Op>(
        location, "rotary_embedding_c3: rotary_embedding_dim (", rotaryDim,
        ") must be in [0, ", formatDim(headSize), "]");
  if (rotaryDim == 0)
    rotaryDim = headSize;
  if (!ShapedType::isDynamic(rotaryDim) && rotaryDim % 2 != 0)
    return emitOpErrorAt<Op>(location,
                             "rotary_embedding_c3: the rotated size (",
                             rotaryDim, ") must be even");
  // rotary_embedding_c4
  if (cosType != sinType)
    return emitOpErrorAt<Op>(location, "rotary_embedding_c4: cos (", cosType,
                             ") and sin (", sinType,
                             ") must have the same type");
  if (cosType.getElementType() != inputType.getElementType())
    return emitOpErrorAt<Op>(
        location, "rotary_embedding_c4: cos element type (",
        cosType.getElementType(), ") must be the input element type (",
        inputType.getElementType(), ")");
  // rotary_embedding_c5
  int64_t half = ShapedType::isDynamic(rotaryDim) ? rotaryDim : rotaryDim / 2;
  ArrayRef<int64_t> cache = cosType.getShape();
  bool wideEnough = ShapedType::isDynamic(half) || cache.empty() ||
                    ShapedType::isDynamic(cache.back()) || cache.back() >= half;
  if (Value positions = adaptor.getPositionIds()) {
    auto positionType = cast<RankedTensorType>(positions.getType());
    if (positionType.getRank() != 2 ||
        !dimsCompatible(positionType.getDimSize(0), batch) ||
        !dimsCompatible(positionType.getDimSize(1), sequence))
      return emitOpErrorAt<Op>(
          location, "rotary_embedding_c5: position_ids shape ",
          formatShape(positionType.getShape()), " must be [", formatDim(batch),
          ", ", formatDim(sequence), "]");
    if (cache.size() != 2 || !wideEnough)
      return emitOpErrorAt<Op>(
          location,
          "rotary_embedding_c5: with position_ids, cos and sin "
          "must be positions x n with n >= ",
          formatDim(half), ", got ", formatShape(cache));
  } else if (cache.size() != 3 || !wideEnough ||
             (cache[0] != 1 && !dimsCompatible(cache[0], batch)) ||
             !dimsCompatible(cache[1], sequence)) {
    return emitOpErrorAt<Op>(
        location,
        "rotary_embedding_c5: without position_ids, cos and sin "
        "must be [",
        formatDim(batch), " or 1, ", formatDim(sequence),
        ", n] with n >= ", formatDim(half), ", got ", formatShape(cache));
  }
  inferredReturnTypes.push_back(inputType);
  return success();
}

LogicalResult
AttentionOp::inferReturnTypes(MLIRContext *context,
                              std::optional<Location> location, Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  using Op = AttentionOp;
  auto q = getRankedType<Op>(location, adaptor.getQuery(), "query");
  auto k = getRankedType<Op>(location, adaptor.getKey(), "key");
  auto v = getRankedType<Op>(location, adaptor.getValue(), "value");
  if (!q || !k || !v)
    return failure();
  // attention_c1
  int64_t rank = q.getRank();
  if ((rank != 3 && rank != 4) || k.getRank() != rank || v.getRank() != rank)
    return emitOpErrorAt<Op>(location,
                             "attention_c1: query, key and value must all "
                             "have rank 3 or all rank 4, got ranks ",
                             rank, ", ", k.getRank(), ", ", v.getRank());
  // attention_c2
  if (failed(verifySameElementType<Op>(
          location, q, "query",
          {{adaptor.getKey(), "attention_c2: key"},
           {adaptor.getValue(), "attention_c2: value"}})))
    return failure();
  // attention_c3
  int64_t qHeads = adaptor.getQNumHeads(), kvHeads = adaptor.getKvNumHeads();
  if (qHeads <= 0 || kvHeads <= 0 || qHeads % kvHeads != 0)
    return emitOpErrorAt<Op>(location, "attention_c3: q_num_heads (", qHeads,
                             ") must be a positive multiple of kv_num_heads (",
                             kvHeads, ")");
  int64_t batch = q.getDimSize(0);
  int64_t qSequence, kvSequence, qHeadSize, kHeadSize, vHeadSize;
  if (rank == 4) {
    for (auto [type, heads, name] :
         {std::tuple(q, qHeads, "query"), std::tuple(k, kvHeads, "key"),
          std::tuple(v, kvHeads, "value")})
      if (!dimsCompatible(type.getDimSize(1), heads))
        return emitOpErrorAt<Op>(location, "attention_c3: ", name, " has ",
                                 formatDim(type.getDimSize(1)),
                                 " heads, expected ", heads);
    qSequence = q.getDimSize(2);
    kvSequence = k.getDimSize(2);
    qHeadSize = q.getDimSize(3);
    kHeadSize = k.getDimSize(3);
    vHeadSize = v.getDimSize(3);
  } else {
    // attention_c4
    for (auto [type, heads, name] : {std::tuple(q, qHeads, "q_num_heads"),
                                     std::tuple(k, kvHeads, "kv_num_heads"),
                                     std::tuple(v, kvHeads, "kv_num_heads")})
      if (failed(verifyHeadsDivide<Op>(location, "attention_c4", name,
                                       type.getDimSize(2), heads)))
        return failure();
    auto perHead = [](int64_t hidden, int64_t heads) {
      return ShapedType::isDynamic(hidden) ? hidden : hidden / heads;
    };
    qSequence = q.getDimSize(1);
    kvSequence = k.getDimSize(1);
    qHeadSize = perHead(q.getDimSize(2), qHeads);
    kHeadSize = perHead(k.getDimSize(2), kvHeads);
    vHeadSize = perHead(v.getDimSize(2), kvHeads);
  }
  // attention_c5
  int64_t seqDim = rank == 4 ? 2 : 1;
  if (!dimsCompatible(k.getDimSize(0), batch) ||
      !dimsCompatible(v.getDimSize(0), batch) ||
      !dimsCompatible(qHeadSize, kHeadSize) ||
      !dimsCompatible(v.getDimSize(seqDim), kvSequence))
    return emitOpErrorAt<Op>(
        location, "attention_c5: query ", formatShape(q.getShape()), ", key ",
        formatShape(k.getShape()), " and value ", formatShape(v.getShape()),
        " disagree on the batch, the query/key head size or the key/value "
        "sequence");
  // attention_c6
  if (Value mask = adaptor.getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    Type maskElement = maskType.getElementType();
    if (!maskElement.isInteger(1) && maskElement != q.getElementType())
      return emitOpErrorAt<Op>(location, "attention_c6: mask element type (",
                               maskElement, ") must be i1 or ",
                               q.getElementType());
    SmallVector<int64_t> scores = {batch, qHeads, qSequence, kvSequence};
    if (!broadcastsToShape(maskType.getShape(), scores))
      return emitOpErrorAt<Op>(location, "attention_c6: mask shape ",
                               formatShape(maskType.getShape()),
                               " does not broadcast to the scores ",
                               formatShape(scores));
  }
  // attention_c7
  float scale = adaptor.getScale().convertToFloat();
  float softcap = adaptor.getSoftcap().convertToFloat();
  if (!std::isfinite(scale) || !(softcap >= 0.0f) || std::isinf(softcap))
    return emitOpErrorAt<Op>(location, "attention_c7: scale (", scale,
                             ") must be finite and softcap (", softcap,
                             ") finite and non-negative");
  SmallVector<int64_t> shape;
  if (rank == 4)
    shape = {batch, qHeads, qSequence, vHeadSize};
  else
    shape = {batch, qSequence,
             ShapedType::isDynamic(vHeadSize) ? vHeadSize : qHeads * vHeadSize};
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, q.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

#define CLEAVE_REDUCE_INFER(OpT)                                               \
  LogicalResult OpT::inferReturnTypes(                                         \
      MLIRContext *context, std::optional<Location> location, Adaptor adaptor, \
      SmallVectorImpl<Type> &inferredReturnTypes) {                            \
    return inferReduceType<OpT>(location, adaptor, inferredReturnTypes);       \
  }

CLEAVE_REDUCE_INFER(ReduceSumOp)
CLEAVE_REDUCE_INFER(ReduceMeanOp)
CLEAVE_REDUCE_INFER(ReduceMaxOp)
CLEAVE_REDUCE_INFER(ReduceMinOp)
CLEAVE_REDUCE_INFER(ReduceProdOp)
CLEAVE_REDUCE_INFER(ReduceL2Op)
CLEAVE_REDUCE_INFER(ReduceSumSquareOp)

#undef CLEAVE_REDUCE_INFER
