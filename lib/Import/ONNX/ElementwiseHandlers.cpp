//===- ElementwiseHandlers.cpp - unary, binary, variadic, cast ------------===//
//
// Handlers of the elementwise ONNX operators: activations, arithmetic with
// broadcasting, comparisons, logic, selection and casts. Variadic operators
// (Min, Max, Sum, Mean) become chains of binary ops.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "NodeBinder.h"
#include "OpHandlers.h"

using namespace mlir;

namespace cleave::onnx_import {
namespace {

template <typename OpTy> LogicalResult importUnary(NodeBinder &b) {
  Value x;
  if (failed(b.input(0, x)))
    return failure();
  return b.replaceWith<OpTy>({x});
}

template <typename OpTy> LogicalResult importBinary(NodeBinder &b) {
  Value lhs, rhs;
  if (failed(b.input(0, lhs)) || failed(b.input(1, rhs)))
    return failure();
  return b.replaceWith<OpTy>({lhs, rhs});
}

/// Folds every input into one value with `OpTy`, left to right.
template <typename OpTy> FailureOr<Value> chainInputs(NodeBinder &b) {
  SmallVector<Value> inputs;
  if (failed(b.allInputs(inputs)))
    return failure();
  Value result = inputs.front();
  for (Value next : ArrayRef<Value>(inputs).drop_front()) {
    FailureOr<Value> combined = b.create<OpTy>({result, next});
    if (failed(combined))
      return failure();
    result = *combined;
  }
  return result;
}

template <typename OpTy> LogicalResult importVariadic(NodeBinder &b) {
  FailureOr<Value> result = chainInputs<OpTy>(b);
  if (failed(result))
    return failure();
  return b.bindOutputs(*result);
}

LogicalResult importMean(NodeBinder &b) {
  FailureOr<Value> sum = chainInputs<AddOp>(b);
  if (failed(sum))
    return failure();
  if (b.getNumInputs() == 1)
    return b.bindOutputs(*sum);
  Type elementType = NodeBinder::getType(*sum).getElementType();
  if (!isa<FloatType>(elementType))
    return b.emitError() << "Mean needs float inputs, not " << elementType;
  Value count = b.scalarConstant(elementType, b.getNumInputs());
  return b.replaceWith<DivOp>({*sum, count});
}

LogicalResult importPow(NodeBinder &b) {
  Value base, exponent;
  if (failed(b.input(0, base)) || failed(b.input(1, exponent)))
    return failure();
  // ONNX lets the exponent have its own element type; cleave.pow wants one.
  Type elementType = NodeBinder::getType(base).getElementType();
  auto exponentType = NodeBinder::getType(exponent);
  if (exponentType.getElementType() != elementType) {
    FailureOr<Value> cast =
        b.create<CastOp>({exponent}, {}, exponentType.clone(elementType));
    if (failed(cast))
      return failure();
    exponent = *cast;
  }
  return b.replaceWith<PowOp>({base, exponent});
}

LogicalResult importLeakyRelu(NodeBinder &b) {
  Value x;
  float alpha;
  if (failed(b.input(0, x)) || failed(b.floatAttr("alpha", alpha, 0.01f)))
    return failure();
  return b.replaceWith<LeakyReluOp>(
      {x}, {b.named("alpha", b.getBuilder().getF32FloatAttr(alpha))});
}

LogicalResult importElu(NodeBinder &b) {
  Value x;
  float alpha;
  if (failed(b.input(0, x)) || failed(b.floatAttr("alpha", alpha, 1.0f)))
    return failure();
  return b.replaceWith<EluOp>(
      {x}, {b.named("alpha", b.getBuilder().getF32FloatAttr(alpha))});
}

LogicalResult importHardSigmoid(NodeBinder &b) {
  Value x;
  float alpha, beta;
  if (failed(b.input(0, x)) || failed(b.floatAttr("alpha", alpha, 0.2f)) ||
      failed(b.floatAttr("beta", beta, 0.5f)))
    return failure();
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<HardSigmoidOp>(
      {x}, {b.named("alpha", builder.getF32FloatAttr(alpha)),
            b.named("beta", builder.getF32FloatAttr(beta))});
}

/// Swish (opset 24), `x * sigmoid(alpha * x)`: the scale is left out when
/// alpha is 1 (SiLU).
LogicalResult importSwish(NodeBinder &b) {
  Value x;
  float alpha;
  if (failed(b.input(0, x)) || failed(b.floatAttr("alpha", alpha, 1.0f)))
    return failure();
  Type elementType = NodeBinder::getType(x).getElementType();
  if (!isa<FloatType>(elementType))
    return b.emitError() << "Swish needs a float input, not " << elementType;
  Value gate = x;
  if (alpha != 1.0f) {
    FailureOr<Value> scaled =
        b.create<MulOp>({x, b.scalarConstant(elementType, alpha)});
    if (failed(scaled))
      return failure();
    gate = *scaled;
  }
  FailureOr<Value> sigmoid = b.create<SigmoidOp>({gate});
  if (failed(sigmoid))
    return failure();
  return b.replaceWith<MulOp>({x, *sigmoid});
}

LogicalResult importGelu(NodeBinder &b) {
  Value x;
  std::string approximate;
  if (failed(b.input(0, x)) ||
      failed(b.stringAttr("approximate", approximate, "none")))
    return failure();
  if (approximate != "none" && approximate != "tanh")
    return b.emitError() << "attribute 'approximate' is '" << approximate
                         << "'; expected 'none' or 'tanh'";
  return b.replaceWith<GeluOp>(
      {x}, {b.named("approximate", b.getBuilder().getStringAttr(approximate))});
}

LogicalResult importClip(NodeBinder &b) {
  Value x;
  if (failed(b.input(0, x)))
    return failure();
  SmallVector<NamedAttribute> attrs;
  // The bounds are optional inputs since opset 11; each must be a constant
  // scalar.
  for (auto [index, bound] : {std::pair(1u, "min"), std::pair(2u, "max")}) {
    if (!b.hasInput(index))
      continue;
    SmallVector<double> values;
    if (failed(b.constantDoubles(index, bound, values)))
      return failure();
    if (values.size() != 1)
      return b.emitError() << "input " << index << " ('" << bound
                           << "') must be a scalar, but it has "
                           << values.size() << " elements";
    attrs.push_back(
        b.named(bound, b.getBuilder().getF64FloatAttr(values.front())));
  }
  return b.replaceWith<ClipOp>({x}, attrs);
}

/// Reads the ONNX integer attribute `name` that holds a boolean (0 or 1).
static LogicalResult flagAttr(NodeBinder &b, StringRef name, bool &value,
                              bool defaultValue) {
  int64_t flag;
  if (failed(b.intAttr(name, flag, defaultValue)))
    return failure();
  if (flag != 0 && flag != 1)
    return b.emitError() << "attribute '" << name << "' is " << flag
                         << "; expected 0 or 1";
  value = flag;
  return success();
}

LogicalResult importIsInf(NodeBinder &b) {
  Value x;
  bool positive, negative;
  if (failed(b.input(0, x)) ||
      failed(flagAttr(b, "detect_positive", positive, true)) ||
      failed(flagAttr(b, "detect_negative", negative, true)))
    return failure();
  OpBuilder &builder = b.getBuilder();
  return b.replaceWith<IsInfOp>(
      {x}, {b.named("detect_positive", builder.getBoolAttr(positive)),
            b.named("detect_negative", builder.getBoolAttr(negative))});
}

LogicalResult importMod(NodeBinder &b) {
  Value lhs, rhs;
  bool fmod;
  if (failed(b.input(0, lhs)) || failed(b.input(1, rhs)) ||
      failed(flagAttr(b, "fmod", fmod, false)))
    return failure();
  return b.replaceWith<ModOp>(
      {lhs, rhs}, {b.named("fmod", b.getBuilder().getBoolAttr(fmod))});
}

LogicalResult importWhere(NodeBinder &b) {
  Value condition, trueValue, falseValue;
  if (failed(b.input(0, condition)) || failed(b.input(1, trueValue)) ||
      failed(b.input(2, falseValue)))
    return failure();
  return b.replaceWith<WhereOp>({condition, trueValue, falseValue});
}

LogicalResult importCast(NodeBinder &b) {
  Value x;
  int64_t to, saturate;
  if (failed(b.input(0, x)) || failed(b.requiredIntAttr("to", to)) ||
      failed(b.intAttr("saturate", saturate, 1)))
    return failure();
  // `saturate` (opset 19) only changes conversions to float8 types, which
  // cleave does not represent; those are rejected below.
  Type elementType = convertElementType(b.getContext(), to);
  if (!elementType)
    return b.emitError() << "cast to " << getDataTypeName(to)
                         << " is not supported";
  return b.replaceWith<CastOp>({x}, {},
                               NodeBinder::getType(x).clone(elementType));
}

constexpr StringLiteral kBroadcast = "numpy broadcasting";
constexpr StringLiteral kChain = "variadic: chained left to right";

const OpHandler elementwiseHandlers[] = {
    {"Abs", 11, importUnary<AbsOp>, "cleave.abs", ""},
    {"Add", 11, importBinary<AddOp>, "cleave.add", kBroadcast},
    {"And", 11, importBinary<AndOp>, "cleave.and", kBroadcast},
    {"Cast", 11, importCast, "cleave.cast", "`saturate` (19+) is accepted"},
    {"Ceil", 11, importUnary<CeilOp>, "cleave.ceil", ""},
    {"Clip", 11, importClip, "cleave.clip",
     "constant `min`/`max` inputs become attributes"},
    {"Cos", 11, importUnary<CosOp>, "cleave.cos", ""},
    {"Div", 11, importBinary<DivOp>, "cleave.div", kBroadcast},
    {"Elu", 11, importElu, "cleave.elu", ""},
    {"Equal", 11, importBinary<EqualOp>, "cleave.equal", kBroadcast},
    {"Erf", 11, importUnary<ErfOp>, "cleave.erf", ""},
    {"Exp", 11, importUnary<ExpOp>, "cleave.exp", ""},
    {"Floor", 11, importUnary<FloorOp>, "cleave.floor", ""},
    {"Gelu", 20, importGelu, "cleave.gelu", ""},
    {"Greater", 11, importBinary<GreaterOp>, "cleave.greater", kBroadcast},
    {"GreaterOrEqual", 12, importBinary<GreaterEqualOp>, "cleave.greater_equal",
     kBroadcast},
    {"HardSigmoid", 11, importHardSigmoid, "cleave.hard_sigmoid", ""},
    {"HardSwish", 14, importUnary<HardSwishOp>, "cleave.hard_swish", ""},
    {"IsInf", 11, importIsInf, "cleave.is_inf", ""},
    {"IsNaN", 11, importUnary<IsNaNOp>, "cleave.is_nan", ""},
    {"LeakyRelu", 11, importLeakyRelu, "cleave.leaky_relu", ""},
    {"Less", 11, importBinary<LessOp>, "cleave.less", kBroadcast},
    {"LessOrEqual", 12, importBinary<LessEqualOp>, "cleave.less_equal",
     kBroadcast},
    {"Log", 11, importUnary<LogOp>, "cleave.log", ""},
    {"Max", 11, importVariadic<MaxOp>, "cleave.max", kChain},
    {"Mean", 11, importMean, "cleave.add cleave.div",
     "variadic: sum chained, then divided by the input count"},
    {"Min", 11, importVariadic<MinOp>, "cleave.min", kChain},
    {"Mod", 11, importMod, "cleave.mod",
     "numpy broadcasting; `fmod` 0 takes the divisor's sign, floats "
     "included"},
    {"Mul", 11, importBinary<MulOp>, "cleave.mul", kBroadcast},
    {"Neg", 11, importUnary<NegOp>, "cleave.neg", ""},
    {"Not", 11, importUnary<NotOp>, "cleave.not", ""},
    {"Or", 11, importBinary<OrOp>, "cleave.or", kBroadcast},
    {"Pow", 11, importPow, "cleave.pow cleave.cast",
     "an exponent of another element type is cast to the base's"},
    {"Reciprocal", 11, importUnary<ReciprocalOp>, "cleave.reciprocal", ""},
    {"Relu", 11, importUnary<ReluOp>, "cleave.relu", ""},
    {"Round", 11, importUnary<RoundOp>, "cleave.round", "halves to even"},
    {"Sigmoid", 11, importUnary<SigmoidOp>, "cleave.sigmoid", ""},
    {"Sign", 11, importUnary<SignOp>, "cleave.sign", ""},
    {"Sin", 11, importUnary<SinOp>, "cleave.sin", ""},
    {"Softplus", 11, importUnary<SoftplusOp>, "cleave.softplus", ""},
    {"Sqrt", 11, importUnary<SqrtOp>, "cleave.sqrt", ""},
    {"Sub", 11, importBinary<SubOp>, "cleave.sub", kBroadcast},
    {"Sum", 11, importVariadic<AddOp>, "cleave.add", kChain},
    {"Swish", 24, importSwish, "cleave.mul cleave.sigmoid",
     "`x * sigmoid(alpha * x)`"},
    {"Tanh", 11, importUnary<TanhOp>, "cleave.tanh", ""},
    {"Where", 11, importWhere, "cleave.where", kBroadcast},
};

} // namespace

ArrayRef<OpHandler> getElementwiseHandlers() { return elementwiseHandlers; }

} // namespace cleave::onnx_import
