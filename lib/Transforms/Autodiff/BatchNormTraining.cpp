//===- BatchNormTraining.cpp - batch statistics in training -----*- C++ -*-===//
//
// `cleave-batch-norm-training`: batch normalisation as a training step
// computes it (PyTorch's `BatchNorm*d.train()`). The output is normalised by
// the batch's mean and biased variance, built from reductions and
// arithmetic, which have gradient rules, so that the gradient flows through
// the statistics; the running statistics move towards the batch's, in
// place. Synchronised over data-parallel replicas, the statistics are
// over every replica's batch: the per-channel sums are all-reduced.
//
// The running-statistics update `r = (1 - m) r + m s` is one step of SGD of
// rate `m` on `|r - s|^2 / 2` (its gradient is `r - s`), so it is a
// `cleave.sgd_update` of a writable weight, the memory and kernel the
// optimizer's updates already use.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Autodiff/Passes.h"

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace cleave {
#define GEN_PASS_DEF_BATCHNORMTRAININGPASS
#include "cleave/Transforms/Autodiff/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

/// The batch statistics of one batch_norm: mean and biased variance per
/// channel, of shape `1 x C x 1 ... x 1`, and the input minus the mean.
struct BatchStatistics {
  Value mean, variance, centred;
  /// The values per channel each statistic is over.
  int64_t count;
};

struct BatchNormTrainingPass
    : public cleave::impl::BatchNormTrainingPassBase<BatchNormTrainingPass> {
  using BatchNormTrainingPassBase::BatchNormTrainingPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal())
      return;
    if (syncReplicas < 1) {
      emitError(module.getLoc(), "sync-replicas=")
          << static_cast<int64_t>(syncReplicas)
          << ": the number of data-parallel replicas must be positive";
      return signalPassFailure();
    }
    SmallVector<BatchNormOp> norms;
    func.walk([&](BatchNormOp norm) {
      if (step || norm.getTrainingMode())
        norms.push_back(norm);
    });
    for (BatchNormOp norm : norms)
      if (failed(rewrite(norm)))
        return signalPassFailure();
  }

  LogicalResult rewrite(BatchNormOp norm) {
    OpBuilder opBuilder(norm);
    GradientBuilder b(opBuilder, norm.getLoc());
    Value x = norm.getInput();
    if (!cast<ShapedType>(x.getType()).hasStaticShape())
      return norm.emitOpError("normalises by batch statistics, which needs a "
                              "static shape, but its input is ")
             << x.getType()
             << "; bind the model's input shapes before training";
    BatchStatistics stats = computeStatistics(b, x, syncReplicas);
    if (step && (failed(updateRunning(b, norm, norm.getMean(), stats.mean,
                                      stats.count, /*unbiased=*/false)) ||
                 failed(updateRunning(b, norm, norm.getVariance(),
                                      stats.variance, stats.count,
                                      /*unbiased=*/true))))
      return failure();
    size_t rank = getShape(x).size();
    SmallVector<int64_t> channelShape(rank - 1, 1);
    channelShape[0] = getShape(x)[1];
    double epsilon = norm.getEpsilonAttr().getValueAsDouble();
    Value deviation =
        b.create<SqrtOp>(b.add(stats.variance, b.scalarLike(epsilon, x)));
    Value normalised = b.div(stats.centred, deviation);
    // ONNX lets the parameters have their own float type.
    auto perChannel = [&](Value parameter) {
      return b.reshape(b.cast(parameter, getElementType(x)), channelShape);
    };
    Value scaled = b.mul(normalised, perChannel(norm.getScale()));
    Value y = b.add(scaled, perChannel(norm.getBias()));
    norm.getOutput().replaceAllUsesWith(y);
    norm.erase();
    return success();
  }

  /// The statistics of `x` over its batch, or over the batches of
  /// `replicas` data-parallel replicas.
  static BatchStatistics computeStatistics(GradientBuilder &b, Value x,
                                           int64_t replicas) {
    ArrayRef<int64_t> shape = getShape(x);
    SmallVector<int64_t> axes{0};
    int64_t count = shape[0];
    for (size_t i = 2; i < shape.size(); ++i) {
      axes.push_back(i);
      count *= shape[i];
    }
    if (replicas == 1) {
      Value mean = b.reduceMean(x, axes, /*keepdims=*/true);
      Value centred = b.sub(x, mean);
      Value variance = b.reduceMean(b.mul(centred, centred), axes, true);
      return {mean, variance, centred, count};
    }
    // Sums over every replica's batch, divided by the whole count.
    int64_t total = count * replicas;
    auto meanOverReplicas = [&](Value value) {
      Value sum = b.reduceSum(value, axes, /*keepdims=*/true);
      return b.scale(b.allReduceSum(sum, "dp", replicas),
                     1.0 / static_cast<double>(total));
    };
    Value mean = meanOverReplicas(x);
    Value centred = b.sub(x, mean);
    Value variance = meanOverReplicas(b.mul(centred, centred));
    return {mean, variance, centred, total};
  }

  /// Moves the running statistic `running` towards the batch's `batch` by
  /// the op's momentum, in place. The variance moves towards the unbiased
  /// batch variance, as PyTorch's does. A running statistic that is not a
  /// weight (a constant) has no memory to keep it in and is left alone.
  LogicalResult updateRunning(GradientBuilder &b, BatchNormOp norm,
                              Value running, Value batch, int64_t count,
                              bool unbiased) {
    auto weight = running.getDefiningOp<WeightOp>();
    if (!weight)
      return success();
    auto type = cast<RankedTensorType>(running.getType());
    if (!type.getElementType().isF32())
      return norm.emitOpError("running statistic '")
             << weight.getName() << "' is a tensor of " << type.getElementType()
             << "; a training step updates float32 running statistics";
    setWritable(weight);
    Value perChannel =
        b.cast(b.reshape(batch, type.getShape()), type.getElementType());
    if (unbiased && count > 1)
      perChannel =
          b.scale(perChannel, static_cast<double>(count) / (count - 1));
    Value distance = b.sub(running, perChannel);

    OpBuilder &builder = b.getBuilder();
    auto state = [&](StringRef what, RankedTensorType stateType) {
      return StateOp::create(builder, b.getLoc(), stateType,
                             builder.getStringAttr("running_statistic." + what +
                                                   ":" + weight.getName()));
    };
    Type f32 = builder.getF32Type();
    // ONNX's momentum weighs the old statistic, PyTorch's the new one.
    double rate = 1.0 - norm.getMomentumAttr().getValueAsDouble();
    NamedAttrList attrs;
    attrs.append("learning_rate", builder.getF64FloatAttr(rate));
    attrs.append("momentum", builder.getF64FloatAttr(0.0));
    attrs.append("dampening", builder.getF64FloatAttr(0.0));
    attrs.append("weight_decay", builder.getF64FloatAttr(0.0));
    attrs.append("nesterov", builder.getBoolAttr(false));
    attrs.append("warmup_steps", builder.getI64IntegerAttr(0));
    attrs.append("decay_steps", builder.getI64IntegerAttr(0));
    attrs.append("min_lr_ratio", builder.getF64FloatAttr(0.0));
    Value step = state("step", RankedTensorType::get({}, f32));
    Value unscaled = b.scalar(1.0, f32);
    SgdUpdateOp::create(builder, b.getLoc(), distance, unscaled, running,
                        /*momentumBuffer=*/Value(), step, attrs);
    return success();
  }
};

} // namespace
