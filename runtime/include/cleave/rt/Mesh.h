//===- Mesh.h - the device mesh and its numbering of ranks ------*- C++ -*-===//
//
// A bundle's devices form a mesh with named axes: `pp` (pipeline stages),
// `dp` (data-parallel replicas) and `tp` (tensor-parallel shards). A
// device's group along an axis is the set of devices that differ from it
// only in their index along that axis; every collective runs within one
// such group. This header is the one definition of the axes, of their
// codes in the kernel ABI (CommList.def) and of the numbering of ranks,
// shared by the compiler (which includes it) and the runtime. It depends
// on nothing but the C++17 standard library.
//
// Ranks are laid out replica-major with the tensor-parallel shards
// innermost:
//
//   rank = (dp * pp + stage) * tp + tp index
//
// so that a tensor-parallel group is consecutive (inside a node) and a
// replica's stages are neighbours. Axes for experts (`ep`) and context
// (`cp`) would take the next codes.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_MESH_H
#define CLEAVE_RT_MESH_H

#include <cstdint>
#include <string_view>
#include <vector>

namespace cleave::rt {

/// The axes of the mesh. The values are the codes the communication calls
/// receive (CommList.def); they never change meaning.
enum class MeshAxis : int32_t { Pipeline = 0, Data = 1, Tensor = 2 };

/// Every axis, in code order.
inline constexpr MeshAxis kMeshAxes[] = {MeshAxis::Pipeline, MeshAxis::Data,
                                         MeshAxis::Tensor};

/// "pp", "dp", "tp": the axis's name in the IR, the manifest and messages.
inline const char *meshAxisName(MeshAxis axis) {
  switch (axis) {
  case MeshAxis::Pipeline:
    return "pp";
  case MeshAxis::Data:
    return "dp";
  case MeshAxis::Tensor:
    return "tp";
  }
  return "?";
}

/// The axis named `name`; false when there is none.
inline bool parseMeshAxis(std::string_view name, MeshAxis &axis) {
  for (MeshAxis each : kMeshAxes)
    if (name == meshAxisName(each)) {
      axis = each;
      return true;
    }
  return false;
}

/// The axis of ABI code `code`; false for a code that names none.
inline bool meshAxisFromCode(int64_t code, MeshAxis &axis) {
  for (MeshAxis each : kMeshAxes)
    if (code == static_cast<int64_t>(each)) {
      axis = each;
      return true;
    }
  return false;
}

/// A device's index along every axis.
struct MeshCoords {
  int64_t stage = 0;
  int64_t dp = 0;
  int64_t tp = 0;

  int64_t along(MeshAxis axis) const {
    switch (axis) {
    case MeshAxis::Pipeline:
      return stage;
    case MeshAxis::Data:
      return dp;
    case MeshAxis::Tensor:
      return tp;
    }
    return 0;
  }
  void set(MeshAxis axis, int64_t index) {
    switch (axis) {
    case MeshAxis::Pipeline:
      stage = index;
      return;
    case MeshAxis::Data:
      dp = index;
      return;
    case MeshAxis::Tensor:
      tp = index;
      return;
    }
  }
  bool operator==(const MeshCoords &other) const {
    return stage == other.stage && dp == other.dp && tp == other.tp;
  }
};

/// The extent of every axis, and the rank <-> coordinates mapping.
struct MeshShape {
  int64_t pp = 1;
  int64_t dp = 1;
  int64_t tp = 1;

  int64_t size() const { return pp * dp * tp; }
  int64_t extent(MeshAxis axis) const {
    switch (axis) {
    case MeshAxis::Pipeline:
      return pp;
    case MeshAxis::Data:
      return dp;
    case MeshAxis::Tensor:
      return tp;
    }
    return 1;
  }
  /// How far apart in rank two neighbours along `axis` are.
  int64_t stride(MeshAxis axis) const {
    switch (axis) {
    case MeshAxis::Pipeline:
      return tp;
    case MeshAxis::Data:
      return pp * tp;
    case MeshAxis::Tensor:
      return 1;
    }
    return 0;
  }
  bool contains(const MeshCoords &coords) const {
    for (MeshAxis axis : kMeshAxes)
      if (coords.along(axis) < 0 || coords.along(axis) >= extent(axis))
        return false;
    return true;
  }

  int64_t rankOf(const MeshCoords &coords) const {
    return (coords.dp * pp + coords.stage) * tp + coords.tp;
  }
  MeshCoords coordsOf(int64_t rank) const {
    MeshCoords coords;
    coords.tp = rank % tp;
    coords.stage = rank / tp % pp;
    coords.dp = rank / (tp * pp);
    return coords;
  }

  /// The ranks of the group along `axis` that holds `rank`, by their index
  /// along `axis` (so a device's place in the vector is that index).
  std::vector<int64_t> groupRanks(MeshAxis axis, int64_t rank) const {
    MeshCoords coords = coordsOf(rank);
    std::vector<int64_t> ranks;
    for (int64_t index = 0; index < extent(axis); ++index) {
      coords.set(axis, index);
      ranks.push_back(rankOf(coords));
    }
    return ranks;
  }
  /// One number per group along `axis`, the same for every member: its
  /// first member's rank (an MPI or NCCL split's colour).
  int64_t groupId(MeshAxis axis, int64_t rank) const {
    MeshCoords coords = coordsOf(rank);
    coords.set(axis, 0);
    return rankOf(coords);
  }

  bool operator==(const MeshShape &other) const {
    return pp == other.pp && dp == other.dp && tp == other.tp;
  }
};

} // namespace cleave::rt

#endif // CLEAVE_RT_MESH_H
