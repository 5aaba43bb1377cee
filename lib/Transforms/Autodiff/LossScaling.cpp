//===- LossScaling.cpp - dynamic loss scaling of a step ---------*- C++ -*-===//

#include "cleave/Transforms/Autodiff/LossScaling.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include <numeric>

using namespace mlir;
using namespace cleave;

namespace {

/// The float32 scalar state `name`.
Value scalarState(GradientBuilder &b, StringRef name) {
  OpBuilder &builder = b.getBuilder();
  return StateOp::create(builder, b.getLoc(),
                         RankedTensorType::get({}, builder.getF32Type()),
                         builder.getStringAttr(name));
}

} // namespace

Value cleave::buildLossScale(GradientBuilder &b, double initial) {
  Type f32 = b.getBuilder().getF32Type();
  Value state = scalarState(b, kLossScaleState);
  Value unset = b.create<EqualOp>(state, b.scalar(0.0, f32));
  return b.select(unset, b.scalar(initial, f32), state);
}

Value cleave::buildOverflowFlag(GradientBuilder &b, ArrayRef<Value> gradients) {
  Type f32 = b.getBuilder().getF32Type();
  Value flag;
  for (Value gradient : gradients) {
    SmallVector<int64_t> all(getShape(gradient).size());
    std::iota(all.begin(), all.end(), 0);
    Value zeroed = b.mul(gradient, b.scalar(0.0, f32));
    Value sum = b.reduceSum(zeroed, all, /*keepdims=*/false);
    flag = flag ? b.add(flag, sum) : sum;
  }
  return flag ? flag : b.scalar(0.0, f32);
}

void cleave::buildLossScaleUpdate(GradientBuilder &b, Value scale,
                                  Value overflow, int64_t growthInterval) {
  OpBuilder &builder = b.getBuilder();
  Type f32 = builder.getF32Type();
  Value zero = b.scalar(0.0, f32), one = b.scalar(1.0, f32);
  Value goodSteps = scalarState(b, kLossScaleGoodStepsState);
  Value skippedSteps = scalarState(b, kLossScaleSkippedStepsState);
  Value skipped = b.create<IsNaNOp>(overflow);
  Value good = b.add(goodSteps, one);
  Value grows = b.create<GreaterEqualOp>(
      good, b.scalar(static_cast<double>(growthInterval), f32));
  Value grown = b.select(grows, b.scale(scale, 2.0), scale);
  Value halved = b.scale(scale, 0.5);
  Value nextScale = b.select(skipped, halved, grown);
  Value nextGood = b.select(skipped, zero, b.select(grows, zero, good));
  Value nextSkipped = b.select(skipped, b.add(skippedSteps, one), skippedSteps);
  AssignOp::create(builder, b.getLoc(), nextScale,
                   scalarState(b, kLossScaleState));
  AssignOp::create(builder, b.getLoc(), nextGood, goodSteps);
  AssignOp::create(builder, b.getLoc(), nextSkipped, skippedSteps);
}
