//===- ConvGradients.cpp - derivatives of convolutions, pools ---*- C++ -*-===//
//
// Convolutions, pools and the per-channel normalisations of CNNs and speech
// models. The backward of a window op is another window op:
//
// - a convolution's input cotangent is the transposed convolution of the
//   result cotangent by the same weight, and its weight cotangent is a
//   convolution of the input by the result cotangent, batch and channels
//   exchanged, the forward's strides becoming dilations and its dilations
//   strides;
// - a pool works on planes (`N*C x 1 x spatial`): the cotangent of each tap
//   of each window, laid out along the channels (`K` taps), is summed back
//   where the tap was read by the transposed convolution by a one-hot kernel
//   of `K` input channels; an average's taps all get their window's share,
//   so one channel and a kernel of ones do. max_pool finds its winners
//   among the windows laid out the same way by strided slices.
//
// A transposed convolution gives back the input's size exactly: its end pad
// drops what the forward's end pad added, and its output padding restores
// the rows the forward's stride left unread. Each op is built in its own
// statement, so that every compiler orders them alike.
//
//===----------------------------------------------------------------------===//

#include "GradientRules.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"

#include "mlir/IR/BuiltinTypes.h"

#include <numeric>

using namespace mlir;
using namespace cleave;

namespace {

int64_t product(ArrayRef<int64_t> values) {
  return std::accumulate(values.begin(), values.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// `[from, to)`.
SmallVector<int64_t> range(int64_t from, int64_t to) {
  return llvm::to_vector(llvm::seq<int64_t>(from, to));
}

/// The geometry of a window op over the trailing spatial dimensions of an
/// `N x C x spatial` input.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padBegin, padEnd;
  SmallVector<int64_t> in, out;

  Window(ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
         ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
         ArrayRef<int64_t> inShape, ArrayRef<int64_t> outShape)
      : kernel(kernel), strides(strides), dilations(dilations),
        padBegin(pads.take_front(kernel.size())),
        padEnd(pads.drop_front(kernel.size())), in(inShape.drop_front(2)),
        out(outShape.drop_front(2)) {}

  size_t rank() const { return kernel.size(); }
  /// The input positions one window covers, from its first tap to its last.
  int64_t span(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
  /// How far the last window reaches past the input and the begin pad: the
  /// end pad that gives exactly `out` windows (negative when the stride
  /// leaves input rows after the last window unread).
  int64_t reach(size_t i) const {
    return strides[i] * (out[i] - 1) + span(i) - in[i] - padBegin[i];
  }
  /// The pads of a convolution over the input that gives `out` windows (a
  /// ceil_mode pool's last window may pass the declared end pad).
  SmallVector<int64_t> forwardPads() const {
    SmallVector<int64_t> pads(padBegin);
    for (size_t i = 0; i < rank(); ++i)
      pads.push_back(std::max<int64_t>(reach(i), 0));
    return pads;
  }
};

/// The pads and output padding of the transposed convolution that takes a
/// window op's `out` back to its `in`.
struct TransposedPads {
  SmallVector<int64_t> pads, outputPadding;
};

TransposedPads getTransposedPads(const Window &window) {
  TransposedPads result;
  result.pads = window.padBegin;
  for (size_t i = 0; i < window.rank(); ++i) {
    int64_t reach = window.reach(i);
    result.pads.push_back(std::max<int64_t>(reach, 0));
    result.outputPadding.push_back(std::max<int64_t>(-reach, 0));
  }
  return result;
}

/// The adjoint of `conv(x, weight)` (a window op) with respect to `x`: a
/// tensor of `x`'s shape.
Value transposedConv(GradientBuilder &b, Value g, Value weight,
                     const Window &window, int64_t group) {
  TransposedPads pads = getTransposedPads(window);
  return b.create<ConvTransposeOp>(
      g, weight, Value(), ArrayRef<int64_t>(window.strides),
      ArrayRef<int64_t>(pads.pads), ArrayRef<int64_t>(window.dilations),
      ArrayRef<int64_t>(pads.outputPadding), static_cast<uint64_t>(group));
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// `y[n, m] = sum over c in m's group, taps k of x[n, c, o s + k d - p]
/// w[m, c, k] (+ bias[m])`:
///   dx = conv_transpose(dy, w) with the forward's geometry and groups;
///   dw[m, c, k] = sum over n, o of dy[n, m, o] x[n, c, o s + k d - p], a
///     convolution whose batch is the channels of a group (`C/G`), whose
///     input channels are (group, sample) pairs and whose kernel is dy with
///     samples as its input channels: strides d, dilations s, G groups;
///   dbias = dy summed over everything but the channels.
struct ConvGradientModel
    : GradientInterface::ExternalModel<ConvGradientModel, ConvOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto conv = cast<ConvOp>(op);
    Value x = conv.getInput(), w = conv.getWeight(), g = gradients.results[0];
    ArrayRef<int64_t> wShape = getShape(w);
    Window window(wShape.drop_front(2), conv.getStrides(), conv.getPads(),
                  conv.getDilations(), getShape(x), getShape(g));
    int64_t group = conv.getGroup();
    if (gradients.wanted[0])
      gradients.operands[0] = transposedConv(b, g, w, window, group);
    if (gradients.wanted[1])
      gradients.operands[1] = weightGradient(b, x, g, wShape, window, group);
    if (conv.getBias() && gradients.wanted[2]) {
      SmallVector<int64_t> axes = range(2, getShape(g).size());
      axes.insert(axes.begin(), 0);
      gradients.operands[2] = b.reduceSum(g, axes, /*keepdims=*/false);
    }
    return success();
  }

  static Value weightGradient(GradientBuilder &b, Value x, Value g,
                              ArrayRef<int64_t> wShape, const Window &window,
                              int64_t group) {
    ArrayRef<int64_t> xShape = getShape(x);
    int64_t batch = xShape[0], channels = xShape[1];
    int64_t perGroup = channels / group;
    size_t rank = window.rank();
    SmallVector<int64_t> swapFirstTwo = range(0, rank + 2);
    std::swap(swapFirstTwo[0], swapFirstTwo[1]);

    // x as `C/G x (G * N) x spatial`, channels of a group as the batch.
    Value input;
    if (group == 1 || perGroup == 1) {
      input = b.transpose(x, swapFirstTwo);
    } else {
      SmallVector<int64_t> grouped{batch, group, perGroup};
      grouped.append(window.in);
      SmallVector<int64_t> perm{2, 1, 0};
      perm.append(range(3, rank + 3));
      input = b.transpose(b.reshape(x, grouped), perm);
    }
    SmallVector<int64_t> inputShape{perGroup, group * batch};
    inputShape.append(window.in);
    input = b.reshape(input, inputShape);

    // Its end pad reads up to the last tap of the last window.
    SmallVector<int64_t> pads = window.forwardPads();
    Value kernel = b.transpose(g, swapFirstTwo);
    Value dw = b.create<ConvOp>(
        input, kernel, Value(), ArrayRef<int64_t>(window.dilations),
        ArrayRef<int64_t>(pads), ArrayRef<int64_t>(window.strides),
        static_cast<uint64_t>(group));
    // Without an end pad the convolution may find more taps than the kernel
    // has (the stride left rows unread): they are dropped.
    ArrayRef<int64_t> dwShape = getShape(dw);
    if (dwShape.drop_front(2) != wShape.drop_front(2)) {
      SmallVector<int64_t> starts(rank + 2, 0), steps(rank + 2, 1);
      SmallVector<int64_t> ends{dwShape[0], dwShape[1]};
      ends.append(wShape.begin() + 2, wShape.end());
      dw = b.create<SliceOp>(dw, ArrayRef<int64_t>(starts),
                             ArrayRef<int64_t>(ends), ArrayRef<int64_t>(steps));
    }
    return b.transpose(dw, swapFirstTwo);
  }
};

//===----------------------------------------------------------------------===//
// Pools
//===----------------------------------------------------------------------===//

/// `x` (`N x C x spatial`) as `N*C x 1 x spatial`.
Value toPlanes(GradientBuilder &b, Value x) {
  ArrayRef<int64_t> shape = getShape(x);
  SmallVector<int64_t> planes{shape[0] * shape[1], 1};
  planes.append(shape.begin() + 2, shape.end());
  return b.reshape(x, planes);
}

/// The `K x 1 x kernel` kernel whose output channel `k` reads tap `k` of the
/// window alone.
Value oneHotTaps(GradientBuilder &b, ArrayRef<int64_t> kernel, Type type) {
  int64_t taps = product(kernel);
  SmallVector<int64_t> shape{taps, 1};
  shape.append(kernel.begin(), kernel.end());
  auto tensorType = RankedTensorType::get(shape, type);
  SmallVector<APFloat> values(
      taps * taps, APFloat::getZero(cast<FloatType>(type).getFloatSemantics()));
  for (int64_t k = 0; k < taps; ++k)
    values[k * taps + k] =
        APFloat::getOne(cast<FloatType>(type).getFloatSemantics());
  return b.create<ConstantOp>(DenseElementsAttr::get(tensorType, values));
}

/// The windows of `planes` (`P x 1 x in`) laid out along the channels, in
/// the order of `oneHotTaps`: `P x K x out`, padded taps `-inf`. Moved, not
/// computed (one strided slice per tap), so that each window holds the
/// input's values exactly, as the pool compared them.
Value extractWindows(GradientBuilder &b, Value planes, const Window &window) {
  size_t rank = window.rank();
  SmallVector<int64_t> pads{0, 0};
  SmallVector<int64_t> forwardPads = window.forwardPads();
  pads.append(forwardPads.begin(), forwardPads.begin() + rank);
  pads.append({0, 0});
  pads.append(forwardPads.begin() + rank, forwardPads.end());
  Type type = getElementType(planes);
  APFloat lowest = APFloat::getInf(cast<FloatType>(type).getFloatSemantics(),
                                   /*Negative=*/true);
  bool lostInfo;
  lowest.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                 &lostInfo);
  Value padded = b.create<PadOp>(planes, ArrayRef<int64_t>(pads),
                                 StringRef("constant"), lowest);
  int64_t planeCount = getShape(planes)[0];
  SmallVector<Value> taps;
  SmallVector<int64_t> tap(rank, 0);
  for (int64_t flat = 0, e = product(window.kernel); flat < e; ++flat) {
    SmallVector<int64_t> starts{0, 0}, ends{planeCount, 1}, steps{1, 1};
    for (size_t i = 0; i < rank; ++i) {
      int64_t start = tap[i] * window.dilations[i];
      starts.push_back(start);
      ends.push_back(start + (window.out[i] - 1) * window.strides[i] + 1);
      steps.push_back(window.strides[i]);
    }
    taps.push_back(b.create<SliceOp>(padded, ArrayRef<int64_t>(starts),
                                     ArrayRef<int64_t>(ends),
                                     ArrayRef<int64_t>(steps)));
    // The next tap in row-major order.
    for (size_t i = rank; i-- > 0;) {
      if (++tap[i] < window.kernel[i])
        break;
      tap[i] = 0;
    }
  }
  return b.create<ConcatOp>(ValueRange(taps), uint64_t(1));
}

/// The cotangent of a max over each window goes to the taps equal to the
/// maximum, shared evenly among ties (as reduce_max's); padded taps, `-inf`,
/// never win.
struct MaxPoolGradientModel
    : GradientInterface::ExternalModel<MaxPoolGradientModel, MaxPoolOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    if (!gradients.wanted[0])
      return success();
    auto pool = cast<MaxPoolOp>(op);
    Value x = pool.getInput(), y = pool.getOutput(), g = gradients.results[0];
    Window window(pool.getKernelShape(), pool.getStrides(), pool.getPads(),
                  pool.getDilations(), getShape(x), getShape(y));
    Type type = getElementType(x);
    Value windows = extractWindows(b, toPlanes(b, x), window);
    Value hits = b.cast(b.create<EqualOp>(windows, toPlanes(b, y)), type);
    Value ties = b.reduceSum(hits, {1}, /*keepdims=*/true);
    Value shares = b.mul(hits, b.div(toPlanes(b, g), ties));
    // The transposed convolution by the one-hot kernel of the taps puts
    // each tap's share back where it was read.
    Value taps = oneHotTaps(b, window.kernel, type);
    Value dx = transposedConv(b, shares, taps, window, /*group=*/1);
    gradients.operands[0] = b.reshape(dx, getShape(x));
    return success();
  }
};

/// How many taps of window `o` along one dimension average_pool divides by:
/// those inside the input, or with `countIncludePad` those inside the
/// declared pads (a ceil_mode window may pass the end pad).
int64_t countTaps(const Window &window, size_t i, int64_t o,
                  bool countIncludePad) {
  int64_t start = o * window.strides[i] - window.padBegin[i];
  int64_t limit = window.in[i] + (countIncludePad ? window.padEnd[i] : 0);
  int64_t count = 0;
  for (int64_t k = 0; k < window.kernel[i]; ++k) {
    int64_t position = start + k * window.dilations[i];
    if (position < limit && (countIncludePad || position >= 0))
      ++count;
  }
  return count;
}

/// `1 / divisor` of each output position of an average pool (0 where the
/// window counts no tap, whose output is 0), as a `1 x 1 x out` constant.
Value reciprocalDivisors(GradientBuilder &b, const Window &window,
                         bool countIncludePad, Type type) {
  SmallVector<int64_t> shape{1, 1};
  shape.append(window.out);
  int64_t count = product(window.out);
  SmallVector<APFloat> values;
  values.reserve(count);
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type).getFloatSemantics();
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t divisor = 1, rest = flat;
    for (size_t i = window.rank(); i-- > 0;) {
      divisor *= countTaps(window, i, rest % window.out[i], countIncludePad);
      rest /= window.out[i];
    }
    APFloat value(divisor ? 1.0 / divisor : 0.0);
    bool lostInfo;
    value.convert(semantics, APFloat::rmNearestTiesToEven, &lostInfo);
    values.push_back(value);
  }
  return b.create<ConstantOp>(
      DenseElementsAttr::get(RankedTensorType::get(shape, type), values));
}

/// Each tap of a window gets the window's cotangent over its divisor: the
/// transposed convolution by a kernel of ones sums them where they were
/// read.
struct AveragePoolGradientModel
    : GradientInterface::ExternalModel<AveragePoolGradientModel,
                                       AveragePoolOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    if (!gradients.wanted[0])
      return success();
    auto pool = cast<AveragePoolOp>(op);
    Value x = pool.getInput(), g = gradients.results[0];
    Window window(pool.getKernelShape(), pool.getStrides(), pool.getPads(),
                  pool.getDilations(), getShape(x), getShape(g));
    Type type = getElementType(x);
    Value divisors =
        reciprocalDivisors(b, window, pool.getCountIncludePad(), type);
    Value shares = b.mul(toPlanes(b, g), divisors);
    SmallVector<int64_t> kernelShape{1, 1};
    kernelShape.append(window.kernel);
    Value ones = b.splat(1.0, RankedTensorType::get(kernelShape, type));
    Value dx = transposedConv(b, shares, ones, window, /*group=*/1);
    gradients.operands[0] = b.reshape(dx, getShape(x));
    return success();
  }
};

/// The mean's cotangent, spread evenly over the spatial positions.
struct GlobalAveragePoolGradientModel
    : GradientInterface::ExternalModel<GlobalAveragePoolGradientModel,
                                       GlobalAveragePoolOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    if (!gradients.wanted[0])
      return success();
    ArrayRef<int64_t> shape = getShape(op->getOperand(0));
    int64_t count = product(shape.drop_front(2));
    Value g = gradients.results[0];
    gradients.operands[0] =
        b.broadcastTo(count == 1 ? g : b.scale(g, 1.0 / count), shape);
    return success();
  }
};

/// As reduce_max over the spatial dimensions: ties share the cotangent.
struct GlobalMaxPoolGradientModel
    : GradientInterface::ExternalModel<GlobalMaxPoolGradientModel,
                                       GlobalMaxPoolOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    if (!gradients.wanted[0])
      return success();
    auto pool = cast<GlobalMaxPoolOp>(op);
    Value x = pool.getInput();
    Value hits =
        b.cast(b.create<EqualOp>(x, pool.getOutput()), getElementType(x));
    Value ties =
        b.reduceSum(hits, range(2, getShape(x).size()), /*keepdims=*/true);
    gradients.operands[0] = b.mul(hits, b.div(gradients.results[0], ties));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Per-channel normalisations
//===----------------------------------------------------------------------===//

/// A per-channel vector (`C`) shaped to broadcast against `N x C x spatial`.
Value channelView(GradientBuilder &b, Value vector, size_t rank) {
  SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = getShape(vector)[0];
  return b.reshape(vector, shape);
}

/// `y = xhat scale[c] + bias[c]`, where `xhat` normalises `x` over each
/// (sample, group of channels) with its biased variance; instance_norm is a
/// group per channel. In the grouped view `N x G x rest`:
///   dscale, dbias = dy xhat and dy summed over all but the channels;
///   dx = r (dxhat - mean(dxhat) - xhat mean(dxhat xhat)), dxhat = dy scale.
LogicalResult buildGroupNormGradients(GradientBuilder &b, Value x, Value scale,
                                      int64_t groups, double epsilon,
                                      OpGradients &gradients) {
  ArrayRef<int64_t> shape = getShape(x);
  size_t rank = shape.size();
  Value g = gradients.results[0];
  SmallVector<int64_t> grouped{shape[0], groups,
                               product(shape.drop_front(1)) / groups};
  Value xg = b.reshape(x, grouped);
  Value centred = b.sub(xg, b.reduceMean(xg, {2}, /*keepdims=*/true));
  Value variance = b.reduceMean(b.mul(centred, centred), {2}, true);
  Value r = b.create<ReciprocalOp>(
      b.create<SqrtOp>(b.add(variance, b.scalarLike(epsilon, x))));
  Value xhat = b.mul(centred, r);

  SmallVector<int64_t> notChannels = range(2, rank);
  notChannels.insert(notChannels.begin(), 0);
  if (gradients.wanted[1])
    gradients.operands[1] =
        b.reduceSum(b.mul(g, b.reshape(xhat, shape)), notChannels, false);
  if (gradients.wanted[2])
    gradients.operands[2] = b.reduceSum(g, notChannels, false);
  if (gradients.wanted[0]) {
    Value dxhat = b.reshape(b.mul(g, channelView(b, scale, rank)), grouped);
    Value meanGrad = b.reduceMean(dxhat, {2}, /*keepdims=*/true);
    Value meanProjection = b.reduceMean(b.mul(dxhat, xhat), {2}, true);
    Value projection = b.mul(xhat, meanProjection);
    Value dx = b.mul(r, b.sub(b.sub(dxhat, meanGrad), projection));
    gradients.operands[0] = b.reshape(dx, shape);
  }
  return success();
}

struct InstanceNormGradientModel
    : GradientInterface::ExternalModel<InstanceNormGradientModel,
                                       InstanceNormOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto norm = cast<InstanceNormOp>(op);
    return buildGroupNormGradients(
        b, norm.getInput(), norm.getScale(), getShape(norm.getInput())[1],
        norm.getEpsilonAttr().getValueAsDouble(), gradients);
  }
};

struct GroupNormGradientModel
    : GradientInterface::ExternalModel<GroupNormGradientModel, GroupNormOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto norm = cast<GroupNormOp>(op);
    return buildGroupNormGradients(
        b, norm.getInput(), norm.getScale(), norm.getNumGroups(),
        norm.getEpsilonAttr().getValueAsDouble(), gradients);
  }
};

} // namespace

void cleave::detail::attachConvGradients(MLIRContext *context) {
  ConvOp::attachInterface<ConvGradientModel>(*context);
  MaxPoolOp::attachInterface<MaxPoolGradientModel>(*context);
  AveragePoolOp::attachInterface<AveragePoolGradientModel>(*context);
  GlobalAveragePoolOp::attachInterface<GlobalAveragePoolGradientModel>(
      *context);
  GlobalMaxPoolOp::attachInterface<GlobalMaxPoolGradientModel>(*context);
  InstanceNormOp::attachInterface<InstanceNormGradientModel>(*context);
  GroupNormOp::attachInterface<GroupNormGradientModel>(*context);
}
