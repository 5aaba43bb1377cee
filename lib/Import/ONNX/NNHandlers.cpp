//===- NNHandlers.cpp - contractions, windows, norms, reductions ----------===//
//
// Handlers of MatMul/Gemm, convolutions and pooling (with `auto_pad`
// resolved to explicit pads), the normalisations, softmax, the attention
// ops of opset 23 and reductions (whose axes moved from an attribute to an
// input at opset 13 or 18).
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "NodeBinder.h"
#include "OpHandlers.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace cleave::onnx_import {
namespace {

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult importMatMul(NodeBinder &b) {
  Value lhs, rhs;
  if (failed(b.input(0, lhs)) || failed(b.input(1, rhs)))
    return failure();
  return b.replaceWith<MatMulOp>({lhs, rhs});
}

LogicalResult importGemm(NodeBinder &b) {
  Value a, bMatrix, c;
  float alpha, beta;
  int64_t transA, transB;
  if (failed(b.input(0, a)) || failed(b.input(1, bMatrix)) ||
      failed(b.optionalInput(2, c)) ||
      failed(b.floatAttr("alpha", alpha, 1.0f)) ||
      failed(b.floatAttr("beta", beta, 1.0f)) ||
      failed(b.intAttr("transA", transA, 0)) ||
      failed(b.intAttr("transB", transB, 0)))
    return failure();
  OpBuilder &builder = b.getBuilder();
  SmallVector<Value> operands = {a, bMatrix};
  if (c)
    operands.push_back(c);
  return b.replaceWith<GemmOp>(
      operands, {b.named("alpha", builder.getF32FloatAttr(alpha)),
                 b.named("beta", builder.getF32FloatAttr(beta)),
                 b.named("trans_a", builder.getBoolAttr(transA != 0)),
                 b.named("trans_b", builder.getBoolAttr(transB != 0))});
}

//===----------------------------------------------------------------------===//
// Windows: convolution and pooling
//===----------------------------------------------------------------------===//

/// The window attributes shared by Conv, ConvTranspose and the pools, with
/// one entry per spatial dimension (pads: begin pads, then end pads).
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
  std::string autoPad;
};

/// Reads `kernel_shape`, `strides`, `dilations`, `pads` and `auto_pad`.
/// `weightKernel` is the kernel implied by the weight (empty for pools,
/// which require `kernel_shape`).
LogicalResult readWindow(NodeBinder &b, Value input,
                         ArrayRef<int64_t> weightKernel, Window &w) {
  int64_t rank = NodeBinder::getType(input).getRank();
  if (rank < 3)
    return b.emitError() << "input must have rank 3 or more (N x C x "
                            "spatial...), not "
                         << rank;
  size_t spatial = rank - 2;
  if (failed(b.intsAttr("kernel_shape", w.kernel)) ||
      failed(b.intsAttr("strides", w.strides)) ||
      failed(b.intsAttr("dilations", w.dilations)) ||
      failed(b.intsAttr("pads", w.pads)) ||
      failed(b.stringAttr("auto_pad", w.autoPad, "NOTSET")))
    return failure();
  if (w.kernel.empty()) {
    if (weightKernel.empty())
      return b.emitError() << "attribute 'kernel_shape' is required";
    w.kernel.assign(weightKernel.begin(), weightKernel.end());
  }
  if (w.strides.empty())
    w.strides.assign(spatial, 1);
  if (w.dilations.empty())
    w.dilations.assign(spatial, 1);
  if (w.pads.empty())
    w.pads.assign(2 * spatial, 0);
  if (w.autoPad.empty())
    w.autoPad = "NOTSET";

  auto checkSize = [&](StringRef attr, ArrayRef<int64_t> values,
                       size_t expected) -> LogicalResult {
    if (values.size() == expected)
      return success();
    return b.emitError() << "attribute '" << attr << "' has " << values.size()
                         << " entries; the input has " << spatial
                         << " spatial dimensions, so it needs " << expected;
  };
  if (failed(checkSize("kernel_shape", w.kernel, spatial)) ||
      failed(checkSize("strides", w.strides, spatial)) ||
      failed(checkSize("dilations", w.dilations, spatial)) ||
      failed(checkSize("pads", w.pads, 2 * spatial)))
    return failure();
  for (size_t i = 0; i < spatial; ++i)
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1)
      return b.emitError() << "kernel sizes, strides and dilations must be "
                              "positive";
  if (w.autoPad != "NOTSET" && w.autoPad != "VALID" &&
      w.autoPad != "SAME_UPPER" && w.autoPad != "SAME_LOWER")
    return b.emitError() << "attribute 'auto_pad' is '" << w.autoPad
                         << "'; expected NOTSET, VALID, SAME_UPPER or "
                            "SAME_LOWER";
  return success();
}

/// Replaces `auto_pad` of a forward window (Conv, pools) by explicit pads:
/// SAME_* pads so that each output size is ceil(input / stride), putting the
/// odd pad at the end (UPPER) or the beginning (LOWER).
LogicalResult resolveForwardAutoPad(NodeBinder &b, Value input, Window &w) {
  size_t spatial = w.kernel.size();
  if (w.autoPad == "VALID") {
    w.pads.assign(2 * spatial, 0);
    return success();
  }
  if (w.autoPad == "NOTSET")
    return success();
  for (size_t i = 0; i < spatial; ++i) {
    if (failed(b.requireStaticDim(input, i + 2, "auto_pad " + w.autoPad)))
      return failure();
    int64_t in = NodeBinder::getType(input).getDimSize(i + 2);
    int64_t out = llvm::divideCeil(in, w.strides[i]);
    int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t total =
        std::max<int64_t>(0, (out - 1) * w.strides[i] + extent - in);
    int64_t small = total / 2, large = total - total / 2;
    w.pads[i] = w.autoPad == "SAME_UPPER" ? small : large;
    w.pads[i + spatial] = w.autoPad == "SAME_UPPER" ? large : small;
  }
  return success();
}

LogicalResult importConv(NodeBinder &b) {
  Value x, weight, bias;
  int64_t group;
  if (failed(b.input(0, x)) || failed(b.input(1, weight)) ||
      failed(b.optionalInput(2, bias)) || failed(b.intAttr("group", group, 1)))
    return failure();
  Window w;
  ArrayRef<int64_t> weightShape = NodeBinder::getType(weight).getShape();
  if (weightShape.size() < 3)
    return b.emitError() << "weight must have rank 3 or more, not "
                         << weightShape.size();
  if (failed(readWindow(b, x, weightShape.drop_front(2), w)) ||
      failed(resolveForwardAutoPad(b, x, w)))
    return failure();
  OpBuilder &builder = b.getBuilder();
  SmallVector<Value> operands = {x, weight};
  if (bias)
    operands.push_back(bias);
  return b.replaceWith<ConvOp>(
      operands,
      {b.named("strides", builder.getDenseI64ArrayAttr(w.strides)),
       b.named("pads", builder.getDenseI64ArrayAttr(w.pads)),
       b.named("dilations", builder.getDenseI64ArrayAttr(w.dilations)),
       b.named("group", builder.getI64IntegerAttr(group))});
}

LogicalResult importConvTranspose(NodeBinder &b) {
  Value x, weight, bias;
  int64_t group;
  SmallVector<int64_t> outputPadding, outputShape;
  if (failed(b.input(0, x)) || failed(b.input(1, weight)) ||
      failed(b.optionalInput(2, bias)) ||
      failed(b.intAttr("group", group, 1)) ||
      failed(b.intsAttr("output_padding", outputPadding)) ||
      failed(b.intsAttr("output_shape", outputShape)))
    return failure();
  ArrayRef<int64_t> weightShape = NodeBinder::getType(weight).getShape();
  if (weightShape.size() < 3)
    return b.emitError() << "weight must have rank 3 or more, not "
                         << weightShape.size();
  Window w;
  if (failed(readWindow(b, x, weightShape.drop_front(2), w)))
    return failure();
  size_t spatial = w.kernel.size();
  if (outputPadding.empty())
    outputPadding.assign(spatial, 0);
  if (outputPadding.size() != spatial)
    return b.emitError() << "attribute 'output_padding' has "
                         << outputPadding.size() << " entries; expected "
                         << spatial;
  // Some exporters include the batch and channel dimensions.
  if (outputShape.size() == spatial + 2)
    outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
  if (!outputShape.empty() && outputShape.size() != spatial)
    return b.emitError() << "attribute 'output_shape' has "
                         << outputShape.size() << " entries; expected "
                         << spatial;

  // With output_shape, or SAME_* (whose output is input * stride), ONNX
  // derives the pads from the requested size; SAME_UPPER puts the odd pad at
  // the end, everything else at the beginning (as the ONNX reference does;
  // onnxruntime differs for odd NOTSET pads).
  if (w.autoPad == "VALID") {
    w.pads.assign(2 * spatial, 0);
  } else if (!outputShape.empty() || w.autoPad != "NOTSET") {
    for (size_t i = 0; i < spatial; ++i) {
      if (failed(b.requireStaticDim(x, i + 2, "output_shape/auto_pad")))
        return failure();
      int64_t in = NodeBinder::getType(x).getDimSize(i + 2);
      int64_t target = outputShape.empty() ? in * w.strides[i] : outputShape[i];
      int64_t total = w.strides[i] * (in - 1) + outputPadding[i] +
                      (w.kernel[i] - 1) * w.dilations[i] + 1 - target;
      // The total may be negative (a larger output than the pads-free
      // size); ONNX's rule then yields a negative end pad, which is extra
      // output at the end: output_padding.
      bool upper = w.autoPad == "SAME_UPPER";
      int64_t half = llvm::divideFloorSigned(total, 2);
      int64_t begin = upper ? half : total - half;
      int64_t end = total - begin;
      if (begin < 0)
        return b.emitError()
               << "output size " << target << " of spatial dimension " << i
               << " needs a negative begin pad, which is not supported";
      if (end < 0) {
        outputPadding[i] -= end;
        end = 0;
      }
      w.pads[i] = begin;
      w.pads[i + spatial] = end;
    }
  }
  OpBuilder &builder = b.getBuilder();
  SmallVector<Value> operands = {x, weight};
  if (bias)
    operands.push_back(bias);
  return b.replaceWith<ConvTransposeOp>(
      operands,
      {b.named("strides", builder.getDenseI64ArrayAttr(w.strides)),
       b.named("pads", builder.getDenseI64ArrayAttr(w.pads)),
       b.named("dilations", builder.getDenseI64ArrayAttr(w.dilations)),
       b.named("output_padding", builder.getDenseI64ArrayAttr(outputPadding)),
       b.named("group", builder.getI64IntegerAttr(group))});
}

LogicalResult importMaxPool(NodeBinder &b) {
  Value x;
  int64_t ceilMode;
  Window w;
  if (failed(b.input(0, x)) || failed(b.intAttr("ceil_mode", ceilMode, 0)) ||
      failed(b.rejectUsedOutputs(1, "MaxPool's Indices output")) ||
      failed(readWindow(b, x, {}, w)) || failed(resolveForwardAutoPad(b, x, w)))
    return failure();
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<MaxPoolOp>(
      {x}, {b.named("kernel_shape", builder.getDenseI64ArrayAttr(w.kernel)),
            b.named("strides", builder.getDenseI64ArrayAttr(w.strides)),
            b.named("pads", builder.getDenseI64ArrayAttr(w.pads)),
            b.named("dilations", builder.getDenseI64ArrayAttr(w.dilations)),
            b.named("ceil_mode", builder.getBoolAttr(ceilMode != 0))});
}

LogicalResult importAveragePool(NodeBinder &b) {
  Value x;
  int64_t ceilMode, countIncludePad;
  Window w;
  if (failed(b.input(0, x)) || failed(b.intAttr("ceil_mode", ceilMode, 0)) ||
      failed(b.intAttr("count_include_pad", countIncludePad, 0)) ||
      failed(readWindow(b, x, {}, w)) || failed(resolveForwardAutoPad(b, x, w)))
    return failure();
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<AveragePoolOp>(
      {x}, {b.named("kernel_shape", builder.getDenseI64ArrayAttr(w.kernel)),
            b.named("strides", builder.getDenseI64ArrayAttr(w.strides)),
            b.named("pads", builder.getDenseI64ArrayAttr(w.pads)),
            b.named("dilations", builder.getDenseI64ArrayAttr(w.dilations)),
            b.named("ceil_mode", builder.getBoolAttr(ceilMode != 0)),
            b.named("count_include_pad",
                    builder.getBoolAttr(countIncludePad != 0))});
}

template <typename OpTy> LogicalResult importGlobalPool(NodeBinder &b) {
  Value x;
  if (failed(b.input(0, x)))
    return failure();
  return b.replaceWith<OpTy>({x});
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

LogicalResult importBatchNorm(NodeBinder &b) {
  Value x, scale, bias, mean, variance;
  float epsilon, momentum;
  int64_t trainingMode;
  if (failed(b.input(0, x)) || failed(b.input(1, scale)) ||
      failed(b.input(2, bias)) || failed(b.input(3, mean)) ||
      failed(b.input(4, variance)) ||
      failed(b.floatAttr("epsilon", epsilon, 1e-5f)) ||
      failed(b.floatAttr("momentum", momentum, 0.9f)) ||
      failed(b.intAttr("training_mode", trainingMode, 0)))
    return failure();
  // torch.onnx writes training-mode nodes whose running-statistic outputs
  // nothing reads; a training step updates the running statistics itself.
  if (failed(b.rejectUsedOutputs(1, "running statistics (training mode)")))
    return failure();
  SmallVector<NamedAttribute> attrs{
      b.named("epsilon", b.getBuilder().getF32FloatAttr(epsilon)),
      b.named("momentum", b.getBuilder().getF32FloatAttr(momentum))};
  if (trainingMode != 0)
    attrs.push_back(b.named("training_mode", b.getBuilder().getUnitAttr()));
  return b.replaceWith<BatchNormOp>({x, scale, bias, mean, variance}, attrs);
}

LogicalResult importInstanceNorm(NodeBinder &b) {
  Value x, scale, bias;
  float epsilon;
  if (failed(b.input(0, x)) || failed(b.input(1, scale)) ||
      failed(b.input(2, bias)) ||
      failed(b.floatAttr("epsilon", epsilon, 1e-5f)))
    return failure();
  return b.replaceWith<InstanceNormOp>(
      {x, scale, bias},
      {b.named("epsilon", b.getBuilder().getF32FloatAttr(epsilon))});
}

LogicalResult importLayerNorm(NodeBinder &b) {
  Value x, scale, bias;
  float epsilon;
  int64_t axis, stashType;
  if (failed(b.input(0, x)) || failed(b.input(1, scale)) ||
      failed(b.optionalInput(2, bias)) ||
      failed(b.floatAttr("epsilon", epsilon, 1e-5f)) ||
      failed(b.intAttr("axis", axis, -1)) ||
      failed(b.intAttr("stash_type", stashType, onnx::TensorProto::FLOAT)) ||
      failed(b.rejectUsedOutputs(1, "LayerNormalization's Mean and "
                                    "InvStdDev outputs")) ||
      failed(b.normalizeAxis(axis, NodeBinder::getType(x).getRank(), "axis")))
    return failure();
  // The type of the mean and variance; torch's exporter writes the default,
  // float, explicitly.
  if (stashType != onnx::TensorProto::FLOAT)
    return b.emitError() << "stash_type " << stashType
                         << " is not supported (only 1, float)";
  OpBuilder &builder = b.getBuilder();
  SmallVector<Value> operands = {x, scale};
  if (bias)
    operands.push_back(bias);
  return b.replaceWith<LayerNormOp>(
      operands, {b.named("axis", builder.getI64IntegerAttr(axis)),
                 b.named("epsilon", builder.getF32FloatAttr(epsilon))});
}

LogicalResult importRmsNorm(NodeBinder &b) {
  Value x, scale;
  float epsilon;
  int64_t axis, stashType;
  if (failed(b.input(0, x)) || failed(b.input(1, scale)) ||
      failed(b.floatAttr("epsilon", epsilon, 1e-5f)) ||
      failed(b.intAttr("axis", axis, -1)) ||
      failed(b.intAttr("stash_type", stashType, 1)) ||
      failed(b.normalizeAxis(axis, NodeBinder::getType(x).getRank(), "axis")))
    return failure();
  // The statistics are accumulated in at least float32 whatever the input
  // type, which is what stash_type 1 (FLOAT) asks for.
  if (stashType != 1)
    return b.emitError() << "stash_type " << stashType
                         << " is not supported; only 1 (float32)";
  if (!(epsilon >= 0.0f) || std::isinf(epsilon))
    return b.emitError() << "epsilon (" << epsilon
                         << ") must be finite and non-negative";
  Type xElement = NodeBinder::getType(x).getElementType();
  Type scaleElement = NodeBinder::getType(scale).getElementType();
  if (xElement != scaleElement)
    return b.emitError() << "scale element type " << scaleElement
                         << " differs from the input's " << xElement;
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<RmsNormOp>(
      {x, scale}, {b.named("axis", builder.getI64IntegerAttr(axis)),
                   b.named("epsilon", builder.getF32FloatAttr(epsilon))});
}

LogicalResult importRotaryEmbedding(NodeBinder &b) {
  Value x, cos, sin, positions;
  int64_t interleaved, rotaryDim, numHeads;
  if (failed(b.input(0, x)) || failed(b.input(1, cos)) ||
      failed(b.input(2, sin)) || failed(b.optionalInput(3, positions)) ||
      failed(b.intAttr("interleaved", interleaved, 0)) ||
      failed(b.intAttr("rotary_embedding_dim", rotaryDim, 0)) ||
      failed(b.intAttr("num_heads", numHeads, 0)))
    return failure();
  if (interleaved != 0 && interleaved != 1)
    return b.emitError() << "interleaved must be 0 or 1, not " << interleaved;
  if (NodeBinder::getType(x).getRank() == 3 && numHeads <= 0)
    return b.emitError() << "num_heads (" << numHeads
                         << ") must be positive for a 3-D input";
  OpBuilder &builder = b.getBuilder();
  SmallVector<Value> operands = {x, cos, sin};
  if (positions)
    operands.push_back(positions);
  return b.replaceWith<RotaryEmbeddingOp>(
      operands,
      {b.named("interleaved", builder.getBoolAttr(interleaved != 0)),
       b.named("rotary_embedding_dim", builder.getI64IntegerAttr(rotaryDim)),
       b.named("num_heads", builder.getI64IntegerAttr(numHeads))});
}

/// `batch x sequence x heads * size` as `batch x heads x sequence x size`
/// (the layout of a key/value cache).
FailureOr<Value> splitHeads(NodeBinder &b, Value packed, int64_t heads) {
  RankedTensorType type = NodeBinder::getType(packed);
  if (!type.hasStaticShape())
    return b.emitError() << "a cache with 3-D inputs needs static shapes";
  ArrayRef<int64_t> shape = type.getShape();
  if (shape[2] % heads != 0)
    return b.emitError() << "hidden size " << shape[2]
                         << " is not a multiple of the " << heads << " heads";
  auto split = RankedTensorType::get(
      {shape[0], shape[1], heads, shape[2] / heads}, type.getElementType());
  FailureOr<Value> reshaped = b.create<ReshapeOp>({packed}, {}, split);
  if (failed(reshaped))
    return failure();
  return b.create<TransposeOp>(
      {*reshaped},
      {b.named("perm", b.getBuilder().getDenseI64ArrayAttr({0, 2, 1, 3}))});
}

/// The inverse of splitHeads.
FailureOr<Value> mergeHeads(NodeBinder &b, Value heads) {
  FailureOr<Value> transposed = b.create<TransposeOp>(
      {heads},
      {b.named("perm", b.getBuilder().getDenseI64ArrayAttr({0, 2, 1, 3}))});
  if (failed(transposed))
    return failure();
  ArrayRef<int64_t> shape = NodeBinder::getType(*transposed).getShape();
  auto packed =
      RankedTensorType::get({shape[0], shape[1], shape[2] * shape[3]},
                            NodeBinder::getType(heads).getElementType());
  return b.create<ReshapeOp>({*transposed}, {}, packed);
}

/// The keys each query may see under causal masking and/or a per-batch count
/// of valid keys, as an i1 mask that broadcasts to `batch x heads x qSeq x
/// kvSeq`. Causal masking is aligned to the bottom right: query `i` sees key
/// `j` when `j <= i + offset`, `offset` being the keys in front of the query
/// block (`pastLength` for a past cache, `nonpad[b] - qSeq` with `nonpad`).
/// With `nonpad` (int64, one count per batch) key `j` of batch `b` is
/// visible when `j < nonpad[b]`.
FailureOr<Value> buildVisibleKeys(NodeBinder &b, int64_t qSeq, int64_t kvSeq,
                                  bool causal, int64_t pastLength,
                                  Value nonpad) {
  OpBuilder &builder = b.getBuilder();
  if (!nonpad) {
    SmallVector<bool> visible;
    for (int64_t i = 0; i < qSeq; ++i)
      for (int64_t j = 0; j < kvSeq; ++j)
        visible.push_back(j <= i + pastLength);
    auto type = RankedTensorType::get({qSeq, kvSeq}, builder.getI1Type());
    return b.constant(DenseElementsAttr::get(type, ArrayRef<bool>(visible)));
  }
  // Key j is visible when threshold(i, j) <= nonpad[b]: j + 1 for the
  // padding alone, j - i + qSeq when causal (which implies the padding
  // bound, as i < qSeq).
  int64_t rows = causal ? qSeq : 1;
  SmallVector<int64_t> thresholds;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < kvSeq; ++j)
      thresholds.push_back(causal ? j - i + qSeq : j + 1);
  auto type = RankedTensorType::get({rows, kvSeq}, builder.getI64Type());
  Value bounds =
      b.constant(DenseElementsAttr::get(type, ArrayRef<int64_t>(thresholds)));
  FailureOr<Value> perBatch = b.create<UnsqueezeOp>(
      {nonpad}, {b.named("axes", builder.getDenseI64ArrayAttr({1, 2, 3}))});
  if (failed(perBatch))
    return failure();
  return b.create<LessEqualOp>({bounds, *perBatch});
}

/// `-inf` where `visible` is false, else `scores`.
FailureOr<Value> hideKeys(NodeBinder &b, Value scores, Value visible) {
  Type elementType = NodeBinder::getType(scores).getElementType();
  Value blocked =
      b.scalarConstant(elementType, -std::numeric_limits<double>::infinity());
  return b.create<WhereOp>({visible, scores, blocked});
}

/// The node's `attn_mask` further restricted to the `visible` keys: an i1
/// mask is and-ed, an additive one is `-inf` where a key is hidden.
FailureOr<Value> restrictMask(NodeBinder &b, Value mask, Value visible) {
  if (!mask)
    return visible;
  if (NodeBinder::getType(mask).getElementType().isInteger(1))
    return b.create<AndOp>({mask, visible});
  return hideKeys(b, mask, visible);
}

/// Attention as its steps (scores, softcap, mask, softmax, product with the
/// values) on 4-D `q`, `key` and `value`, for a node whose qk_matmul_output
/// is read. Returns the output and the scores after step `mode`: 0 the
/// scaled product, 1 the softcap, 2 the masks, 3 the softmax. A query that
/// sees no key has zero weights.
FailureOr<std::pair<Value, Value>>
buildAttentionSteps(NodeBinder &b, Value q, Value key, Value value, Value mask,
                    Value visible, int64_t qHeads, int64_t kvHeads, float scale,
                    float softcap, int64_t mode) {
  for (Value operand : {q, key, value})
    if (!NodeBinder::getType(operand).hasStaticShape())
      return b.emitError() << "qk_matmul_output needs static shapes of Q, K "
                              "and V, not "
                           << formatShape(
                                  NodeBinder::getType(operand).getShape());
  ArrayRef<int64_t> qShape = NodeBinder::getType(q).getShape();
  ArrayRef<int64_t> kShape = NodeBinder::getType(key).getShape();
  ArrayRef<int64_t> vShape = NodeBinder::getType(value).getShape();
  if (kShape[0] != qShape[0] || vShape[0] != qShape[0] ||
      kShape[1] != kvHeads || vShape[1] != kvHeads || kShape[3] != qShape[3] ||
      vShape[2] != kShape[2])
    return b.emitError() << "query " << formatShape(qShape) << ", key "
                         << formatShape(kShape) << " and value "
                         << formatShape(vShape)
                         << " disagree on the batch, the heads, the "
                            "query/key head size or the key/value sequence";
  if (kvHeads <= 0 || qHeads % kvHeads != 0)
    return b.emitError() << "q_num_heads (" << qHeads
                         << ") must be a positive multiple of kv_num_heads ("
                         << kvHeads << ")";
  int64_t batch = qShape[0], qSeq = qShape[2], kvSeq = kShape[2];
  int64_t groups = qHeads / kvHeads;
  Type elementType = NodeBinder::getType(q).getElementType();
  auto shaped = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elementType);
  };
  OpBuilder &builder = b.getBuilder();
  // The query heads that read one key/value head are stacked along the
  // sequence (query head h reads key/value head h / groups), so that one
  // batched product per key/value head computes their scores.
  FailureOr<Value> grouped = b.create<ReshapeOp>(
      {q}, {}, shaped({batch, kvHeads, groups * qSeq, qShape[3]}));
  FailureOr<Value> keyT = b.create<TransposeOp>(
      {key}, {b.named("perm", builder.getDenseI64ArrayAttr({0, 1, 3, 2}))});
  if (failed(grouped) || failed(keyT))
    return failure();
  FailureOr<Value> product = b.create<MatMulOp>({*grouped, *keyT});
  if (failed(product))
    return failure();
  auto scoresType = shaped({batch, qHeads, qSeq, kvSeq});
  FailureOr<Value> scores = b.create<ReshapeOp>({*product}, {}, scoresType);
  if (failed(scores))
    return failure();
  scores = b.create<MulOp>({*scores, b.scalarConstant(elementType, scale)});
  if (failed(scores))
    return failure();
  SmallVector<Value, 4> steps = {*scores};

  if (softcap > 0) {
    Value cap = b.scalarConstant(elementType, softcap);
    FailureOr<Value> ratio = b.create<DivOp>({*scores, cap});
    if (failed(ratio))
      return failure();
    FailureOr<Value> squashed = b.create<TanhOp>({*ratio});
    if (failed(squashed))
      return failure();
    scores = b.create<MulOp>({*squashed, cap});
    if (failed(scores))
      return failure();
  }
  steps.push_back(*scores);

  if (mask) {
    if (NodeBinder::getType(mask).getElementType().isInteger(1))
      scores = hideKeys(b, *scores, mask);
    else
      scores = b.create<AddOp>({*scores, mask});
    if (failed(scores))
      return failure();
    if (NodeBinder::getType(*scores) != scoresType)
      return b.emitError() << "attn_mask shape "
                           << formatShape(NodeBinder::getType(mask).getShape())
                           << " does not broadcast to the scores "
                           << formatShape(scoresType.getShape());
  }
  if (visible) {
    scores = hideKeys(b, *scores, visible);
    if (failed(scores))
      return failure();
  }
  steps.push_back(*scores);

  FailureOr<Value> weights = b.create<SoftmaxOp>(
      {*scores}, {b.named("axis", builder.getI64IntegerAttr(3)),
                  b.named("nan_to_zero", builder.getUnitAttr())});
  if (failed(weights))
    return failure();
  steps.push_back(*weights);

  FailureOr<Value> groupedWeights = b.create<ReshapeOp>(
      {*weights}, {}, shaped({batch, kvHeads, groups * qSeq, kvSeq}));
  if (failed(groupedWeights))
    return failure();
  FailureOr<Value> output = b.create<MatMulOp>({*groupedWeights, value});
  if (failed(output))
    return failure();
  output = b.create<ReshapeOp>({*output}, {},
                               shaped({batch, qHeads, qSeq, vShape[3]}));
  if (failed(output))
    return failure();
  return std::make_pair(*output, steps[mode]);
}

LogicalResult importAttention(NodeBinder &b) {
  Value q, k, v, mask, pastKey, pastValue, nonpad;
  int64_t isCausal, qHeads, kvHeads, outputMode, softmaxPrecision;
  std::optional<float> scale;
  float softcap;
  if (failed(b.input(0, q)) || failed(b.input(1, k)) || failed(b.input(2, v)) ||
      failed(b.optionalInput(3, mask)) || failed(b.optionalInput(4, pastKey)) ||
      failed(b.optionalInput(5, pastValue)) ||
      (b.getOpset() >= 24 && failed(b.optionalInput(6, nonpad))) ||
      failed(b.intAttr("is_causal", isCausal, 0)) ||
      failed(b.intAttr("q_num_heads", qHeads, 0)) ||
      failed(b.intAttr("kv_num_heads", kvHeads, 0)) ||
      failed(b.intAttr("qk_matmul_output_mode", outputMode, 0)) ||
      failed(b.intAttr("softmax_precision", softmaxPrecision, 1)) ||
      failed(b.optionalFloatAttr("scale", scale)) ||
      failed(b.floatAttr("softcap", softcap, 0.0f)))
    return failure();
  // The softmax runs in float32 whatever softmax_precision asks for.
  (void)softmaxPrecision;
  if (isCausal != 0 && isCausal != 1)
    return b.emitError() << "is_causal must be 0 or 1, not " << isCausal;
  if (outputMode < 0 || outputMode > 3)
    return b.emitError() << "qk_matmul_output_mode must be 0, 1, 2 or 3, not "
                         << outputMode;
  if (bool(pastKey) != bool(pastValue))
    return b.emitError() << "past_key and past_value must be given together";
  if (mask) {
    Type maskElement = NodeBinder::getType(mask).getElementType();
    if (!maskElement.isInteger(1) && !isa<FloatType>(maskElement))
      return b.emitError() << "attn_mask must be boolean or of the query's "
                              "float type, not "
                           << maskElement;
  }
  if (nonpad) {
    if (pastKey)
      return b.emitError() << "input 6 (nonpad_kv_seqlen) describes a cache "
                              "kept outside the node and cannot be combined "
                              "with past_key and past_value";
    RankedTensorType nonpadType = NodeBinder::getType(nonpad);
    if (nonpadType.getRank() != 1 || !nonpadType.getElementType().isInteger(64))
      return b.emitError() << "input 6 (nonpad_kv_seqlen) must be a 1-D int64 "
                              "tensor of one count per batch, not "
                           << nonpadType;
  }
  bool wantScores = b.isOutputUsed(3);
  RankedTensorType qType = NodeBinder::getType(q);
  int64_t rank = qType.getRank();
  if (rank == 4) {
    // The heads are in the shapes; the attributes may repeat them.
    int64_t shapeQ = qType.getDimSize(1);
    int64_t shapeKv = NodeBinder::getType(k).getRank() == 4
                          ? NodeBinder::getType(k).getDimSize(1)
                          : kvHeads;
    if ((qHeads != 0 && qHeads != shapeQ) ||
        (kvHeads != 0 && kvHeads != shapeKv))
      return b.emitError() << "q_num_heads (" << qHeads
                           << ") and kv_num_heads (" << kvHeads
                           << ") disagree with the 4-D inputs' " << shapeQ
                           << " and " << shapeKv << " heads";
    qHeads = shapeQ;
    kvHeads = shapeKv;
  } else if (qHeads <= 0 || kvHeads <= 0) {
    return b.emitError() << "q_num_heads and kv_num_heads are required for "
                            "3-D inputs";
  }
  int64_t headSize =
      rank == 4 ? qType.getDimSize(3) : qType.getDimSize(rank - 1) / qHeads;
  if (!scale) {
    if (ShapedType::isDynamic(headSize) || headSize <= 0)
      return b.emitError() << "the default scale needs a static head size";
    scale = static_cast<float>(1.0 / std::sqrt(double(headSize)));
  }
  // The caches are 4-D whatever the inputs: with 3-D inputs and a cache
  // (given or asked for), or the scores asked for, the attention runs on
  // the heads split out.
  bool splitInputs = rank == 3 && (pastKey || b.isOutputUsed(1) ||
                                   b.isOutputUsed(2) || wantScores);
  if (splitInputs) {
    FailureOr<Value> q4 = splitHeads(b, q, qHeads);
    FailureOr<Value> k4 = splitHeads(b, k, kvHeads);
    FailureOr<Value> v4 = splitHeads(b, v, kvHeads);
    if (failed(q4) || failed(k4) || failed(v4))
      return failure();
    q = *q4, k = *k4, v = *v4;
  }
  Value key = k, value = v;
  if (pastKey) {
    OpBuilder &builder = b.getBuilder();
    auto axis = b.named("axis", builder.getI64IntegerAttr(2));
    FailureOr<Value> presentKey = b.create<ConcatOp>({pastKey, k}, {axis});
    if (failed(presentKey))
      return failure();
    FailureOr<Value> presentValue = b.create<ConcatOp>({pastValue, v}, {axis});
    if (failed(presentValue))
      return failure();
    key = *presentKey, value = *presentValue;
  }

  // A mask shorter than the keys hides the keys past its end (a last
  // dimension of 1 broadcasts instead).
  if (mask) {
    RankedTensorType maskType = NodeBinder::getType(mask);
    RankedTensorType keyType = NodeBinder::getType(key);
    int64_t maskKeys = maskType.getDimSize(maskType.getRank() - 1);
    int64_t keys = keyType.getDimSize(keyType.getRank() - 2);
    if (!ShapedType::isDynamic(maskKeys) && !ShapedType::isDynamic(keys) &&
        maskKeys > 1 && maskKeys < keys) {
      SmallVector<int64_t> pads(2 * maskType.getRank(), 0);
      pads.back() = keys - maskKeys;
      double hidden = maskType.getElementType().isInteger(1)
                          ? 0.0
                          : -std::numeric_limits<double>::infinity();
      OpBuilder &builder = b.getBuilder();
      FailureOr<Value> padded = b.create<PadOp>(
          {mask}, {b.named("pads", builder.getDenseI64ArrayAttr(pads)),
                   b.named("value", builder.getF64FloatAttr(hidden))});
      if (failed(padded))
        return failure();
      mask = *padded;
    }
  }

  // cleave.attention's own causal mask has no offset; a causal mask behind
  // a past cache, one that the steps below need, and the padding of
  // nonpad_kv_seqlen are built here.
  Value visible;
  if (nonpad || (isCausal && (pastKey || wantScores))) {
    int64_t seqDim = NodeBinder::getType(q).getRank() - 2;
    int64_t qSeq = NodeBinder::getType(q).getDimSize(seqDim);
    int64_t kvSeq = NodeBinder::getType(key).getDimSize(seqDim);
    int64_t pastLength =
        pastKey ? NodeBinder::getType(pastKey).getDimSize(2) : 0;
    if (ShapedType::isDynamic(qSeq) || ShapedType::isDynamic(kvSeq) ||
        ShapedType::isDynamic(pastLength))
      return b.emitError() << "a causal mask behind a past cache, with "
                              "nonpad_kv_seqlen or with qk_matmul_output "
                              "needs static sequence lengths";
    FailureOr<Value> keys =
        buildVisibleKeys(b, qSeq, kvSeq, isCausal, pastLength, nonpad);
    if (failed(keys))
      return failure();
    visible = *keys;
  }

  if (wantScores) {
    auto result = buildAttentionSteps(b, q, key, value, mask, visible, qHeads,
                                      kvHeads, *scale, softcap, outputMode);
    if (failed(result))
      return failure();
    Value output = result->first;
    if (splitInputs) {
      FailureOr<Value> merged = mergeHeads(b, output);
      if (failed(merged))
        return failure();
      output = *merged;
    }
    return b.bindOutputs({output, key, value, result->second});
  }

  if (visible) {
    FailureOr<Value> restricted = restrictMask(b, mask, visible);
    if (failed(restricted))
      return failure();
    mask = *restricted;
  }
  OpBuilder &builder = b.getBuilder();
  SmallVector<Value> operands = {q, key, value};
  if (mask)
    operands.push_back(mask);
  SmallVector<NamedAttribute> attrs = {
      b.named("q_num_heads", builder.getI64IntegerAttr(qHeads)),
      b.named("kv_num_heads", builder.getI64IntegerAttr(kvHeads)),
      b.named("scale", builder.getF32FloatAttr(*scale)),
      b.named("softcap", builder.getF32FloatAttr(softcap))};
  if (isCausal && !visible)
    attrs.push_back(b.named("is_causal", builder.getUnitAttr()));
  // A query whose keys are all hidden (by the mask, or a batch with no
  // valid key) gets zeros, as onnxruntime computes it, not NaN.
  attrs.push_back(b.named("nan_to_zero", builder.getUnitAttr()));
  FailureOr<Value> attention = b.create<AttentionOp>(operands, attrs);
  if (failed(attention))
    return failure();
  if (splitInputs) {
    attention = mergeHeads(b, *attention);
    if (failed(attention))
      return failure();
  }
  return b.bindOutputs({*attention, key, value});
}

/// Repeats each of the `groups` entries of the 1-D `perGroup` value
/// `channels / groups` times: ONNX's opset-18 GroupNormalization scales per
/// group, cleave.group_norm per channel.
FailureOr<Value> expandGroupsToChannels(NodeBinder &b, Value perGroup,
                                        int64_t groups, int64_t channels,
                                        StringRef role) {
  auto type = NodeBinder::getType(perGroup);
  if (type.getRank() != 1 || type.getDimSize(0) != groups)
    return b.emitError() << role << " must have shape " << groups
                         << " (num_groups) at opset 18, not "
                         << formatShape(type.getShape());
  if (groups == channels)
    return perGroup;
  OpBuilder &builder = b.getBuilder();
  Type elementType = type.getElementType();
  FailureOr<Value> column = b.create<UnsqueezeOp>(
      {perGroup}, {b.named("axes", builder.getDenseI64ArrayAttr({1}))});
  if (failed(column))
    return failure();
  FailureOr<Value> repeated = b.create<ExpandOp>(
      {*column}, {},
      RankedTensorType::get({groups, channels / groups}, elementType));
  if (failed(repeated))
    return failure();
  return b.create<ReshapeOp>({*repeated}, {},
                             RankedTensorType::get({channels}, elementType));
}

template <bool perGroupScale> LogicalResult importGroupNorm(NodeBinder &b) {
  Value x, scale, bias;
  float epsilon;
  int64_t groups;
  if (failed(b.input(0, x)) || failed(b.input(1, scale)) ||
      failed(b.input(2, bias)) ||
      failed(b.floatAttr("epsilon", epsilon, 1e-5f)) ||
      failed(b.requiredIntAttr("num_groups", groups)))
    return failure();
  auto type = NodeBinder::getType(x);
  if (type.getRank() < 2)
    return b.emitError() << "input must have rank 2 or more";
  if (failed(b.requireStaticDim(x, 1, "the channel count")))
    return failure();
  int64_t channels = type.getDimSize(1);
  if (groups < 1 || channels % groups != 0)
    return b.emitError() << "num_groups " << groups
                         << " does not divide the channel count " << channels;
  if (perGroupScale) {
    FailureOr<Value> channelScale =
        expandGroupsToChannels(b, scale, groups, channels, "scale");
    if (failed(channelScale))
      return failure();
    FailureOr<Value> channelBias =
        expandGroupsToChannels(b, bias, groups, channels, "bias");
    if (failed(channelBias))
      return failure();
    scale = *channelScale;
    bias = *channelBias;
  }
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<GroupNormOp>(
      {x, scale, bias},
      {b.named("num_groups", builder.getI64IntegerAttr(groups)),
       b.named("epsilon", builder.getF32FloatAttr(epsilon))});
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// Opset 13 semantics: one axis, default the last.
template <typename OpTy> LogicalResult importSoftmax(NodeBinder &b) {
  Value x;
  int64_t axis;
  if (failed(b.input(0, x)) || failed(b.intAttr("axis", axis, -1)) ||
      failed(b.normalizeAxis(axis, NodeBinder::getType(x).getRank(), "axis")))
    return failure();
  return b.replaceWith<OpTy>(
      {x}, {b.named("axis", b.getBuilder().getI64IntegerAttr(axis))});
}

/// Before opset 13 the input is coerced to 2-D at `axis` (default 1) and
/// normalised over the second dimension: a reshape around a last-axis
/// softmax.
template <typename OpTy> LogicalResult importSoftmaxCoerced(NodeBinder &b) {
  Value x;
  int64_t axis;
  if (failed(b.input(0, x)) || failed(b.intAttr("axis", axis, 1)))
    return failure();
  auto type = NodeBinder::getType(x);
  int64_t rank = type.getRank();
  if (failed(b.normalizeAxis(axis, rank, "axis")))
    return failure();
  OpBuilder &builder = b.getBuilder();
  if (axis == rank - 1)
    return b.replaceWith<OpTy>(
        {x}, {b.named("axis", builder.getI64IntegerAttr(axis))});
  if (!type.hasStaticShape())
    return b.emitError() << "the input shape must be static to coerce it to "
                            "2-D";
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rows = ShapedType::getNumElements(shape.take_front(axis));
  int64_t cols = ShapedType::getNumElements(shape.drop_front(axis));
  FailureOr<Value> matrix = b.create<ReshapeOp>(
      {x}, {}, RankedTensorType::get({rows, cols}, type.getElementType()));
  if (failed(matrix))
    return failure();
  FailureOr<Value> normalized = b.create<OpTy>(
      {*matrix}, {b.named("axis", builder.getI64IntegerAttr(1))});
  if (failed(normalized))
    return failure();
  return b.replaceWith<ReshapeOp>({*normalized}, {}, type);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// `axesInput`: the opsets where the axes are input 1 and
/// `noop_with_empty_axes` exists; before that they are an attribute.
template <typename OpTy, bool axesInput>
LogicalResult importReduce(NodeBinder &b) {
  Value x;
  int64_t keepdims, noopWithEmptyAxes = 0;
  SmallVector<int64_t> axes;
  if (failed(b.input(0, x)) || failed(b.intAttr("keepdims", keepdims, 1)))
    return failure();
  if (axesInput) {
    if (failed(b.intAttr("noop_with_empty_axes", noopWithEmptyAxes, 0)))
      return failure();
    if (b.hasInput(1) && failed(b.constantInts(1, "axes", axes)))
      return failure();
  } else if (failed(b.intsAttr("axes", axes))) {
    return failure();
  }
  int64_t rank = NodeBinder::getType(x).getRank();
  if (axes.empty()) {
    if (noopWithEmptyAxes)
      return b.bindOutputs(x);
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  if (failed(b.normalizeAxes(axes, rank, "axis")))
    return failure();
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<OpTy>(
      {x}, {b.named("axes", builder.getDenseI64ArrayAttr(axes)),
            b.named("keepdims", builder.getBoolAttr(keepdims != 0))});
}

constexpr StringLiteral kAutoPad = "`auto_pad` resolved to explicit pads";
constexpr StringLiteral kAxesAttr = "`axes` attribute; empty means every axis";
constexpr StringLiteral kAxesInput =
    "constant `axes` input; empty means every axis unless "
    "`noop_with_empty_axes`";

constexpr StringLiteral kAttentionOps =
    "cleave.attention cleave.concat cleave.reshape cleave.transpose "
    "cleave.pad cleave.constant cleave.unsqueeze cleave.less_equal cleave.and "
    "cleave.where cleave.matmul cleave.mul cleave.div cleave.tanh cleave.add "
    "cleave.softmax";

const OpHandler nnHandlers[] = {
    {"Attention", 23, importAttention, kAttentionOps,
     "heads of 4-D inputs from their shapes; default scale 1/sqrt(head "
     "size); past_key/past_value concatenated into present_key/"
     "present_value (3-D inputs split into heads for them); a mask shorter "
     "than the keys padded with hidden keys; a causal mask behind a past "
     "cache aligned to the bottom right. A used "
     "`qk_matmul_output` writes the attention out as its steps (scaled "
     "product, softcap, masks, softmax, product with the values) and reads "
     "it after the step `qk_matmul_output_mode` names (0 to 3); a query "
     "without keys then has zero weights."},
    {"Attention", 24, importAttention, kAttentionOps,
     "as at opset 23; `nonpad_kv_seqlen` hides each batch's keys from that "
     "count on and moves a causal mask's diagonal by `nonpad_kv_seqlen - "
     "q_sequence_length`; a query without keys has zero weights. Not with "
     "past_key/past_value."},
    {"AveragePool", 11, importAveragePool, "cleave.average_pool", kAutoPad},
    {"BatchNormalization", 11, importBatchNorm, "cleave.batch_norm",
     "`training_mode` normalises by the batch's statistics; the running "
     "statistics outputs must be unused (a training step updates the "
     "running statistics in place)"},
    {"Conv", 11, importConv, "cleave.conv",
     "`auto_pad` resolved to explicit pads; kernel shape from the weight"},
    {"ConvTranspose", 11, importConvTranspose, "cleave.conv_transpose",
     "`output_shape` and `auto_pad` resolved to explicit pads"},
    {"Gemm", 11, importGemm, "cleave.gemm", "optional `C` broadcasts"},
    {"GlobalAveragePool", 11, importGlobalPool<GlobalAveragePoolOp>,
     "cleave.global_average_pool", ""},
    {"GlobalMaxPool", 11, importGlobalPool<GlobalMaxPoolOp>,
     "cleave.global_max_pool", ""},
    {"GroupNormalization", 18, importGroupNorm<true>,
     "cleave.group_norm cleave.unsqueeze cleave.expand cleave.reshape",
     "per-group scale and bias expanded to per-channel"},
    {"GroupNormalization", 21, importGroupNorm<false>, "cleave.group_norm",
     "per-channel scale and bias"},
    {"InstanceNormalization", 11, importInstanceNorm, "cleave.instance_norm",
     ""},
    {"LayerNormalization", 17, importLayerNorm, "cleave.layer_norm",
     "negative axis normalised; stash_type 1 (float) only; Mean/InvStdDev "
     "outputs must be unused"},
    {"LogSoftmax", 11, importSoftmaxCoerced<LogSoftmaxOp>,
     "cleave.log_softmax cleave.reshape",
     "coerced to 2-D at `axis` (default 1): reshape around a last-axis op"},
    {"LogSoftmax", 13, importSoftmax<LogSoftmaxOp>, "cleave.log_softmax",
     "one axis (default -1)"},
    {"MatMul", 11, importMatMul, "cleave.matmul", ""},
    {"MaxPool", 11, importMaxPool, "cleave.max_pool",
     "`auto_pad` resolved to explicit pads; Indices output must be unused"},
    {"RMSNormalization", 23, importRmsNorm, "cleave.rms_norm",
     "negative axis normalised; stash_type 1 (float32) only; scale of the "
     "input's element type"},
    {"ReduceL2", 11, importReduce<ReduceL2Op, false>, "cleave.reduce_l2",
     kAxesAttr},
    {"ReduceL2", 18, importReduce<ReduceL2Op, true>, "cleave.reduce_l2",
     kAxesInput},
    {"ReduceMax", 11, importReduce<ReduceMaxOp, false>, "cleave.reduce_max",
     kAxesAttr},
    {"ReduceMax", 18, importReduce<ReduceMaxOp, true>, "cleave.reduce_max",
     kAxesInput},
    {"ReduceMean", 11, importReduce<ReduceMeanOp, false>, "cleave.reduce_mean",
     kAxesAttr},
    {"ReduceMean", 18, importReduce<ReduceMeanOp, true>, "cleave.reduce_mean",
     kAxesInput},
    {"ReduceMin", 11, importReduce<ReduceMinOp, false>, "cleave.reduce_min",
     kAxesAttr},
    {"ReduceMin", 18, importReduce<ReduceMinOp, true>, "cleave.reduce_min",
     kAxesInput},
    {"ReduceProd", 11, importReduce<ReduceProdOp, false>, "cleave.reduce_prod",
     kAxesAttr},
    {"ReduceProd", 18, importReduce<ReduceProdOp, true>, "cleave.reduce_prod",
     kAxesInput},
    {"ReduceSum", 11, importReduce<ReduceSumOp, false>, "cleave.reduce_sum",
     kAxesAttr},
    {"ReduceSum", 13, importReduce<ReduceSumOp, true>, "cleave.reduce_sum",
     kAxesInput},
    {"ReduceSumSquare", 11, importReduce<ReduceSumSquareOp, false>,
     "cleave.reduce_sum_square", kAxesAttr},
    {"ReduceSumSquare", 18, importReduce<ReduceSumSquareOp, true>,
     "cleave.reduce_sum_square", kAxesInput},
    {"RotaryEmbedding", 23, importRotaryEmbedding, "cleave.rotary_embedding",
     "one to one"},
    {"Softmax", 11, importSoftmaxCoerced<SoftmaxOp>,
     "cleave.softmax cleave.reshape",
     "coerced to 2-D at `axis` (default 1): reshape around a last-axis op"},
    {"Softmax", 13, importSoftmax<SoftmaxOp>, "cleave.softmax",
     "one axis (default -1)"},
};

} // namespace

ArrayRef<OpHandler> getNNHandlers() { return nnHandlers; }

} // namespace cleave::onnx_import
