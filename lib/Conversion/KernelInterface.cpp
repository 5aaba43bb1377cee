//===- KernelInterface.cpp - kernel external models for cleave ops -*- C++
//-*-===//
//
// How each cleave op runs on a device, attached as external models of
// `cleave::KernelInterface`: elementwise ops describe one element as a
// scalar expression of runtime/include/cleave/rt/Scalar.h, the others name a
// library kernel of runtime/include/cleave/rt/KernelList.def and pack their
// attributes in the order that file documents.
//
//===----------------------------------------------------------------------===//

#include "cleave/Conversion/KernelInterface.h"
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
/// (KernelEnums.def), or none for a spelling no kernel implements.
template <typename Enum>
static std::optional<Enum> parseKernelEnum(StringRef name);

#define CLEAVE_ENUM_BEGIN(type)                                                \
  template <> std::optional<type> parseKernelEnum<type>(StringRef name) {      \
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

static Type getOperandElementType(Operation *op, unsigned index) {
  return cast<ShapedType>(op->getOperand(index).getType()).getElementType();
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

//===----------------------------------------------------------------------===//
// Library kernels
//===----------------------------------------------------------------------===//

/// A kernel without attributes.
template <typename Op, const char *Kernel>
struct PlainKernelModel
    : KernelInterface::ExternalModel<PlainKernelModel<Op, Kernel>, Op> {
  LogicalResult buildKernelCall(Operation *, KernelCall &call) const {
    call.kernel = Kernel;
    return success();
  }
};

/// The operand index of an optional operand, or -1 when it is absent.
static int getOptionalOperandIndex(MutableOperandRange range) {
  return range.empty() ? -1 : static_cast<int>(range[0].getOperandNumber());
}

template <typename Range>
static void append(SmallVectorImpl<int64_t> &ints, Range &&values) {
  for (auto value : values)
    ints.push_back(static_cast<int64_t>(value));
}

struct GemmModel : KernelInterface::ExternalModel<GemmModel, GemmOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto gemm = cast<GemmOp>(op);
    call.kernel = "gemm";
    call.operands = {0, 1, getOptionalOperandIndex(gemm.getCMutable())};
    call.ints = {gemm.getTransA(), gemm.getTransB()};
    call.floats = {gemm.getAlpha().convertToDouble(),
                   gemm.getBeta().convertToDouble()};
    return success();
  }
};

template <typename Op, const char *Kernel>
struct ConvModel : KernelInterface::ExternalModel<ConvModel<Op, Kernel>, Op> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto conv = cast<Op>(op);
    call.kernel = Kernel;
    call.operands = {0, 1, getOptionalOperandIndex(conv.getBiasMutable())};
    call.ints = {static_cast<int64_t>(conv.getStrides().size()),
                 static_cast<int64_t>(conv.getGroup())};
    append(call.ints, conv.getStrides());
    append(call.ints, conv.getPads());
    append(call.ints, conv.getDilations());
    if constexpr (std::is_same_v<Op, ConvTransposeOp>)
      append(call.ints, conv.getOutputPadding());
    return success();
  }
};

template <typename Op, const char *Kernel>
struct PoolModel : KernelInterface::ExternalModel<PoolModel<Op, Kernel>, Op> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto pool = cast<Op>(op);
    call.kernel = Kernel;
    call.ints = {static_cast<int64_t>(pool.getKernelShape().size())};
    append(call.ints, pool.getKernelShape());
    append(call.ints, pool.getStrides());
    append(call.ints, pool.getPads());
    append(call.ints, pool.getDilations());
    call.ints.push_back(pool.getCeilMode());
    if constexpr (std::is_same_v<Op, AveragePoolOp>)
      call.ints.push_back(pool.getCountIncludePad());
    return success();
  }
};

/// Normalisations: an epsilon, and the attribute each kernel adds.
template <typename Op, const char *Kernel>
struct NormModel : KernelInterface::ExternalModel<NormModel<Op, Kernel>, Op> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto norm = cast<Op>(op);
    call.kernel = Kernel;
    if constexpr (std::is_same_v<Op, LayerNormOp>) {
      int64_t rank = cast<ShapedType>(norm.getInput().getType()).getRank();
      int64_t axis = norm.getAxis();
      call.ints = {axis < 0 ? axis + rank : axis};
      call.operands = {0, 1, getOptionalOperandIndex(norm.getBiasMutable())};
    }
    if constexpr (std::is_same_v<Op, GroupNormOp>)
      call.ints = {static_cast<int64_t>(norm.getNumGroups())};
    call.floats = {norm.getEpsilon().convertToDouble()};
    return success();
  }
};

template <typename Op, const char *Kernel>
struct AxisModel : KernelInterface::ExternalModel<AxisModel<Op, Kernel>, Op> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto axisOp = cast<Op>(op);
    int64_t rank = cast<ShapedType>(op->getOperand(0).getType()).getRank();
    int64_t axis = axisOp.getAxis();
    if constexpr (std::is_same_v<Op, ConcatOp>)
      rank = cast<ShapedType>(op->getResult(0).getType()).getRank();
    call.kernel = Kernel;
    call.ints = {axis < 0 ? axis + rank : axis};
    return success();
  }
};

struct SoftmaxModel : KernelInterface::ExternalModel<SoftmaxModel, SoftmaxOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto softmax = cast<SoftmaxOp>(op);
    int64_t rank = cast<ShapedType>(softmax.getInput().getType()).getRank();
    int64_t axis = softmax.getAxis();
    call.kernel = "softmax";
    call.ints = {axis < 0 ? axis + rank : axis, softmax.getNanToZero()};
    return success();
  }
};

template <typename Op, const char *Kernel>
struct ReduceModel
    : KernelInterface::ExternalModel<ReduceModel<Op, Kernel>, Op> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto reduce = cast<Op>(op);
    int64_t rank = cast<ShapedType>(reduce.getInput().getType()).getRank();
    SmallVector<int64_t> axes;
    for (int64_t axis : reduce.getAxes())
      axes.push_back(axis < 0 ? axis + rank : axis);
    llvm::sort(axes);
    call.kernel = Kernel;
    call.ints = {static_cast<int64_t>(axes.size())};
    append(call.ints, axes);
    return success();
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

struct TransposeModel
    : KernelInterface::ExternalModel<TransposeModel, TransposeOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    call.kernel = "transpose";
    append(call.ints, cast<TransposeOp>(op).getPerm());
    return success();
  }
};

struct SliceModel : KernelInterface::ExternalModel<SliceModel, SliceOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto slice = cast<SliceOp>(op);
    call.kernel = "slice";
    append(call.ints, slice.getStarts());
    append(call.ints, slice.getEnds());
    append(call.ints, slice.getSteps());
    return success();
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
    call.kernel = "pad";
    append(call.ints, pad.getPads());
    call.ints.push_back(*mode);
    call.floats = {pad.getValue().convertToDouble()};
    return success();
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
    call.kernel = "resize";
    call.ints = {*mode, *coordinates, *nearest, resize.getExcludeOutside()};
    for (double scale : resize.getScales())
      call.floats.push_back(scale);
    call.floats.push_back(resize.getCubicCoeffA().convertToDouble());
    call.floats.push_back(resize.getExtrapolationValue().convertToDouble());
    return success();
  }
};

template <typename Op, const char *Kernel>
struct RecurrentModel
    : KernelInterface::ExternalModel<RecurrentModel<Op, Kernel>, Op> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto rnn = cast<Op>(op);
    std::optional<CleaveRnnDirection> direction =
        parseKernelEnum<CleaveRnnDirection>(rnn.getDirection());
    if (!direction)
      return op->emitOpError("direction '")
             << rnn.getDirection() << "' has no recurrent kernel";
    int64_t variant = 0;
    if constexpr (std::is_same_v<Op, GRUOp>)
      variant = rnn.getLinearBeforeReset();
    if constexpr (std::is_same_v<Op, LSTMOp>)
      variant = rnn.getInputForget();
    call.kernel = Kernel;
    call.operands = {0, 1, 2, getOptionalOperandIndex(rnn.getBiasMutable()),
                     getOptionalOperandIndex(rnn.getInitialHMutable())};
    if constexpr (std::is_same_v<Op, LSTMOp>) {
      call.operands.push_back(
          getOptionalOperandIndex(rnn.getInitialCMutable()));
      call.operands.push_back(
          getOptionalOperandIndex(rnn.getPeepholesMutable()));
    }
    call.ints = {*direction, static_cast<int64_t>(rnn.getHiddenSize()), variant,
                 static_cast<int64_t>(rnn.getActivations().size())};
    for (Attribute name : rnn.getActivations()) {
      std::optional<CleaveRnnActivation> code =
          parseKernelEnum<CleaveRnnActivation>(cast<StringAttr>(name));
      if (!code)
        return op->emitOpError("activation ")
               << name << " has no recurrent kernel";
      call.ints.push_back(*code);
    }
    std::optional<APFloat> clip = rnn.getClip();
    call.floats = {clip ? clip->convertToDouble() : 0.0};
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Communication (runtime/include/cleave/rt/CommList.def)
//===----------------------------------------------------------------------===//

struct SendModel : KernelInterface::ExternalModel<SendModel, SendOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto send = cast<SendOp>(op);
    call.kernel = "send";
    call.ints = {send.getPeer(), send.getTag()};
    return success();
  }
};

struct RecvModel : KernelInterface::ExternalModel<RecvModel, RecvOp> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto recv = cast<RecvOp>(op);
    call.kernel = "recv";
    call.ints = {recv.getPeer(), recv.getTag()};
    return success();
  }
};

static int64_t getReductionCode(StringRef reduction) {
  return llvm::StringSwitch<int64_t>(reduction)
      .Case("sum", 0)
      .Case("product", 1)
      .Case("max", 2)
      .Case("min", 3)
      .Case("average", 4)
      .Default(-1);
}

/// A collective within the group along a mesh axis: the axis's code
/// (rt/Mesh.h) and the group's size, then what the op adds (dimensions, the
/// reduction).
template <typename Op, const char *Kernel>
struct CollectiveModel
    : KernelInterface::ExternalModel<CollectiveModel<Op, Kernel>, Op> {
  LogicalResult buildKernelCall(Operation *op, KernelCall &call) const {
    auto collective = cast<Op>(op);
    call.kernel = Kernel;
    StringRef axisName = collective.getAxis();
    // A slice along the batch axis takes the block of the batch the program
    // computes: its block count, no axis.
    if constexpr (std::is_same_v<Op, AllSliceOp>) {
      if (axisName == kBatchAxisName) {
        call.kernel = "batch_slice";
        call.ints = {static_cast<int64_t>(collective.getGroupSize()),
                     static_cast<int64_t>(collective.getDim())};
        return success();
      }
    }
    rt::MeshAxis axis;
    if (!rt::parseMeshAxis(axisName, axis))
      return op->emitOpError("runs over '")
             << axisName << "', which is no mesh axis (pp, dp or tp)";
    call.ints = {static_cast<int64_t>(axis),
                 static_cast<int64_t>(collective.getGroupSize())};
    if constexpr (std::is_same_v<Op, AllGatherOp> ||
                  std::is_same_v<Op, ReduceScatterOp> ||
                  std::is_same_v<Op, AllSliceOp>)
      call.ints.push_back(collective.getDim());
    if constexpr (std::is_same_v<Op, AllToAllOp>) {
      call.ints.push_back(collective.getSplitDim());
      call.ints.push_back(collective.getConcatDim());
    }
    if constexpr (std::is_same_v<Op, AllReduceOp> ||
                  std::is_same_v<Op, ReduceScatterOp>) {
      int64_t code = getReductionCode(collective.getReduction());
      if (code < 0)
        return op->emitOpError("reduction '")
               << collective.getReduction() << "' has no runtime call";
      call.ints.push_back(code);
    }
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

// Names of rt/Scalar.h functions and KernelList.def kernels, as template
// arguments.
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
CLEAVE_NAME(kMatmul, "matmul")
CLEAVE_NAME(kConv, "conv")
CLEAVE_NAME(kConvTranspose, "conv_transpose")
CLEAVE_NAME(kMaxPool, "max_pool")
CLEAVE_NAME(kAveragePool, "average_pool")
CLEAVE_NAME(kGlobalAveragePool, "global_average_pool")
CLEAVE_NAME(kGlobalMaxPool, "global_max_pool")
CLEAVE_NAME(kBatchNorm, "batch_norm")
CLEAVE_NAME(kInstanceNorm, "instance_norm")
CLEAVE_NAME(kLayerNorm, "layer_norm")
CLEAVE_NAME(kGroupNorm, "group_norm")
CLEAVE_NAME(kLogSoftmax, "log_softmax")
CLEAVE_NAME(kReduceSum, "reduce_sum")
CLEAVE_NAME(kReduceMean, "reduce_mean")
CLEAVE_NAME(kReduceMax, "reduce_max")
CLEAVE_NAME(kReduceMin, "reduce_min")
CLEAVE_NAME(kReduceProd, "reduce_prod")
CLEAVE_NAME(kReduceL2, "reduce_l2")
CLEAVE_NAME(kReduceSumSquare, "reduce_sum_square")
CLEAVE_NAME(kConcat, "concat")
CLEAVE_NAME(kSplit, "split")
CLEAVE_NAME(kGather, "gather")
CLEAVE_NAME(kTile, "tile")
CLEAVE_NAME(kRnn, "rnn")
CLEAVE_NAME(kGru, "gru")
CLEAVE_NAME(kLstm, "lstm")
CLEAVE_NAME(kAllReduce, "all_reduce")
CLEAVE_NAME(kAllGather, "all_gather")
CLEAVE_NAME(kReduceScatter, "reduce_scatter")
CLEAVE_NAME(kAllSlice, "all_slice")
CLEAVE_NAME(kAllToAll, "all_to_all")
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

    MatMulOp::attachInterface<PlainKernelModel<MatMulOp, kMatmul>>(*context);
    GemmOp::attachInterface<GemmModel>(*context);
    ConvOp::attachInterface<ConvModel<ConvOp, kConv>>(*context);
    ConvTransposeOp::attachInterface<
        ConvModel<ConvTransposeOp, kConvTranspose>>(*context);
    MaxPoolOp::attachInterface<PoolModel<MaxPoolOp, kMaxPool>>(*context);
    AveragePoolOp::attachInterface<PoolModel<AveragePoolOp, kAveragePool>>(
        *context);
    GlobalAveragePoolOp::attachInterface<
        PlainKernelModel<GlobalAveragePoolOp, kGlobalAveragePool>>(*context);
    GlobalMaxPoolOp::attachInterface<
        PlainKernelModel<GlobalMaxPoolOp, kGlobalMaxPool>>(*context);
    BatchNormOp::attachInterface<NormModel<BatchNormOp, kBatchNorm>>(*context);
    InstanceNormOp::attachInterface<NormModel<InstanceNormOp, kInstanceNorm>>(
        *context);
    LayerNormOp::attachInterface<NormModel<LayerNormOp, kLayerNorm>>(*context);
    GroupNormOp::attachInterface<NormModel<GroupNormOp, kGroupNorm>>(*context);
    SoftmaxOp::attachInterface<SoftmaxModel>(*context);
    LogSoftmaxOp::attachInterface<AxisModel<LogSoftmaxOp, kLogSoftmax>>(
        *context);
    ConcatOp::attachInterface<AxisModel<ConcatOp, kConcat>>(*context);
    SplitOp::attachInterface<AxisModel<SplitOp, kSplit>>(*context);
    GatherOp::attachInterface<AxisModel<GatherOp, kGather>>(*context);
    ReduceSumOp::attachInterface<ReduceModel<ReduceSumOp, kReduceSum>>(
        *context);
    ReduceMeanOp::attachInterface<ReduceModel<ReduceMeanOp, kReduceMean>>(
        *context);
    ReduceMaxOp::attachInterface<ReduceModel<ReduceMaxOp, kReduceMax>>(
        *context);
    ReduceMinOp::attachInterface<ReduceModel<ReduceMinOp, kReduceMin>>(
        *context);
    ReduceProdOp::attachInterface<ReduceModel<ReduceProdOp, kReduceProd>>(
        *context);
    ReduceL2Op::attachInterface<ReduceModel<ReduceL2Op, kReduceL2>>(*context);
    ReduceSumSquareOp::attachInterface<
        ReduceModel<ReduceSumSquareOp, kReduceSumSquare>>(*context);
    TransposeOp::attachInterface<TransposeModel>(*context);
    SliceOp::attachInterface<SliceModel>(*context);
    PadOp::attachInterface<PadModel>(*context);
    ResizeOp::attachInterface<ResizeModel>(*context);
    TileOp::attachInterface<PlainKernelModel<TileOp, kTile>>(*context);
    RNNOp::attachInterface<RecurrentModel<RNNOp, kRnn>>(*context);
    GRUOp::attachInterface<RecurrentModel<GRUOp, kGru>>(*context);
    LSTMOp::attachInterface<RecurrentModel<LSTMOp, kLstm>>(*context);

    SendOp::attachInterface<SendModel>(*context);
    RecvOp::attachInterface<RecvModel>(*context);
    AllReduceOp::attachInterface<CollectiveModel<AllReduceOp, kAllReduce>>(
        *context);
    AllGatherOp::attachInterface<CollectiveModel<AllGatherOp, kAllGather>>(
        *context);
    ReduceScatterOp::attachInterface<
        CollectiveModel<ReduceScatterOp, kReduceScatter>>(*context);
    AllSliceOp::attachInterface<CollectiveModel<AllSliceOp, kAllSlice>>(
        *context);
    AllToAllOp::attachInterface<CollectiveModel<AllToAllOp, kAllToAll>>(
        *context);
  });
}
