//===- KernelInterface.cpp - kernel external models for cleave ops -*- C++
//-*-===//
//
// How each cleave op runs on a device, attached as external models of
// `cleave::KernelInterface`: elementwise ops describe one element as a
// scalar expression of runtime/include/cleave/rt/Scalar.h, the others fill
// the typed builder of a library kernel of
// runtime/include/cleave/rt/KernelList.def (KernelSignatures.h), which packs
// the call in the order the runtime reads it.
//
//===----------------------------------------------------------------------===//

#include "cleave/Conversion/KernelInterface.h"
#include "cleave/Conversion/KernelSignatures.h"
#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Partition/Contract.h"
#include "cleave/rt/Mesh.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"

#include "cleave/rt/Kernels.h"

#include <limits>

using namespace mlir;
using namespace cleave;

#include "cleave/Conversion/KernelInterface.cpp.inc"

/// The code of an enumerated kernel attribute from its ONNX spelling
/// (KernelEnums.def), or none for a spelling no kernel implements. (Some
/// enums, CleaveEpilogue's, have no ONNX spelling to parse.)
template <typename Enum>
static std::optional<Enum> parseKernelEnum(StringRef name);

#define CLEAVE_ENUM_BEGIN(type)                                                \
  template <>                                                                  \
  [[maybe_unused]] std::optional<type> parseKernelEnum<type>(StringRef name) { \
    return llvm::StringSwitch<std::optional<type>>(name)
#define CLEAVE_ENUM_VALUE(type, enumerator, code, spelling)                    \
  .Case(spelling, enumerator)
#define CLEAVE_ENUM_END(type)                                                  \
  .Default(std::nullopt);                                                      \
  }
#include "cleave/rt/KernelEnums.def"

static Type getResultElementType(Operation *op, unsigned index = 0) {
  return cast<ShapedType>(op->getResult(index).getType()).getElementType();
}

//===----------------------------------------------------------------------===//
// Elementwise ops: scalar expressions
//===----------------------------------------------------------------------===//

namespace {

/// `function(operands...)` of rt/Scalar.h, with the result's element type.
template <typename Op, const char *Function>
struct ScalarFunctionModel
    : KernelInterface::ExternalModel<ScalarFunctionModel<Op, Function>, Op> {
  FailureOr<int> buildScalar(Operation *op, ScalarExprBuilder &builder,
                             ArrayRef<int> operands) const {
    return builder.call(Function, operands, getResultElementType(op));
  }
};

/// A unary op whose float attributes become literal arguments.
template <typename Op, const char *Function>
struct ParameterisedUnaryModel
    : KernelInterface::ExternalModel<ParameterisedUnaryModel<Op, Function>,
                                     Op> {
  FailureOr<int> buildScalar(Operation *op, ScalarExprBuilder &builder,
                             ArrayRef<int> operands) const {
    Type type = getResultElementType(op);
    SmallVector<int, 3> args{operands[0]};
    for (double value : getParameters(cast<Op>(op)))
      args.push_back(builder.literal(value, type));
    return builder.call(Function, args, type);
  }

  static SmallVector<double, 2> getParameters(LeakyReluOp op) {
    return {op.getAlpha().convertToDouble()};
  }
  static SmallVector<double, 2> getParameters(EluOp op) {
    return {op.getAlpha().convertToDouble()};
  }
  static SmallVector<double, 2> getParameters(HardSigmoidOp op) {
    return {op.getAlpha().convertToDouble(), op.getBeta().convertToDouble()};
  }
};

struct GeluModel : KernelInterface::ExternalModel<GeluModel, GeluOp> {
  FailureOr<int> buildScalar(Operation *op, ScalarExprBuilder &builder,
                             ArrayRef<int> operands) const {
    StringRef function =
        cast<GeluOp>(op).getApproximate() == "tanh" ? "gelu_tanh" : "gelu_erf";
    return builder.call(function, operands, getResultElementType(op));
  }
};

/// IsInf tests for the infinities its attributes select.
struct IsInfModel : KernelInterface::ExternalModel<IsInfModel, IsInfOp> {
  FailureOr<int> buildScalar(Operation *op, ScalarExprBuilder &builder,
                             ArrayRef<int> operands) const {
    auto isInf = cast<IsInfOp>(op);
    Type type = getResultElementType(op);
    bool positive = isInf.getDetectPositive();
    bool negative = isInf.getDetectNegative();
    if (!positive && !negative)
      return builder.literal(0, type);
    StringRef function = !negative   ? "is_pos_inf"
                         : !positive ? "is_neg_inf"
                                     : "is_inf";
    return builder.call(function, operands, type);
  }
};

/// Mod takes the divisor's sign (`mod`) or, with `fmod`, the dividend's.
struct ModModel : KernelInterface::ExternalModel<ModModel, ModOp> {
  FailureOr<int> buildScalar(Operation *op, ScalarExprBuilder &builder,
                             ArrayRef<int> operands) const {
    StringRef function = cast<ModOp>(op).getFmod() ? "fmod" : "mod";
    return builder.call(function, operands, getResultElementType(op));
  }
};

/// Clip with an absent bound is a single min or max.
struct ClipModel : KernelInterface::ExternalModel<ClipModel, ClipOp> {
  FailureOr<int> buildScalar(Operation *op, ScalarExprBuilder &builder,
                             ArrayRef<int> operands) const {
    auto clip = cast<ClipOp>(op);
    Type type = getResultElementType(op);
    int value = operands[0];
    if (std::optional<APFloat> min = clip.getMin())
      value = builder.call(
          "max", {value, builder.literal(min->convertToDouble(), type)}, type);
    if (std::optional<APFloat> max = clip.getMax())
      value = builder.call(
          "min", {value, builder.literal(max->convertToDouble(), type)}, type);
    return value;
  }
};

struct CastModel : KernelInterface::ExternalModel<CastModel, CastOp> {
  FailureOr<int> buildScalar(Operation *op, ScalarExprBuilder &builder,
                             ArrayRef<int> operands) const {
    return builder.cast(operands[0], getResultElementType(op));
  }
};

/// Expand is a broadcast: the loop's load of its operand does the work.
struct ExpandModel : KernelInterface::ExternalModel<ExpandModel, ExpandOp> {
  FailureOr<int> buildScalar(Operation *, ScalarExprBuilder &,
                             ArrayRef<int> operands) const {
    return operands[0];
  }
};

/// Gradient accumulation is a generated loop over persistent memory: the
/// accumulator (the loop's output, tied to the result) plus the value.
struct AccumulateModel
    : KernelInterface::ExternalModel<AccumulateModel, AccumulateOp> {
  FailureOr<int> buildScalar(Operation *op, ScalarExprBuilder &builder,
                             ArrayRef<int> operands) const {
    return builder.call("add", {operands[1], operands[0]},
                        getResultElementType(op));
  }
};

/// A clear writes zeros over its accumulator, which it does not read.
struct ClearModel : KernelInterface::ExternalModel<ClearModel, ClearOp> {
  FailureOr<int> buildScalar(Operation *op, ScalarExprBuilder &builder,
                             ArrayRef<int>) const {
    return builder.literal(0, getResultElementType(op));
  }
  bool readsOperand(Operation *, unsigned) const { return false; }
};

/// An assignment is a loop that copies the value over its target, which it
/// does not read.
struct AssignModel : KernelInterface::ExternalModel<AssignModel, AssignOp> {
  FailureOr<int> buildScalar(Operation *, ScalarExprBuilder &,
                             ArrayRef<int> operands) const {
    return operands[0];
  }
  bool readsOperand(Operation *op, unsigned index) const {
    return index != cast<AssignOp>(op).getTargetMutable().getOperandNumber();
  }
};

//===----------------------------------------------------------------------===//
// Library kernels
//===----------------------------------------------------------------------===//

/// One input, one output, no attributes.
template <typename Op, const kernels::Kernel<kernels::Unary> &Kernel>
struct UnaryKernelModel
    : KernelInterface::ExternalModel<UnaryKernelModel<Op, Kernel>, Op> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    kernels::Unary args;
    args.x = op->getOperand(0);
    return kernels::buildCall(op, Kernel, args, call);
  }
};

/// A global pool of an NCHW X; the device program may block X once it sees
/// what writes it (DeviceProgramOptions::convBlock).
template <typename Op, const kernels::Kernel<kernels::GlobalPool> &Kernel>
struct GlobalPoolModel
    : KernelInterface::ExternalModel<GlobalPoolModel<Op, Kernel>, Op> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    kernels::GlobalPool args;
    args.x = op->getOperand(0);
    args.xBlock = 0;
    return kernels::buildCall(op, Kernel, args, call);
  }
};

struct MatMulModel : KernelInterface::ExternalModel<MatMulModel, MatMulOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    return buildMatMulCall(op, CLEAVE_EPILOGUE_NONE, 0.0, 0.0, call);
  }
};

template <typename Range> static SmallVector<int64_t> toInts(Range &&values) {
  SmallVector<int64_t> ints;
  for (auto value : values)
    ints.push_back(static_cast<int64_t>(value));
  return ints;
}

struct GemmModel : KernelInterface::ExternalModel<GemmModel, GemmOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    return buildGemmCall(op, CLEAVE_EPILOGUE_NONE, 0.0, 0.0, call);
  }
};

template <typename Op>
struct ConvModel : KernelInterface::ExternalModel<ConvModel<Op>, Op> {
  template <typename Args> static void fill(Op conv, Args &args) {
    args.x = conv.getInput();
    args.w = conv.getWeight();
    args.bias = conv.getBias();
    args.group = conv.getGroup();
    args.strides = toInts(conv.getStrides());
    args.pads = toInts(conv.getPads());
    args.dilations = toInts(conv.getDilations());
  }

  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto conv = cast<Op>(op);
    if constexpr (std::is_same_v<Op, ConvTransposeOp>) {
      kernels::ConvTranspose args;
      fill(conv, args);
      args.outputPadding = toInts(conv.getOutputPadding());
      return kernels::buildCall(op, kernels::conv_transpose, args, call);
    } else {
      return buildConvCall(conv, CLEAVE_EPILOGUE_NONE, 0.0, 0.0, call);
    }
  }
};

template <typename Op>
struct PoolModel : KernelInterface::ExternalModel<PoolModel<Op>, Op> {
  template <typename Args> static void fill(Op pool, Args &args) {
    args.x = pool.getInput();
    args.kernelShape = toInts(pool.getKernelShape());
    args.strides = toInts(pool.getStrides());
    args.pads = toInts(pool.getPads());
    args.dilations = toInts(pool.getDilations());
    args.ceilMode = pool.getCeilMode();
    // NCHW; the device program may block X and Y together
    // (DeviceProgramOptions::convBlock).
    args.block = 0;
  }

  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto pool = cast<Op>(op);
    if constexpr (std::is_same_v<Op, AveragePoolOp>) {
      kernels::AveragePool args;
      fill(pool, args);
      args.countIncludePad = pool.getCountIncludePad();
      return kernels::buildCall(op, kernels::average_pool, args, call);
    } else {
      kernels::MaxPool args;
      fill(pool, args);
      return kernels::buildCall(op, kernels::max_pool, args, call);
    }
  }
};

struct BatchNormModel
    : KernelInterface::ExternalModel<BatchNormModel, BatchNormOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto norm = cast<BatchNormOp>(op);
    kernels::BatchNorm args;
    args.x = norm.getInput();
    args.scale = norm.getScale();
    args.bias = norm.getBias();
    args.mean = norm.getMean();
    args.variance = norm.getVariance();
    args.epsilon = norm.getEpsilon().convertToDouble();
    return kernels::buildCall(op, kernels::batch_norm, args, call);
  }
};

struct InstanceNormModel
    : KernelInterface::ExternalModel<InstanceNormModel, InstanceNormOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto norm = cast<InstanceNormOp>(op);
    kernels::InstanceNorm args;
    args.x = norm.getInput();
    args.scale = norm.getScale();
    args.bias = norm.getBias();
    args.epsilon = norm.getEpsilon().convertToDouble();
    return kernels::buildCall(op, kernels::instance_norm, args, call);
  }
};

/// The optimizer updates write their parameter and state in place: the
/// results are those operands' tensors (DeviceProgram ties them).
struct SgdUpdateModel
    : KernelInterface::ExternalModel<SgdUpdateModel, SgdUpdateOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto update = cast<SgdUpdateOp>(op);
    kernels::SgdUpdate args;
    args.gradient = update.getGradient();
    args.gradientScale = update.getGradientScale();
    args.momentumBuffer = update.getNewMomentumBuffer();
    args.nesterov = update.getNesterov() ? 1 : 0;
    args.warmupSteps = update.getWarmupSteps();
    args.decaySteps = update.getDecaySteps();
    args.learningRate = update.getLearningRate().convertToDouble();
    args.momentum = update.getMomentum().convertToDouble();
    args.dampening = update.getDampening().convertToDouble();
    args.weightDecay = update.getWeightDecay().convertToDouble();
    args.minLrRatio = update.getMinLrRatio().convertToDouble();
    return kernels::buildCall(op, kernels::sgd_update, args, call);
  }
};

struct AdamUpdateModel
    : KernelInterface::ExternalModel<AdamUpdateModel, AdamUpdateOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto update = cast<AdamUpdateOp>(op);
    kernels::AdamUpdate args;
    args.gradient = update.getGradient();
    args.gradientScale = update.getGradientScale();
    args.decoupled = update.getDecoupled() ? 1 : 0;
    args.warmupSteps = update.getWarmupSteps();
    args.decaySteps = update.getDecaySteps();
    args.learningRate = update.getLearningRate().convertToDouble();
    args.beta1 = update.getBeta1().convertToDouble();
    args.beta2 = update.getBeta2().convertToDouble();
    args.epsilon = update.getEpsilon().convertToDouble();
    args.weightDecay = update.getWeightDecay().convertToDouble();
    args.minLrRatio = update.getMinLrRatio().convertToDouble();
    return kernels::buildCall(op, kernels::adam_update, args, call);
  }
};

struct LayerNormModel
    : KernelInterface::ExternalModel<LayerNormModel, LayerNormOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto norm = cast<LayerNormOp>(op);
    int64_t rank = cast<ShapedType>(norm.getInput().getType()).getRank();
    int64_t axis = norm.getAxis();
    kernels::LayerNorm args;
    args.x = norm.getInput();
    args.scale = norm.getScale();
    args.bias = norm.getBias();
    args.axis = axis < 0 ? axis + rank : axis;
    args.epsilon = norm.getEpsilon().convertToDouble();
    return kernels::buildCall(op, kernels::layer_norm, args, call);
  }
};

struct RmsNormModel : KernelInterface::ExternalModel<RmsNormModel, RmsNormOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto norm = cast<RmsNormOp>(op);
    kernels::RmsNorm args;
    args.x = norm.getInput();
    args.scale = norm.getScale();
    args.axis = norm.getAxis();
    args.epsilon = norm.getEpsilon().convertToDouble();
    return kernels::buildCall(op, kernels::rms_norm, args, call);
  }
};

struct RotaryEmbeddingModel
    : KernelInterface::ExternalModel<RotaryEmbeddingModel, RotaryEmbeddingOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto rope = cast<RotaryEmbeddingOp>(op);
    kernels::RotaryEmbedding args;
    args.x = rope.getInput();
    args.cos = rope.getCos();
    args.sin = rope.getSin();
    args.positionIds = rope.getPositionIds();
    args.numHeads = rope.getHeads();
    args.rotaryDim = rope.getRotaryDim();
    args.interleaved = rope.getInterleaved() ? 1 : 0;
    return kernels::buildCall(op, kernels::rotary_embedding, args, call);
  }
};

struct AttentionModel
    : KernelInterface::ExternalModel<AttentionModel, AttentionOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto attention = cast<AttentionOp>(op);
    kernels::Attention args;
    args.q = attention.getQuery();
    args.k = attention.getKey();
    args.v = attention.getValue();
    args.mask = attention.getMask();
    args.qNumHeads = attention.getQNumHeads();
    args.kvNumHeads = attention.getKvNumHeads();
    args.isCausal = attention.getIsCausal() ? 1 : 0;
    args.nanToZero = attention.getNanToZero() ? 1 : 0;
    args.scale = attention.getScale().convertToDouble();
    args.softcap = attention.getSoftcap().convertToDouble();
    return kernels::buildCall(op, kernels::attention, args, call);
  }
};

struct GroupNormModel
    : KernelInterface::ExternalModel<GroupNormModel, GroupNormOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto norm = cast<GroupNormOp>(op);
    kernels::GroupNorm args;
    args.x = norm.getInput();
    args.scale = norm.getScale();
    args.bias = norm.getBias();
    args.numGroups = norm.getNumGroups();
    args.epsilon = norm.getEpsilon().convertToDouble();
    return kernels::buildCall(op, kernels::group_norm, args, call);
  }
};

/// The op's axis made non-negative against the rank of `value`.
template <typename Op> static int64_t getAxis(Op op, Value value) {
  int64_t rank = cast<ShapedType>(value.getType()).getRank();
  int64_t axis = op.getAxis();
  return axis < 0 ? axis + rank : axis;
}

struct SoftmaxModel : KernelInterface::ExternalModel<SoftmaxModel, SoftmaxOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto softmax = cast<SoftmaxOp>(op);
    kernels::Softmax args;
    args.x = softmax.getInput();
    args.axis = getAxis(softmax, softmax.getInput());
    args.nanToZero = softmax.getNanToZero();
    return kernels::buildCall(op, kernels::softmax, args, call);
  }
};

struct LogSoftmaxModel
    : KernelInterface::ExternalModel<LogSoftmaxModel, LogSoftmaxOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto softmax = cast<LogSoftmaxOp>(op);
    kernels::LogSoftmax args;
    args.x = softmax.getInput();
    args.axis = getAxis(softmax, softmax.getInput());
    return kernels::buildCall(op, kernels::log_softmax, args, call);
  }
};

struct ConcatModel : KernelInterface::ExternalModel<ConcatModel, ConcatOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto concat = cast<ConcatOp>(op);
    kernels::Concat args;
    args.inputs.assign(concat.getInputs().begin(), concat.getInputs().end());
    args.axis = getAxis(concat, concat.getResult());
    return kernels::buildCall(op, kernels::concat, args, call);
  }
};

struct SplitModel : KernelInterface::ExternalModel<SplitModel, SplitOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto split = cast<SplitOp>(op);
    kernels::Split args;
    args.x = split.getInput();
    args.axis = getAxis(split, split.getInput());
    return kernels::buildCall(op, kernels::split, args, call);
  }
};

struct GatherModel : KernelInterface::ExternalModel<GatherModel, GatherOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto gather = cast<GatherOp>(op);
    kernels::Gather args;
    args.data = gather.getData();
    args.indices = gather.getIndices();
    args.axis = getAxis(gather, gather.getData());
    return kernels::buildCall(op, kernels::gather, args, call);
  }
};

struct GatherElementsModel
    : KernelInterface::ExternalModel<GatherElementsModel, GatherElementsOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto gather = cast<GatherElementsOp>(op);
    kernels::Gather args;
    args.data = gather.getData();
    args.indices = gather.getIndices();
    args.axis = gather.getAxis();
    return kernels::buildCall(op, kernels::gather_elements, args, call);
  }
};

struct GatherNDModel
    : KernelInterface::ExternalModel<GatherNDModel, GatherNDOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto gather = cast<GatherNDOp>(op);
    kernels::GatherND args;
    args.data = gather.getData();
    args.indices = gather.getIndices();
    args.batchDims = gather.getBatchDims();
    return kernels::buildCall(op, kernels::gather_nd, args, call);
  }
};

/// The code of a scatter's `reduction`.
static FailureOr<int64_t> getScatterReduction(Operation *op,
                                              StringRef reduction) {
  std::optional<CleaveScatterReduction> code =
      parseKernelEnum<CleaveScatterReduction>(reduction);
  if (!code)
    return op->emitOpError("reduction '") << reduction << "' has no kernel";
  return static_cast<int64_t>(*code);
}

struct ScatterNDModel
    : KernelInterface::ExternalModel<ScatterNDModel, ScatterNDOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto scatter = cast<ScatterNDOp>(op);
    FailureOr<int64_t> reduction =
        getScatterReduction(op, scatter.getReduction());
    if (failed(reduction))
      return failure();
    kernels::ScatterND args;
    args.data = scatter.getData();
    args.indices = scatter.getIndices();
    args.updates = scatter.getUpdates();
    args.reduction = *reduction;
    return kernels::buildCall(op, kernels::scatter_nd, args, call);
  }
};

struct ScatterElementsModel
    : KernelInterface::ExternalModel<ScatterElementsModel, ScatterElementsOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto scatter = cast<ScatterElementsOp>(op);
    FailureOr<int64_t> reduction =
        getScatterReduction(op, scatter.getReduction());
    if (failed(reduction))
      return failure();
    kernels::ScatterElements args;
    args.data = scatter.getData();
    args.indices = scatter.getIndices();
    args.updates = scatter.getUpdates();
    args.axis = scatter.getAxis();
    args.reduction = *reduction;
    return kernels::buildCall(op, kernels::scatter_elements, args, call);
  }
};

struct OneHotModel : KernelInterface::ExternalModel<OneHotModel, OneHotOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto oneHot = cast<OneHotOp>(op);
    kernels::OneHot args;
    args.indices = oneHot.getIndices();
    args.values = oneHot.getValues();
    args.axis = oneHot.getAxis();
    return kernels::buildCall(op, kernels::one_hot, args, call);
  }
};

struct TriluModel : KernelInterface::ExternalModel<TriluModel, TriluOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto trilu = cast<TriluOp>(op);
    kernels::Trilu args;
    args.x = trilu.getInput();
    args.k = trilu.getK();
    args.upper = trilu.getUpper() ? 1 : 0;
    return kernels::buildCall(op, kernels::trilu, args, call);
  }
};

template <typename Op, const kernels::Kernel<kernels::Reduce> &Kernel>
struct ReduceModel
    : KernelInterface::ExternalModel<ReduceModel<Op, Kernel>, Op> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto reduce = cast<Op>(op);
    int64_t rank = cast<ShapedType>(reduce.getInput().getType()).getRank();
    kernels::Reduce args;
    args.x = reduce.getInput();
    for (int64_t axis : reduce.getAxes())
      args.axes.push_back(axis < 0 ? axis + rank : axis);
    llvm::sort(args.axes);
    return kernels::buildCall(op, Kernel, args, call);
  }

  /// Float reductions fold in a generated loop; integer ones (no infinite
  /// starting value for max/min) stay library kernels.
  FailureOr<ScalarReduction> getScalarReduction(Operation *op) const {
    auto reduce = cast<Op>(op);
    auto type = cast<ShapedType>(reduce.getInput().getType());
    if (!isa<FloatType>(type.getElementType()) || reduce.getAxes().empty())
      return failure();
    ScalarReduction reduction;
    reduction.combine = "add";
    if constexpr (std::is_same_v<Op, ReduceMaxOp>) {
      reduction.combine = "max";
      reduction.init = -std::numeric_limits<double>::infinity();
    }
    if constexpr (std::is_same_v<Op, ReduceMinOp>) {
      reduction.combine = "min";
      reduction.init = std::numeric_limits<double>::infinity();
    }
    if constexpr (std::is_same_v<Op, ReduceProdOp>) {
      reduction.combine = "mul";
      reduction.init = 1;
    }
    reduction.mean = std::is_same_v<Op, ReduceMeanOp>;
    reduction.square =
        std::is_same_v<Op, ReduceL2Op> || std::is_same_v<Op, ReduceSumSquareOp>;
    reduction.sqrt = std::is_same_v<Op, ReduceL2Op>;
    for (int64_t axis : reduce.getAxes())
      reduction.axes.push_back(axis < 0 ? axis + type.getRank() : axis);
    llvm::sort(reduction.axes);
    return reduction;
  }
};

struct TopKModel : KernelInterface::ExternalModel<TopKModel, TopKOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto topk = cast<TopKOp>(op);
    kernels::TopK args;
    args.x = topk.getInput();
    args.axis = static_cast<int64_t>(topk.getAxis());
    args.k = static_cast<int64_t>(topk.getK());
    args.largest = topk.getLargest();
    return kernels::buildCall(op, kernels::topk, args, call);
  }
};

template <typename Op, const kernels::Kernel<kernels::ArgExtreme> &Kernel>
struct ArgExtremeModel
    : KernelInterface::ExternalModel<ArgExtremeModel<Op, Kernel>, Op> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto arg = cast<Op>(op);
    kernels::ArgExtreme args;
    args.x = arg.getInput();
    args.axis = static_cast<int64_t>(arg.getAxis());
    args.selectLastIndex = arg.getSelectLastIndex();
    return kernels::buildCall(op, Kernel, args, call);
  }
};

struct CumSumModel : KernelInterface::ExternalModel<CumSumModel, CumSumOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto cumsum = cast<CumSumOp>(op);
    kernels::CumSum args;
    args.x = cumsum.getInput();
    args.axis = static_cast<int64_t>(cumsum.getAxis());
    args.exclusive = cumsum.getExclusive();
    args.reverse = cumsum.getReverse();
    return kernels::buildCall(op, kernels::cumsum, args, call);
  }
};

struct TransposeModel
    : KernelInterface::ExternalModel<TransposeModel, TransposeOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto transpose = cast<TransposeOp>(op);
    kernels::Transpose args;
    args.x = transpose.getInput();
    args.perm = toInts(transpose.getPerm());
    return kernels::buildCall(op, kernels::transpose, args, call);
  }
};

struct SliceModel : KernelInterface::ExternalModel<SliceModel, SliceOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto slice = cast<SliceOp>(op);
    kernels::Slice args;
    args.x = slice.getInput();
    args.starts = toInts(slice.getStarts());
    args.ends = toInts(slice.getEnds());
    args.steps = toInts(slice.getSteps());
    return kernels::buildCall(op, kernels::slice, args, call);
  }
};

struct PadModel : KernelInterface::ExternalModel<PadModel, PadOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto pad = cast<PadOp>(op);
    std::optional<CleavePadMode> mode =
        parseKernelEnum<CleavePadMode>(pad.getMode());
    if (!mode)
      return op->emitOpError("pad mode '")
             << pad.getMode() << "' has no kernel";
    kernels::Pad args;
    args.x = pad.getInput();
    args.pads = toInts(pad.getPads());
    args.mode = *mode;
    args.value = pad.getValue().convertToDouble();
    return kernels::buildCall(op, kernels::pad, args, call);
  }
};

struct ResizeModel : KernelInterface::ExternalModel<ResizeModel, ResizeOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto resize = cast<ResizeOp>(op);
    std::optional<CleaveResizeMode> mode =
        parseKernelEnum<CleaveResizeMode>(resize.getMode());
    std::optional<CleaveResizeCoordinates> coordinates =
        parseKernelEnum<CleaveResizeCoordinates>(
            resize.getCoordinateTransformationMode());
    std::optional<CleaveResizeNearest> nearest =
        parseKernelEnum<CleaveResizeNearest>(resize.getNearestMode());
    if (!mode || !coordinates || !nearest)
      return op->emitOpError("resize with coordinate_transformation_mode '")
             << resize.getCoordinateTransformationMode() << "' has no kernel";
    kernels::Resize args;
    args.x = resize.getInput();
    args.mode = *mode;
    args.coordinates = *coordinates;
    args.nearest = *nearest;
    args.excludeOutside = resize.getExcludeOutside();
    args.scales.assign(resize.getScales().begin(), resize.getScales().end());
    args.cubicCoeffA = resize.getCubicCoeffA().convertToDouble();
    args.extrapolationValue = resize.getExtrapolationValue().convertToDouble();
    return kernels::buildCall(op, kernels::resize, args, call);
  }
};

template <typename Op>
struct RecurrentModel : KernelInterface::ExternalModel<RecurrentModel<Op>, Op> {
  /// The fields RNN, GRU and LSTM share.
  template <typename Args>
  static LogicalResult fill(Op rnn, int64_t variant, Args &args) {
    std::optional<CleaveRnnDirection> direction =
        parseKernelEnum<CleaveRnnDirection>(rnn.getDirection());
    if (!direction)
      return rnn.emitOpError("direction '")
             << rnn.getDirection() << "' has no recurrent kernel";
    args.x = rnn.getInput();
    args.w = rnn.getWeight();
    args.r = rnn.getRecurrence();
    args.b = rnn.getBias();
    args.initialH = rnn.getInitialH();
    args.direction = *direction;
    args.hiddenSize = static_cast<int64_t>(rnn.getHiddenSize());
    args.variant = variant;
    for (Attribute name : rnn.getActivations()) {
      std::optional<CleaveRnnActivation> code =
          parseKernelEnum<CleaveRnnActivation>(cast<StringAttr>(name));
      if (!code)
        return rnn.emitOpError("activation ")
               << name << " has no recurrent kernel";
      args.activations.push_back(*code);
    }
    std::optional<APFloat> clip = rnn.getClip();
    args.clip = clip ? clip->convertToDouble() : 0.0;
    return success();
  }

  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto rnn = cast<Op>(op);
    if constexpr (std::is_same_v<Op, LSTMOp>) {
      kernels::Lstm args;
      if (failed(fill(rnn, rnn.getInputForget(), args)))
        return failure();
      args.initialC = rnn.getInitialC();
      args.p = rnn.getPeepholes();
      return kernels::buildCall(op, kernels::lstm, args, call);
    } else {
      kernels::Recurrent args;
      int64_t variant = 0;
      if constexpr (std::is_same_v<Op, GRUOp>)
        variant = rnn.getLinearBeforeReset();
      if (failed(fill(rnn, variant, args)))
        return failure();
      return kernels::buildCall(
          op, std::is_same_v<Op, GRUOp> ? kernels::gru : kernels::rnn, args,
          call);
    }
  }
};

//===----------------------------------------------------------------------===//
// Communication (runtime/include/cleave/rt/CommList.def)
//===----------------------------------------------------------------------===//

struct SendModel : KernelInterface::ExternalModel<SendModel, SendOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto send = cast<SendOp>(op);
    kernels::Send args;
    args.x = send.getInput();
    // The verifier keeps peer and tag non-negative (send_c1, recv_c1).
    args.peerStage = static_cast<int64_t>(send.getPeer());
    args.tag = static_cast<int64_t>(send.getTag());
    return kernels::buildCall(op, kernels::send, args, call);
  }
};

struct RecvModel : KernelInterface::ExternalModel<RecvModel, RecvOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto recv = cast<RecvOp>(op);
    kernels::Recv args;
    // The verifier keeps peer and tag non-negative (send_c1, recv_c1).
    args.peerStage = static_cast<int64_t>(recv.getPeer());
    args.tag = static_cast<int64_t>(recv.getTag());
    return kernels::buildCall(op, kernels::recv, args, call);
  }
};

/// The start of a gradient sum's reduction, in place: its result is the
/// accumulator (destination style), the call's output.
struct ReduceStartModel
    : KernelInterface::ExternalModel<ReduceStartModel, ReduceStartOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto start = cast<ReduceStartOp>(op);
    rt::MeshAxis axis;
    if (!rt::parseMeshAxis(start.getAxis(), axis))
      return op->emitOpError("runs over '")
             << start.getAxis() << "', which is no mesh axis (pp, dp or tp)";
    std::optional<CleaveReduction> code =
        parseKernelEnum<CleaveReduction>(start.getReduction());
    if (!code)
      return op->emitOpError("reduction '")
             << start.getReduction() << "' has no runtime call";
    kernels::ReduceStart args;
    args.x = start.getAccumulator();
    args.axis = static_cast<int64_t>(axis);
    args.groupSize = static_cast<int64_t>(start.getGroupSize());
    args.reduction = *code;
    args.id = static_cast<int64_t>(start.getId());
    args.last = start.getLast() ? 1 : 0;
    return kernels::buildCall(op, kernels::reduce_start, args, call);
  }
};

struct ReduceWaitModel
    : KernelInterface::ExternalModel<ReduceWaitModel, ReduceWaitOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto wait = cast<ReduceWaitOp>(op);
    kernels::ReduceWait args;
    args.x = wait.getAccumulator();
    args.id = static_cast<int64_t>(wait.getId());
    return kernels::buildCall(op, kernels::reduce_wait, args, call);
  }
};

/// A collective within the group along a mesh axis: the axis's code
/// (rt/Mesh.h) and the group's size, then what the op adds (dimensions, the
/// reduction).
template <typename Op>
struct CollectiveModel
    : KernelInterface::ExternalModel<CollectiveModel<Op>, Op> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto collective = cast<Op>(op);
    StringRef axisName = collective.getAxis();
    // A slice along the batch axis takes the block of the batch the program
    // computes: its block count, no axis.
    if constexpr (std::is_same_v<Op, AllSliceOp>) {
      if (axisName == kBatchAxisName) {
        kernels::BatchSlice args;
        args.x = collective.getInput();
        args.blocks = static_cast<int64_t>(collective.getGroupSize());
        args.dim = static_cast<int64_t>(collective.getDim());
        return kernels::buildCall(op, kernels::batch_slice, args, call);
      }
    }
    rt::MeshAxis axis;
    if (!rt::parseMeshAxis(axisName, axis))
      return op->emitOpError("runs over '")
             << axisName << "', which is no mesh axis (pp, dp or tp)";
    int64_t reduction = 0;
    if constexpr (std::is_same_v<Op, AllReduceOp> ||
                  std::is_same_v<Op, ReduceScatterOp>) {
      std::optional<CleaveReduction> code =
          parseKernelEnum<CleaveReduction>(collective.getReduction());
      if (!code)
        return op->emitOpError("reduction '")
               << collective.getReduction() << "' has no runtime call";
      reduction = *code;
    }
    auto fill = [&](auto &args) {
      args.x = collective.getInput();
      args.axis = static_cast<int64_t>(axis);
      args.groupSize = static_cast<int64_t>(collective.getGroupSize());
    };
    if constexpr (std::is_same_v<Op, AllReduceOp>) {
      kernels::AllReduce args;
      fill(args);
      args.reduction = reduction;
      return kernels::buildCall(op, kernels::all_reduce, args, call);
    } else if constexpr (std::is_same_v<Op, ReduceScatterOp>) {
      kernels::ReduceScatter args;
      fill(args);
      args.dim = static_cast<int64_t>(collective.getDim());
      args.reduction = reduction;
      return kernels::buildCall(op, kernels::reduce_scatter, args, call);
    } else if constexpr (std::is_same_v<Op, AllToAllOp>) {
      kernels::AllToAll args;
      fill(args);
      args.splitDim = static_cast<int64_t>(collective.getSplitDim());
      args.concatDim = static_cast<int64_t>(collective.getConcatDim());
      return kernels::buildCall(op, kernels::all_to_all, args, call);
    } else {
      kernels::BlockCollective args;
      fill(args);
      args.dim = static_cast<int64_t>(collective.getDim());
      return kernels::buildCall(op,
                                std::is_same_v<Op, AllGatherOp>
                                    ? kernels::all_gather
                                    : kernels::all_slice,
                                args, call);
    }
  }
};

} // namespace

LogicalResult cleave::buildConvCall(Operation *conv, int64_t epilogue,
                                    double epilogueMin, double epilogueMax,
                                    KernelCall &call) {
  kernels::Conv args;
  ConvModel<ConvOp>::fill(cast<ConvOp>(conv), args);
  args.epilogue = epilogue;
  args.epilogueMin = epilogueMin;
  args.epilogueMax = epilogueMax;
  // NCHW; the device program may choose blocked layouts once it sees what
  // reads and writes each tensor (DeviceProgramOptions::convBlock).
  args.xBlock = 0;
  args.yBlock = 0;
  return kernels::buildCall(conv, kernels::conv, args, call);
}

LogicalResult cleave::buildMatMulCall(Operation *matmul, int64_t epilogue,
                                      double epilogueMin, double epilogueMax,
                                      KernelCall &call) {
  auto op = cast<MatMulOp>(matmul);
  kernels::MatMul args;
  args.a = op.getLhs();
  args.b = op.getRhs();
  // The bias and the residual are the device program's to join.
  args.epilogue = epilogue;
  args.epilogueMin = epilogueMin;
  args.epilogueMax = epilogueMax;
  return kernels::buildCall(matmul, kernels::matmul, args, call);
}

LogicalResult cleave::buildGemmCall(Operation *gemm, int64_t epilogue,
                                    double epilogueMin, double epilogueMax,
                                    KernelCall &call) {
  auto op = cast<GemmOp>(gemm);
  kernels::Gemm args;
  args.a = op.getA();
  args.b = op.getB();
  args.c = op.getC();
  args.transA = op.getTransA();
  args.transB = op.getTransB();
  args.alpha = op.getAlpha().convertToDouble();
  args.beta = op.getBeta().convertToDouble();
  // The residual is the device program's to join.
  args.epilogue = epilogue;
  args.epilogueMin = epilogueMin;
  args.epilogueMax = epilogueMax;
  return kernels::buildCall(gemm, kernels::gemm, args, call);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

// Names of rt/Scalar.h functions, as template arguments.
#define CLEAVE_NAME(id, text) static constexpr char id[] = text;
CLEAVE_NAME(kAdd, "add")
CLEAVE_NAME(kSub, "sub")
CLEAVE_NAME(kMul, "mul")
CLEAVE_NAME(kDiv, "div")
CLEAVE_NAME(kPow, "pow")
CLEAVE_NAME(kMin, "min")
CLEAVE_NAME(kMax, "max")
CLEAVE_NAME(kSqrt, "sqrt")
CLEAVE_NAME(kReciprocal, "reciprocal")
CLEAVE_NAME(kExp, "exp")
CLEAVE_NAME(kLog, "log")
CLEAVE_NAME(kErf, "erf")
CLEAVE_NAME(kTanh, "tanh")
CLEAVE_NAME(kSigmoid, "sigmoid")
CLEAVE_NAME(kSin, "sin")
CLEAVE_NAME(kCos, "cos")
CLEAVE_NAME(kFloor, "floor")
CLEAVE_NAME(kCeil, "ceil")
CLEAVE_NAME(kRound, "round")
CLEAVE_NAME(kSign, "sign")
CLEAVE_NAME(kIsNaN, "is_nan")
CLEAVE_NAME(kSoftplus, "softplus")
CLEAVE_NAME(kHardSwish, "hard_swish")
CLEAVE_NAME(kRelu, "relu")
CLEAVE_NAME(kNeg, "neg")
CLEAVE_NAME(kAbs, "abs")
CLEAVE_NAME(kNot, "logical_not")
CLEAVE_NAME(kAnd, "logical_and")
CLEAVE_NAME(kOr, "logical_or")
CLEAVE_NAME(kSelect, "select")
CLEAVE_NAME(kLeakyRelu, "leaky_relu")
CLEAVE_NAME(kElu, "elu")
CLEAVE_NAME(kHardSigmoid, "hard_sigmoid")
CLEAVE_NAME(kEqual, "equal")
CLEAVE_NAME(kLess, "less")
CLEAVE_NAME(kLessEqual, "less_equal")
CLEAVE_NAME(kGreater, "greater")
CLEAVE_NAME(kGreaterEqual, "greater_equal")
#undef CLEAVE_NAME

void cleave::registerKernelInterfaceExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, CleaveDialect *) {
    AddOp::attachInterface<ScalarFunctionModel<AddOp, kAdd>>(*context);
    SubOp::attachInterface<ScalarFunctionModel<SubOp, kSub>>(*context);
    MulOp::attachInterface<ScalarFunctionModel<MulOp, kMul>>(*context);
    DivOp::attachInterface<ScalarFunctionModel<DivOp, kDiv>>(*context);
    PowOp::attachInterface<ScalarFunctionModel<PowOp, kPow>>(*context);
    MinOp::attachInterface<ScalarFunctionModel<MinOp, kMin>>(*context);
    MaxOp::attachInterface<ScalarFunctionModel<MaxOp, kMax>>(*context);
    SqrtOp::attachInterface<ScalarFunctionModel<SqrtOp, kSqrt>>(*context);
    ReciprocalOp::attachInterface<
        ScalarFunctionModel<ReciprocalOp, kReciprocal>>(*context);
    ExpOp::attachInterface<ScalarFunctionModel<ExpOp, kExp>>(*context);
    LogOp::attachInterface<ScalarFunctionModel<LogOp, kLog>>(*context);
    ErfOp::attachInterface<ScalarFunctionModel<ErfOp, kErf>>(*context);
    TanhOp::attachInterface<ScalarFunctionModel<TanhOp, kTanh>>(*context);
    SigmoidOp::attachInterface<ScalarFunctionModel<SigmoidOp, kSigmoid>>(
        *context);
    SinOp::attachInterface<ScalarFunctionModel<SinOp, kSin>>(*context);
    CosOp::attachInterface<ScalarFunctionModel<CosOp, kCos>>(*context);
    FloorOp::attachInterface<ScalarFunctionModel<FloorOp, kFloor>>(*context);
    CeilOp::attachInterface<ScalarFunctionModel<CeilOp, kCeil>>(*context);
    RoundOp::attachInterface<ScalarFunctionModel<RoundOp, kRound>>(*context);
    SignOp::attachInterface<ScalarFunctionModel<SignOp, kSign>>(*context);
    IsNaNOp::attachInterface<ScalarFunctionModel<IsNaNOp, kIsNaN>>(*context);
    IsInfOp::attachInterface<IsInfModel>(*context);
    ModOp::attachInterface<ModModel>(*context);
    SoftplusOp::attachInterface<ScalarFunctionModel<SoftplusOp, kSoftplus>>(
        *context);
    HardSwishOp::attachInterface<ScalarFunctionModel<HardSwishOp, kHardSwish>>(
        *context);
    ReluOp::attachInterface<ScalarFunctionModel<ReluOp, kRelu>>(*context);
    NegOp::attachInterface<ScalarFunctionModel<NegOp, kNeg>>(*context);
    AbsOp::attachInterface<ScalarFunctionModel<AbsOp, kAbs>>(*context);
    NotOp::attachInterface<ScalarFunctionModel<NotOp, kNot>>(*context);
    AndOp::attachInterface<ScalarFunctionModel<AndOp, kAnd>>(*context);
    OrOp::attachInterface<ScalarFunctionModel<OrOp, kOr>>(*context);
    WhereOp::attachInterface<ScalarFunctionModel<WhereOp, kSelect>>(*context);
    EqualOp::attachInterface<ScalarFunctionModel<EqualOp, kEqual>>(*context);
    LessOp::attachInterface<ScalarFunctionModel<LessOp, kLess>>(*context);
    LessEqualOp::attachInterface<ScalarFunctionModel<LessEqualOp, kLessEqual>>(
        *context);
    GreaterOp::attachInterface<ScalarFunctionModel<GreaterOp, kGreater>>(
        *context);
    GreaterEqualOp::attachInterface<
        ScalarFunctionModel<GreaterEqualOp, kGreaterEqual>>(*context);
    LeakyReluOp::attachInterface<
        ParameterisedUnaryModel<LeakyReluOp, kLeakyRelu>>(*context);
    EluOp::attachInterface<ParameterisedUnaryModel<EluOp, kElu>>(*context);
    HardSigmoidOp::attachInterface<
        ParameterisedUnaryModel<HardSigmoidOp, kHardSigmoid>>(*context);
    GeluOp::attachInterface<GeluModel>(*context);
    ClipOp::attachInterface<ClipModel>(*context);
    CastOp::attachInterface<CastModel>(*context);
    ExpandOp::attachInterface<ExpandModel>(*context);

    MatMulOp::attachInterface<MatMulModel>(*context);
    GemmOp::attachInterface<GemmModel>(*context);
    ConvOp::attachInterface<ConvModel<ConvOp>>(*context);
    ConvTransposeOp::attachInterface<ConvModel<ConvTransposeOp>>(*context);
    MaxPoolOp::attachInterface<PoolModel<MaxPoolOp>>(*context);
    AveragePoolOp::attachInterface<PoolModel<AveragePoolOp>>(*context);
    GlobalAveragePoolOp::attachInterface<
        GlobalPoolModel<GlobalAveragePoolOp, kernels::global_average_pool>>(
        *context);
    GlobalMaxPoolOp::attachInterface<
        GlobalPoolModel<GlobalMaxPoolOp, kernels::global_max_pool>>(*context);
    BatchNormOp::attachInterface<BatchNormModel>(*context);
    InstanceNormOp::attachInterface<InstanceNormModel>(*context);
    LayerNormOp::attachInterface<LayerNormModel>(*context);
    SgdUpdateOp::attachInterface<SgdUpdateModel>(*context);
    AdamUpdateOp::attachInterface<AdamUpdateModel>(*context);
    AccumulateOp::attachInterface<AccumulateModel>(*context);
    ClearOp::attachInterface<ClearModel>(*context);
    AssignOp::attachInterface<AssignModel>(*context);
    RmsNormOp::attachInterface<RmsNormModel>(*context);
    RotaryEmbeddingOp::attachInterface<RotaryEmbeddingModel>(*context);
    AttentionOp::attachInterface<AttentionModel>(*context);
    GroupNormOp::attachInterface<GroupNormModel>(*context);
    SoftmaxOp::attachInterface<SoftmaxModel>(*context);
    LogSoftmaxOp::attachInterface<LogSoftmaxModel>(*context);
    ConcatOp::attachInterface<ConcatModel>(*context);
    SplitOp::attachInterface<SplitModel>(*context);
    GatherOp::attachInterface<GatherModel>(*context);
    GatherElementsOp::attachInterface<GatherElementsModel>(*context);
    GatherNDOp::attachInterface<GatherNDModel>(*context);
    ScatterNDOp::attachInterface<ScatterNDModel>(*context);
    ScatterElementsOp::attachInterface<ScatterElementsModel>(*context);
    OneHotOp::attachInterface<OneHotModel>(*context);
    TriluOp::attachInterface<TriluModel>(*context);
    ReduceSumOp::attachInterface<ReduceModel<ReduceSumOp, kernels::reduce_sum>>(
        *context);
    ReduceMeanOp::attachInterface<
        ReduceModel<ReduceMeanOp, kernels::reduce_mean>>(*context);
    ReduceMaxOp::attachInterface<ReduceModel<ReduceMaxOp, kernels::reduce_max>>(
        *context);
    ReduceMinOp::attachInterface<ReduceModel<ReduceMinOp, kernels::reduce_min>>(
        *context);
    ReduceProdOp::attachInterface<
        ReduceModel<ReduceProdOp, kernels::reduce_prod>>(*context);
    ReduceL2Op::attachInterface<ReduceModel<ReduceL2Op, kernels::reduce_l2>>(
        *context);
    ReduceSumSquareOp::attachInterface<
        ReduceModel<ReduceSumSquareOp, kernels::reduce_sum_square>>(*context);
    TopKOp::attachInterface<TopKModel>(*context);
    ArgMaxOp::attachInterface<ArgExtremeModel<ArgMaxOp, kernels::arg_max>>(
        *context);
    ArgMinOp::attachInterface<ArgExtremeModel<ArgMinOp, kernels::arg_min>>(
        *context);
    CumSumOp::attachInterface<CumSumModel>(*context);
    TransposeOp::attachInterface<TransposeModel>(*context);
    SliceOp::attachInterface<SliceModel>(*context);
    PadOp::attachInterface<PadModel>(*context);
    ResizeOp::attachInterface<ResizeModel>(*context);
    TileOp::attachInterface<UnaryKernelModel<TileOp, kernels::tile>>(*context);
    RNNOp::attachInterface<RecurrentModel<RNNOp>>(*context);
    GRUOp::attachInterface<RecurrentModel<GRUOp>>(*context);
    LSTMOp::attachInterface<RecurrentModel<LSTMOp>>(*context);

    SendOp::attachInterface<SendModel>(*context);
    RecvOp::attachInterface<RecvModel>(*context);
    AllReduceOp::attachInterface<CollectiveModel<AllReduceOp>>(*context);
    AllGatherOp::attachInterface<CollectiveModel<AllGatherOp>>(*context);
    ReduceScatterOp::attachInterface<CollectiveModel<ReduceScatterOp>>(
        *context);
    AllSliceOp::attachInterface<CollectiveModel<AllSliceOp>>(*context);
    AllToAllOp::attachInterface<CollectiveModel<AllToAllOp>>(*context);
    ReduceStartOp::attachInterface<ReduceStartModel>(*context);
    ReduceWaitOp::attachInterface<ReduceWaitModel>(*context);
  });
}
