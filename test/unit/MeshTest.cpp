//===- MeshTest.cpp - the mesh's axes and numbering of ranks ----*- C++ -*-===//

#include "cleave/rt/Mesh.h"
#include "cleave/Plan/Plan.h"

#include "gtest/gtest.h"

#include <set>
#include <vector>

using namespace cleave;
using cleave::rt::MeshAxis;
using cleave::rt::MeshCoords;
using cleave::rt::MeshShape;

namespace {

/// pp = 2 stages, dp = 3 replicas, tp = 4 shards: every extent differs, so
/// an axis mistaken for another shows.
MeshShape testMesh() { return MeshShape{2, 3, 4}; }

TEST(MeshTest, RanksRunTensorFastestThenStageThenReplica) {
  MeshShape mesh = testMesh();
  EXPECT_EQ(mesh.size(), 24);
  // rank = (dp * pp + stage) * tp + tp index.
  EXPECT_EQ(mesh.rankOf({0, 0, 0}), 0);
  EXPECT_EQ(mesh.rankOf({0, 0, 3}), 3);
  EXPECT_EQ(mesh.rankOf({1, 0, 0}), 4);
  EXPECT_EQ(mesh.rankOf({0, 1, 0}), 8);
  EXPECT_EQ(mesh.rankOf({1, 2, 3}), 23);
  EXPECT_EQ(mesh.coordsOf(13), (MeshCoords{1, 1, 1}));
  // A round trip over every rank, each once.
  std::set<int64_t> seen;
  for (int64_t rank = 0; rank < mesh.size(); ++rank) {
    MeshCoords coords = mesh.coordsOf(rank);
    EXPECT_TRUE(mesh.contains(coords));
    EXPECT_EQ(mesh.rankOf(coords), rank);
    seen.insert(rank);
  }
  EXPECT_EQ(seen.size(), 24u);
  EXPECT_FALSE(mesh.contains({2, 0, 0}));
  EXPECT_FALSE(mesh.contains({0, 0, -1}));
}

TEST(MeshTest, GroupsAlongEachAxis) {
  MeshShape mesh = testMesh();
  // Rank 13 is stage 1, replica 1, shard 1.
  EXPECT_EQ(mesh.groupRanks(MeshAxis::Tensor, 13),
            (std::vector<int64_t>{12, 13, 14, 15}));
  EXPECT_EQ(mesh.groupRanks(MeshAxis::Pipeline, 13),
            (std::vector<int64_t>{9, 13}));
  EXPECT_EQ(mesh.groupRanks(MeshAxis::Data, 13),
            (std::vector<int64_t>{5, 13, 21}));
  for (MeshAxis axis : rt::kMeshAxes) {
    EXPECT_EQ(mesh.stride(axis) * (mesh.extent(axis) - 1),
              mesh.groupRanks(axis, 0).back())
        << rt::meshAxisName(axis);
    // Every member of a group has the group's id and finds the same group;
    // the groups of an axis partition the mesh.
    std::set<int64_t> ids;
    for (int64_t rank = 0; rank < mesh.size(); ++rank) {
      std::vector<int64_t> group = mesh.groupRanks(axis, rank);
      EXPECT_EQ(static_cast<int64_t>(group.size()), mesh.extent(axis));
      EXPECT_EQ(group[mesh.coordsOf(rank).along(axis)], rank);
      for (int64_t member : group) {
        EXPECT_EQ(mesh.groupRanks(axis, member), group);
        EXPECT_EQ(mesh.groupId(axis, member), group.front());
      }
      ids.insert(mesh.groupId(axis, rank));
    }
    EXPECT_EQ(static_cast<int64_t>(ids.size()), mesh.size() / mesh.extent(axis))
        << rt::meshAxisName(axis);
  }
}

TEST(MeshTest, AxisNamesAndCodes) {
  // The codes are the kernel ABI's (CommList.def).
  EXPECT_EQ(static_cast<int>(MeshAxis::Pipeline), 0);
  EXPECT_EQ(static_cast<int>(MeshAxis::Data), 1);
  EXPECT_EQ(static_cast<int>(MeshAxis::Tensor), 2);
  for (MeshAxis axis : rt::kMeshAxes) {
    MeshAxis parsed = MeshAxis::Pipeline, decoded = MeshAxis::Pipeline;
    EXPECT_TRUE(rt::parseMeshAxis(rt::meshAxisName(axis), parsed));
    EXPECT_EQ(parsed, axis);
    EXPECT_TRUE(rt::meshAxisFromCode(static_cast<int64_t>(axis), decoded));
    EXPECT_EQ(decoded, axis);
  }
  EXPECT_STREQ(rt::meshAxisName(MeshAxis::Data), "dp");
  MeshAxis axis;
  EXPECT_FALSE(rt::parseMeshAxis("ep", axis));
  EXPECT_FALSE(rt::parseMeshAxis("batch", axis));
  EXPECT_FALSE(rt::meshAxisFromCode(3, axis));
  EXPECT_FALSE(rt::meshAxisFromCode(-1, axis));
}

TEST(MeshTest, PlannerMeshNumbersAsTheRuntime) {
  DeviceMesh mesh;
  mesh.pp = 2;
  mesh.dp = 3;
  mesh.tp = 4;
  EXPECT_EQ(mesh.shape(), testMesh());
  EXPECT_EQ(mesh.size(), 24);
  for (int64_t stage = 0; stage < 2; ++stage)
    for (int64_t replica = 0; replica < 3; ++replica)
      for (int64_t shard = 0; shard < 4; ++shard)
        EXPECT_EQ(mesh.rank(stage, replica, shard),
                  (replica * 2 + stage) * 4 + shard);
}

} // namespace
