//===- ElementwiseGradients.cpp - elementwise derivatives -------*- C++ -*-===//
//
// Unary ops: the cotangent is the result cotangent times the derivative,
// written with the op's operand `x` and result `y` where that is cheaper.
// Broadcasting binary ops: each operand's cotangent is formed in the
// result's shape and then summed back to the operand's shape.
//
// Where a derivative is undefined at a point (relu and abs at 0, max at a
// tie) the value PyTorch uses is chosen, so that gradients compare equal.
//
// Each op is built in its own statement: C++ leaves the order in which a
// call's arguments are evaluated open, and the backward ops should come out
// in the same order from every compiler.
//
//===----------------------------------------------------------------------===//

#include "GradientRules.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace cleave;

namespace {

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

/// An op of one operand whose cotangent `Rule` gives from the result's.
template <typename OpT, Value (*Rule)(GradientBuilder &, OpT, Value)>
struct UnaryGradientModel
    : GradientInterface::ExternalModel<UnaryGradientModel<OpT, Rule>, OpT> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &builder,
                               OpGradients &gradients) const {
    if (gradients.wanted[0])
      gradients.operands[0] =
          Rule(builder, cast<OpT>(op), gradients.results[0]);
    return success();
  }
};

Value one(GradientBuilder &b, Value like) { return b.scalarLike(1.0, like); }
Value zero(GradientBuilder &b, Value like) { return b.scalarLike(0.0, like); }

Value isPositive(GradientBuilder &b, Value x) {
  return b.create<GreaterOp>(x, zero(b, x));
}

Value isNegative(GradientBuilder &b, Value x) {
  return b.create<LessOp>(x, zero(b, x));
}

Value negGradient(GradientBuilder &b, NegOp, Value g) { return b.neg(g); }

Value expGradient(GradientBuilder &b, ExpOp op, Value g) {
  return b.mul(g, op.getOutput());
}

Value logGradient(GradientBuilder &b, LogOp op, Value g) {
  return b.div(g, op.getInput());
}

/// d sqrt(x) = 1 / (2 sqrt(x)).
Value sqrtGradient(GradientBuilder &b, SqrtOp op, Value g) {
  return b.div(g, b.scale(op.getOutput(), 2.0));
}

/// d (1/x) = -(1/x)^2.
Value reciprocalGradient(GradientBuilder &b, ReciprocalOp op, Value g) {
  Value y = op.getOutput();
  return b.neg(b.mul(g, b.mul(y, y)));
}

/// d tanh(x) = 1 - tanh(x)^2.
Value tanhGradient(GradientBuilder &b, TanhOp op, Value g) {
  Value y = op.getOutput();
  Value square = b.mul(y, y);
  return b.mul(g, b.sub(one(b, y), square));
}

/// d sigmoid(x) = sigmoid(x) (1 - sigmoid(x)).
Value sigmoidGradient(GradientBuilder &b, SigmoidOp op, Value g) {
  Value y = op.getOutput();
  return b.mul(g, b.mul(y, b.sub(one(b, y), y)));
}

/// d relu(x) = [x > 0].
Value reluGradient(GradientBuilder &b, ReluOp op, Value g) {
  return b.selectOrZero(isPositive(b, op.getInput()), g);
}

/// d erf(x) = 2 / sqrt(pi) exp(-x^2).
Value erfGradient(GradientBuilder &b, ErfOp op, Value g) {
  Value x = op.getInput();
  Value density = b.create<ExpOp>(b.neg(b.mul(x, x)));
  return b.mul(g, b.scale(density, 2.0 / std::sqrt(llvm::numbers::pi)));
}

Value sinGradient(GradientBuilder &b, SinOp op, Value g) {
  return b.mul(g, b.create<CosOp>(op.getInput()));
}

Value cosGradient(GradientBuilder &b, CosOp op, Value g) {
  return b.neg(b.mul(g, b.create<SinOp>(op.getInput())));
}

/// d softplus(x) = sigmoid(x).
Value softplusGradient(GradientBuilder &b, SoftplusOp op, Value g) {
  return b.mul(g, b.create<SigmoidOp>(op.getInput()));
}

/// Piecewise constant: no derivative anywhere it is defined.
template <typename OpT> Value zeroGradient(GradientBuilder &b, OpT, Value g) {
  return b.zeros(cast<RankedTensorType>(g.getType()));
}

/// d |x| = sign(x), 0 at 0.
Value absGradient(GradientBuilder &b, AbsOp op, Value g) {
  Value x = op.getInput();
  Value negated = b.neg(g);
  Value negative = b.selectOrZero(isNegative(b, x), negated);
  return b.select(isPositive(b, x), g, negative);
}

Value leakyReluGradient(GradientBuilder &b, LeakyReluOp op, Value g) {
  double alpha = op.getAlphaAttr().getValueAsDouble();
  Value negative = b.scale(g, alpha);
  return b.select(isPositive(b, op.getInput()), g, negative);
}

/// For x <= 0, d alpha (exp(x) - 1) = alpha exp(x) = y + alpha.
Value eluGradient(GradientBuilder &b, EluOp op, Value g) {
  double alpha = op.getAlphaAttr().getValueAsDouble();
  Value y = op.getOutput();
  Value negative = b.mul(g, b.add(y, b.scalarLike(alpha, y)));
  return b.select(isPositive(b, op.getInput()), g, negative);
}

/// The derivative of x * max(0, min(1, x / 6 + 1 / 2)): 0 below -3, 1
/// above 3, x / 3 + 1 / 2 between.
Value hardSwishGradient(GradientBuilder &b, HardSwishOp op, Value g) {
  Value x = op.getInput();
  Value below = b.create<LessOp>(x, b.scalarLike(-3.0, x));
  Value inside = b.create<LessEqualOp>(x, b.scalarLike(3.0, x));
  Value slope = b.scale(x, 1.0 / 3.0);
  slope = b.add(slope, b.scalarLike(0.5, x));
  Value upper = b.select(inside, b.mul(g, slope), g);
  return b.select(below, zero(b, g), upper);
}

/// alpha inside the open interval where alpha x + beta is in (0, 1).
Value hardSigmoidGradient(GradientBuilder &b, HardSigmoidOp op, Value g) {
  double alpha = op.getAlphaAttr().getValueAsDouble();
  double beta = op.getBetaAttr().getValueAsDouble();
  Value x = op.getInput();
  Value t = b.scale(x, alpha);
  t = b.add(t, b.scalarLike(beta, x));
  Value aboveZero = b.create<GreaterOp>(t, zero(b, t));
  Value belowOne = b.create<LessOp>(t, one(b, t));
  Value inside = b.create<AndOp>(aboveZero, belowOne);
  return b.selectOrZero(inside, b.scale(g, alpha));
}

/// The cotangent passes where min <= x <= max (bounds included, as PyTorch's
/// clamp does).
Value clipGradient(GradientBuilder &b, ClipOp op, Value g) {
  Value x = op.getInput();
  Value inside;
  auto both = [&](Value mask) {
    inside = inside ? b.create<AndOp>(inside, mask) : mask;
  };
  if (FloatAttr min = op.getMinAttr())
    both(b.create<GreaterEqualOp>(x, b.scalarLike(min.getValueAsDouble(), x)));
  if (FloatAttr max = op.getMaxAttr())
    both(b.create<LessEqualOp>(x, b.scalarLike(max.getValueAsDouble(), x)));
  return inside ? b.selectOrZero(inside, g) : g;
}

/// Exact: Phi(x) + x phi(x). Tanh form: the derivative of
/// 0.5 x (1 + tanh(u)) with u = sqrt(2 / pi) (x + 0.044715 x^3).
Value geluGradient(GradientBuilder &b, GeluOp op, Value g) {
  Value x = op.getInput();
  Value half = b.scalarLike(0.5, x);
  if (op.getApproximate() == "tanh") {
    double k = std::sqrt(2.0 / llvm::numbers::pi), c = 0.044715;
    Value x2 = b.mul(x, x);
    Value u = b.scale(b.mul(x2, x), c);
    u = b.scale(b.add(x, u), k);
    Value t = b.create<TanhOp>(u);
    Value du = b.scale(x2, 3.0 * c);
    du = b.scale(b.add(one(b, x), du), k);
    Value dt = b.mul(t, t);
    dt = b.sub(one(b, t), dt);
    Value inner = b.mul(dt, du);
    inner = b.mul(b.mul(half, x), inner);
    Value outer = b.mul(half, b.add(one(b, t), t));
    return b.mul(g, b.add(outer, inner));
  }
  Value cdf = b.create<ErfOp>(b.scale(x, 1.0 / std::sqrt(2.0)));
  cdf = b.mul(half, b.add(one(b, x), cdf));
  Value pdf = b.create<ExpOp>(b.scale(b.mul(x, x), -0.5));
  pdf = b.scale(pdf, 1.0 / std::sqrt(2.0 * llvm::numbers::pi));
  return b.mul(g, b.add(cdf, b.mul(x, pdf)));
}

/// A conversion between float types carries the cotangent back converted.
Value castGradient(GradientBuilder &b, CastOp op, Value g) {
  return b.cast(g, getElementType(op.getInput()));
}

//===----------------------------------------------------------------------===//
// Broadcasting binary ops
//===----------------------------------------------------------------------===//

/// Which operand cotangents a binary rule is asked for, and its answers in
/// the result's shape.
struct BinaryCotangents {
  bool wantLhs, wantRhs;
  Value lhs, rhs;
};

/// A broadcasting op of two operands; `Rule` fills the cotangents in the
/// result's shape and the model sums them back to each operand's shape.
template <typename OpT,
          void (*Rule)(GradientBuilder &, OpT, Value, BinaryCotangents &)>
struct BinaryGradientModel
    : GradientInterface::ExternalModel<BinaryGradientModel<OpT, Rule>, OpT> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &builder,
                               OpGradients &gradients) const {
    BinaryCotangents cotangents{
        gradients.wanted[0], gradients.wanted[1], {}, {}};
    Rule(builder, cast<OpT>(op), gradients.results[0], cotangents);
    if (cotangents.wantLhs)
      gradients.operands[0] =
          builder.sumToShape(cotangents.lhs, getShape(op->getOperand(0)));
    if (cotangents.wantRhs)
      gradients.operands[1] =
          builder.sumToShape(cotangents.rhs, getShape(op->getOperand(1)));
    return success();
  }
};

void addGradient(GradientBuilder &, AddOp, Value g, BinaryCotangents &c) {
  c.lhs = g;
  c.rhs = g;
}

void subGradient(GradientBuilder &b, SubOp, Value g, BinaryCotangents &c) {
  c.lhs = g;
  if (c.wantRhs)
    c.rhs = b.neg(g);
}

void mulGradient(GradientBuilder &b, MulOp op, Value g, BinaryCotangents &c) {
  if (c.wantLhs)
    c.lhs = b.mul(g, op.getRhs());
  if (c.wantRhs)
    c.rhs = b.mul(g, op.getLhs());
}

/// d (a / b) = da / b - db a / b^2 = da / b - db y / b.
void divGradient(GradientBuilder &b, DivOp op, Value g, BinaryCotangents &c) {
  if (c.wantLhs)
    c.lhs = b.div(g, op.getRhs());
  if (c.wantRhs)
    c.rhs = b.neg(b.div(b.mul(g, op.getOutput()), op.getRhs()));
}

/// d a^b = b a^(b - 1) da + a^b log(a) db.
void powGradient(GradientBuilder &b, PowOp op, Value g, BinaryCotangents &c) {
  Value base = op.getLhs(), exponent = op.getRhs();
  if (c.wantLhs) {
    Value lowered = b.create<PowOp>(base, b.sub(exponent, one(b, exponent)));
    c.lhs = b.mul(g, b.mul(exponent, lowered));
  }
  if (c.wantRhs)
    c.rhs = b.mul(g, b.mul(op.getOutput(), b.create<LogOp>(base)));
}

/// max and min pass the cotangent to the operand that wins; a tie splits it
/// in halves, as PyTorch's maximum and minimum do.
template <typename OpT, typename WinsOp>
void extremumGradient(GradientBuilder &b, OpT op, Value g,
                      BinaryCotangents &c) {
  Value lhs = op.getLhs(), rhs = op.getRhs();
  Value tie = b.create<EqualOp>(lhs, rhs);
  Value split = b.selectOrZero(tie, b.scale(g, 0.5));
  if (c.wantLhs)
    c.lhs = b.select(b.create<WinsOp>(lhs, rhs), g, split);
  if (c.wantRhs)
    c.rhs = b.select(b.create<WinsOp>(rhs, lhs), g, split);
}

/// `where(c, a, b)`: the cotangent goes to the operand each element came
/// from; the condition has none.
struct WhereGradientModel
    : GradientInterface::ExternalModel<WhereGradientModel, WhereOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto where = cast<WhereOp>(op);
    Value g = gradients.results[0];
    Value condition = where.getCondition();
    if (gradients.wanted[1])
      gradients.operands[1] = b.sumToShape(b.selectOrZero(condition, g),
                                           getShape(where.getTrueValue()));
    if (gradients.wanted[2])
      gradients.operands[2] = b.sumToShape(b.select(condition, zero(b, g), g),
                                           getShape(where.getFalseValue()));
    return success();
  }
};

template <typename OpT, Value (*Rule)(GradientBuilder &, OpT, Value)>
void attachUnary(MLIRContext *context) {
  OpT::template attachInterface<UnaryGradientModel<OpT, Rule>>(*context);
}

template <typename OpT,
          void (*Rule)(GradientBuilder &, OpT, Value, BinaryCotangents &)>
void attachBinary(MLIRContext *context) {
  OpT::template attachInterface<BinaryGradientModel<OpT, Rule>>(*context);
}

} // namespace

void cleave::detail::attachElementwiseGradients(MLIRContext *context) {
  attachUnary<NegOp, negGradient>(context);
  attachUnary<ExpOp, expGradient>(context);
  attachUnary<LogOp, logGradient>(context);
  attachUnary<SqrtOp, sqrtGradient>(context);
  attachUnary<ReciprocalOp, reciprocalGradient>(context);
  attachUnary<TanhOp, tanhGradient>(context);
  attachUnary<SigmoidOp, sigmoidGradient>(context);
  attachUnary<ReluOp, reluGradient>(context);
  attachUnary<ErfOp, erfGradient>(context);
  attachUnary<SinOp, sinGradient>(context);
  attachUnary<CosOp, cosGradient>(context);
  attachUnary<SoftplusOp, softplusGradient>(context);
  attachUnary<FloorOp, zeroGradient<FloorOp>>(context);
  attachUnary<CeilOp, zeroGradient<CeilOp>>(context);
  attachUnary<AbsOp, absGradient>(context);
  attachUnary<LeakyReluOp, leakyReluGradient>(context);
  attachUnary<EluOp, eluGradient>(context);
  attachUnary<HardSwishOp, hardSwishGradient>(context);
  attachUnary<HardSigmoidOp, hardSigmoidGradient>(context);
  attachUnary<ClipOp, clipGradient>(context);
  attachUnary<GeluOp, geluGradient>(context);
  attachUnary<CastOp, castGradient>(context);

  attachBinary<AddOp, addGradient>(context);
  attachBinary<SubOp, subGradient>(context);
  attachBinary<MulOp, mulGradient>(context);
  attachBinary<DivOp, divGradient>(context);
  attachBinary<PowOp, powGradient>(context);
  attachBinary<MaxOp, extremumGradient<MaxOp, GreaterOp>>(context);
  attachBinary<MinOp, extremumGradient<MinOp, LessOp>>(context);
  WhereOp::attachInterface<WhereGradientModel>(*context);
}
