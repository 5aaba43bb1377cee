//===- CollectiveTest.cpp - α-β collective times ----------------*- C++ -*-===//

#include "cleave/Analysis/Cost/CostModel.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace cleave;

namespace {

/// α = 5 µs, β = 100 GB/s at 50% = 50 GB/s.
LinkDescription testLink() {
  LinkDescription link;
  link.bandwidth = 100e9;
  link.efficiency = 0.5;
  link.latency = 5e-6;
  return link;
}

TEST(CollectiveTest, RingAllReduce) {
  // p = 8, n = 1 GB: 2·7/8 · 1e9/5e10 + 2·7·5e-6.
  double time = collectiveAlgorithmTime(CollectiveKind::AllReduce,
                                        CollectiveAlgorithm::Ring, 1000000000,
                                        8, testLink());
  EXPECT_DOUBLE_EQ(time, 0.035 + 7e-5);
  // Tree: 2·log2(8)·(5e-6 + 0.02).
  EXPECT_DOUBLE_EQ(collectiveAlgorithmTime(CollectiveKind::AllReduce,
                                           CollectiveAlgorithm::Tree,
                                           1000000000, 8, testLink()),
                   6 * (5e-6 + 0.02));
  // Large messages go around the ring.
  CollectiveCost best =
      bestCollective(CollectiveKind::AllReduce, 1000000000, 8, testLink());
  EXPECT_EQ(best.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_DOUBLE_EQ(best.time, 0.03507);
}

TEST(CollectiveTest, TreeWinsForSmallMessages) {
  // p = 64, n = 1 KiB. Ring: 2·63/64 · 1024/5e10 + 126·5e-6 ≈ 630 µs;
  // tree: 2·6·(5e-6 + 1024/5e10) ≈ 60 µs.
  double ring = 2.0 * 63 / 64 * 1024 / 5e10 + 126 * 5e-6;
  double tree = 12 * (5e-6 + 1024 / 5e10);
  CollectiveCost best =
      bestCollective(CollectiveKind::AllReduce, 1024, 64, testLink());
  EXPECT_EQ(best.algorithm, CollectiveAlgorithm::Tree);
  EXPECT_DOUBLE_EQ(best.time, tree);
  EXPECT_DOUBLE_EQ(collectiveAlgorithmTime(CollectiveKind::AllReduce,
                                           CollectiveAlgorithm::Ring, 1024, 64,
                                           testLink()),
                   ring);
  // A non-power-of-two group takes ceil(log2 p) steps: 5 → 3.
  EXPECT_DOUBLE_EQ(collectiveAlgorithmTime(CollectiveKind::AllReduce,
                                           CollectiveAlgorithm::Tree, 1024, 5,
                                           testLink()),
                   6 * (5e-6 + 1024 / 5e10));
}

TEST(CollectiveTest, GatherScatterBroadcastSendRecv) {
  // (p-1)/p · n/β + (p-1)·α with p = 4, n = 4e8: 0.006 + 1.5e-5.
  EXPECT_DOUBLE_EQ(collectiveAlgorithmTime(CollectiveKind::AllGather,
                                           CollectiveAlgorithm::Ring, 400000000,
                                           4, testLink()),
                   0.006 + 1.5e-5);
  EXPECT_DOUBLE_EQ(collectiveAlgorithmTime(CollectiveKind::ReduceScatter,
                                           CollectiveAlgorithm::Ring, 400000000,
                                           4, testLink()),
                   0.006 + 1.5e-5);
  EXPECT_TRUE(std::isinf(collectiveAlgorithmTime(CollectiveKind::AllGather,
                                                 CollectiveAlgorithm::Tree,
                                                 400000000, 4, testLink())));
  // Broadcast: the pipelined chain n/β + (p-1)α beats the tree's
  // log2(p)·(α + n/β) for large n ...
  CollectiveCost large =
      bestCollective(CollectiveKind::Broadcast, 400000000, 4, testLink());
  EXPECT_EQ(large.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_DOUBLE_EQ(large.time, 0.008 + 1.5e-5);
  // ... and the tree wins for small n: p = 16, n = 1 byte: about 4α
  // against 15α.
  CollectiveCost small =
      bestCollective(CollectiveKind::Broadcast, 1, 16, testLink());
  EXPECT_EQ(small.algorithm, CollectiveAlgorithm::Tree);
  EXPECT_DOUBLE_EQ(small.time, 4 * (5e-6 + 1 / 5e10));
  // Send/recv: α + n/β whatever the group.
  CollectiveCost send =
      bestCollective(CollectiveKind::SendRecv, 1000000, 2, testLink());
  EXPECT_EQ(send.algorithm, CollectiveAlgorithm::Direct);
  EXPECT_DOUBLE_EQ(send.time, 5e-6 + 2e-5);
}

TEST(CollectiveTest, AllToAll) {
  // Every device sends (p-1)/p of its n bytes in p-1 pairwise steps: with
  // p = 4, n = 4e8, 3/4 · 4e8/5e10 + 3·5e-6.
  EXPECT_DOUBLE_EQ(collectiveAlgorithmTime(CollectiveKind::AllToAll,
                                           CollectiveAlgorithm::Ring, 400000000,
                                           4, testLink()),
                   0.006 + 1.5e-5);
  // p = 8: 7/8 of the bytes, 7 steps.
  EXPECT_DOUBLE_EQ(collectiveAlgorithmTime(CollectiveKind::AllToAll,
                                           CollectiveAlgorithm::Ring, 800000000,
                                           8, testLink()),
                   0.014 + 3.5e-5);
  // No tree, and never a single message.
  EXPECT_TRUE(std::isinf(collectiveAlgorithmTime(CollectiveKind::AllToAll,
                                                 CollectiveAlgorithm::Tree,
                                                 1024, 64, testLink())));
  EXPECT_TRUE(std::isinf(collectiveAlgorithmTime(CollectiveKind::AllToAll,
                                                 CollectiveAlgorithm::Direct,
                                                 1024, 2, testLink())));
  CollectiveCost best =
      bestCollective(CollectiveKind::AllToAll, 1024, 64, testLink());
  EXPECT_EQ(best.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_DOUBLE_EQ(best.time, 63.0 / 64 * 1024 / 5e10 + 63 * 5e-6);
  // Half the bytes of an all-reduce of the same message, and half its
  // latency steps.
  EXPECT_DOUBLE_EQ(
      2 * bestCollective(CollectiveKind::AllToAll, 1 << 30, 8, testLink()).time,
      collectiveAlgorithmTime(CollectiveKind::AllReduce,
                              CollectiveAlgorithm::Ring, 1 << 30, 8,
                              testLink()));
  EXPECT_EQ(bestCollective(CollectiveKind::AllToAll, 1000, 1, testLink()).time,
            0.0);
}

TEST(CollectiveTest, TrivialGroupsAreFree) {
  EXPECT_EQ(bestCollective(CollectiveKind::AllReduce, 1000, 1, testLink()).time,
            0.0);
  EXPECT_EQ(bestCollective(CollectiveKind::AllGather, 0, 8, testLink()).time,
            0.0);
}

TEST(CollectiveTest, LinkLevelFromNodeSpan) {
  TargetDescription target;
  target.devicesPerNode = 8;
  target.numDevices = 16;
  target.intraNode.bandwidth = 400e9;
  target.intraNode.latency = 1e-6;
  target.interNode.bandwidth = 50e9;
  target.interNode.latency = 1e-5;
  // 8-way all-reduce of 800 MB inside a node: 2·7/8 · 8e8/4e11 + 14·1e-6.
  EXPECT_DOUBLE_EQ(
      collectiveTime(CollectiveKind::AllReduce, 800000000, 8, false, target),
      0.0035 + 1.4e-5);
  // Across nodes: 2·7/8 · 8e8/5e10 + 14·1e-5.
  EXPECT_DOUBLE_EQ(
      collectiveTime(CollectiveKind::AllReduce, 800000000, 8, true, target),
      0.028 + 1.4e-4);
  // Reduce-scatter and all-to-all of 800 MB over 8 devices move 7/8 of the
  // bytes in 7 steps: inside a node 7/8 · 8e8/4e11 + 7·1e-6, across nodes
  // 7/8 · 8e8/5e10 + 7·1e-5.
  for (CollectiveKind kind :
       {CollectiveKind::ReduceScatter, CollectiveKind::AllToAll}) {
    EXPECT_DOUBLE_EQ(collectiveTime(kind, 800000000, 8, false, target),
                     0.00175 + 7e-6)
        << stringifyCollectiveKind(kind).str();
    EXPECT_DOUBLE_EQ(collectiveTime(kind, 800000000, 8, true, target),
                     0.014 + 7e-5)
        << stringifyCollectiveKind(kind).str();
  }
}

TEST(CollectiveTest, Names) {
  EXPECT_EQ(stringifyCollectiveKind(CollectiveKind::ReduceScatter),
            "reduce_scatter");
  EXPECT_EQ(stringifyCollectiveKind(CollectiveKind::AllToAll), "all_to_all");
  EXPECT_EQ(stringifyCollectiveAlgorithm(CollectiveAlgorithm::Tree), "tree");
}

} // namespace
