//===- TrainingCost.cpp - the cost of a training step -----------*- C++ -*-===//

#include "cleave/Plan/TrainingCost.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cassert>
#include <tuple>

using namespace cleave;

llvm::StringRef cleave::stringifyOptimizer(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::SGD:
    return "sgd";
  case Optimizer::Momentum:
    return "momentum";
  case Optimizer::Adam:
    return "adam";
  case Optimizer::AdamW:
    return "adamw";
  }
  return "";
}

llvm::StringRef cleave::stringifyZeroStage(ZeroStage stage) {
  switch (stage) {
  case ZeroStage::None:
    return "0";
  case ZeroStage::OptimizerState:
    return "1";
  case ZeroStage::Gradients:
    return "2";
  }
  return "";
}

llvm::StringRef cleave::stringifyRecomputePolicy(RecomputePolicy policy) {
  switch (policy) {
  case RecomputePolicy::None:
    return "none";
  case RecomputePolicy::Segments:
    return "segments";
  case RecomputePolicy::Layers:
    return "layers";
  }
  llvm_unreachable("unknown recompute policy");
}

llvm::StringRef cleave::stringifyTrainingPrecision(Precision precision) {
  switch (precision) {
  case Precision::F32:
    return "fp32";
  case Precision::BF16:
    return "bf16";
  case Precision::F16:
    return "fp16";
  default:
    return stringifyPrecision(precision);
  }
}

//===----------------------------------------------------------------------===//
// Time
//===----------------------------------------------------------------------===//

BackwardFactors cleave::getBackwardFactors(bool usesMatrixUnits) {
  if (usesMatrixUnits)
    return {2.0, 2.0};
  return {1.0, 2.0};
}

CollectiveKind cleave::getConjugateCollective(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllGather:
    return CollectiveKind::ReduceScatter;
  case CollectiveKind::ReduceScatter:
    return CollectiveKind::AllGather;
  default:
    return kind;
  }
}

/// Seconds `kind` takes over `group` for each of the buckets `bytes` fill,
/// and how many there are.
static std::pair<int64_t, double>
bucketedCollective(CollectiveKind kind, int64_t bytes,
                   const DataParallelGroup &group,
                   const TargetDescription &target) {
  if (bytes <= 0 || group.size <= 1)
    return {0, 0.0};
  int64_t buckets = (bytes + kGradientBucketBytes - 1) / kGradientBucketBytes;
  int64_t bucketBytes = (bytes + buckets - 1) / buckets;
  return {buckets, hierarchicalCollectiveTime(kind, bucketBytes, group.size,
                                              group.perNode, target)};
}

GradientReduction cleave::reduceGradients(int64_t gradientBytes,
                                          double backwardTime, ZeroStage zero,
                                          const DataParallelGroup &group,
                                          const TargetDescription &target) {
  GradientReduction reduction;
  CollectiveKind kind = zero == ZeroStage::None ? CollectiveKind::AllReduce
                                                : CollectiveKind::ReduceScatter;
  std::tie(reduction.buckets, reduction.bucketTime) =
      bucketedCollective(kind, gradientBytes, group, target);
  if (reduction.buckets == 0)
    return reduction;
  auto buckets = static_cast<double>(reduction.buckets);
  reduction.totalTime = buckets * reduction.bucketTime;
  reduction.exposedTime =
      std::max(reduction.bucketTime,
               reduction.totalTime - backwardTime * (buckets - 1) / buckets);
  return reduction;
}

//===----------------------------------------------------------------------===//
// Parameters and memory
//===----------------------------------------------------------------------===//

int64_t TrainingStepCost::getMomentsPerElement(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::SGD:
    return 0;
  case Optimizer::Momentum:
    return 1;
  case Optimizer::Adam:
  case Optimizer::AdamW:
    return 2;
  }
  return 0;
}

double TrainingStepCost::getOptimizerFlopsPerElement(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::SGD:
    return 2;
  case Optimizer::Momentum:
    return 4;
  case Optimizer::Adam:
    return 10;
  case Optimizer::AdamW:
    return 12;
  }
  return 0;
}

int64_t TrainingStepCost::shard(int64_t bytes, ZeroStage from) const {
  if (zero < from || group.size <= 1)
    return bytes;
  return (bytes + group.size - 1) / group.size;
}

TrainingStateBytes
TrainingStepCost::getStateBytes(const TrainableParameters &parameters) const {
  TrainingStateBytes state;
  state.gradients = shard(parameters.bytes, ZeroStage::Gradients);
  int64_t moments = 4 * getMomentsPerElement(optimizer) * parameters.elements;
  state.optimizerState =
      shard(moments + parameters.masterBytes, ZeroStage::OptimizerState);
  return state;
}

UpdateCost
TrainingStepCost::getUpdateCost(const TrainableParameters &parameters,
                                double backwardTime) const {
  UpdateCost cost;
  cost.exposedReduction =
      reduceGradients(parameters.bytes, backwardTime, zero, group, *target)
          .exposedTime;
  // The optimizer reads the gradients, reads and writes the master weights
  // (the weights themselves when they are fp32) and the moments, and writes
  // the half-precision weights from the masters; under ZeRO each replica
  // updates its 1/dp share.
  int64_t masters =
      parameters.masterBytes > 0 ? parameters.masterBytes : parameters.bytes;
  int64_t moments = 4 * getMomentsPerElement(optimizer) * parameters.elements;
  int64_t bytes = parameters.bytes + 2 * masters + 2 * moments +
                  (parameters.masterBytes > 0 ? parameters.bytes : 0);
  double flops = getOptimizerFlopsPerElement(optimizer) *
                 static_cast<double>(parameters.elements);
  if (zero != ZeroStage::None && group.size > 1) {
    bytes = shard(bytes, ZeroStage::OptimizerState);
    flops /= static_cast<double>(group.size);
  }
  cost.optimizer = getRoofline(flops, static_cast<double>(bytes),
                               Precision::F32, target->device)
                       .time();
  if (zero != ZeroStage::None) {
    auto [buckets, bucketTime] = bucketedCollective(
        CollectiveKind::AllGather, parameters.bytes, group, *target);
    cost.weightGather = static_cast<double>(buckets) * bucketTime;
  }
  return cost;
}

int64_t TrainingStepCost::getCommunicationBytes(
    const TrainableParameters &parameters) const {
  if (group.size <= 1)
    return 0;
  return std::min<int64_t>(parameters.bytes, 2 * kGradientBucketBytes);
}
