//===- PlanShardingTest.cpp - per-segment tensor-parallel layout -*- C++
//-*-===//
//
// The reshard rules, and the layouts the per-segment search finds: on a
// transformer layer it must find Megatron-LM's layout by itself (Q, K, V
// and FC1 column-parallel, attention split by heads, the output projection
// and FC2 row-parallel, one all-reduce after each of those two and none
// inside the MLP), and the dynamic program must agree with brute force.
//
//===----------------------------------------------------------------------===//

#include "PlanTestModels.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Plan/Segmentation.h"
#include "cleave/Plan/ShardingSearch.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "gtest/gtest.h"

#include <limits>

using namespace mlir;
using namespace cleave;

namespace {

ValueSharding R() { return ValueSharding::replicated(); }
ValueSharding P() { return ValueSharding::partial(shard::ReductionKind::Sum); }
ValueSharding S(int64_t dim) { return ValueSharding::split(dim); }

TEST(PlanReshard, EachTransition) {
  struct Case {
    ValueSharding from, to;
    bool reduceScatter;
    std::optional<CollectiveKind> collective;
    ValueSharding result;
  };
  const Case cases[] = {
      {R(), R(), false, std::nullopt, R()},
      {R(), S(1), false, std::nullopt, R()},
      {R(), P(), false, std::nullopt, R()},
      {P(), R(), false, CollectiveKind::AllReduce, R()},
      {S(2), R(), false, CollectiveKind::AllGather, R()},
      {P(), S(0), true, CollectiveKind::ReduceScatter, S(0)},
      {P(), S(0), false, CollectiveKind::AllReduce, R()},
      {S(1), S(2), false, CollectiveKind::AllGather, R()},
      {S(1), S(1), false, std::nullopt, S(1)},
      {S(1), P(), false, CollectiveKind::AllGather, R()},
      {P(), P(), false, std::nullopt, P()},
  };
  for (const Case &c : cases) {
    ReshardStep step = getReshardStep(c.from, c.to, c.reduceScatter);
    EXPECT_EQ(step.collective, c.collective);
    EXPECT_EQ(step.result, c.result);
  }
}

/// A module, its segments and the search models of each class.
struct PlannedModel {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  SegmentedModel model;
  std::vector<SegmentShardingModel> classes;
};

std::unique_ptr<PlannedModel> prepare(const std::string &source,
                                      const TargetDescription &target) {
  auto planned = std::make_unique<PlannedModel>();
  planned->context = test::makePlanContext();
  planned->module = test::parsePlanModule(*planned->context, source);
  if (!planned->module)
    return nullptr;
  auto function = *planned->module->getOps<func::FuncOp>().begin();
  FailureOr<SegmentedModel> model = segmentModel(function);
  if (failed(model))
    return nullptr;
  planned->model = std::move(*model);
  for (const SegmentClass &segmentClass : planned->model.classes) {
    FailureOr<SegmentShardingModel> classModel = buildSegmentShardingModel(
        planned->model, segmentClass.representative, target, {});
    if (failed(classModel))
      return nullptr;
    planned->classes.push_back(std::move(*classModel));
  }
  return planned;
}

ShardingContext makeContext(const TargetDescription &target, int64_t tp) {
  ShardingContext context;
  context.target = &target;
  context.tp = tp;
  context.weightBytePenalty = 1e-18;
  context.collectivePenalty = 1e-9;
  return context;
}

/// The name of the weight an op reads as operand `index`, or "".
std::string weightName(Operation *op, unsigned index) {
  if (index >= op->getNumOperands())
    return "";
  auto weight =
      dyn_cast_or_null<WeightOp>(op->getOperand(index).getDefiningOp());
  return weight ? weight.getName().str() : "";
}

/// The layout the chosen strategy gives operand `index` of the op of the
/// segment that reads weight `name` there.
std::optional<ValueSharding> weightLayout(const SegmentShardingModel &segment,
                                          const SegmentSharding &sharding,
                                          llvm::StringRef name,
                                          unsigned index = 1) {
  for (auto [step, op] : llvm::enumerate(segment.ops))
    if (weightName(op.op, index) == name)
      return op.strategies[sharding.assignment[step]].operands[index];
  return std::nullopt;
}

/// The step of the op that reads weight `name` as operand 1.
int64_t stepOf(const SegmentShardingModel &segment, llvm::StringRef name) {
  for (auto [step, op] : llvm::enumerate(segment.ops))
    if (weightName(op.op, 1) == name)
      return static_cast<int64_t>(step);
  return -1;
}

class MegatronLayoutTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(MegatronLayoutTest, TransformerLayer) {
  int64_t tp = GetParam();
  TargetDescription target = test::loadTestTarget(8);
  test::ModelShape shape;
  shape.layers = 1;
  shape.seq = 512;
  shape.hidden = 1024;
  shape.heads = 16;
  std::unique_ptr<PlannedModel> planned =
      prepare(test::writeTransformer(shape), target);
  ASSERT_TRUE(planned);
  // Attention block, MLP block, final layer norm.
  ASSERT_EQ(planned->model.segments.size(), 3u);
  const SegmentShardingModel &attention = planned->classes[0];
  const SegmentShardingModel &mlp = planned->classes[1];

  ShardingContext context = makeContext(target, tp);
  SegmentSharding attentionPlan = searchSegmentSharding(attention, context);
  SegmentSharding mlpPlan = searchSegmentSharding(mlp, context);
  EXPECT_TRUE(attentionPlan.exact);
  EXPECT_TRUE(mlpPlan.exact);

  // Column-parallel projections split the output features of the weight,
  // row-parallel ones its input features.
  for (const char *name : {"l0_q_w", "l0_k_w", "l0_v_w"})
    EXPECT_EQ(weightLayout(attention, attentionPlan, name), S(1)) << name;
  EXPECT_EQ(weightLayout(attention, attentionPlan, "l0_o_w"), S(0));
  EXPECT_EQ(weightLayout(mlp, mlpPlan, "l0_fc1_w"), S(1));
  EXPECT_EQ(weightLayout(mlp, mlpPlan, "l0_fc2_w"), S(0));
  // Norms stay replicated (they normalise over the features).
  EXPECT_EQ(weightLayout(attention, attentionPlan, "l0_ln1_g"), R());

  // Attention runs split by heads: the score matmul splits dimension 1 of
  // both operands ([B, heads, S, D] x [B, heads, D, S]).
  bool foundScores = false;
  for (auto [step, op] : llvm::enumerate(attention.ops)) {
    auto matmul = dyn_cast<MatMulOp>(op.op);
    if (!matmul || !weightName(matmul, 1).empty())
      continue;
    const ShardingStrategy &strategy =
        op.strategies[attentionPlan.assignment[step]];
    EXPECT_EQ(strategy.operands[0], S(1));
    EXPECT_EQ(strategy.operands[1], S(1));
    EXPECT_EQ(strategy.results[0], S(1));
    foundScores = true;
  }
  EXPECT_TRUE(foundScores);

  // One all-reduce per block: of the output projection's result and of
  // FC2's; nothing between FC1 and FC2.
  ASSERT_EQ(attentionPlan.cost.collectives.size(), 1u);
  const SegmentCollective &attentionReduce =
      attentionPlan.cost.collectives.front();
  EXPECT_EQ(attentionReduce.kind, CollectiveKind::AllReduce);
  EXPECT_EQ(attention.values[attentionReduce.value].definition,
            stepOf(attention, "l0_o_w"));
  ASSERT_EQ(mlpPlan.cost.collectives.size(), 1u);
  const SegmentCollective &mlpReduce = mlpPlan.cost.collectives.front();
  EXPECT_EQ(mlpReduce.kind, CollectiveKind::AllReduce);
  EXPECT_EQ(mlp.values[mlpReduce.value].definition, stepOf(mlp, "l0_fc2_w"));
  EXPECT_GT(mlpReduce.step, stepOf(mlp, "l0_fc2_w"));

  // Split weights cost 1/tp of their bytes: the four projections and the
  // two MLP matrices are 12 H^2 elements; the replicated rest is small.
  int64_t h = shape.hidden;
  EXPECT_LT(attentionPlan.cost.weightBytes + mlpPlan.cost.weightBytes,
            4 * 12 * h * h / tp + 4 * 16 * h + 4 * shape.seq * shape.seq);
  EXPECT_GE(attentionPlan.cost.weightBytes + mlpPlan.cost.weightBytes,
            4 * 12 * h * h / tp);
}

INSTANTIATE_TEST_SUITE_P(TensorParallel, MegatronLayoutTest,
                         ::testing::Values(2, 4, 8));

TEST(PlanSharding, SequenceParallelSplitsTokens) {
  // Allowed to split tokens, the MLP block runs split by sequence with
  // whole weights and gathers the residual stream once at the end: less
  // time than Megatron's all-reduce layout, tp times the weight memory.
  TargetDescription target = test::loadTestTarget(8);
  test::ModelShape shape;
  shape.layers = 1;
  shape.seq = 512;
  shape.hidden = 1024;
  std::unique_ptr<PlannedModel> planned =
      prepare(test::writeMLPStack(shape), target);
  ASSERT_TRUE(planned);
  const SegmentShardingModel &mlp = planned->classes[0];
  ShardingContext context = makeContext(target, 8);
  SegmentSharding tensorParallel = searchSegmentSharding(mlp, context);
  context.sequenceParallel = true;
  SegmentSharding sequenceParallel = searchSegmentSharding(mlp, context);
  EXPECT_LT(sequenceParallel.cost.time(), tensorParallel.cost.time());
  EXPECT_GT(sequenceParallel.cost.weightBytes,
            4 * tensorParallel.cost.weightBytes);

  ASSERT_EQ(tensorParallel.cost.collectives.size(), 1u);
  EXPECT_EQ(tensorParallel.cost.collectives[0].kind, CollectiveKind::AllReduce);
  ASSERT_EQ(sequenceParallel.cost.collectives.size(), 1u);
  const SegmentCollective &gather = sequenceParallel.cost.collectives[0];
  EXPECT_EQ(gather.kind, CollectiveKind::AllGather);
  EXPECT_EQ(gather.step, mlp.numOps());
  // Every op splits dimension 1 (the sequence) of its activations.
  for (auto [step, op] : llvm::enumerate(mlp.ops)) {
    const ShardingStrategy &strategy =
        op.strategies[sequenceParallel.assignment[step]];
    EXPECT_TRUE(strategy.splitsTokenDim);
    EXPECT_EQ(strategy.results[0], S(1));
  }
}

TEST(PlanSharding, SequenceParallelReduceScatters) {
  // With the weights too large to replicate (the lean layout), sequence
  // parallelism reduce-scatters FC2's partial sums instead of all-reducing.
  TargetDescription target = test::loadTestTarget(8);
  test::ModelShape shape;
  shape.layers = 1;
  shape.seq = 512;
  shape.hidden = 1024;
  std::unique_ptr<PlannedModel> planned =
      prepare(test::writeMLPStack(shape), target);
  ASSERT_TRUE(planned);
  ShardingContext context = makeContext(target, 8);
  context.sequenceParallel = true;
  context.weightBytePenalty = 1e-3;
  SegmentSharding lean = searchSegmentSharding(planned->classes[0], context);
  bool reduceScatter =
      llvm::any_of(lean.cost.collectives, [](const SegmentCollective &c) {
        return c.kind == CollectiveKind::ReduceScatter;
      });
  EXPECT_TRUE(reduceScatter);
  EXPECT_FALSE(llvm::any_of(lean.cost.collectives, [](const auto &c) {
    return c.kind == CollectiveKind::AllReduce;
  }));
}

TEST(PlanSharding, SmallOpsStayReplicated) {
  // Where a collective costs more than the work it saves, nothing splits.
  TargetDescription target = test::loadTestTarget(8);
  test::ModelShape shape;
  shape.layers = 1;
  std::unique_ptr<PlannedModel> planned =
      prepare(test::writeMLPStack(shape), target);
  ASSERT_TRUE(planned);
  SegmentSharding sharding =
      searchSegmentSharding(planned->classes[0], makeContext(target, 8));
  EXPECT_TRUE(sharding.cost.collectives.empty());
  EXPECT_TRUE(llvm::all_of(sharding.assignment,
                           [](int64_t strategy) { return strategy == 0; }));
}

/// Every assignment of `segment` in `context`, by brute force.
double bruteForceObjective(const SegmentShardingModel &segment,
                           const ShardingContext &context) {
  SegmentAssignment assignment(segment.numOps(), 0);
  double best = std::numeric_limits<double>::infinity();
  std::function<void(int64_t)> visit = [&](int64_t op) {
    if (op == segment.numOps()) {
      FailureOr<SegmentCost> cost =
          evaluateSegmentSharding(segment, assignment, context);
      if (succeeded(cost))
        best = std::min(best, cost->objective);
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
  return best;
}

struct BruteForceCase {
  const char *model;
  int64_t tp;
  int64_t seq;
  int64_t hidden;
  bool sequenceParallel;
};

class ShardingSearchExactTest
    : public ::testing::TestWithParam<BruteForceCase> {};

TEST_P(ShardingSearchExactTest, MatchesBruteForce) {
  BruteForceCase param = GetParam();
  TargetDescription target = test::loadTestTarget(8);
  test::ModelShape shape;
  shape.layers = 1;
  shape.seq = param.seq;
  shape.hidden = param.hidden;
  std::string source = llvm::StringRef(param.model) == "mlp"
                           ? test::writeMLPStack(shape)
                           : test::writeAttentionStack(shape);
  std::unique_ptr<PlannedModel> planned = prepare(source, target);
  ASSERT_TRUE(planned);
  ShardingContext context = makeContext(target, param.tp);
  context.sequenceParallel = param.sequenceParallel;
  for (const SegmentShardingModel &segment : planned->classes) {
    SegmentSharding found = searchSegmentSharding(segment, context);
    double optimum = bruteForceObjective(segment, context);
    EXPECT_TRUE(found.exact);
    EXPECT_NEAR(found.cost.objective, optimum, 1e-12 + 1e-9 * optimum);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Segments, ShardingSearchExactTest,
    ::testing::Values(BruteForceCase{"mlp", 2, 64, 256, false},
                      BruteForceCase{"mlp", 4, 512, 1024, false},
                      BruteForceCase{"mlp", 8, 512, 1024, true},
                      BruteForceCase{"attention", 2, 128, 512, false},
                      BruteForceCase{"attention", 4, 512, 1024, false},
                      BruteForceCase{"attention", 4, 256, 512, true}));

} // namespace
