//===- NNGradients.cpp - derivatives of contractions and norms --*- C++ -*-===//
//
// Contractions (matmul, gemm), reductions, softmax and layer normalisation.
// Each rule is written with the forward op's own operands and results, which
// the backward ops read; what a rule needs that the forward op does not keep
// (layer_norm's mean and reciprocal deviation) it recomputes. Each op is
// built in its own statement, so that every compiler orders them alike.
//
//===----------------------------------------------------------------------===//

#include "GradientRules.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"

#include "mlir/Dialect/Traits.h"

using namespace mlir;
using namespace cleave;

namespace {

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// `y = a @ b` with numpy semantics. A 1-D operand is made a matrix (a row
/// for `a`, a column for `b`) and the cotangent given the matching unit
/// dimension; then `da = dy @ b^T` and `db = a^T @ dy`, each summed over the
/// batch dimensions its operand broadcast along.
struct MatMulGradientModel
    : GradientInterface::ExternalModel<MatMulGradientModel, MatMulOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto matmul = cast<MatMulOp>(op);
    Value lhs = matmul.getLhs(), rhs = matmul.getRhs();
    ArrayRef<int64_t> lhsShape = getShape(lhs), rhsShape = getShape(rhs);
    SmallVector<int64_t> lhsMatrix(lhsShape), rhsMatrix(rhsShape);
    if (lhsMatrix.size() == 1)
      lhsMatrix.insert(lhsMatrix.begin(), 1);
    if (rhsMatrix.size() == 1)
      rhsMatrix.push_back(1);
    SmallVector<int64_t> batch;
    (void)OpTrait::util::getBroadcastedShape(ArrayRef(lhsMatrix).drop_back(2),
                                             ArrayRef(rhsMatrix).drop_back(2),
                                             batch);
    SmallVector<int64_t> resultMatrix(batch);
    resultMatrix.append({lhsMatrix[lhsMatrix.size() - 2], rhsMatrix.back()});

    Value g = b.reshape(gradients.results[0], resultMatrix);
    Value a = b.reshape(lhs, lhsMatrix), w = b.reshape(rhs, rhsMatrix);
    if (gradients.wanted[0]) {
      Value da = b.create<MatMulOp>(g, b.transposeLastTwo(w));
      gradients.operands[0] = b.reshape(b.sumToShape(da, lhsMatrix), lhsShape);
    }
    if (gradients.wanted[1]) {
      Value dw;
      if (rhsMatrix.size() == 2 && lhsMatrix.size() > 2) {
        // A shared matrix (a linear layer's weight): one matmul over the
        // batch flattened into the rows, not a batch of them summed.
        int64_t k = lhsMatrix.back(), n = resultMatrix.back();
        Value rows =
            b.reshape(a, {ShapedType::getNumElements(lhsMatrix) / k, k});
        Value rowsGrad =
            b.reshape(g, {ShapedType::getNumElements(resultMatrix) / n, n});
        dw = b.create<MatMulOp>(b.transposeLastTwo(rows), rowsGrad);
      } else {
        dw = b.sumToShape(b.create<MatMulOp>(b.transposeLastTwo(a), g),
                          rhsMatrix);
      }
      gradients.operands[1] = b.reshape(dw, rhsShape);
    }
    return success();
  }
};

/// `y = alpha op(A) op(B) + beta C`: with `A' = op(A)`, `dA' = alpha dy
/// B'^T` and `dB' = alpha A'^T dy`, written as gemms whose transpose flags
/// undo `op` without materialising a transpose.
struct GemmGradientModel
    : GradientInterface::ExternalModel<GemmGradientModel, GemmOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto gemm = cast<GemmOp>(op);
    Value g = gradients.results[0];
    Value a = gemm.getA(), w = gemm.getB();
    bool transA = gemm.getTransA(), transB = gemm.getTransB();
    APFloat alpha = gemm.getAlpha();
    APFloat zero = APFloat::getZero(alpha.getSemantics());
    auto product = [&](Value lhs, Value rhs, bool transLhs, bool transRhs) {
      return b.create<GemmOp>(lhs, rhs, Value(), alpha, zero, transLhs,
                              transRhs);
    };
    if (gradients.wanted[0])
      gradients.operands[0] =
          transA ? product(w, g, transB, true) : product(g, w, false, !transB);
    if (gradients.wanted[1])
      gradients.operands[1] =
          transB ? product(g, a, true, transA) : product(a, g, !transA, false);
    if (gemm.getC() && gradients.wanted[2]) {
      double beta = gemm.getBetaAttr().getValueAsDouble();
      Value dc = beta == 1.0 ? g : b.scale(g, beta);
      gradients.operands[2] = b.sumToShape(dc, getShape(gemm.getC()));
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

int64_t reducedCount(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes) {
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= shape[axis];
  return count;
}

/// A reduction over `axes` whose cotangent `Rule` builds from the input,
/// the result and the result cotangent, both in a shape that broadcasts
/// against the input's.
template <typename OpT, Value (*Rule)(GradientBuilder &, OpT, Value, Value)>
struct ReduceGradientModel
    : GradientInterface::ExternalModel<ReduceGradientModel<OpT, Rule>, OpT> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    if (!gradients.wanted[0])
      return success();
    auto reduce = cast<OpT>(op);
    ArrayRef<int64_t> shape = getShape(reduce.getInput());
    auto kept = [&](Value value) {
      return b.keepReducedDims(value, shape, reduce.getAxes(),
                               reduce.getKeepdims());
    };
    Value keptGradient = kept(gradients.results[0]);
    Value keptOutput = kept(reduce.getOutput());
    Value dx = Rule(b, reduce, keptOutput, keptGradient);
    gradients.operands[0] = b.broadcastTo(dx, shape);
    return success();
  }
};

Value sumGradient(GradientBuilder &, ReduceSumOp, Value, Value g) { return g; }

Value meanGradient(GradientBuilder &b, ReduceMeanOp op, Value, Value g) {
  int64_t count = reducedCount(getShape(op.getInput()), op.getAxes());
  return count == 1 ? g : b.scale(g, 1.0 / count);
}

Value sumSquareGradient(GradientBuilder &b, ReduceSumSquareOp op, Value,
                        Value g) {
  return b.mul(b.scale(op.getInput(), 2.0), g);
}

/// d ||x|| = x / ||x||, and 0 where the norm is 0 (as PyTorch's norm).
Value l2Gradient(GradientBuilder &b, ReduceL2Op op, Value y, Value g) {
  Value zero = b.scalarLike(0.0, y);
  Value isZero = b.create<EqualOp>(y, zero);
  Value perNorm = b.select(isZero, zero, b.div(g, y));
  return b.mul(op.getInput(), perNorm);
}

/// max and min pass the cotangent to the elements equal to the result,
/// shared evenly among ties (PyTorch's amax and amin).
template <typename OpT>
Value extremumGradient(GradientBuilder &b, OpT op, Value y, Value g) {
  Value x = op.getInput();
  Value hits = b.cast(b.create<EqualOp>(x, y), getElementType(x));
  Value ties = b.reduceSum(hits, op.getAxes(), /*keepdims=*/true);
  return b.mul(hits, b.div(g, ties));
}

//===----------------------------------------------------------------------===//
// Softmax and normalisations
//===----------------------------------------------------------------------===//

/// `dx = y (dy - sum(dy y))` along the axis.
struct SoftmaxGradientModel
    : GradientInterface::ExternalModel<SoftmaxGradientModel, SoftmaxOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto softmax = cast<SoftmaxOp>(op);
    Value y = softmax.getOutput(), g = gradients.results[0];
    int64_t axis = softmax.getAxis();
    Value inner = b.reduceSum(b.mul(g, y), {axis}, /*keepdims=*/true);
    gradients.operands[0] = b.mul(y, b.sub(g, inner));
    return success();
  }
};

/// `dx = dy - softmax(x) sum(dy)` along the axis, with `softmax(x) = exp(y)`.
struct LogSoftmaxGradientModel
    : GradientInterface::ExternalModel<LogSoftmaxGradientModel, LogSoftmaxOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto logSoftmax = cast<LogSoftmaxOp>(op);
    Value g = gradients.results[0];
    Value total = b.reduceSum(g, {static_cast<int64_t>(logSoftmax.getAxis())},
                              /*keepdims=*/true);
    Value probabilities = b.create<ExpOp>(logSoftmax.getOutput());
    gradients.operands[0] = b.sub(g, b.mul(probabilities, total));
    return success();
  }
};

/// `y = xhat scale + bias` with `xhat = (x - mean) r`, `r = 1 / sqrt(var +
/// eps)` over the normalised dimensions `[axis, rank)`:
///   dscale = sum over the leading dimensions of dy xhat, dbias of dy;
///   dx = r (dxhat - mean(dxhat) - xhat mean(dxhat xhat)), dxhat = dy scale.
struct LayerNormGradientModel
    : GradientInterface::ExternalModel<LayerNormGradientModel, LayerNormOp> {
  LogicalResult buildGradients(Operation *op, GradientBuilder &b,
                               OpGradients &gradients) const {
    auto norm = cast<LayerNormOp>(op);
    Value x = norm.getInput(), scale = norm.getScale(),
          g = gradients.results[0];
    int64_t axis = norm.getAxis(), rank = getShape(x).size();
    SmallVector<int64_t> normalised =
        llvm::to_vector(llvm::seq<int64_t>(axis, rank));
    SmallVector<int64_t> leading = llvm::to_vector(llvm::seq<int64_t>(0, axis));

    Value centred = b.sub(x, b.reduceMean(x, normalised, /*keepdims=*/true));
    Value variance =
        b.reduceMean(b.mul(centred, centred), normalised, /*keepdims=*/true);
    double epsilon = norm.getEpsilonAttr().getValueAsDouble();
    Value deviation =
        b.create<SqrtOp>(b.add(variance, b.scalarLike(epsilon, x)));
    Value r = b.create<ReciprocalOp>(deviation);
    Value xhat = b.mul(centred, r);

    if (gradients.wanted[1])
      gradients.operands[1] =
          b.sumToShape(b.reduceSum(b.mul(g, xhat), leading, /*keepdims=*/false),
                       getShape(scale));
    if (norm.getBias() && gradients.wanted[2])
      gradients.operands[2] =
          b.sumToShape(b.reduceSum(g, leading, /*keepdims=*/false),
                       getShape(norm.getBias()));
    if (gradients.wanted[0]) {
      Value dxhat = b.mul(g, scale);
      Value meanGrad = b.reduceMean(dxhat, normalised, /*keepdims=*/true);
      Value meanProjection =
          b.reduceMean(b.mul(dxhat, xhat), normalised, /*keepdims=*/true);
      Value projection = b.mul(xhat, meanProjection);
      gradients.operands[0] =
          b.mul(r, b.sub(b.sub(dxhat, meanGrad), projection));
    }
    return success();
  }
};

template <typename OpT, Value (*Rule)(GradientBuilder &, OpT, Value, Value)>
void attachReduce(MLIRContext *context) {
  OpT::template attachInterface<ReduceGradientModel<OpT, Rule>>(*context);
}

} // namespace

void cleave::detail::attachNNGradients(MLIRContext *context) {
  MatMulOp::attachInterface<MatMulGradientModel>(*context);
  GemmOp::attachInterface<GemmGradientModel>(*context);

  attachReduce<ReduceSumOp, sumGradient>(context);
  attachReduce<ReduceMeanOp, meanGradient>(context);
  attachReduce<ReduceSumSquareOp, sumSquareGradient>(context);
  attachReduce<ReduceL2Op, l2Gradient>(context);
  attachReduce<ReduceMaxOp, extremumGradient<ReduceMaxOp>>(context);
  attachReduce<ReduceMinOp, extremumGradient<ReduceMinOp>>(context);

  SoftmaxOp::attachInterface<SoftmaxGradientModel>(*context);
  LogSoftmaxOp::attachInterface<LogSoftmaxGradientModel>(*context);
  LayerNormOp::attachInterface<LayerNormGradientModel>(*context);
}
