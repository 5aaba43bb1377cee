//===- ElementwiseOps.cpp - elementwise cleave ops --------------*- C++ -*-===//
//
// Type inference, verifiers and constant folders of the unary, binary,
// comparison, selection and cast ops, and the broadcasting rule they share
// with the importer.
//
//===----------------------------------------------------------------------===//

#include "ConstantEval.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/APSInt.h"

#include <cmath>

using namespace mlir;
using namespace cleave;

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> cleave::broadcastShapes(ArrayRef<int64_t> lhs,
                                                        ArrayRef<int64_t> rhs) {
  // Align the shapes at their trailing dimensions; the shorter one is padded
  // with leading 1s.
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    int64_t &out = result[rank - 1 - i];
    if (ShapedType::isDynamic(l) || ShapedType::isDynamic(r)) {
      // A dynamic size can only be 1 or the other size at run time, so a
      // static size above 1 decides the result.
      int64_t other = ShapedType::isDynamic(l) ? r : l;
      out = !ShapedType::isDynamic(other) && other > 1 ? other
                                                       : ShapedType::kDynamic;
      continue;
    }
    if (l == r || r == 1)
      out = l;
    else if (l == 1)
      out = r;
    else
      return failure();
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Type inference
//===----------------------------------------------------------------------===//

/// Broadcasts the shapes of `operands` (ranked tensors) into `shape`, or
/// reports which pair does not broadcast.
static LogicalResult broadcastOperandShapes(std::optional<Location> location,
                                            TypeRange operands,
                                            SmallVectorImpl<int64_t> &shape) {
  shape.clear();
  for (Type type : operands) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return emitOptionalError(location,
                               "expected ranked tensor operands, got ", type);
    FailureOr<SmallVector<int64_t>> broadcast =
        broadcastShapes(shape, tensor.getShape());
    if (failed(broadcast))
      return emitOptionalError(location, "operand shapes do not broadcast: ",
                               operands.front(), " and ", type);
    shape.assign(broadcast->begin(), broadcast->end());
  }
  return success();
}

/// Infers the type of a broadcasting binary op: the broadcast shape, with the
/// operands' common element type, or `i1` when `isPredicate`.
static LogicalResult inferBroadcastBinary(MLIRContext *context,
                                          std::optional<Location> location,
                                          Value lhs, Value rhs,
                                          bool isPredicate,
                                          SmallVectorImpl<Type> &inferred) {
  SmallVector<int64_t> shape;
  if (failed(broadcastOperandShapes(location, {lhs.getType(), rhs.getType()},
                                    shape)))
    return failure();
  Type lhsElement = getElementTypeOrSelf(lhs.getType());
  Type rhsElement = getElementTypeOrSelf(rhs.getType());
  if (lhsElement != rhsElement)
    return emitOptionalError(location,
                             "operands must have the same element type, got ",
                             lhsElement, " and ", rhsElement);
  Type element = isPredicate ? IntegerType::get(context, 1) : lhsElement;
  inferred.push_back(RankedTensorType::get(shape, element));
  return success();
}

#define CLEAVE_INFER_BINARY(OP, IS_PREDICATE)                                  \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *context, std::optional<Location> location, Adaptor adaptor, \
      SmallVectorImpl<Type> &inferredReturnTypes) {                            \
    return inferBroadcastBinary(context, location, adaptor.getLhs(),           \
                                adaptor.getRhs(), IS_PREDICATE,                \
                                inferredReturnTypes);                          \
  }

CLEAVE_INFER_BINARY(AddOp, false)
CLEAVE_INFER_BINARY(SubOp, false)
CLEAVE_INFER_BINARY(MulOp, false)
CLEAVE_INFER_BINARY(DivOp, false)
CLEAVE_INFER_BINARY(PowOp, false)
CLEAVE_INFER_BINARY(ModOp, false)
CLEAVE_INFER_BINARY(MinOp, false)
CLEAVE_INFER_BINARY(MaxOp, false)
CLEAVE_INFER_BINARY(AndOp, false)
CLEAVE_INFER_BINARY(OrOp, false)
CLEAVE_INFER_BINARY(EqualOp, true)
CLEAVE_INFER_BINARY(LessOp, true)
CLEAVE_INFER_BINARY(LessEqualOp, true)
CLEAVE_INFER_BINARY(GreaterOp, true)
CLEAVE_INFER_BINARY(GreaterEqualOp, true)

#undef CLEAVE_INFER_BINARY

/// A float classification has a boolean result of its input's shape.
static LogicalResult inferFloatClass(MLIRContext *context,
                                     std::optional<Location> location,
                                     Value input,
                                     SmallVectorImpl<Type> &inferred) {
  auto type = dyn_cast<RankedTensorType>(input.getType());
  if (!type)
    return emitOptionalError(location, "expected a ranked tensor operand, got ",
                             input.getType());
  inferred.push_back(type.clone(IntegerType::get(context, 1)));
  return success();
}

LogicalResult
IsNaNOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferFloatClass(context, location, adaptor.getInput(),
                         inferredReturnTypes);
}

LogicalResult
IsInfOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferFloatClass(context, location, adaptor.getInput(),
                         inferredReturnTypes);
}

LogicalResult
WhereOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  SmallVector<int64_t> shape;
  Value trueValue = adaptor.getTrueValue();
  Value falseValue = adaptor.getFalseValue();
  if (failed(broadcastOperandShapes(location,
                                    {adaptor.getCondition().getType(),
                                     trueValue.getType(), falseValue.getType()},
                                    shape)))
    return failure();
  Type trueElement = getElementTypeOrSelf(trueValue.getType());
  Type falseElement = getElementTypeOrSelf(falseValue.getType());
  if (trueElement != falseElement)
    return emitOptionalError(
        location, "true and false values must have the same element type, got ",
        trueElement, " and ", falseElement);
  inferredReturnTypes.push_back(RankedTensorType::get(shape, trueElement));
  return success();
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::verify() {
  StringRef approximate = getApproximate();
  if (approximate != "none" && approximate != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << approximate << "\"";
  return success();
}

LogicalResult ClipOp::verify() {
  std::optional<APFloat> min = getMin();
  std::optional<APFloat> max = getMax();
  for (const std::optional<APFloat> &bound : {min, max})
    if (bound && bound->isNaN())
      return emitOpError("clip bounds must not be NaN");
  if (min && max && max->compare(*min) == APFloat::cmpLessThan)
    return emitOpError("min (")
           << min->convertToDouble() << ") must not exceed max ("
           << max->convertToDouble() << ")";
  if (isa<IntegerType>(getType().getElementType()))
    for (const std::optional<APFloat> &bound : {min, max})
      if (bound && !bound->isInteger())
        return emitOpError("bounds of an integer clip must be integral, got ")
               << bound->convertToDouble();
  return success();
}

LogicalResult ModOp::verify() {
  // mod_c1: a remainder of booleans means nothing.
  Type element = getType().getElementType();
  if (element.isInteger(1))
    return emitOpError("operands must be numeric, got ") << element;
  return success();
}

//===----------------------------------------------------------------------===//
// Folding helpers
//===----------------------------------------------------------------------===//

/// Combines two integer elements; `isUnsigned` says how to read them. Returns
/// nullopt where the result is undefined so that the op stays unfolded.
using IntBinaryFn = llvm::function_ref<std::optional<APInt>(
    const APInt &, const APInt &, bool isUnsigned)>;
using FloatBinaryFn = llvm::function_ref<std::optional<APFloat>(
    const APFloat &, const APFloat &)>;

/// Folds an arithmetic op whose operands are both dense constants.
static OpFoldResult foldArithmetic(Type resultType, Attribute lhs,
                                   Attribute rhs, IntBinaryFn intFn,
                                   FloatBinaryFn floatFn) {
  auto lhsAttr = dyn_cast_if_present<DenseElementsAttr>(lhs);
  auto rhsAttr = dyn_cast_if_present<DenseElementsAttr>(rhs);
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!lhsAttr || !rhsAttr || !type)
    return {};
  Type element = type.getElementType();
  if (lhsAttr.getElementType() != element ||
      rhsAttr.getElementType() != element)
    return {};
  DenseElementsAttr folded;
  if (auto intType = dyn_cast<IntegerType>(element)) {
    bool isUnsigned = isUnsignedElement(intType);
    folded = evaluateElementwise<APInt, APInt>(
        {lhsAttr, rhsAttr}, type,
        [&](ArrayRef<APInt> v) { return intFn(v[0], v[1], isUnsigned); });
  } else if (isa<FloatType>(element)) {
    folded = evaluateElementwise<APFloat, APFloat>(
        {lhsAttr, rhsAttr}, type,
        [&](ArrayRef<APFloat> v) { return floatFn(v[0], v[1]); });
  }
  if (!folded)
    return {};
  return folded;
}

/// Folds a comparison of two dense constants. `accept` says which outcomes of
/// the comparison make the result true.
static OpFoldResult
foldCompare(Type resultType, Attribute lhs, Attribute rhs,
            llvm::function_ref<bool(APFloat::cmpResult)> accept) {
  auto lhsAttr = dyn_cast_if_present<DenseElementsAttr>(lhs);
  auto rhsAttr = dyn_cast_if_present<DenseElementsAttr>(rhs);
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!lhsAttr || !rhsAttr || !type ||
      lhsAttr.getElementType() != rhsAttr.getElementType())
    return {};
  Type element = lhsAttr.getElementType();
  DenseElementsAttr folded;
  if (auto intType = dyn_cast<IntegerType>(element)) {
    bool isUnsigned = isUnsignedElement(intType);
    folded = evaluateElementwise<APInt, APInt>(
        {lhsAttr, rhsAttr}, type, [&](ArrayRef<APInt> v) {
          const APInt &a = v[0], &b = v[1];
          bool less = isUnsigned ? a.ult(b) : a.slt(b);
          APFloat::cmpResult order = a == b ? APFloat::cmpEqual
                                     : less ? APFloat::cmpLessThan
                                            : APFloat::cmpGreaterThan;
          return APInt(1, accept(order));
        });
  } else if (isa<FloatType>(element)) {
    folded = evaluateElementwise<APFloat, APInt>(
        {lhsAttr, rhsAttr}, type, [&](ArrayRef<APFloat> v) {
          return APInt(1, accept(v[0].compare(v[1])));
        });
  }
  if (!folded)
    return {};
  return folded;
}

/// Whether `attr` is a splat of `intValue` (integer elements) or of exactly
/// `floatValue`, sign of zero included (float elements).
static bool isSplatOf(Attribute attr, int64_t intValue, double floatValue) {
  auto splat = dyn_cast_if_present<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  if (auto intType = dyn_cast<IntegerType>(splat.getElementType())) {
    APInt value = splat.getSplatValue<APInt>();
    return isUnsignedElement(intType)
               ? intValue >= 0 && value.getZExtValue() == uint64_t(intValue)
               : value.getSExtValue() == intValue;
  }
  if (auto floatType = dyn_cast<FloatType>(splat.getElementType())) {
    APFloat expected(floatValue);
    bool losesInfo = false;
    expected.convert(floatType.getFloatSemantics(),
                     APFloat::rmNearestTiesToEven, &losesInfo);
    return splat.getSplatValue<APFloat>().bitwiseIsEqual(expected);
  }
  return false;
}

/// Returns `value` when the op computing `result` from it is the identity:
/// `other` is the neutral splat and does not widen the result by
/// broadcasting.
static Value foldNeutral(Value result, Value value, Attribute other,
                         int64_t intNeutral, double floatNeutral) {
  if (value.getType() == result.getType() &&
      isSplatOf(other, intNeutral, floatNeutral))
    return value;
  return {};
}

/// Rounds a double to the float semantics `semantics`.
static APFloat roundTo(double value, const llvm::fltSemantics &semantics) {
  APFloat result(value);
  bool losesInfo = false;
  result.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
  return result;
}

/// Integer power with the wrap-around of the element type. A negative
/// exponent truncates the exact fraction toward zero, as ONNX integer `Pow`
/// does; `0` to a negative power is undefined and not folded.
static std::optional<APInt> integerPow(const APInt &base, const APInt &exponent,
                                       bool isUnsigned) {
  unsigned width = base.getBitWidth();
  if (!isUnsigned && exponent.isNegative()) {
    if (base.isZero())
      return std::nullopt;
    if (base.isOne())
      return base;
    if (base.isAllOnes()) // -1 to an odd power is -1, to an even power 1.
      return exponent[0] ? base : APInt(width, 1);
    return APInt(width, 0);
  }
  APInt result(width, 1);
  APInt square = base;
  for (unsigned bit = 0, e = exponent.getActiveBits(); bit < e; ++bit) {
    if (exponent[bit])
      result *= square;
    square *= square;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Arithmetic folders
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // Only -0.0 is neutral for float addition: -0.0 + 0.0 is +0.0.
  if (Value x = foldNeutral(getResult(), getLhs(), adaptor.getRhs(), 0, -0.0))
    return x;
  if (Value x = foldNeutral(getResult(), getRhs(), adaptor.getLhs(), 0, -0.0))
    return x;
  return foldArithmetic(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a + b;
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a + b;
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldNeutral(getResult(), getLhs(), adaptor.getRhs(), 0, 0.0))
    return x;
  return foldArithmetic(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a - b;
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a - b;
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldNeutral(getResult(), getLhs(), adaptor.getRhs(), 1, 1.0))
    return x;
  if (Value x = foldNeutral(getResult(), getRhs(), adaptor.getLhs(), 1, 1.0))
    return x;
  return foldArithmetic(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a * b;
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a * b;
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldNeutral(getResult(), getLhs(), adaptor.getRhs(), 1, 1.0))
    return x;
  return foldArithmetic(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APInt &a, const APInt &b,
         bool isUnsigned) -> std::optional<APInt> {
        // ONNX integer division truncates toward zero. What ONNX leaves
        // undefined is defined as the kernels define it (rt/Scalar.h
        // `cl::div`): x / 0 is 0, MIN / -1 is MIN.
        if (b.isZero())
          return APInt::getZero(a.getBitWidth());
        if (isUnsigned)
          return a.udiv(b);
        if (a.isMinSignedValue() && b.isAllOnes())
          return a;
        return a.sdiv(b);
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a / b;
      });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldNeutral(getResult(), getLhs(), adaptor.getRhs(), 1, 1.0))
    return x;
  return foldArithmetic(
      getType(), adaptor.getLhs(), adaptor.getRhs(), integerPow,
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        const llvm::fltSemantics &semantics = a.getSemantics();
        return roundTo(std::pow(a.convertToDouble(), b.convertToDouble()),
                       semantics);
      });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs() && getLhs().getType() == getType())
    return getLhs();
  return foldArithmetic(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APInt &a, const APInt &b,
         bool isUnsigned) -> std::optional<APInt> {
        return isUnsigned ? llvm::APIntOps::umin(a, b)
                          : llvm::APIntOps::smin(a, b);
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return llvm::minimum(a, b);
      });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs() && getLhs().getType() == getType())
    return getLhs();
  return foldArithmetic(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APInt &a, const APInt &b,
         bool isUnsigned) -> std::optional<APInt> {
        return isUnsigned ? llvm::APIntOps::umax(a, b)
                          : llvm::APIntOps::smax(a, b);
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return llvm::maximum(a, b);
      });
}

/// The remainder of integers `a` and `b` with the sign of the dividend
/// (`floorSign` false) or of the divisor. x mod 0 and MIN mod -1 are 0, as
/// rt/Scalar.h `cl::fmod` and `cl::mod` define them.
static APInt integerRemainder(const APInt &a, const APInt &b, bool isUnsigned,
                              bool floorSign) {
  if (b.isZero())
    return APInt::getZero(a.getBitWidth());
  if (isUnsigned)
    return a.urem(b);
  if (b.isAllOnes())
    return APInt::getZero(a.getBitWidth());
  APInt remainder = a.srem(b);
  if (floorSign && !remainder.isZero() &&
      remainder.isNegative() != b.isNegative())
    remainder += b;
  return remainder;
}

/// The float remainder with the sign of the dividend (C's fmod) or, as
/// numpy.mod, of the divisor, in the operands' precision.
static APFloat floatRemainder(const APFloat &a, const APFloat &b,
                              bool floorSign) {
  APFloat remainder = a;
  remainder.mod(b);
  if (!floorSign)
    return remainder;
  if (remainder.isZero())
    return APFloat::getZero(b.getSemantics(), b.isNegative());
  if (!remainder.isNaN() && remainder.isNegative() != b.isNegative())
    remainder.add(b, APFloat::rmNearestTiesToEven);
  return remainder;
}

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  bool floorSign = !getFmod();
  return foldArithmetic(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [&](const APInt &a, const APInt &b,
          bool isUnsigned) -> std::optional<APInt> {
        return integerRemainder(a, b, isUnsigned, floorSign);
      },
      [&](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return floatRemainder(a, b, floorSign);
      });
}

//===----------------------------------------------------------------------===//
// Comparison and logical folders
//===----------------------------------------------------------------------===//

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) {
  return foldCompare(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](APFloat::cmpResult r) { return r == APFloat::cmpEqual; });
}

OpFoldResult LessOp::fold(FoldAdaptor adaptor) {
  return foldCompare(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](APFloat::cmpResult r) { return r == APFloat::cmpLessThan; });
}

OpFoldResult LessEqualOp::fold(FoldAdaptor adaptor) {
  return foldCompare(
      getType(), adaptor.getLhs(), adaptor.getRhs(), [](APFloat::cmpResult r) {
        return r == APFloat::cmpLessThan || r == APFloat::cmpEqual;
      });
}

OpFoldResult GreaterOp::fold(FoldAdaptor adaptor) {
  return foldCompare(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](APFloat::cmpResult r) { return r == APFloat::cmpGreaterThan; });
}

OpFoldResult GreaterEqualOp::fold(FoldAdaptor adaptor) {
  return foldCompare(
      getType(), adaptor.getLhs(), adaptor.getRhs(), [](APFloat::cmpResult r) {
        return r == APFloat::cmpGreaterThan || r == APFloat::cmpEqual;
      });
}

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldNeutral(getResult(), getLhs(), adaptor.getRhs(), 1, 0))
    return x;
  if (Value x = foldNeutral(getResult(), getRhs(), adaptor.getLhs(), 1, 0))
    return x;
  return foldArithmetic(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a & b;
      },
      [](const APFloat &, const APFloat &) -> std::optional<APFloat> {
        return std::nullopt;
      });
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldNeutral(getResult(), getLhs(), adaptor.getRhs(), 0, 0))
    return x;
  if (Value x = foldNeutral(getResult(), getRhs(), adaptor.getLhs(), 0, 0))
    return x;
  return foldArithmetic(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a | b;
      },
      [](const APFloat &, const APFloat &) -> std::optional<APFloat> {
        return std::nullopt;
      });
}

//===----------------------------------------------------------------------===//
// Unary folders
//===----------------------------------------------------------------------===//

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  auto input = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!input)
    return {};
  DenseElementsAttr folded;
  if (isa<IntegerType>(input.getElementType()))
    folded = evaluateElementwise<APInt, APInt>(
        {input}, getType(), [](ArrayRef<APInt> v) -> std::optional<APInt> {
          APInt negated = v[0];
          negated.negate();
          return negated;
        });
  else if (isa<FloatType>(input.getElementType()))
    folded = evaluateElementwise<APFloat, APFloat>(
        {input}, getType(), [](ArrayRef<APFloat> v) -> std::optional<APFloat> {
          return neg(v[0]);
        });
  if (!folded)
    return {};
  return folded;
}

/// Folds a unary float op whose operand is a dense constant.
static OpFoldResult
foldFloatUnary(ShapedType type, Attribute input,
               llvm::function_ref<APFloat(const APFloat &)> fn) {
  auto attr = dyn_cast_if_present<DenseElementsAttr>(input);
  if (!attr || !isa<FloatType>(attr.getElementType()))
    return {};
  DenseElementsAttr folded = evaluateElementwise<APFloat, APFloat>(
      {attr}, type,
      [&](ArrayRef<APFloat> v) -> std::optional<APFloat> { return fn(v[0]); });
  if (!folded)
    return {};
  return folded;
}

static APFloat roundToIntegral(const APFloat &value,
                               APFloat::roundingMode mode) {
  APFloat result = value;
  result.roundToIntegral(mode);
  return result;
}

OpFoldResult SqrtOp::fold(FoldAdaptor adaptor) {
  // The square root of a double rounded to a narrower type is the correctly
  // rounded square root in that type.
  return foldFloatUnary(getType(), adaptor.getInput(), [](const APFloat &x) {
    return roundTo(std::sqrt(x.convertToDouble()), x.getSemantics());
  });
}

OpFoldResult FloorOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(getType(), adaptor.getInput(), [](const APFloat &x) {
    return roundToIntegral(x, APFloat::rmTowardNegative);
  });
}

OpFoldResult CeilOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(getType(), adaptor.getInput(), [](const APFloat &x) {
    return roundToIntegral(x, APFloat::rmTowardPositive);
  });
}

OpFoldResult RoundOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(getType(), adaptor.getInput(), [](const APFloat &x) {
    return roundToIntegral(x, APFloat::rmNearestTiesToEven);
  });
}

OpFoldResult SignOp::fold(FoldAdaptor adaptor) {
  auto input = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!input)
    return {};
  DenseElementsAttr folded;
  if (auto intType = dyn_cast<IntegerType>(input.getElementType())) {
    bool isUnsigned = isUnsignedElement(intType);
    folded = evaluateElementwise<APInt, APInt>(
        {input}, getType(), [&](ArrayRef<APInt> v) -> std::optional<APInt> {
          const APInt &x = v[0];
          if (x.isZero())
            return x;
          if (!isUnsigned && x.isNegative())
            return APInt::getAllOnes(x.getBitWidth());
          return APInt(x.getBitWidth(), 1);
        });
  } else if (isa<FloatType>(input.getElementType())) {
    folded = evaluateElementwise<APFloat, APFloat>(
        {input}, getType(), [](ArrayRef<APFloat> v) -> std::optional<APFloat> {
          const APFloat &x = v[0];
          if (x.isNaN())
            return x;
          if (x.isZero())
            return APFloat::getZero(x.getSemantics());
          return APFloat::getOne(x.getSemantics(), x.isNegative());
        });
  }
  if (!folded)
    return {};
  return folded;
}

/// Folds a float classification of a dense constant; `test` says which
/// elements are true.
static OpFoldResult
foldFloatClass(ShapedType type, Attribute input,
               llvm::function_ref<bool(const APFloat &)> test) {
  auto attr = dyn_cast_if_present<DenseElementsAttr>(input);
  if (!attr || !isa<FloatType>(attr.getElementType()))
    return {};
  DenseElementsAttr folded = evaluateElementwise<APFloat, APInt>(
      {attr}, type, [&](ArrayRef<APFloat> v) -> std::optional<APInt> {
        return APInt(1, test(v[0]));
      });
  if (!folded)
    return {};
  return folded;
}

OpFoldResult IsNaNOp::fold(FoldAdaptor adaptor) {
  return foldFloatClass(getType(), adaptor.getInput(),
                        [](const APFloat &x) { return x.isNaN(); });
}

OpFoldResult IsInfOp::fold(FoldAdaptor adaptor) {
  bool positive = getDetectPositive(), negative = getDetectNegative();
  // Detecting neither infinity is false everywhere, whatever the input.
  if (!positive && !negative && getType().hasStaticShape())
    return DenseElementsAttr::get(getType(), false);
  return foldFloatClass(getType(), adaptor.getInput(), [&](const APFloat &x) {
    return x.isInfinity() && (x.isNegative() ? negative : positive);
  });
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NotOp>())
    return inner.getInput();
  auto input = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!input || !input.getElementType().isInteger(1))
    return {};
  DenseElementsAttr folded = evaluateElementwise<APInt, APInt>(
      {input}, getType(),
      [](ArrayRef<APInt> v) -> std::optional<APInt> { return ~v[0]; });
  if (!folded)
    return {};
  return folded;
}

/// Converts one integer element to the integer type `to` with ONNX `Cast`
/// semantics: truncation or extension by the source signedness, `x != 0`
/// for booleans.
static APInt castIntToInt(const APInt &value, bool sourceUnsigned,
                          IntegerType to) {
  if (to.getWidth() == 1)
    return APInt(1, !value.isZero());
  return sourceUnsigned ? value.zextOrTrunc(to.getWidth())
                        : value.sextOrTrunc(to.getWidth());
}

/// Converts one float element to the integer type `to`, truncating toward
/// zero. NaN and values out of range have no defined result.
static std::optional<APInt> castFloatToInt(const APFloat &value,
                                           IntegerType to) {
  if (to.getWidth() == 1)
    return APInt(1, !value.isZero());
  APSInt result(to.getWidth(), isUnsignedElement(to));
  bool isExact = false;
  if (value.convertToInteger(result, APFloat::rmTowardZero, &isExact) &
      APFloat::opInvalidOp)
    return std::nullopt;
  return APInt(result);
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto input = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!input)
    return {};
  Type from = input.getElementType();
  Type to = getType().getElementType();
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(to);
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);

  DenseElementsAttr folded;
  if (fromInt && toInt) {
    bool sourceUnsigned = isUnsignedElement(fromInt);
    folded = evaluateElementwise<APInt, APInt>(
        {input}, getType(), [&](ArrayRef<APInt> v) -> std::optional<APInt> {
          return castIntToInt(v[0], sourceUnsigned, toInt);
        });
  } else if (fromInt && toFloat) {
    bool sourceUnsigned = isUnsignedElement(fromInt);
    folded = evaluateElementwise<APInt, APFloat>(
        {input}, getType(), [&](ArrayRef<APInt> v) -> std::optional<APFloat> {
          APFloat result(toFloat.getFloatSemantics());
          result.convertFromAPInt(v[0], /*IsSigned=*/!sourceUnsigned,
                                  APFloat::rmNearestTiesToEven);
          return result;
        });
  } else if (fromFloat && toInt) {
    folded = evaluateElementwise<APFloat, APInt>(
        {input}, getType(),
        [&](ArrayRef<APFloat> v) { return castFloatToInt(v[0], toInt); });
  } else if (fromFloat && toFloat) {
    folded = evaluateElementwise<APFloat, APFloat>(
        {input}, getType(), [&](ArrayRef<APFloat> v) -> std::optional<APFloat> {
          APFloat result = v[0];
          bool losesInfo = false;
          result.convert(toFloat.getFloatSemantics(),
                         APFloat::rmNearestTiesToEven, &losesInfo);
          return result;
        });
  }
  if (!folded)
    return {};
  return folded;
}

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

/// Selects elementwise between two dense constants of element type `T`.
template <typename T>
static DenseElementsAttr
selectElements(DenseElementsAttr condition, DenseElementsAttr trueValue,
               DenseElementsAttr falseValue, ShapedType resultType) {
  if (!resultType.hasStaticShape() ||
      resultType.getNumElements() > kMaxFoldedElements)
    return {};
  for (DenseElementsAttr operand : {condition, trueValue, falseValue})
    if (!BroadcastIndexer::broadcastsTo(operand.getType().getShape(),
                                        resultType.getShape()))
      return {};
  BroadcastElements<APInt> conditions(condition, resultType.getShape());
  BroadcastElements<T> trues(trueValue, resultType.getShape());
  BroadcastElements<T> falses(falseValue, resultType.getShape());
  SmallVector<T> results;
  results.reserve(resultType.getNumElements());
  for (int64_t i = 0, e = resultType.getNumElements(); i < e; ++i)
    results.push_back(conditions[i].isZero() ? falses[i] : trues[i]);
  return DenseElementsAttr::get(resultType, results);
}

/// Broadcasts the dense constant `value` to `resultType`.
static DenseElementsAttr broadcastConstant(DenseElementsAttr value,
                                           ShapedType resultType) {
  if (isa<IntegerType>(value.getElementType()))
    return evaluateElementwise<APInt, APInt>(
        {value}, resultType,
        [](ArrayRef<APInt> v) -> std::optional<APInt> { return v[0]; });
  return evaluateElementwise<APFloat, APFloat>(
      {value}, resultType,
      [](ArrayRef<APFloat> v) -> std::optional<APFloat> { return v[0]; });
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  RankedTensorType type = getType();
  if (getTrueValue() == getFalseValue() && getTrueValue().getType() == type)
    return getTrueValue();

  auto condition =
      dyn_cast_if_present<DenseElementsAttr>(adaptor.getCondition());
  if (!condition)
    return {};
  auto trueAttr =
      dyn_cast_if_present<DenseElementsAttr>(adaptor.getTrueValue());
  auto falseAttr =
      dyn_cast_if_present<DenseElementsAttr>(adaptor.getFalseValue());

  if (condition.isSplat()) {
    bool pickTrue = !condition.getSplatValue<APInt>().isZero();
    Value chosen = pickTrue ? getTrueValue() : getFalseValue();
    if (chosen.getType() == type)
      return chosen;
    // The condition widens the result: only a constant can be broadcast.
    DenseElementsAttr chosenAttr = pickTrue ? trueAttr : falseAttr;
    if (!chosenAttr)
      return {};
    if (DenseElementsAttr folded = broadcastConstant(chosenAttr, type))
      return folded;
    return {};
  }

  if (!trueAttr || !falseAttr)
    return {};
  DenseElementsAttr folded =
      isa<IntegerType>(type.getElementType())
          ? selectElements<APInt>(condition, trueAttr, falseAttr, type)
          : selectElements<APFloat>(condition, trueAttr, falseAttr, type);
  if (!folded)
    return {};
  return folded;
}

namespace {

/// `where(is_nan(s), 0, s)` for `s = cleave.softmax(x)` is that softmax with
/// `nan_to_zero`. The softmax is changed in place, so it may have no users
/// but the guard.
struct FoldNaNGuardedSoftmax : public OpRewritePattern<WhereOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(WhereOp where,
                                PatternRewriter &rewriter) const override {
    auto softmax = where.getFalseValue().getDefiningOp<SoftmaxOp>();
    auto isNaN = where.getCondition().getDefiningOp<IsNaNOp>();
    if (!softmax || !isNaN || isNaN.getInput() != softmax.getResult())
      return rewriter.notifyMatchFailure(where, "not where(is_nan(s), _, s)");
    if (where.getType() != softmax.getType())
      return rewriter.notifyMatchFailure(where, "the guard broadcasts");
    DenseElementsAttr zero;
    if (!matchPattern(where.getTrueValue(), m_Constant(&zero)) ||
        !zero.isSplat() || !isa<FloatType>(zero.getElementType()) ||
        !zero.getSplatValue<APFloat>().isPosZero())
      return rewriter.notifyMatchFailure(where, "NaNs are not replaced by 0");
    if (!isNaN->hasOneUse() ||
        llvm::any_of(softmax->getUsers(), [&](Operation *user) {
          return user != isNaN && user != where;
        }))
      return rewriter.notifyMatchFailure(where, "the softmax has other users");
    rewriter.modifyOpInPlace(softmax, [&] { softmax.setNanToZero(true); });
    rewriter.replaceOp(where, softmax.getResult());
    return success();
  }
};

} // namespace

void WhereOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<FoldNaNGuardedSoftmax>(context);
}
