//===- Groups.h - peers and groups the communicators share ------*- C++ -*-===//
//
// The communicators find a pipeline peer, and the members of a group, from
// the mesh's numbering of ranks (Mesh.h), so they agree with the bundle.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_COMM_GROUPS_H
#define CLEAVE_RT_COMM_GROUPS_H

#include "cleave/rt/Mesh.h"
#include "cleave/rt/Runtime.h"

#include <string>

namespace cleave::rt {

/// The rank of the device of `stage` with the same dp and tp index as
/// `rank`: the peer of its sends and receives to that stage. Stages are
/// virtual under the interleaved schedule: stage v (model chunk v / pp)
/// runs on the devices of pipeline stage v mod pp.
inline int pipelinePeer(const MeshShape &mesh, int rank, int stage) {
  MeshCoords self = mesh.coordsOf(rank);
  if (stage < 0)
    throw Error("stage " + std::to_string(stage) + " is not a pipeline stage");
  int device = static_cast<int>(stage % mesh.pp);
  if (device == self.stage)
    throw Error("stage " + std::to_string(stage) +
                " runs on this device's own stage");
  MeshCoords peer = self;
  peer.stage = device;
  if (!mesh.contains(peer))
    throw Error("no device of stage " + std::to_string(stage) + " with tp " +
                std::to_string(self.tp) + " and dp " + std::to_string(self.dp));
  return static_cast<int>(mesh.rankOf(peer));
}

} // namespace cleave::rt

#endif // CLEAVE_RT_COMM_GROUPS_H
