//===- FusePatterns.cpp - fuse exported GELU, norms, RoPE, SDPA -*- C++ -*-===//
//
// Recognises the decompositions of GELU, LayerNorm, RMSNorm, rotary position
// embeddings and scaled dot-product attention that ONNX exporters write for
// opsets without those ops, and replaces each with the fused cleave op.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Dialect/Cleave/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

namespace cleave {
#define GEN_PASS_DEF_FUSEPATTERNSPASS
#include "cleave/Dialect/Cleave/Transforms/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

//===----------------------------------------------------------------------===//
// Matching helpers
//===----------------------------------------------------------------------===//

/// Returns the value of `value` when it is a `cleave.constant` float splat.
static std::optional<APFloat> getFloatSplat(Value value) {
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return attr.getSplatValue<APFloat>();
}

/// Whether `value` is a float splat constant equal to `expected` up to the
/// rounding of its element type. Exporters write these constants in double
/// precision and convert them to the model's type; hand-written models
/// often spell them with fewer digits (`1.41421`), hence the slack beyond
/// one rounding.
static bool isSplatNear(Value value, double expected) {
  std::optional<APFloat> splat = getFloatSplat(value);
  if (!splat || !splat->isFinite())
    return false;
  unsigned precision = APFloat::semanticsPrecision(splat->getSemantics());
  double tolerance = std::max(1e-4, std::ldexp(4.0, 1 - int(precision)));
  return std::abs(splat->convertToDouble() - expected) <=
         tolerance * std::abs(expected);
}

/// Returns the op of type `OpT` defining `value` when `value` has no other
/// use, so that the op dies once its one user is fused.
template <typename OpT> static OpT getSingleUseDef(Value value) {
  if (!value.hasOneUse())
    return nullptr;
  return value.getDefiningOp<OpT>();
}

namespace {

/// The ops a match will make dead. Fusing pays only when every intermediate
/// value dies inside the matched decomposition; otherwise the fused op would
/// recompute what the survivors still compute.
class Decomposition {
public:
  void add(Operation *op) { ops.insert(op); }
  bool contains(Operation *op) const { return ops.contains(op); }

  /// Whether every result of every op except `root` is used only inside the
  /// decomposition.
  bool isSelfContained(Operation *root) const {
    for (Operation *op : ops) {
      if (op == root)
        continue;
      for (Operation *user : op->getUsers())
        if (!ops.contains(user))
          return false;
    }
    return true;
  }

private:
  llvm::SmallSetVector<Operation *, 16> ops;
};

} // namespace

/// Collects the factors of the product tree rooted at `mul`: the operands of
/// the nested `cleave.mul` ops that feed only this tree, so that every
/// association of `a * b * c` looks the same. Fails beyond `maxFactors`.
static LogicalResult collectFactors(MulOp mul, Decomposition &chain,
                                    SmallVectorImpl<Value> &factors,
                                    unsigned maxFactors) {
  chain.add(mul);
  SmallVector<Value> worklist = {mul.getRhs(), mul.getLhs()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (auto inner = getSingleUseDef<MulOp>(value)) {
      chain.add(inner);
      worklist.push_back(inner.getRhs());
      worklist.push_back(inner.getLhs());
      continue;
    }
    if (factors.size() == maxFactors)
      return failure();
    factors.push_back(value);
  }
  return success();
}

/// Removes from `factors` the first one that is a splat near `expected`.
static bool takeConstantFactor(SmallVectorImpl<Value> &factors,
                               double expected) {
  auto *it = llvm::find_if(
      factors, [&](Value factor) { return isSplatNear(factor, expected); });
  if (it == factors.end())
    return false;
  factors.erase(it);
  return true;
}

/// Matches `1 + f` (either order), returning `f`.
static Value matchOnePlus(Value value, Decomposition &chain) {
  auto add = getSingleUseDef<AddOp>(value);
  if (!add)
    return {};
  chain.add(add);
  if (isSplatNear(add.getLhs(), 1.0))
    return add.getRhs();
  if (isSplatNear(add.getRhs(), 1.0))
    return add.getLhs();
  return {};
}

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

/// Whether `value` is `x / sqrt(2)`, written as a division or as a product
/// with `1 / sqrt(2)`.
static bool isScaledBySqrtHalf(Value value, Value x, Decomposition &chain) {
  if (auto div = getSingleUseDef<DivOp>(value)) {
    chain.add(div);
    return div.getLhs() == x && isSplatNear(div.getRhs(), llvm::numbers::sqrt2);
  }
  if (auto mul = getSingleUseDef<MulOp>(value)) {
    SmallVector<Value> factors;
    if (failed(collectFactors(mul, chain, factors, 2)) || factors.size() != 2)
      return false;
    return takeConstantFactor(factors, llvm::numbers::inv_sqrt2) &&
           factors.front() == x;
  }
  return false;
}

/// Whether `value` is `x^3`, as `pow(x, 3)` or a product of three `x`.
static bool isCube(ArrayRef<Value> factors, Value x, Decomposition &chain) {
  if (factors.size() == 3)
    return llvm::all_of(factors, [&](Value f) { return f == x; });
  if (factors.size() != 1)
    return false;
  auto pow = getSingleUseDef<PowOp>(factors.front());
  if (!pow)
    return false;
  chain.add(pow);
  return pow.getLhs() == x && isSplatNear(pow.getRhs(), 3.0);
}

/// Whether `value` is `sqrt(2 / pi) * (x + 0.044715 * x^3)`.
static bool isTanhGeluArgument(Value value, Value x, Decomposition &chain) {
  auto outer = getSingleUseDef<MulOp>(value);
  if (!outer)
    return false;
  SmallVector<Value> factors;
  if (failed(collectFactors(outer, chain, factors, 2)) ||
      !takeConstantFactor(factors, std::sqrt(2.0 / llvm::numbers::pi)) ||
      factors.size() != 1)
    return false;
  auto add = getSingleUseDef<AddOp>(factors.front());
  if (!add)
    return false;
  chain.add(add);
  if (add.getLhs() != x && add.getRhs() != x)
    return false;
  Value cubeTerm = add.getLhs() == x ? add.getRhs() : add.getLhs();
  auto cubeMul = getSingleUseDef<MulOp>(cubeTerm);
  if (!cubeMul)
    return false;
  SmallVector<Value> cubeFactors;
  return succeeded(collectFactors(cubeMul, chain, cubeFactors, 4)) &&
         takeConstantFactor(cubeFactors, 0.044715) &&
         isCube(cubeFactors, x, chain);
}

namespace {

/// Fuses `x * 0.5 * (1 + erf(x / sqrt(2)))` and
/// `x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))` into
/// `cleave.gelu`, rooted at the outermost multiplication.
struct FuseGelu : public OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> factors;
    Decomposition rootChain;
    if (failed(collectFactors(root, rootChain, factors, 3)) ||
        factors.size() != 3 || !takeConstantFactor(factors, 0.5))
      return rewriter.notifyMatchFailure(root, "not a product x * 0.5 * y");

    // Either remaining factor may be `x`; the other is `1 + f(x)`.
    for (auto [x, onePlus] : {std::pair(factors[0], factors[1]),
                              std::pair(factors[1], factors[0])}) {
      if (x.getType() != root.getType() ||
          !isa<FloatType>(getElementTypeOrSelf(x.getType())))
        continue;
      Decomposition chain = rootChain;
      Value activation = matchOnePlus(onePlus, chain);
      if (!activation)
        continue;
      StringRef approximate;
      if (auto erf = getSingleUseDef<ErfOp>(activation)) {
        chain.add(erf);
        if (isScaledBySqrtHalf(erf.getInput(), x, chain))
          approximate = "none";
      } else if (auto tanh = getSingleUseDef<TanhOp>(activation)) {
        chain.add(tanh);
        if (isTanhGeluArgument(tanh.getInput(), x, chain))
          approximate = "tanh";
      }
      if (approximate.empty() || !chain.isSelfContained(root))
        continue;
      rewriter.replaceOpWithNewOp<GeluOp>(root, root.getType(), x,
                                          rewriter.getStringAttr(approximate));
      return success();
    }
    return rewriter.notifyMatchFailure(root, "not a GELU decomposition");
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

/// Returns the first reduced dimension when `mean` averages the trailing
/// dimensions `[axis, rank)` of its input and keeps them as size 1.
static std::optional<int64_t> getTrailingReductionAxis(ReduceMeanOp mean) {
  auto type = dyn_cast<RankedTensorType>(mean.getInput().getType());
  ArrayRef<int64_t> axes = mean.getAxes();
  if (!type || !mean.getKeepdims() || axes.empty())
    return std::nullopt;
  int64_t rank = type.getRank();
  int64_t axis = rank - int64_t(axes.size());
  if (axis < 0)
    return std::nullopt;
  for (auto [i, reduced] : llvm::enumerate(axes))
    if (reduced != axis + int64_t(i))
      return std::nullopt;
  return axis;
}

/// Whether `value` is `(x - mean)^2`, squared by `pow(d, 2)` or `d * d`,
/// where `d` is `numerator` itself or a second `x - mean`.
static bool isSquaredDeviation(Value value, SubOp numerator,
                               Decomposition &chain) {
  auto isDeviation = [&](Value d) {
    if (d == numerator.getResult())
      return true;
    auto sub = d.getDefiningOp<SubOp>();
    if (!sub || sub.getLhs() != numerator.getLhs() ||
        sub.getRhs() != numerator.getRhs())
      return false;
    chain.add(sub);
    return true;
  };
  if (auto pow = getSingleUseDef<PowOp>(value)) {
    chain.add(pow);
    return isSplatNear(pow.getRhs(), 2.0) && isDeviation(pow.getLhs());
  }
  if (auto mul = getSingleUseDef<MulOp>(value)) {
    chain.add(mul);
    return mul.getLhs() == mul.getRhs() && isDeviation(mul.getLhs());
  }
  return false;
}

/// Whether `value` can be the scale or bias of a layer norm over
/// `normalizedShape`: a tensor of the same element type that broadcasts to
/// the normalised dimensions alone, without reaching into the outer ones.
static bool fitsNormalizedShape(Value value, ArrayRef<int64_t> normalizedShape,
                                Type elementType) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getElementType() != elementType ||
      type.getRank() > int64_t(normalizedShape.size()))
    return false;
  ArrayRef<int64_t> trailing = normalizedShape.take_back(type.getRank());
  for (auto [size, target] : llvm::zip_equal(type.getShape(), trailing))
    if (size != 1 && size != target)
      return false;
  return true;
}

/// If the single user of `value` is `value <op> other` (either order) with
/// the type of `value`, returns that op and sets `other`.
template <typename OpT> static OpT matchAffineUser(Value value, Value &other) {
  if (!value.hasOneUse())
    return nullptr;
  auto op = dyn_cast<OpT>(*value.getUsers().begin());
  if (!op || op.getType() != value.getType())
    return nullptr;
  other = op.getLhs() == value ? op.getRhs() : op.getLhs();
  return op;
}

namespace {

/// Fuses `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * gamma + beta`
/// into `cleave.layer_norm`. Rooted at the division, which every variant
/// shares; the scale and bias are absorbed when its users apply them.
struct FuseLayerNorm : public OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DivOp div,
                                PatternRewriter &rewriter) const override {
    Decomposition chain;
    chain.add(div);

    auto numerator = div.getLhs().getDefiningOp<SubOp>();
    if (!numerator)
      return rewriter.notifyMatchFailure(div, "numerator is not x - mean");
    chain.add(numerator);
    Value x = numerator.getLhs();
    auto mean = numerator.getRhs().getDefiningOp<ReduceMeanOp>();
    if (!mean || mean.getInput() != x)
      return rewriter.notifyMatchFailure(div, "numerator is not x - mean(x)");
    chain.add(mean);
    std::optional<int64_t> axis = getTrailingReductionAxis(mean);
    if (!axis)
      return rewriter.notifyMatchFailure(
          div, "mean does not reduce the trailing dimensions");

    auto inputType = cast<RankedTensorType>(x.getType());
    Type elementType = inputType.getElementType();
    if (!isa<FloatType>(elementType) || div.getType() != inputType)
      return rewriter.notifyMatchFailure(div, "not a float normalisation");

    auto sqrt = getSingleUseDef<SqrtOp>(div.getRhs());
    if (!sqrt)
      return rewriter.notifyMatchFailure(div, "denominator is not a sqrt");
    chain.add(sqrt);
    auto addEps = getSingleUseDef<AddOp>(sqrt.getInput());
    if (!addEps)
      return rewriter.notifyMatchFailure(div, "no epsilon under the sqrt");
    chain.add(addEps);
    Value variance = addEps.getLhs();
    std::optional<APFloat> epsilon = getFloatSplat(addEps.getRhs());
    if (!epsilon) {
      variance = addEps.getRhs();
      epsilon = getFloatSplat(addEps.getLhs());
    }
    if (!epsilon || epsilon->isNegative() || !epsilon->isFinite() ||
        addEps.getType() != variance.getType())
      return rewriter.notifyMatchFailure(div, "epsilon is not a constant");

    auto varianceMean = getSingleUseDef<ReduceMeanOp>(variance);
    if (!varianceMean || varianceMean.getAxes() != mean.getAxes() ||
        !varianceMean.getKeepdims())
      return rewriter.notifyMatchFailure(
          div, "variance does not reduce the dimensions of the mean");
    chain.add(varianceMean);
    if (!isSquaredDeviation(varianceMean.getInput(), numerator, chain))
      return rewriter.notifyMatchFailure(div, "variance is not of (x - mean)");

    // Absorb `* gamma` and then `+ beta` when the users apply them.
    ArrayRef<int64_t> normalizedShape = inputType.getShape().drop_front(*axis);
    Operation *last = div;
    Value scale, bias, other;
    if (auto mul = matchAffineUser<MulOp>(div, other)) {
      if (fitsNormalizedShape(other, normalizedShape, elementType)) {
        scale = other;
        last = mul;
        chain.add(mul);
      }
    }
    if (scale) {
      if (auto add = matchAffineUser<AddOp>(last->getResult(0), other)) {
        if (fitsNormalizedShape(other, normalizedShape, elementType)) {
          bias = other;
          last = add;
          chain.add(add);
        }
      }
    }
    if (!chain.isSelfContained(last))
      return rewriter.notifyMatchFailure(div, "intermediates have other uses");

    rewriter.setInsertionPoint(last);
    if (!scale) {
      // layer_norm always scales; without a gamma the scale is one.
      auto scaleType = RankedTensorType::get(normalizedShape, elementType);
      if (!scaleType.hasStaticShape())
        return rewriter.notifyMatchFailure(div, "dynamic normalised shape");
      APFloat one(cast<FloatType>(elementType).getFloatSemantics(), 1);
      scale = ConstantOp::create(rewriter, div.getLoc(), scaleType,
                                 DenseElementsAttr::get(scaleType, one));
    }
    bool losesInfo = false;
    epsilon->convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                     &losesInfo);
    auto fused = LayerNormOp::create(
        rewriter, last->getLoc(), inputType, x, scale, bias,
        rewriter.getI64IntegerAttr(*axis),
        rewriter.getF32FloatAttr(epsilon->convertToFloat()));
    rewriter.replaceOp(last, fused.getResult());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===//

/// Whether `value` is `x^2`, as `pow(x, 2)` or `x * x`.
static bool isSquareOf(Value value, Value x, Decomposition &chain) {
  if (auto pow = getSingleUseDef<PowOp>(value)) {
    chain.add(pow);
    return pow.getLhs() == x && isSplatNear(pow.getRhs(), 2.0);
  }
  if (auto mul = getSingleUseDef<MulOp>(value)) {
    chain.add(mul);
    return mul.getLhs() == x && mul.getRhs() == x;
  }
  return false;
}

/// Matches `sqrt(mean(x^2) + eps)` with the mean over trailing dimensions,
/// returning the first reduced dimension and setting `epsilon`.
static std::optional<int64_t> matchRootMeanSquare(Value value, Value x,
                                                  APFloat &epsilon,
                                                  Decomposition &chain) {
  auto sqrt = getSingleUseDef<SqrtOp>(value);
  if (!sqrt)
    return std::nullopt;
  chain.add(sqrt);
  auto addEps = getSingleUseDef<AddOp>(sqrt.getInput());
  if (!addEps)
    return std::nullopt;
  chain.add(addEps);
  Value meanSquare = addEps.getLhs();
  std::optional<APFloat> eps = getFloatSplat(addEps.getRhs());
  if (!eps) {
    meanSquare = addEps.getRhs();
    eps = getFloatSplat(addEps.getLhs());
  }
  if (!eps || eps->isNegative() || !eps->isFinite() ||
      addEps.getType() != meanSquare.getType())
    return std::nullopt;
  auto mean = getSingleUseDef<ReduceMeanOp>(meanSquare);
  if (!mean)
    return std::nullopt;
  chain.add(mean);
  std::optional<int64_t> axis = getTrailingReductionAxis(mean);
  if (!axis || !isSquareOf(mean.getInput(), x, chain))
    return std::nullopt;
  epsilon = *eps;
  return axis;
}

/// Matches the reciprocal of `value`: `reciprocal(d)` or `1 / d`, returning
/// `d`.
static Value matchReciprocal(Value value, Decomposition &chain) {
  if (auto reciprocal = getSingleUseDef<ReciprocalOp>(value)) {
    chain.add(reciprocal);
    return reciprocal.getInput();
  }
  if (auto div = getSingleUseDef<DivOp>(value)) {
    chain.add(div);
    if (isSplatNear(div.getLhs(), 1.0))
      return div.getRhs();
  }
  return {};
}

namespace {

/// The normalisation `x / rms(x)` of an RMSNorm decomposition, before the
/// scale: the root op, its input and what it reduces.
struct RmsNormalization {
  Value x;
  int64_t axis;
  APFloat epsilon{0.0f};
};

/// Fuses `x / sqrt(mean(x^2) + eps) * w` into `cleave.rms_norm`, with the
/// division written `x * reciprocal(sqrt(...))`, `x * (1 / sqrt(...))` or
/// `x / sqrt(...)` (Hugging Face's Llama, T5 and Mistral exports, which
/// write `torch.rsqrt` as a square root and a reciprocal). Rooted at the
/// normalising op; a cast of the input to a wider float type and the cast
/// of the result back (the exporters' `.to(torch.float32)` around the
/// statistics) are absorbed, and so is the multiplication by the weight
/// when the user applies it. The fused op accumulates its statistics in at
/// least float32, so absorbing the casts keeps the precision they asked
/// for.
template <typename RootOp>
struct FuseRmsNorm : public OpRewritePattern<RootOp> {
  using OpRewritePattern<RootOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(RootOp root,
                                PatternRewriter &rewriter) const override {
    Decomposition chain;
    chain.add(root);
    std::optional<RmsNormalization> norm = matchNormalization(root, chain);
    if (!norm)
      return rewriter.notifyMatchFailure(root, "not x / sqrt(mean(x^2) + eps)");
    auto computeType = cast<RankedTensorType>(norm->x.getType());
    if (root.getType() != computeType)
      return rewriter.notifyMatchFailure(root, "the normalisation broadcasts");

    // The input before a widening cast, when the result is cast back.
    Value input = norm->x;
    Operation *last = root;
    if (auto widen = norm->x.template getDefiningOp<CastOp>()) {
      Value narrow = widen.getInput();
      if (root->hasOneUse() && isa<FloatType>(getElementTypeOrSelf(narrow))) {
        auto back = dyn_cast<CastOp>(*root->getUsers().begin());
        if (back && back.getType() == narrow.getType() &&
            llvm::all_of(widen->getUsers(), [&](Operation *user) {
              return chain.contains(user);
            })) {
          chain.add(widen);
          chain.add(back);
          input = narrow;
          last = back;
        }
      }
    }
    auto inputType = cast<RankedTensorType>(input.getType());
    Type elementType = inputType.getElementType();
    ArrayRef<int64_t> normalizedShape =
        inputType.getShape().drop_front(norm->axis);

    Value scale, other;
    if (auto mul = matchAffineUser<MulOp>(last->getResult(0), other)) {
      if (fitsNormalizedShape(other, normalizedShape, elementType)) {
        scale = other;
        last = mul;
        chain.add(mul);
      }
    }
    if (!chain.isSelfContained(last))
      return rewriter.notifyMatchFailure(root, "intermediates have other uses");

    rewriter.setInsertionPoint(last);
    if (!scale) {
      auto scaleType = RankedTensorType::get(normalizedShape, elementType);
      if (!scaleType.hasStaticShape())
        return rewriter.notifyMatchFailure(root, "dynamic normalised shape");
      APFloat one(cast<FloatType>(elementType).getFloatSemantics(), 1);
      scale = ConstantOp::create(rewriter, root.getLoc(), scaleType,
                                 DenseElementsAttr::get(scaleType, one));
    }
    bool losesInfo = false;
    APFloat epsilon = norm->epsilon;
    epsilon.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
    auto fused =
        RmsNormOp::create(rewriter, last->getLoc(), inputType, input, scale,
                          rewriter.getI64IntegerAttr(norm->axis),
                          rewriter.getF32FloatAttr(epsilon.convertToFloat()));
    rewriter.replaceOp(last, fused.getResult());
    return success();
  }

private:
  /// `x * reciprocal(rms)` or `x * (1 / rms)`, either operand order.
  static std::optional<RmsNormalization>
  matchNormalization(MulOp mul, Decomposition &chain) {
    for (auto [x, factor] : {std::pair(mul.getLhs(), mul.getRhs()),
                             std::pair(mul.getRhs(), mul.getLhs())}) {
      Decomposition attempt = chain;
      Value rms = matchReciprocal(factor, attempt);
      if (!rms)
        continue;
      RmsNormalization norm;
      std::optional<int64_t> axis =
          matchRootMeanSquare(rms, x, norm.epsilon, attempt);
      if (!axis)
        continue;
      norm.x = x;
      norm.axis = *axis;
      chain = attempt;
      return norm;
    }
    return std::nullopt;
  }

  /// `x / rms`.
  static std::optional<RmsNormalization>
  matchNormalization(DivOp div, Decomposition &chain) {
    RmsNormalization norm;
    std::optional<int64_t> axis =
        matchRootMeanSquare(div.getRhs(), div.getLhs(), norm.epsilon, chain);
    if (!axis)
      return std::nullopt;
    norm.x = div.getLhs();
    norm.axis = *axis;
    return norm;
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

/// Whether the two halves of the last dimension of `value` are provably
/// equal: `concat(f, f)` along it (how exporters build the cos and sin
/// tables from the frequencies), a constant with equal halves, or such a
/// value carried through elementwise ops (with operands that are such
/// values or do not vary along the last dimension) and through reshapes,
/// expands, unsqueezes and transposes that keep the last dimension last.
static bool hasEqualHalves(Value value, unsigned depth = 0) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() == 0 || depth > 8)
    return false;
  int64_t last = type.getRank() - 1, width = type.getDimSize(last);
  if (ShapedType::isDynamic(width) || width % 2 != 0)
    return false;
  // Constant across the last dimension: trivially equal halves.
  auto isUniform = [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && (t.getRank() == 0 || t.getShape().back() == 1);
  };
  DenseElementsAttr attr;
  if (matchPattern(value, m_Constant(&attr))) {
    if (attr.isSplat())
      return true;
    auto values = llvm::to_vector(attr.getValues<Attribute>());
    int64_t half = width / 2;
    for (size_t i = 0; i < values.size(); ++i)
      if (i % width < size_t(half) && values[i] != values[i + half])
        return false;
    return true;
  }
  Operation *op = value.getDefiningOp();
  if (!op)
    return false;
  if (auto concat = dyn_cast<ConcatOp>(op))
    return concat.getAxis() == uint64_t(last) &&
           concat.getInputs().size() == 2 &&
           concat.getInputs()[0] == concat.getInputs()[1];
  if (isa<ReshapeOp, ExpandOp, UnsqueezeOp>(op)) {
    auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    return input && input.getRank() > 0 && input.getShape().back() == width &&
           hasEqualHalves(op->getOperand(0), depth + 1);
  }
  if (auto transpose = dyn_cast<TransposeOp>(op))
    return transpose.getPerm().back() == last &&
           hasEqualHalves(transpose.getInput(), depth + 1);
  if (op->hasTrait<OpTrait::Elementwise>() ||
      isa<MulOp, AddOp, SubOp, DivOp>(op))
    return llvm::all_of(op->getOperands(), [&](Value operand) {
      return isUniform(operand) || hasEqualHalves(operand, depth + 1);
    });
  return false;
}

/// Whether `slice` takes `[begin, end)` of the last dimension of `x` and all
/// of the others.
static bool slicesLastDim(SliceOp slice, Value x, int64_t begin, int64_t end) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  if (slice.getInput() != x)
    return false;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t wantBegin = d == rank - 1 ? begin : 0;
    int64_t wantEnd = d == rank - 1 ? end : type.getDimSize(d);
    if (slice.getStarts()[d] != wantBegin || slice.getEnds()[d] != wantEnd ||
        slice.getSteps()[d] != 1)
      return false;
  }
  return true;
}

/// Whether `value` is `rotate_half(x)`: `concat(-x2, x1)` along the last
/// dimension, `x1` and `x2` the first and second halves of `x`.
static bool isRotateHalf(Value value, Value x, Decomposition &chain) {
  auto concat = getSingleUseDef<ConcatOp>(value);
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank(), width = type.getShape().back();
  if (!concat || concat.getAxis() != uint64_t(rank - 1) ||
      concat.getInputs().size() != 2)
    return false;
  chain.add(concat);
  auto neg = getSingleUseDef<NegOp>(concat.getInputs()[0]);
  if (!neg)
    return false;
  chain.add(neg);
  auto second = getSingleUseDef<SliceOp>(neg.getInput());
  auto first = getSingleUseDef<SliceOp>(concat.getInputs()[1]);
  if (!second || !first)
    return false;
  chain.add(second);
  chain.add(first);
  return slicesLastDim(first, x, 0, width / 2) &&
         slicesLastDim(second, x, width / 2, width);
}

/// The table of a rotation of `x` (`batch x heads x sequence x head_size`)
/// reshaped to the `batch-or-1 x sequence x head_size` that
/// cleave.rotary_embedding reads, when it broadcasts as such a table with
/// one head and has equal halves; null otherwise.
static Value getRotationTable(PatternRewriter &rewriter, Location loc,
                              Value table, RankedTensorType xType) {
  auto type = dyn_cast<RankedTensorType>(table.getType());
  if (!type || type.getElementType() != xType.getElementType() ||
      type.getRank() < 2 || type.getRank() > 4 || !type.hasStaticShape())
    return {};
  SmallVector<int64_t> shape(4 - type.getRank(), 1);
  llvm::append_range(shape, type.getShape());
  int64_t batch = xType.getDimSize(0);
  if ((shape[0] != 1 && shape[0] != batch) || shape[1] != 1 ||
      shape[2] != xType.getDimSize(2) || shape[3] != xType.getDimSize(3) ||
      !hasEqualHalves(table))
    return {};
  auto tableType = RankedTensorType::get({shape[0], shape[2], shape[3]},
                                         type.getElementType());
  return ReshapeOp::create(rewriter, loc, tableType, table);
}

namespace {

/// Fuses `x * cos + rotate_half(x) * sin`, where `rotate_half(x)` is
/// `concat(-x[..., d/2:], x[..., :d/2])` (Hugging Face's `rotate_half`,
/// which exporters write as two Slices, a Neg and a Concat), into
/// `cleave.rotary_embedding`. `x` is `batch x heads x sequence x head_size`
/// and the tables broadcast as `batch x 1 x sequence x head_size` with
/// equal halves (they are `cos(concat(f, f))` and `sin(concat(f, f))`), so
/// that their first halves are the ONNX op's tables.
struct FuseRotaryEmbedding : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    auto xType = dyn_cast<RankedTensorType>(add.getType());
    if (!xType || xType.getRank() != 4 || !xType.hasStaticShape() ||
        xType.getDimSize(3) % 2 != 0 || !isa<FloatType>(xType.getElementType()))
      return rewriter.notifyMatchFailure(add, "not a 4-D float tensor");
    for (auto [cosTerm, sinTerm] : {std::pair(add.getLhs(), add.getRhs()),
                                    std::pair(add.getRhs(), add.getLhs())}) {
      auto cosMul = getSingleUseDef<MulOp>(cosTerm);
      auto sinMul = getSingleUseDef<MulOp>(sinTerm);
      if (!cosMul || !sinMul)
        continue;
      for (auto [x, cos] : {std::pair(cosMul.getLhs(), cosMul.getRhs()),
                            std::pair(cosMul.getRhs(), cosMul.getLhs())}) {
        if (x.getType() != xType)
          continue;
        for (auto [rotated, sin] :
             {std::pair(sinMul.getLhs(), sinMul.getRhs()),
              std::pair(sinMul.getRhs(), sinMul.getLhs())}) {
          Decomposition chain;
          chain.add(add);
          chain.add(cosMul);
          chain.add(sinMul);
          if (!isRotateHalf(rotated, x, chain) || !chain.isSelfContained(add))
            continue;
          if (!hasEqualHalves(cos) || !hasEqualHalves(sin))
            continue;
          Value cosTable = getRotationTable(rewriter, add.getLoc(), cos, xType);
          if (!cosTable)
            continue;
          Value sinTable = getRotationTable(rewriter, add.getLoc(), sin, xType);
          if (!sinTable || sinTable.getType() != cosTable.getType()) {
            rewriter.eraseOp(cosTable.getDefiningOp());
            continue;
          }
          rewriter.replaceOpWithNewOp<RotaryEmbeddingOp>(
              add, xType, x, cosTable, sinTable, /*position_ids=*/Value());
          return success();
        }
      }
    }
    return rewriter.notifyMatchFailure(add,
                                       "not x * cos + rotate_half(x) * sin");
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Scaled dot-product attention
//===----------------------------------------------------------------------===//

/// Peels multiplications and divisions by float splats off `value`,
/// multiplying `scale` by their factors; each peeled op must feed only the
/// chain.
static Value peelScale(Value value, double &scale, Decomposition &chain) {
  // The factor of `op` when `factor` is a nonzero finite splat and `other`
  // already has the result's type (the splat does not broadcast it).
  auto splatFactor = [](Operation *op, Value factor,
                        Value other) -> std::optional<double> {
    std::optional<APFloat> c = getFloatSplat(factor);
    if (!c || !c->isFiniteNonZero() ||
        other.getType() != op->getResult(0).getType())
      return std::nullopt;
    return c->convertToDouble();
  };
  while (true) {
    if (auto mul = getSingleUseDef<MulOp>(value)) {
      for (auto [factor, other] : {std::pair(mul.getRhs(), mul.getLhs()),
                                   std::pair(mul.getLhs(), mul.getRhs())}) {
        if (std::optional<double> c = splatFactor(mul, factor, other)) {
          scale *= *c;
          chain.add(mul);
          value = other;
          break;
        }
      }
      if (value != mul.getResult())
        continue;
    }
    if (auto div = getSingleUseDef<DivOp>(value)) {
      if (std::optional<double> c =
              splatFactor(div, div.getRhs(), div.getLhs())) {
        scale /= *c;
        chain.add(div);
        value = div.getLhs();
        continue;
      }
    }
    return value;
  }
}

/// The keys `batch x heads x kv_sequence x head_size` whose last two
/// dimensions `keysT` (`batch x heads x head_size x kv_sequence`) swaps:
/// a transpose (of them, or of the projection `batch x sequence x heads x
/// head_size` it also moves the heads of), or the exporters' batched form that
/// reshapes them to `batch*heads x kv_sequence x head_size`, transposes the
/// last two dimensions and reshapes back. A reshape is created when the keys
/// are not already a value of that shape (the expanded keys of grouped-query
/// attention, `batch x kv_heads x group x ...`); null when `keysT` is
/// neither form.
static Value getTransposedKeys(PatternRewriter &rewriter, Location loc,
                               Value keysT) {
  auto type = cast<RankedTensorType>(keysT.getType());
  ArrayRef<int64_t> shape = type.getShape();
  auto keysType = RankedTensorType::get(
      {shape[0], shape[1], shape[3], shape[2]}, type.getElementType());
  if (auto transpose = keysT.getDefiningOp<TransposeOp>()) {
    // The keys are the same transpose with the last two dimensions back.
    SmallVector<int64_t> perm(transpose.getPerm());
    std::swap(perm[2], perm[3]);
    if (llvm::equal(perm, llvm::seq<int64_t>(0, 4)))
      return transpose.getInput();
    return TransposeOp::create(rewriter, loc, keysType, transpose.getInput(),
                               rewriter.getDenseI64ArrayAttr(perm));
  }
  auto outer = keysT.getDefiningOp<ReshapeOp>();
  if (!outer)
    return {};
  auto transpose = outer.getInput().getDefiningOp<TransposeOp>();
  if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1})
    return {};
  auto batched = cast<RankedTensorType>(transpose.getInput().getType());
  if (batched.getShape() !=
      ArrayRef<int64_t>{shape[0] * shape[1], shape[3], shape[2]})
    return {};
  Value keys = transpose.getInput();
  if (auto inner = keys.getDefiningOp<ReshapeOp>())
    keys = inner.getInput();
  if (keys.getType() == keysType)
    return keys;
  return ReshapeOp::create(rewriter, loc, keysType, keys);
}

/// The keys `batch*heads x kv_sequence x head_size` whose last two
/// dimensions `keysT` swaps, for the batched 3-D form (torch's
/// nn.MultiheadAttention): a transpose, of them or of the projection
/// `kv_sequence x batch*heads x head_size`; null otherwise.
static Value getTransposedKeys3D(PatternRewriter &rewriter, Location loc,
                                 Value keysT) {
  auto transpose = keysT.getDefiningOp<TransposeOp>();
  if (!transpose)
    return {};
  auto type = cast<RankedTensorType>(keysT.getType());
  SmallVector<int64_t> perm(transpose.getPerm());
  std::swap(perm[1], perm[2]);
  if (llvm::equal(perm, llvm::seq<int64_t>(0, 3)))
    return transpose.getInput();
  auto keysType = RankedTensorType::get(
      {type.getDimSize(0), type.getDimSize(2), type.getDimSize(1)},
      type.getElementType());
  return TransposeOp::create(rewriter, loc, keysType, transpose.getInput(),
                             rewriter.getDenseI64ArrayAttr(perm));
}

/// The rank-4 view of `type`: rank 3, `batch*heads x sequence x d`, as
/// `batch*heads x 1 x sequence x d` (one head each, so that its first
/// dimension stays the one a batch or microbatch split cuts); a lower rank
/// (a mask that broadcasts) with leading dimensions of 1.
static RankedTensorType getRank4View(RankedTensorType type) {
  SmallVector<int64_t> shape(type.getShape());
  if (type.getRank() == 3)
    shape.insert(shape.begin() + 1, 1);
  else
    shape.insert(shape.begin(), 4 - type.getRank(), 1);
  return RankedTensorType::get(shape, type.getElementType());
}

/// `value` reshaped to its rank-4 view; a value of rank 4 as it is.
static Value viewAsRank4(PatternRewriter &rewriter, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() >= 4)
    return value;
  return ReshapeOp::create(rewriter, loc, getRank4View(type), value);
}

/// Whether `mask` broadcasts to `scores` (numpy rules, from the right).
static bool broadcastsTo(Value mask, RankedTensorType scores) {
  auto type = dyn_cast<RankedTensorType>(mask.getType());
  if (!type || !type.hasStaticShape() || type.getRank() > scores.getRank() ||
      type.getElementType() != scores.getElementType())
    return false;
  int64_t offset = scores.getRank() - type.getRank();
  for (auto [i, dim] : llvm::enumerate(type.getShape()))
    if (dim != 1 && dim != scores.getDimSize(offset + i))
      return false;
  return true;
}

namespace {

/// Fuses the scaled dot-product attention that exporters decompose,
/// `softmax(scale * q k^T + mask) v` over `batch x heads x sequence x
/// head_size` float32 tensors, into `cleave.attention`: the scale is the
/// product of the splat factors on q, on k^T and on the scores (torch
/// scales q and k^T by the square root of the scale each), the mask the
/// sum of the additive float terms that broadcast to the scores (a padding
/// mask, T5's position bias), and the softmax's
/// `nan_to_zero` (the exporters' IsNaN guard) carries over. Grouped-query
/// keys and values stay expanded to the query's heads, as the model
/// computes them, so that the fused op splits by heads as the matrix
/// products did.
struct FuseAttention : public OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp root,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(root.getType());
    if (!type || (type.getRank() != 4 && type.getRank() != 3) ||
        !type.hasStaticShape() || !type.getElementType().isF32())
      return rewriter.notifyMatchFailure(root,
                                         "not a 3-D or 4-D float32 product");
    // Rank 3: `batch*heads x sequence x head_size`, as torch's
    // nn.MultiheadAttention exports it.
    const int64_t rank = type.getRank();
    Decomposition chain;
    chain.add(root);
    auto softmax = getSingleUseDef<SoftmaxOp>(root.getLhs());
    if (!softmax || static_cast<int64_t>(softmax.getAxis()) != rank - 1)
      return rewriter.notifyMatchFailure(root, "not softmax(...) @ v");
    chain.add(softmax);
    auto scoresType = cast<RankedTensorType>(softmax.getType());
    // The additive terms (a mask, a position bias) around the products.
    Value scores = softmax.getInput();
    SmallVector<Value> biases;
    while (auto add = getSingleUseDef<AddOp>(scores)) {
      Value next;
      for (auto [product, bias] : {std::pair(add.getLhs(), add.getRhs()),
                                   std::pair(add.getRhs(), add.getLhs())}) {
        if (product.getType() == scoresType && broadcastsTo(bias, scoresType)) {
          next = product;
          biases.push_back(bias);
          break;
        }
      }
      if (!next)
        break;
      chain.add(add);
      scores = next;
    }
    double scale = 1.0;
    scores = peelScale(scores, scale, chain);
    auto product = getSingleUseDef<MatMulOp>(scores);
    if (!product)
      return rewriter.notifyMatchFailure(root, "the scores are not q @ k^T");
    chain.add(product);
    Value query = peelScale(product.getLhs(), scale, chain);
    Value keysT = peelScale(product.getRhs(), scale, chain);
    Value value = root.getRhs();
    auto queryType = dyn_cast<RankedTensorType>(query.getType());
    auto valueType = cast<RankedTensorType>(value.getType());
    if (!queryType || queryType.getRank() != rank ||
        queryType.getElementType() != type.getElementType() ||
        valueType.getRank() != rank ||
        valueType.getDimSize(0) != queryType.getDimSize(0) ||
        (rank == 4 && valueType.getDimSize(1) != queryType.getDimSize(1)))
      return rewriter.notifyMatchFailure(root, "not batch x heads operands");
    if (!chain.isSelfContained(root))
      return rewriter.notifyMatchFailure(root, "intermediates used elsewhere");
    Location loc = root.getLoc();
    Value keys = rank == 4 ? getTransposedKeys(rewriter, loc, keysT)
                           : getTransposedKeys3D(rewriter, loc, keysT);
    if (!keys)
      return rewriter.notifyMatchFailure(root, "k^T is not a transpose");
    Value mask;
    for (Value bias : biases)
      mask = mask ? AddOp::create(rewriter, loc, mask, bias).getResult() : bias;
    // A 3-D product is batch*heads batches of one head, viewed as rank 4.
    RankedTensorType resultType = type;
    if (rank == 3) {
      query = viewAsRank4(rewriter, loc, query);
      keys = viewAsRank4(rewriter, loc, keys);
      value = viewAsRank4(rewriter, loc, value);
      if (mask)
        mask = viewAsRank4(rewriter, loc, mask);
      resultType = getRank4View(type);
    }
    int64_t heads = cast<RankedTensorType>(query.getType()).getDimSize(1);
    auto attention = AttentionOp::create(
        rewriter, loc, resultType, query, keys, value, mask,
        rewriter.getI64IntegerAttr(heads), rewriter.getI64IntegerAttr(heads),
        rewriter.getF32FloatAttr(static_cast<float>(scale)),
        /*is_causal=*/nullptr, rewriter.getF32FloatAttr(0.0f),
        softmax.getNanToZero() ? rewriter.getUnitAttr() : nullptr);
    Value result = attention.getResult();
    if (rank == 3)
      result = ReshapeOp::create(rewriter, loc, type, result);
    rewriter.replaceOp(root, result);
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct FusePatternsPass
    : public cleave::impl::FusePatternsPassBase<FusePatternsPass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    populateFusePatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    // Only fuse: folding and constant CSE belong to -canonicalize, and
    // keeping them out lets tests pin exactly what fusion changes.
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    (void)applyPatternsGreedily(getOperation(), patterns, config);
  }

  FrozenRewritePatternSet patterns;
};

} // namespace

void cleave::populateFusePatterns(RewritePatternSet &patterns) {
  patterns.add<FuseGelu, FuseLayerNorm, FuseRmsNorm<MulOp>, FuseRmsNorm<DivOp>,
               FuseRotaryEmbedding, FuseAttention>(patterns.getContext());
}
