//===- AttentionGradients.cpp - derivatives of transformer ops --*- C++ -*-===//
//
// The fused ops of transformer models: RMS normalisation, rotary position
// embedding and scaled dot-product attention. What the forward op does not
// keep (the reciprocal root mean square, the attention probabilities) the
// rule recomputes from the op's operands with unfused cleave ops.
//
//===----------------------------------------------------------------------===//

#include "GradientRules.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"

#include <limits>

using namespace mlir;
using namespace cleave;

namespace {

//===----------------------------------------------------------------------===//
// RMS normalisation
//===----------------------------------------------------------------------===//

/// `y = xhat scale` with `xhat = x r`, `r = 1 / sqrt(mean(x^2) + eps)` over
/// the normalised dimensions `[axis, rank)`:
///   dscale = dy xhat summed over the dimensions `scale` broadcast along;
///   dx = r (dxhat - xhat mean(dxhat xhat)), dxhat = dy scale.
struct RmsNormGradientModel
    : GradientInterface::ExternalModel<RmsNormGradientModel, RmsNormOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto norm = cast<RmsNormOp>(op);
    Value x = norm.getInput(), scale = norm.getScale(),
          g = gradients.results[0];
    int64_t axis = norm.getAxis(), rank = getShape(x).size();
    SmallVector<int64_t> normalised =
        llvm::to_vector(llvm::seq<int64_t>(axis, rank));

    Value meanSquare = b.reduceMean(b.mul(x, x), normalised, /*keepdims=*/true);
    double epsilon = norm.getEpsilonAttr().getValueAsDouble();
    Value deviation =
        b.create<SqrtOp>(b.add(meanSquare, b.scalarLike(epsilon, x)));
    Value r = b.create<ReciprocalOp>(deviation);
    Value xhat = b.mul(x, r);

    if (gradients.wanted[1])
      gradients.operands[1] = b.sumToShape(b.mul(g, xhat), getShape(scale));
    if (gradients.wanted[0]) {
      Value dxhat = b.mul(g, scale);
      Value meanProjection =
          b.reduceMean(b.mul(dxhat, xhat), normalised, /*keepdims=*/true);
      Value projection = b.mul(xhat, meanProjection);
      gradients.operands[0] = b.mul(r, b.sub(dxhat, projection));
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Rotary embedding
//===----------------------------------------------------------------------===//

/// `value` (rank 4, `batch x heads x sequence x head_size`, or rank 3,
/// `batch x sequence x heads * head_size`) as `batch x sequence x heads x
/// head_size`.
Value sequenceMajorHeads(GradientBuilder &b, Value value, int64_t heads) {
  ArrayRef<int64_t> shape = getShape(value);
  if (shape.size() == 4)
    return b.transpose(value, {0, 2, 1, 3});
  return b.reshape(value, {shape[0], shape[1], heads, shape[2] / heads});
}

/// The entries of each head that a rotation pairs with the other half: the
/// first (`second` false) or second half of the rotated entries, or the even
/// or odd ones when interleaved.
Value rotatedHalf(GradientBuilder &b, Value heads, int64_t rotaryDim,
                  bool interleaved, bool second) {
  SmallVector<int64_t> starts(4, 0), ends(getShape(heads)), steps(4, 1);
  int64_t half = rotaryDim / 2;
  if (interleaved) {
    starts[3] = second ? 1 : 0;
    ends[3] = rotaryDim;
    steps[3] = 2;
  } else {
    starts[3] = second ? half : 0;
    ends[3] = second ? rotaryDim : half;
  }
  return b.create<SliceOp>(heads, starts, ends, steps);
}

/// The rotation is orthogonal, so the input's cotangent is the cotangent
/// rotated back: the same op with `-sin`. The caches' cotangents, per
/// position and rotated pair, sum over the heads
///   dcos = dy1 x1 + dy2 x2,  dsin = dy2 x1 - dy1 x2
/// and are zero in the entries past `rotary_embedding_dim / 2` that the op
/// does not read; with position ids, each position's row collects the
/// cotangents of the tokens that read it.
struct RotaryEmbeddingGradientModel
    : GradientInterface::ExternalModel<RotaryEmbeddingGradientModel,
                                       RotaryEmbeddingOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto rotary = cast<RotaryEmbeddingOp>(op);
    Value g = gradients.results[0];
    Value cos = rotary.getCos(), sin = rotary.getSin();
    Value positions = rotary.getPositionIds();
    if (gradients.wanted[0])
      gradients.operands[0] = b.create<RotaryEmbeddingOp>(
          g, cos, b.neg(sin), positions, rotary.getInterleaved(),
          rotary.getRotaryEmbeddingDim(), rotary.getNumHeads());
    if (!gradients.wanted[1] && !gradients.wanted[2])
      return success();

    int64_t heads = rotary.getHeads(), rotaryDim = rotary.getRotaryDim();
    bool interleaved = rotary.getInterleaved();
    Value x = sequenceMajorHeads(b, rotary.getInput(), heads);
    Value dy = sequenceMajorHeads(b, g, heads);
    Value x1 = rotatedHalf(b, x, rotaryDim, interleaved, false);
    Value x2 = rotatedHalf(b, x, rotaryDim, interleaved, true);
    Value dy1 = rotatedHalf(b, dy, rotaryDim, interleaved, false);
    Value dy2 = rotatedHalf(b, dy, rotaryDim, interleaved, true);

    ArrayRef<int64_t> cacheShape = getShape(cos);
    int64_t width = cacheShape.back(), half = rotaryDim / 2;
    ArrayRef<int64_t> tokens = getShape(x).take_front(2);
    auto toCache = [&](Value perHead) {
      // batch x sequence x heads x half -> the cache's shape.
      Value perToken = b.reduceSum(perHead, {2}, /*keepdims=*/false);
      if (width > half) {
        SmallVector<int64_t> unread(tokens);
        unread.push_back(width - half);
        auto type = RankedTensorType::get(unread, getElementType(perToken));
        perToken = b.create<ConcatOp>(ValueRange{perToken, b.zeros(type)},
                                      /*axis=*/2);
      }
      if (!positions)
        return b.sumToShape(perToken, cacheShape);
      int64_t count = tokens[0] * tokens[1], rows = cacheShape[0];
      Value ids = b.reshape(positions, {1, count});
      Type indexType = getElementType(ids);
      Value start = b.scalar(0.0, indexType);
      Value limit = b.scalar(static_cast<double>(rows), indexType);
      Value step = b.scalar(1.0, indexType);
      Value iota = b.create<RangeOp>(RankedTensorType::get({rows}, indexType),
                                     start, limit, step);
      Value hits = b.create<EqualOp>(b.reshape(iota, {rows, 1}), ids);
      Value onehot = b.cast(hits, getElementType(perToken));
      return b.create<MatMulOp>(onehot, b.reshape(perToken, {count, width}));
    };
    if (gradients.wanted[1]) {
      Value first = b.mul(dy1, x1);
      gradients.operands[1] = toCache(b.add(first, b.mul(dy2, x2)));
    }
    if (gradients.wanted[2]) {
      Value first = b.mul(dy2, x1);
      gradients.operands[2] = toCache(b.sub(first, b.mul(dy1, x2)));
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// `value` as `batch x heads x sequence x head_size`.
Value headMajor(GradientBuilder &b, Value value, int64_t heads) {
  ArrayRef<int64_t> shape = getShape(value);
  if (shape.size() == 4)
    return value;
  Value split = b.reshape(value, {shape[0], shape[1], heads, shape[2] / heads});
  return b.transpose(split, {0, 2, 1, 3});
}

/// The inverse of `headMajor` for an operand of rank `rank`.
Value fromHeadMajor(GradientBuilder &b, Value value, int64_t rank) {
  if (rank == 4)
    return value;
  ArrayRef<int64_t> shape = getShape(value);
  Value merged = b.transpose(value, {0, 2, 1, 3});
  return b.reshape(merged, {shape[0], shape[2], shape[1] * shape[3]});
}

/// Key/value heads repeated for the `group` query heads that read each.
Value repeatHeads(GradientBuilder &b, Value kv, int64_t group) {
  if (group == 1)
    return kv;
  ArrayRef<int64_t> s = getShape(kv);
  Value split = b.reshape(kv, {s[0], s[1], 1, s[2], s[3]});
  Value repeated = b.broadcastTo(split, {s[0], s[1], group, s[2], s[3]});
  return b.reshape(repeated, {s[0], s[1] * group, s[2], s[3]});
}

/// The adjoint of `repeatHeads`: each key/value head sums its group's.
Value sumHeadGroups(GradientBuilder &b, Value perQueryHead, int64_t group) {
  if (group == 1)
    return perQueryHead;
  ArrayRef<int64_t> s = getShape(perQueryHead);
  Value split =
      b.reshape(perQueryHead, {s[0], s[1] / group, group, s[2], s[3]});
  return b.reduceSum(split, {2}, /*keepdims=*/false);
}

/// With `s = scale q k^T`, `t = softcap(s)` and `p = softmax(t + bias)` per
/// head (recomputed here), and `y = p v`:
///   dv = p^T dy,  dp = dy v^T,  dt = p (dp - sum(dp p)),
///   ds = dt (1 - tanh^2(s / c)) with a softcap c, else dt,
///   dq = scale ds k,  dk = scale ds^T q,
/// key and value cotangents summed over the query heads that share them. A
/// masked score has p = 0 and so no cotangent (with `nan_to_zero`, a row
/// without a visible key has p = 0 throughout); a float mask's cotangent is
/// dt summed to its shape.
struct AttentionGradientModel
    : GradientInterface::ExternalModel<AttentionGradientModel, AttentionOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto attention = cast<AttentionOp>(op);
    int64_t rank = getShape(attention.getQuery()).size();
    int64_t qHeads = attention.getQNumHeads();
    int64_t kvHeads = attention.getKvNumHeads();
    int64_t group = qHeads / kvHeads;
    Value q = headMajor(b, attention.getQuery(), qHeads);
    Value k = repeatHeads(b, headMajor(b, attention.getKey(), kvHeads), group);
    Value v =
        repeatHeads(b, headMajor(b, attention.getValue(), kvHeads), group);
    Value dy = headMajor(b, gradients.results[0], qHeads);

    double scale = attention.getScaleAttr().getValueAsDouble();
    double softcap = attention.getSoftcapAttr().getValueAsDouble();
    Value s = b.scale(b.create<MatMulOp>(q, b.transposeLastTwo(k)), scale);
    Value capped, t = s;
    if (softcap > 0.0) {
      capped = b.create<TanhOp>(b.scale(s, 1.0 / softcap));
      t = b.scale(capped, softcap);
    }
    Value negInf = b.scalarLike(-std::numeric_limits<double>::infinity(), t);
    Value mask = attention.getMask();
    if (mask && getElementType(mask).isInteger(1))
      t = b.select(mask, t, negInf);
    else if (mask)
      t = b.add(t, mask);
    if (attention.getIsCausal()) {
      ArrayRef<int64_t> scores = getShape(s);
      int64_t rows = scores[2], columns = scores[3];
      SmallVector<bool> visible;
      visible.reserve(rows * columns);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < columns; ++j)
          visible.push_back(j <= i);
      auto type =
          RankedTensorType::get({rows, columns}, b.getBuilder().getI1Type());
      Value causal =
          b.create<ConstantOp>(DenseElementsAttr::get(type, visible));
      t = b.select(causal, t, negInf);
    }
    // A row that sees no key is zeros with nan_to_zero, and so are its
    // cotangents.
    Value p = b.create<SoftmaxOp>(t, /*axis=*/3);
    if (attention.getNanToZero())
      p.getDefiningOp<SoftmaxOp>().setNanToZero(true);

    if (gradients.wanted[2]) {
      Value dv = b.create<MatMulOp>(b.transposeLastTwo(p), dy);
      gradients.operands[2] =
          fromHeadMajor(b, sumHeadGroups(b, dv, group), rank);
    }
    bool wantsMask = mask && gradients.wanted.size() > 3 &&
                     gradients.wanted[3] &&
                     isa<FloatType>(getElementType(mask));
    if (!gradients.wanted[0] && !gradients.wanted[1] && !wantsMask)
      return success();

    Value dp = b.create<MatMulOp>(dy, b.transposeLastTwo(v));
    Value inner = b.reduceSum(b.mul(dp, p), {3}, /*keepdims=*/true);
    Value dt = b.mul(p, b.sub(dp, inner));
    if (wantsMask)
      gradients.operands[3] = b.sumToShape(dt, getShape(mask));
    Value ds = dt;
    if (capped) {
      Value square = b.mul(capped, capped);
      Value slope = b.sub(b.scalarLike(1.0, capped), square);
      ds = b.mul(dt, slope);
    }
    if (gradients.wanted[0]) {
      Value dq = b.scale(b.create<MatMulOp>(ds, k), scale);
      gradients.operands[0] = fromHeadMajor(b, dq, rank);
    }
    if (gradients.wanted[1]) {
      Value dk = b.scale(b.create<MatMulOp>(b.transposeLastTwo(ds), q), scale);
      gradients.operands[1] =
          fromHeadMajor(b, sumHeadGroups(b, dk, group), rank);
    }
    return success();
  }
};

} // namespace

void cleave::detail::attachAttentionGradients(MLIRContext *context) {
  RmsNormOp::attachInterface<RmsNormGradientModel>(*context);
  RotaryEmbeddingOp::attachInterface<RotaryEmbeddingGradientModel>(*context);
  AttentionOp::attachInterface<AttentionGradientModel>(*context);
}
