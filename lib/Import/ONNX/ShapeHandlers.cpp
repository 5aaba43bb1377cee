//===- ShapeHandlers.cpp - data movement, shapes, constants ---------------===//
//
// Handlers of reshapes, permutations, slicing, padding, resizing, the
// shape-computation operators (which fold to constants once shapes are
// static) and constants. Configuration inputs become attributes; their
// values must be constants after folding.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "NodeBinder.h"
#include "OpHandlers.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>

using namespace mlir;

namespace cleave::onnx_import {
namespace {

//===----------------------------------------------------------------------===//
// Reshaping and permuting
//===----------------------------------------------------------------------===//

LogicalResult importReshape(NodeBinder &b) {
  Value x;
  SmallVector<int64_t> target;
  int64_t allowZero;
  if (failed(b.input(0, x)) || failed(b.constantInts(1, "shape", target)) ||
      failed(b.intAttr("allowzero", allowZero, 0)))
    return failure();
  auto type = NodeBinder::getType(x);
  std::string error;
  FailureOr<SmallVector<int64_t>> shape =
      resolveReshape(type.getShape(), target, allowZero != 0, error);
  if (failed(shape))
    return b.emitError() << "cannot reshape " << formatShape(type.getShape())
                         << " to " << formatList(target) << ": " << error;
  return b.replaceWith<ReshapeOp>({x}, {}, type.clone(*shape));
}

LogicalResult importFlatten(NodeBinder &b) {
  Value x;
  int64_t axis;
  if (failed(b.input(0, x)) || failed(b.intAttr("axis", axis, 1)))
    return failure();
  int64_t rank = NodeBinder::getType(x).getRank();
  // Unlike other axes, Flatten's may equal the rank.
  if (axis < -rank || axis > rank)
    return b.emitError() << "axis " << axis << " is out of range for rank "
                         << rank;
  if (axis < 0)
    axis += rank;
  return b.replaceWith<FlattenOp>(
      {x}, {b.named("axis", b.getBuilder().getI64IntegerAttr(axis))});
}

LogicalResult importTranspose(NodeBinder &b) {
  Value x;
  SmallVector<int64_t> perm;
  if (failed(b.input(0, x)) || failed(b.intsAttr("perm", perm)))
    return failure();
  int64_t rank = NodeBinder::getType(x).getRank();
  // ONNX's default reverses the dimensions.
  if (!b.hasAttr("perm"))
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank)
    return b.emitError() << "perm has " << perm.size()
                         << " entries but the input has rank " << rank;
  SmallVector<int64_t> sorted(perm);
  if (failed(b.normalizeAxes(sorted, rank, "perm entry")))
    return failure();
  for (int64_t &entry : perm)
    if (entry < 0)
      entry += rank;
  return b.replaceWith<TransposeOp>(
      {x}, {b.named("perm", b.getBuilder().getDenseI64ArrayAttr(perm))});
}

/// Reads the axes of Squeeze/Unsqueeze: an attribute before opset 13, an
/// input after.
template <bool axesInput>
LogicalResult readSqueezeAxes(NodeBinder &b, SmallVectorImpl<int64_t> &axes,
                              bool &given) {
  if (axesInput) {
    given = b.hasInput(1);
    return given ? b.constantInts(1, "axes", axes) : success();
  }
  given = b.hasAttr("axes");
  return b.intsAttr("axes", axes);
}

template <bool axesInput> LogicalResult importSqueeze(NodeBinder &b) {
  Value x;
  SmallVector<int64_t> axes;
  bool given;
  if (failed(b.input(0, x)) ||
      failed(readSqueezeAxes<axesInput>(b, axes, given)))
    return failure();
  auto type = NodeBinder::getType(x);
  int64_t rank = type.getRank();
  if (axes.empty()) {
    // Without axes every dimension of size 1 goes, which needs to know them.
    for (int64_t i = 0; i < rank; ++i) {
      if (type.isDynamicDim(i))
        return b.emitError() << "without axes, Squeeze needs a static input "
                                "shape, but dimension "
                             << i << " is dynamic";
      if (type.getDimSize(i) == 1)
        axes.push_back(i);
    }
  }
  if (failed(b.normalizeAxes(axes, rank, "axis")))
    return failure();
  for (int64_t axis : axes)
    if (!type.isDynamicDim(axis) && type.getDimSize(axis) != 1)
      return b.emitError() << "cannot squeeze axis " << axis << " of size "
                           << type.getDimSize(axis);
  return b.replaceWith<SqueezeOp>(
      {x}, {b.named("axes", b.getBuilder().getDenseI64ArrayAttr(axes))});
}

template <bool axesInput> LogicalResult importUnsqueeze(NodeBinder &b) {
  Value x;
  SmallVector<int64_t> axes;
  bool given;
  if (failed(b.input(0, x)) ||
      failed(readSqueezeAxes<axesInput>(b, axes, given)))
    return failure();
  if (!given)
    return b.emitError() << "the axes are required";
  int64_t resultRank = NodeBinder::getType(x).getRank() + axes.size();
  if (failed(b.normalizeAxes(axes, resultRank, "axis")))
    return failure();
  return b.replaceWith<UnsqueezeOp>(
      {x}, {b.named("axes", b.getBuilder().getDenseI64ArrayAttr(axes))});
}

LogicalResult importExpand(NodeBinder &b) {
  Value x;
  SmallVector<int64_t> shape;
  if (failed(b.input(0, x)) || failed(b.constantInts(1, "shape", shape)))
    return failure();
  for (int64_t dim : shape)
    if (dim < 0)
      return b.emitError() << "shape entries must be non-negative, not " << dim;
  auto type = NodeBinder::getType(x);
  FailureOr<SmallVector<int64_t>> result =
      broadcastShapes(type.getShape(), shape);
  if (failed(result))
    return b.emitError() << "cannot expand " << formatShape(type.getShape())
                         << " to " << formatShape(shape);
  return b.replaceWith<ExpandOp>({x}, {}, type.clone(*result));
}

LogicalResult importTile(NodeBinder &b) {
  Value x;
  SmallVector<int64_t> repeats;
  if (failed(b.input(0, x)) || failed(b.constantInts(1, "repeats", repeats)))
    return failure();
  int64_t rank = NodeBinder::getType(x).getRank();
  if (static_cast<int64_t>(repeats.size()) != rank)
    return b.emitError() << "repeats has " << repeats.size()
                         << " entries but the input has rank " << rank;
  for (int64_t repeat : repeats)
    if (repeat < 0)
      return b.emitError() << "repeats must be non-negative, not " << repeat;
  return b.replaceWith<TileOp>(
      {x}, {b.named("repeats", b.getBuilder().getDenseI64ArrayAttr(repeats))});
}

//===----------------------------------------------------------------------===//
// Joining and splitting
//===----------------------------------------------------------------------===//

LogicalResult importConcat(NodeBinder &b) {
  SmallVector<Value> inputs;
  int64_t axis;
  if (failed(b.allInputs(inputs)) || failed(b.requiredIntAttr("axis", axis)) ||
      failed(b.normalizeAxis(axis, NodeBinder::getType(inputs[0]).getRank(),
                             "axis")))
    return failure();
  return b.replaceWith<ConcatOp>(
      inputs, {b.named("axis", b.getBuilder().getI64IntegerAttr(axis))});
}

/// Split's sizes: attribute `split` before opset 13, input 1 after, and the
/// `num_outputs` attribute from opset 18.
enum class SplitForm { Attribute, Input, InputOrCount };

template <SplitForm form> LogicalResult importSplit(NodeBinder &b) {
  Value x;
  int64_t axis;
  SmallVector<int64_t> sizes;
  if (failed(b.input(0, x)) || failed(b.intAttr("axis", axis, 0)))
    return failure();
  auto type = NodeBinder::getType(x);
  if (failed(b.normalizeAxis(axis, type.getRank(), "axis")))
    return failure();
  if (form == SplitForm::Attribute) {
    if (failed(b.intsAttr("split", sizes)))
      return failure();
  } else if (b.hasInput(1) && failed(b.constantInts(1, "split", sizes))) {
    return failure();
  }
  int64_t outputs = b.getNumOutputs();
  std::optional<int64_t> numOutputs;
  if (form == SplitForm::InputOrCount && b.hasAttr("num_outputs")) {
    int64_t count;
    if (failed(b.intAttr("num_outputs", count, 0)))
      return failure();
    if (!sizes.empty())
      return b.emitError() << "give either the split input or num_outputs, "
                              "not both";
    numOutputs = count;
  }

  if (sizes.empty()) {
    if (failed(b.requireStaticDim(x, axis, "an even split")))
      return failure();
    int64_t dim = type.getDimSize(axis);
    int64_t parts = numOutputs.value_or(outputs);
    if (parts < 1)
      return b.emitError() << "cannot split into " << parts << " parts";
    if (dim % parts == 0) {
      sizes.assign(parts, dim / parts);
    } else if (numOutputs) {
      // num_outputs rounds the chunk up and leaves the last one smaller.
      int64_t chunk = llvm::divideCeil(dim, parts);
      int64_t last = dim - chunk * (parts - 1);
      if (last < 0)
        return b.emitError() << "cannot split dimension " << axis << " of size "
                             << dim << " into " << parts << " parts";
      sizes.assign(parts - 1, chunk);
      sizes.push_back(last);
    } else {
      return b.emitError() << "dimension " << axis << " of size " << dim
                           << " does not split evenly into " << parts
                           << " outputs";
    }
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    return b.emitError() << "the split has " << sizes.size()
                         << " parts but the node has " << outputs << " outputs";
  return b.replaceWith<SplitOp>(
      {x}, {b.named("axis", b.getBuilder().getI64IntegerAttr(axis)),
            b.named("sizes", b.getBuilder().getDenseI64ArrayAttr(sizes))});
}

LogicalResult importSlice(NodeBinder &b) {
  Value x;
  SmallVector<int64_t> starts, ends, axes, steps;
  if (failed(b.input(0, x)) || failed(b.constantInts(1, "starts", starts)) ||
      failed(b.constantInts(2, "ends", ends)) ||
      (b.hasInput(3) && failed(b.constantInts(3, "axes", axes))) ||
      (b.hasInput(4) && failed(b.constantInts(4, "steps", steps))))
    return failure();
  size_t count = starts.size();
  if (!b.hasInput(3))
    for (size_t i = 0; i < count; ++i)
      axes.push_back(i);
  if (!b.hasInput(4))
    steps.assign(count, 1);
  if (ends.size() != count || axes.size() != count || steps.size() != count)
    return b.emitError() << "starts, ends, axes and steps have "
                         << starts.size() << ", " << ends.size() << ", "
                         << axes.size() << " and " << steps.size()
                         << " entries; they must agree";

  auto type = NodeBinder::getType(x);
  int64_t rank = type.getRank();
  // The canonical form has an entry per dimension; untouched dimensions are
  // taken whole.
  SmallVector<int64_t> fullStarts(rank, 0), fullEnds(type.getShape()),
      fullSteps(rank, 1);
  llvm::SmallSet<int64_t, 4> seen;
  for (size_t i = 0; i < count; ++i) {
    int64_t axis = axes[i];
    if (failed(b.normalizeAxis(axis, rank, "axis")))
      return failure();
    if (!seen.insert(axis).second)
      return b.emitError() << "axis " << axis << " is sliced twice";
    if (steps[i] == 0)
      return b.emitError() << "steps must be non-zero";
    if (failed(b.requireStaticDim(x, axis, "slicing")))
      return failure();
    int64_t dim = type.getDimSize(axis);
    int64_t start = starts[i], end = ends[i], step = steps[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    if (dim == 0) {
      start = end = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    fullStarts[axis] = start;
    fullEnds[axis] = end;
    fullSteps[axis] = step;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (!seen.contains(i) && failed(b.requireStaticDim(x, i, "slicing")))
      return failure();
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<SliceOp>(
      {x}, {b.named("starts", builder.getDenseI64ArrayAttr(fullStarts)),
            b.named("ends", builder.getDenseI64ArrayAttr(fullEnds)),
            b.named("steps", builder.getDenseI64ArrayAttr(fullSteps))});
}

LogicalResult importGather(NodeBinder &b) {
  Value data, indices;
  int64_t axis;
  if (failed(b.input(0, data)) || failed(b.input(1, indices)) ||
      failed(b.intAttr("axis", axis, 0)) ||
      failed(
          b.normalizeAxis(axis, NodeBinder::getType(data).getRank(), "axis")))
    return failure();
  return b.replaceWith<GatherOp>(
      {data, indices},
      {b.named("axis", b.getBuilder().getI64IntegerAttr(axis))});
}

//===----------------------------------------------------------------------===//
// Padding and resizing
//===----------------------------------------------------------------------===//

LogicalResult importPad(NodeBinder &b) {
  Value x;
  std::string mode;
  SmallVector<int64_t> pads, axes;
  SmallVector<double> value;
  if (failed(b.input(0, x)) || failed(b.stringAttr("mode", mode, "constant")) ||
      failed(b.constantInts(1, "pads", pads)) ||
      (b.hasInput(2) &&
       failed(b.constantDoubles(2, "constant_value", value))) ||
      (b.hasInput(3) && failed(b.constantInts(3, "axes", axes))))
    return failure();
  if (value.size() > 1)
    return b.emitError() << "constant_value must be a scalar";
  auto type = NodeBinder::getType(x);
  int64_t rank = type.getRank();
  bool axesGiven = b.hasInput(3);
  if (!axesGiven)
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  // The pads follow the order of `axes`: begin pads, then end pads.
  if (pads.size() != 2 * axes.size())
    return b.emitError() << "pads has " << pads.size() << " entries; "
                         << (axesGiven ? "the axes" : "the input rank")
                         << " need " << 2 * axes.size();
  SmallVector<int64_t> fullPads(2 * rank, 0);
  llvm::SmallSet<int64_t, 4> seen;
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (failed(b.normalizeAxis(axis, rank, "axis")))
      return failure();
    if (!seen.insert(axis).second)
      return b.emitError() << "axis " << axis << " is padded twice";
    fullPads[axis] = pads[i];
    fullPads[axis + rank] = pads[i + axes.size()];
  }

  // Negative pads crop. For the constant mode cropping commutes with
  // padding, so it becomes a slice of the padded tensor.
  bool crops = llvm::any_of(fullPads, [](int64_t pad) { return pad < 0; });
  if (crops && mode != "constant")
    return b.emitError() << "negative pads are only supported in constant "
                            "mode";
  SmallVector<int64_t> positive(fullPads);
  for (int64_t &pad : positive)
    pad = std::max<int64_t>(pad, 0);
  OpBuilder &builder = b.getBuilder();
  FailureOr<Value> padded = b.create<PadOp>(
      {x}, {b.named("pads", builder.getDenseI64ArrayAttr(positive)),
            b.named("mode", builder.getStringAttr(mode)),
            b.named("value", builder.getF64FloatAttr(
                                 value.empty() ? 0.0 : value.front()))});
  if (failed(padded))
    return failure();
  if (!crops)
    return b.bindOutputs(*padded);

  auto paddedType = NodeBinder::getType(*padded);
  if (!paddedType.hasStaticShape())
    return b.emitError() << "negative pads need a static input shape";
  SmallVector<int64_t> starts(rank), ends(rank), steps(rank, 1);
  for (int64_t i = 0; i < rank; ++i) {
    // Compared before any is negated: a pad may be any int64, the most
    // negative one included.
    int64_t size = paddedType.getDimSize(i);
    int64_t cropBegin = std::min<int64_t>(fullPads[i], 0);
    int64_t cropEnd = std::min<int64_t>(fullPads[i + rank], 0);
    if (cropBegin < -size || cropEnd < -size || size + cropEnd < -cropBegin)
      return b.emitError() << "negative pads remove more than dimension " << i
                           << " holds";
    starts[i] = -cropBegin;
    ends[i] = size + cropEnd;
  }
  return b.replaceWith<SliceOp>(
      {*padded}, {b.named("starts", builder.getDenseI64ArrayAttr(starts)),
                  b.named("ends", builder.getDenseI64ArrayAttr(ends)),
                  b.named("steps", builder.getDenseI64ArrayAttr(steps))});
}

/// True when input `index` is given and is not an empty tensor (opsets 11
/// and 12 require `scales` even when `sizes` is used, so exporters pass an
/// empty one).
bool hasNonEmptyInput(NodeBinder &b, unsigned index) {
  Value value;
  if (!b.hasInput(index) || failed(b.optionalInput(index, value)) || !value)
    return false;
  auto type = NodeBinder::getType(value);
  return !type.hasStaticShape() || type.getNumElements() != 0;
}

/// The size `size` (computed in floating point) of dimension `axis` after a
/// resize, or an error when no tensor dimension is that large.
FailureOr<int64_t> getResizedDim(NodeBinder &b, int64_t axis, int64_t from,
                                 double size) {
  // Far above any real dimension, and exactly representable both ways.
  constexpr double kLargest = 0x1p62;
  if (!(size < kLargest)) {
    b.emitError() << "resizing dimension " << axis << " of size " << from
                  << " gives " << size
                  << " elements, more than a dimension can hold";
    return failure();
  }
  return static_cast<int64_t>(size);
}

LogicalResult importResize(NodeBinder &b) {
  Value x;
  std::string mode, coordinateMode, nearestMode, aspectPolicy;
  float cubicCoeffA, extrapolationValue;
  int64_t excludeOutside, antialias;
  SmallVector<int64_t> axes;
  if (failed(b.input(0, x)) || failed(b.stringAttr("mode", mode, "nearest")) ||
      failed(b.stringAttr("coordinate_transformation_mode", coordinateMode,
                          "half_pixel")) ||
      failed(b.stringAttr("nearest_mode", nearestMode, "round_prefer_floor")) ||
      failed(
          b.stringAttr("keep_aspect_ratio_policy", aspectPolicy, "stretch")) ||
      failed(b.floatAttr("cubic_coeff_a", cubicCoeffA, -0.75f)) ||
      failed(b.floatAttr("extrapolation_value", extrapolationValue, 0.0f)) ||
      failed(b.intAttr("exclude_outside", excludeOutside, 0)) ||
      failed(b.intAttr("antialias", antialias, 0)) ||
      failed(b.intsAttr("axes", axes)))
    return failure();
  if (coordinateMode == "tf_crop_and_resize")
    return b.emitError() << "coordinate_transformation_mode "
                            "'tf_crop_and_resize' (with a region of "
                            "interest) is not supported";
  if (antialias != 0)
    return b.emitError() << "antialiasing is not supported";

  auto type = NodeBinder::getType(x);
  int64_t rank = type.getRank();
  if (!type.hasStaticShape())
    return b.emitError() << "the input shape must be static";
  bool useScales = hasNonEmptyInput(b, 2), useSizes = hasNonEmptyInput(b, 3);
  if (useScales == useSizes)
    return b.emitError() << "exactly one of the scales and sizes inputs must "
                            "be given";
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t &axis : axes) {
    if (failed(b.normalizeAxis(axis, rank, "axis")))
      return failure();
    if (!seen.insert(axis).second)
      return b.emitError() << "axis " << axis << " is given twice";
  }

  SmallVector<double> scales(rank, 1.0);
  SmallVector<int64_t> outShape(type.getShape());
  if (useScales) {
    SmallVector<double> given;
    if (failed(b.constantDoubles(2, "scales", given)))
      return failure();
    if (given.size() != axes.size())
      return b.emitError() << "scales has " << given.size()
                           << " entries; expected " << axes.size();
    for (auto [axis, scale] : llvm::zip(axes, given)) {
      if (!(scale > 0) || !std::isfinite(scale))
        return b.emitError() << "scales must be positive, not " << scale;
      scales[axis] = scale;
      FailureOr<int64_t> size = getResizedDim(
          b, axis, type.getDimSize(axis),
          std::floor(static_cast<double>(type.getDimSize(axis)) * scale));
      if (failed(size))
        return failure();
      outShape[axis] = *size;
    }
  } else {
    SmallVector<int64_t> sizes;
    if (failed(b.constantInts(3, "sizes", sizes)))
      return failure();
    if (sizes.size() != axes.size())
      return b.emitError() << "sizes has " << sizes.size()
                           << " entries; expected " << axes.size();
    for (auto [axis, size] : llvm::zip(axes, sizes))
      if (type.getDimSize(axis) == 0 || size < 0)
        return b.emitError()
               << "cannot resize dimension " << axis << " of size "
               << type.getDimSize(axis) << " to " << size;
    if (aspectPolicy == "stretch") {
      for (auto [axis, size] : llvm::zip(axes, sizes)) {
        scales[axis] = static_cast<double>(size) / type.getDimSize(axis);
        outShape[axis] = size;
      }
    } else if (aspectPolicy == "not_larger" || aspectPolicy == "not_smaller") {
      // One scale for every resized axis keeps the aspect ratio.
      bool notLarger = aspectPolicy == "not_larger";
      double scale = notLarger ? INFINITY : 0.0;
      for (auto [axis, size] : llvm::zip(axes, sizes)) {
        double ratio = static_cast<double>(size) / type.getDimSize(axis);
        scale = notLarger ? std::min(scale, ratio) : std::max(scale, ratio);
      }
      for (int64_t axis : axes) {
        scales[axis] = scale;
        FailureOr<int64_t> size =
            getResizedDim(b, axis, type.getDimSize(axis),
                          std::floor(scale * type.getDimSize(axis) + 0.5));
        if (failed(size))
          return failure();
        outShape[axis] = *size;
      }
    } else {
      return b.emitError() << "keep_aspect_ratio_policy '" << aspectPolicy
                           << "' is not one of stretch, not_larger, "
                              "not_smaller";
    }
  }

  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<ResizeOp>(
      {x},
      {b.named("scales", builder.getDenseF64ArrayAttr(scales)),
       b.named("mode", builder.getStringAttr(mode)),
       b.named("coordinate_transformation_mode",
               builder.getStringAttr(coordinateMode)),
       b.named("nearest_mode", builder.getStringAttr(nearestMode)),
       b.named("cubic_coeff_a", builder.getF32FloatAttr(cubicCoeffA)),
       b.named("exclude_outside", builder.getBoolAttr(excludeOutside != 0)),
       b.named("extrapolation_value",
               builder.getF32FloatAttr(extrapolationValue))},
      type.clone(outShape));
}

//===----------------------------------------------------------------------===//
// Forwarding
//===----------------------------------------------------------------------===//

LogicalResult importIdentity(NodeBinder &b) {
  Value x;
  if (failed(b.input(0, x)))
    return failure();
  return b.bindOutputs(x);
}

LogicalResult importDropout(NodeBinder &b) {
  Value x;
  if (failed(b.input(0, x)) ||
      failed(b.rejectUsedOutputs(1, "Dropout's mask output")))
    return failure();
  // Inference drops nothing, whatever the ratio (an attribute before opset
  // 12, input 1 after) and the seed.
  b.ignoreAttr("ratio");
  b.ignoreAttr("seed");
  // From opset 12 training mode is input 2; inference drops nothing.
  if (b.getOpset() >= 12 && b.hasInput(2)) {
    SmallVector<int64_t> training;
    if (failed(b.constantInts(2, "training_mode", training)))
      return failure();
    if (llvm::any_of(training, [](int64_t v) { return v != 0; }))
      return b.emitError() << "training mode is not supported";
  }
  return b.bindOutputs(x);
}

//===----------------------------------------------------------------------===//
// Constants and shape computation
//===----------------------------------------------------------------------===//

LogicalResult importConstant(NodeBinder &b) {
  static constexpr StringLiteral valueAttrs[] = {
      "value",      "value_float",  "value_floats",  "value_int",
      "value_ints", "value_string", "value_strings", "sparse_value"};
  SmallVector<StringRef> present;
  for (StringRef attr : valueAttrs)
    if (b.hasAttr(attr))
      present.push_back(attr);
  if (present.size() != 1)
    return b.emitError() << "needs exactly one value attribute, not "
                         << present.size();
  StringRef attr = present.front();
  OpBuilder &builder = b.getBuilder();
  if (attr == "sparse_value")
    return b.emitError() << "sparse constants are not supported";
  if (attr == "value_string" || attr == "value_strings")
    return b.emitError() << "string constants are not supported";
  if (attr == "value") {
    Value value;
    if (failed(b.tensorAttr("value", value)))
      return failure();
    return b.bindOutputs(value);
  }
  if (attr == "value_float" || attr == "value_int") {
    Value value;
    if (attr == "value_float") {
      float f;
      if (failed(b.floatAttr(attr, f, 0.0f)))
        return failure();
      value = b.scalarConstant(builder.getF32Type(), f);
    } else {
      int64_t i;
      if (failed(b.intAttr(attr, i, 0)))
        return failure();
      value = b.constant(DenseElementsAttr::get(
          RankedTensorType::get({}, builder.getI64Type()),
          builder.getI64IntegerAttr(i)));
    }
    return b.bindOutputs(value);
  }
  if (attr == "value_floats") {
    SmallVector<float> floats;
    if (failed(b.floatsAttr(attr, floats)))
      return failure();
    auto type = RankedTensorType::get({static_cast<int64_t>(floats.size())},
                                      builder.getF32Type());
    return b.bindOutputs(
        b.constant(DenseElementsAttr::get(type, ArrayRef<float>(floats))));
  }
  SmallVector<int64_t> ints;
  if (failed(b.intsAttr(attr, ints)))
    return failure();
  auto type = RankedTensorType::get({static_cast<int64_t>(ints.size())},
                                    builder.getI64Type());
  return b.bindOutputs(
      b.constant(DenseElementsAttr::get(type, ArrayRef<int64_t>(ints))));
}

LogicalResult importConstantOfShape(NodeBinder &b) {
  Value shapeValue;
  SmallVector<int64_t> shape;
  if (failed(b.input(0, shapeValue)) ||
      failed(b.constantInts(0, "shape", shape)))
    return failure();
  for (int64_t dim : shape)
    if (dim < 0)
      return b.emitError() << "shape entries must be non-negative, not " << dim;
  OpBuilder &builder = b.getBuilder();
  TypedAttr fill = builder.getF32FloatAttr(0.0f);
  if (b.hasAttr("value")) {
    Value value;
    if (failed(b.tensorAttr("value", value)))
      return failure();
    DenseElementsAttr elements;
    bool isConstant = matchPattern(value, m_Constant(&elements));
    // The attribute was materialised only to read it.
    if (value.use_empty())
      value.getDefiningOp()->erase();
    if (!isConstant || elements.getNumElements() != 1)
      return b.emitError() << "attribute 'value' must hold one element";
    fill = cast<TypedAttr>(*elements.value_begin<Attribute>());
  }
  auto resultType = RankedTensorType::get(shape, fill.getType());
  return b.replaceWith<ConstantOfShapeOp>({shapeValue},
                                          {b.named("value", fill)}, resultType);
}

LogicalResult importShape(NodeBinder &b) {
  Value x;
  if (failed(b.input(0, x)))
    return failure();
  int64_t rank = NodeBinder::getType(x).getRank();
  int64_t start, end;
  if (failed(b.intAttr("start", start, 0)) ||
      failed(b.intAttr("end", end, rank)))
    return failure();
  // Shape (opset 15) clamps start and end into [0, rank].
  auto clampToRank = [&](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  start = clampToRank(start);
  end = std::max(start, clampToRank(end));
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<ShapeOp>(
      {x}, {b.named("start", builder.getI64IntegerAttr(start)),
            b.named("end", builder.getI64IntegerAttr(end))});
}

LogicalResult importSize(NodeBinder &b) {
  Value x;
  if (failed(b.input(0, x)))
    return failure();
  auto type = NodeBinder::getType(x);
  if (!type.hasStaticShape())
    return b.emitError() << "the input shape must be static";
  OpBuilder &builder = b.getBuilder();
  return b.bindOutputs(b.constant(DenseElementsAttr::get(
      RankedTensorType::get({}, builder.getI64Type()),
      builder.getI64IntegerAttr(type.getNumElements()))));
}

LogicalResult importRange(NodeBinder &b) {
  Value start, limit, delta;
  if (failed(b.input(0, start)) || failed(b.input(1, limit)) ||
      failed(b.input(2, delta)))
    return failure();
  Type elementType = NodeBinder::getType(start).getElementType();
  // The result length depends on the operand values, which must therefore
  // be constants. Exporters sometimes pass one-element tensors for the
  // scalars; the operands are rebuilt as scalars.
  SmallVector<double> s, l, d;
  if (failed(b.constantDoubles(0, "start", s)) ||
      failed(b.constantDoubles(1, "limit", l)) ||
      failed(b.constantDoubles(2, "delta", d)))
    return failure();
  if (s.size() != 1 || l.size() != 1 || d.size() != 1)
    return b.emitError() << "start, limit and delta must be scalars";
  if (d[0] == 0)
    return b.emitError() << "delta must be non-zero";
  int64_t length;
  if (isa<IntegerType>(elementType)) {
    SmallVector<int64_t> si, li, di;
    if (failed(b.constantInts(0, "start", si)) ||
        failed(b.constantInts(1, "limit", li)) ||
        failed(b.constantInts(2, "delta", di)))
      return failure();
    std::optional<int64_t> span = llvm::checkedSub(li[0], si[0]);
    if (!span)
      return b.emitError() << "the range is too long";
    length = std::max<int64_t>(0, llvm::divideCeilSigned(*span, di[0]));
    start = b.intScalarConstant(elementType, si[0]);
    limit = b.intScalarConstant(elementType, li[0]);
    delta = b.intScalarConstant(elementType, di[0]);
  } else {
    double count = std::ceil((l[0] - s[0]) / d[0]);
    if (!std::isfinite(count) || count > static_cast<double>(INT32_MAX))
      return b.emitError() << "the range is too long";
    length = std::max<int64_t>(0, static_cast<int64_t>(count));
    start = b.scalarConstant(elementType, s[0]);
    limit = b.scalarConstant(elementType, l[0]);
    delta = b.scalarConstant(elementType, d[0]);
  }
  return b.replaceWith<RangeOp>({start, limit, delta}, {},
                                RankedTensorType::get({length}, elementType));
}

constexpr StringLiteral kAxesAttribute = "`axes` attribute";
constexpr StringLiteral kAxesInputNote = "constant `axes` input";

const OpHandler shapeHandlers[] = {
    {"Concat", 11, importConcat, "cleave.concat", "negative axis normalised"},
    {"Constant", 11, importConstant, "cleave.constant cleave.weight",
     "large tensors stay in the file as weights; no string or sparse values"},
    {"ConstantOfShape", 11, importConstantOfShape, "cleave.constant_of_shape",
     "constant `shape`; folds to a splat constant"},
    {"Dropout", 11, importDropout, "",
     "forwards its input; the mask output must be unused"},
    {"Expand", 11, importExpand, "cleave.expand",
     "constant `shape`; result is the broadcast shape"},
    {"Flatten", 11, importFlatten, "cleave.flatten",
     "negative axis normalised"},
    {"Gather", 11, importGather, "cleave.gather", "negative axis normalised"},
    {"Identity", 11, importIdentity, "", "forwards its input"},
    {"Pad", 11, importPad, "cleave.pad cleave.slice",
     "constant `pads`, `constant_value` and (18+) `axes` inputs; negative "
     "pads crop (constant mode)"},
    {"Range", 11, importRange, "cleave.range",
     "constant operands; folds to a constant"},
    {"Reshape", 11, importReshape, "cleave.reshape",
     "constant `shape`; `0`, `-1` and `allowzero` (14+) resolved"},
    {"Resize", 11, importResize, "cleave.resize",
     "constant `scales` or `sizes` (stored as scales), `axes` and "
     "`keep_aspect_ratio_policy` (18+); no `tf_crop_and_resize`, no "
     "antialias"},
    {"Shape", 11, importShape, "cleave.shape",
     "`start`/`end` (15+) clamped; folds to a constant"},
    {"Size", 11, importSize, "cleave.constant", "static input shape"},
    {"Slice", 11, importSlice, "cleave.slice",
     "constant `starts`/`ends`/`axes`/`steps` clamped to one entry per "
     "dimension"},
    {"Split", 11, importSplit<SplitForm::Attribute>, "cleave.split",
     "`split` attribute or an even split"},
    {"Split", 13, importSplit<SplitForm::Input>, "cleave.split",
     "constant `split` input or an even split"},
    {"Split", 18, importSplit<SplitForm::InputOrCount>, "cleave.split",
     "constant `split` input or `num_outputs` (last part smaller)"},
    {"Squeeze", 11, importSqueeze<false>, "cleave.squeeze", kAxesAttribute},
    {"Squeeze", 13, importSqueeze<true>, "cleave.squeeze", kAxesInputNote},
    {"Tile", 11, importTile, "cleave.tile", "constant `repeats`"},
    {"Transpose", 11, importTranspose, "cleave.transpose",
     "default `perm` reverses the dimensions"},
    {"Unsqueeze", 11, importUnsqueeze<false>, "cleave.unsqueeze",
     kAxesAttribute},
    {"Unsqueeze", 13, importUnsqueeze<true>, "cleave.unsqueeze",
     kAxesInputNote},
};

} // namespace

ArrayRef<OpHandler> getShapeHandlers() { return shapeHandlers; }

} // namespace cleave::onnx_import
