//===- PlanExhaustiveTest.cpp - the planner against brute force -*- C++ -*-===//
//
// On small models and at most 8 devices, solves the whole plan by
// exhaustive search over the same cost model — every mesh, every microbatch
// count, every assignment of a strategy to every op of every segment (each
// segment on its own, not one per class), every composition of the
// segments into stages — and checks that the planner's plan is within 1%
// of that optimum (and never better, which would mean the two disagree on
// what a plan costs).
//
//===----------------------------------------------------------------------===//

#include "PlanTestModels.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Plan/Planner.h"
#include "cleave/Plan/Segmentation.h"
#include "cleave/Plan/ShardingSearch.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"

#include "gtest/gtest.h"

#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace cleave;

namespace {

/// One assignment of a segment, reduced to what the plan cost reads.
struct SegmentOption {
  double time = 0;
  int64_t weights = 0;
  int64_t peak = 0;
  int64_t message = 0;
};

bool dominates(const SegmentOption &a, const SegmentOption &b) {
  return a.time <= b.time && a.weights <= b.weights && a.peak <= b.peak &&
         a.message <= b.message;
}

/// Every assignment of `segment`, without the dominated ones (an option
/// that is no better in time and in every memory term cannot be part of a
/// better plan than the one that dominates it).
std::vector<SegmentOption> enumerateOptions(const SegmentShardingModel &segment,
                                            const ShardingContext &context) {
  std::vector<SegmentOption> all;
  SegmentAssignment assignment(segment.numOps(), 0);
  std::function<void(int64_t)> visit = [&](int64_t op) {
    if (op == segment.numOps()) {
      FailureOr<SegmentCost> cost =
          evaluateSegmentSharding(segment, assignment, context);
      if (succeeded(cost))
        all.push_back({cost->time(), cost->weightBytes,
                       cost->peakActivationBytes, cost->largestMessageBytes});
      return;
    }
    for (int64_t strategy = 0,
                 e = static_cast<int64_t>(segment.ops[op].strategies.size());
         strategy < e; ++strategy) {
      if (!isStrategyValid(segment, op, strategy, context))
        continue;
      assignment[op] = strategy;
      visit(op + 1);
    }
  };
  visit(0);
  std::vector<SegmentOption> front;
  for (const SegmentOption &option : all) {
    bool dominated = llvm::any_of(front, [&](const SegmentOption &kept) {
      return dominates(kept, option);
    });
    if (dominated)
      continue;
    llvm::erase_if(front, [&](const SegmentOption &kept) {
      return dominates(option, kept);
    });
    front.push_back(option);
  }
  return front;
}

struct Optimum {
  bool found = false;
  double throughput = 0;
  double latency = std::numeric_limits<double>::infinity();
  DeviceMesh mesh;
  int64_t microbatches = 0;
};

/// The best plan by brute force. Mirrors the cost model documented in
/// docs/plan-format.md: stage time = segment times + the send of the
/// stage's outputs; step = sum + (m - 1) * max; memory = weights + the
/// largest working set + min(m, pp) buffered inputs + the largest message
/// + the send buffer.
Optimum solveExhaustively(func::FuncOp function,
                          const TargetDescription &target,
                          const PlanOptions &options) {
  Optimum best;
  FailureOr<SegmentedModel> segmented = segmentModel(function);
  if (failed(segmented))
    return best;
  const SegmentedModel &model = *segmented;
  auto numSegments = static_cast<int64_t>(model.segments.size());
  int64_t devices = target.numDevices;
  int64_t perNode = target.devicesPerNode;
  int64_t globalBatch = options.globalBatch.value_or(model.batchSize);
  auto usable =
      static_cast<int64_t>(static_cast<double>(target.device.memoryBytes) *
                           options.usableMemoryFraction);

  std::vector<SegmentShardingModel> segments;
  for (int64_t i = 0; i < numSegments; ++i)
    segments.push_back(
        *buildSegmentShardingModel(model, i, target, options.costOptions));

  auto scaled = [&](Value value, double scale) {
    double bytes = static_cast<double>(getTensorBytes(value.getType()));
    if (model.getBatchDim(value) >= 0)
      bytes *= scale;
    return static_cast<int64_t>(std::llround(bytes));
  };

  for (int64_t tp = 1; tp <= std::min(devices, perNode); ++tp) {
    if (devices % tp || perNode % tp)
      continue;
    for (int64_t pp = 1; pp <= std::min(devices / tp, numSegments); ++pp) {
      if ((devices / tp) % pp)
        continue;
      int64_t dp = devices / (tp * pp);
      if (globalBatch % dp)
        continue;
      int64_t replicaBatch = globalBatch / dp;
      for (int64_t m = 1; m <= std::min(replicaBatch, options.maxMicrobatches);
           ++m) {
        if (replicaBatch % m)
          continue;
        int64_t microbatch = replicaBatch / m;
        double scale = static_cast<double>(microbatch) /
                       static_cast<double>(model.batchSize);
        ShardingContext context;
        context.target = &target;
        context.tp = tp;
        context.batchScale = scale;
        context.sequenceParallel = options.sequenceParallel;

        // Per segment, the bytes of its outputs held whole and each
        // device's share of those held split (sequence parallelism).
        std::vector<std::vector<SegmentOption>> segmentOptions;
        std::vector<std::pair<int64_t, int64_t>> outputs;
        for (int64_t i = 0; i < numSegments; ++i) {
          segmentOptions.push_back(enumerateOptions(segments[i], context));
          std::pair<int64_t, int64_t> bytes{0, 0};
          for (Value output : model.segments[i].outputs) {
            auto type = cast<RankedTensorType>(output.getType());
            if (getBoundaryLayout(type.getShape(), model.getSequenceDim(output),
                                  context)
                    .isSplit())
              bytes.second += scaled(output, scale) / tp;
            else
              bytes.first += scaled(output, scale);
          }
          outputs.push_back(bytes);
        }
        int64_t inputBytes = 0;
        for (BlockArgument argument : function.getArguments())
          inputBytes += scaled(argument, scale);

        auto sendTime = [&](int64_t stage, std::pair<int64_t, int64_t> output) {
          if (stage + 1 == pp)
            return 0.0;
          DeviceMesh mesh{pp, tp, dp};
          bool crosses = false;
          for (int64_t r = 0; r < dp; ++r)
            for (int64_t t = 0; t < tp; ++t)
              crosses |= mesh.rank(stage, r, t) / perNode !=
                         mesh.rank(stage + 1, r, t) / perNode;
          auto [bytes, share] = output;
          // A split output's shards go shard to shard.
          double shards = share > 0 ? collectiveTime(CollectiveKind::SendRecv,
                                                     share, 2, crosses, target)
                                    : 0.0;
          if (bytes == 0 && share > 0)
            return shards;
          double direct = collectiveTime(CollectiveKind::SendRecv, bytes, 2,
                                         crosses, target);
          if (tp == 1)
            return shards + direct;
          double sliced =
              collectiveTime(CollectiveKind::SendRecv, (bytes + tp - 1) / tp, 2,
                             crosses, target) +
              collectiveTime(CollectiveKind::AllGather, bytes, tp, false,
                             target);
          return shards + std::min(direct, sliced);
        };

        /// The fastest way to run segments [first, last] as stage `stage`
        /// that fits, over every combination of their options.
        auto bestStage = [&](int64_t stage, int64_t first, int64_t last) {
          double bestTime = std::numeric_limits<double>::infinity();
          auto perDevice = [&](int64_t segment) {
            return outputs[segment].first + outputs[segment].second;
          };
          int64_t input = first == 0 ? inputBytes : perDevice(first - 1);
          int64_t sendBuffer = stage + 1 < pp ? perDevice(last) : 0;
          double send = sendTime(stage, outputs[last]);
          std::function<void(int64_t, double, int64_t, int64_t, int64_t)>
              visit = [&](int64_t segment, double time, int64_t weights,
                          int64_t peak, int64_t message) {
                if (segment > last) {
                  int64_t memory = weights + peak + std::min(m, pp) * input +
                                   message + sendBuffer;
                  if (memory <= usable)
                    bestTime = std::min(bestTime, time + send);
                  return;
                }
                for (const SegmentOption &option : segmentOptions[segment])
                  visit(segment + 1, time + option.time,
                        weights + option.weights, std::max(peak, option.peak),
                        std::max(message, option.message));
              };
          visit(first, 0, 0, 0, 0);
          return bestTime;
        };

        // Every composition of the segments into pp stages.
        std::vector<int64_t> firsts;
        std::function<void(int64_t)> compose = [&](int64_t first) {
          auto stage = static_cast<int64_t>(firsts.size());
          if (stage == pp) {
            if (first != numSegments)
              return;
            double sum = 0, max = 0;
            for (int64_t k = 0; k < pp; ++k) {
              int64_t last = (k + 1 < pp ? firsts[k + 1] : numSegments) - 1;
              double time = bestStage(k, firsts[k], last);
              if (!std::isfinite(time))
                return;
              sum += time;
              max = std::max(max, time);
            }
            double step = sum + static_cast<double>(m - 1) * max;
            double throughput = static_cast<double>(globalBatch) / step;
            bool better = options.objective == PlanObjective::Throughput
                              ? throughput > best.throughput
                              : sum < best.latency;
            if (!best.found || better) {
              best = {true, throughput, sum, {pp, tp, dp}, m};
            }
            return;
          }
          for (int64_t next = first + 1; next <= numSegments - (pp - stage - 1);
               ++next) {
            firsts.push_back(first);
            compose(next);
            firsts.pop_back();
          }
        };
        compose(0);
      }
    }
  }
  return best;
}

struct ExhaustiveCase {
  const char *name;
  const char *model;
  test::ModelShape shape;
  int64_t devices;
  PlanObjective objective;
  /// Usable memory in bytes (the rest of the device is left out), or 0 for
  /// the default share.
  int64_t usableBytes;
  bool sequenceParallel;
};

class PlanExhaustiveTest : public ::testing::TestWithParam<ExhaustiveCase> {};

TEST_P(PlanExhaustiveTest, WithinOnePercentOfOptimum) {
  const ExhaustiveCase &param = GetParam();
  std::unique_ptr<MLIRContext> context = test::makePlanContext();
  std::string source = llvm::StringRef(param.model) == "mlp"
                           ? test::writeMLPStack(param.shape)
                           : test::writeAttentionStack(param.shape);
  OwningOpRef<ModuleOp> module = test::parsePlanModule(*context, source);
  ASSERT_TRUE(module);
  func::FuncOp function = *module->getOps<func::FuncOp>().begin();
  TargetDescription target = test::loadTestTarget(param.devices);

  PlanOptions options;
  options.objective = param.objective;
  options.sequenceParallel = param.sequenceParallel;
  if (param.usableBytes)
    options.usableMemoryFraction =
        static_cast<double>(param.usableBytes) /
        static_cast<double>(target.device.memoryBytes);

  Optimum optimum = solveExhaustively(function, target, options);
  // A model that does not fit is reported as an error; checked elsewhere.
  ScopedDiagnosticHandler quiet(context.get(),
                                [](Diagnostic &) { return success(); });
  FailureOr<Plan> plan = planModel(*module, target, options);
  ASSERT_EQ(optimum.found, succeeded(plan));
  if (!optimum.found)
    return;
  SCOPED_TRACE(::testing::Message()
               << "optimum pp=" << optimum.mesh.pp << " tp=" << optimum.mesh.tp
               << " dp=" << optimum.mesh.dp << " m=" << optimum.microbatches
               << "; plan pp=" << plan->mesh.pp << " tp=" << plan->mesh.tp
               << " dp=" << plan->mesh.dp << " m=" << plan->microbatches);
  if (param.objective == PlanObjective::Throughput) {
    EXPECT_GE(plan->throughput, 0.99 * optimum.throughput);
    EXPECT_LE(plan->throughput, optimum.throughput * (1 + 1e-9));
  } else {
    EXPECT_LE(plan->latency, 1.01 * optimum.latency);
    EXPECT_GE(plan->latency, optimum.latency * (1 - 1e-9));
  }
  for (const PlanStage &stage : plan->stages)
    EXPECT_LE(stage.memory.total(), plan->usableMemoryBytes);
}

test::ModelShape shapeOf(int64_t layers, int64_t batch, int64_t seq,
                         int64_t hidden) {
  test::ModelShape shape;
  shape.layers = layers;
  shape.batch = batch;
  shape.seq = seq;
  shape.hidden = hidden;
  return shape;
}

constexpr int64_t kMB = 1000 * 1000;

INSTANTIATE_TEST_SUITE_P(
    SmallModels, PlanExhaustiveTest,
    ::testing::Values(
        ExhaustiveCase{"mlp_1dev", "mlp", shapeOf(2, 1, 256, 512), 1,
                       PlanObjective::Throughput, 0, false},
        ExhaustiveCase{"mlp_2dev", "mlp", shapeOf(2, 1, 512, 1024), 2,
                       PlanObjective::Throughput, 0, false},
        ExhaustiveCase{"mlp_8dev", "mlp", shapeOf(3, 1, 512, 1024), 8,
                       PlanObjective::Throughput, 0, false},
        ExhaustiveCase{"mlp_batch", "mlp", shapeOf(2, 8, 128, 1024), 8,
                       PlanObjective::Throughput, 0, false},
        ExhaustiveCase{"mlp_latency", "mlp", shapeOf(2, 4, 256, 1024), 4,
                       PlanObjective::Latency, 0, false},
        ExhaustiveCase{"mlp_tight", "mlp", shapeOf(4, 2, 256, 1024), 4,
                       PlanObjective::Throughput, 45 * kMB, false},
        ExhaustiveCase{"mlp_lean", "mlp", shapeOf(3, 1, 64, 512), 8,
                       PlanObjective::Throughput, 12 * kMB, false},
        ExhaustiveCase{"mlp_lean_batch", "mlp", shapeOf(4, 4, 64, 512), 8,
                       PlanObjective::Throughput, 20 * kMB, false},
        ExhaustiveCase{"attention_lean", "attention", shapeOf(3, 1, 64, 512), 4,
                       PlanObjective::Throughput, 5 * kMB, false},
        ExhaustiveCase{"mlp_pipeline", "mlp", shapeOf(4, 8, 256, 1024), 8,
                       PlanObjective::Throughput, 40 * kMB, false},
        ExhaustiveCase{"mlp_pipeline_latency", "mlp", shapeOf(4, 8, 256, 1024),
                       8, PlanObjective::Latency, 40 * kMB, false},
        ExhaustiveCase{"attention_pipeline", "attention",
                       shapeOf(4, 4, 128, 512), 4, PlanObjective::Throughput,
                       6 * kMB, false},
        ExhaustiveCase{"mlp_seqpar", "mlp", shapeOf(2, 1, 512, 1024), 4,
                       PlanObjective::Throughput, 0, true},
        ExhaustiveCase{"attention_4dev", "attention", shapeOf(2, 1, 512, 1024),
                       4, PlanObjective::Throughput, 0, false},
        ExhaustiveCase{"attention_batch", "attention", shapeOf(2, 4, 256, 512),
                       8, PlanObjective::Throughput, 0, false},
        ExhaustiveCase{"does_not_fit", "mlp", shapeOf(2, 1, 256, 1024), 2,
                       PlanObjective::Throughput, 4 * kMB, false}),
    [](const ::testing::TestParamInfo<ExhaustiveCase> &info) {
      return std::string(info.param.name);
    });

} // namespace
