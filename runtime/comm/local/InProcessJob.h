//===- InProcessJob.h - the ranks of a bundle as threads -----------*- C++
//-*-===//
//
// NCCL refuses two ranks on one GPU, and a test machine may have one GPU or
// none: an in-process job runs every rank of a bundle as a thread of one
// process, each with its own Session and device, joined by communicators
// that hand each other pointers. Messages are staged by the sender (so a
// send returns at once) and copied by the receiver; a collective is a
// rendezvous of its group at which every member copies what it needs from
// the others' buffers, and a second one after which the buffers may change
// again. Device work is queued (LocalTransport.h), so CUDA ranks never
// block on each other's streams.
//
// A rank that fails is reported with fail(): every rank waiting for another
// stops waiting and fails too, so the job ends instead of hanging; a wait
// longer than the job's timeout fails naming the ranks it waits for.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_COMM_LOCAL_INPROCESSJOB_H
#define CLEAVE_RT_COMM_LOCAL_INPROCESSJOB_H

#include "cleave/rt/Communicator.h"

#include <memory>
#include <string>
#include <vector>

namespace cleave::rt {

class LocalJobState;

class InProcessJob {
public:
  /// One rank per device of `mesh`. Waits longer than `timeoutSeconds`
  /// fail (0: never).
  InProcessJob(const MeshShape &mesh, double timeoutSeconds);
  ~InProcessJob();
  InProcessJob(const InProcessJob &) = delete;
  InProcessJob &operator=(const InProcessJob &) = delete;

  int size() const;
  /// Rank `rank`'s communicator, for its thread only.
  Communicator &communicator(int rank);
  /// Records that `rank` failed and wakes every waiting rank; true for the
  /// job's first failure (the others are its consequences).
  bool fail(int rank, const std::string &reason);
  /// Whether some rank failed.
  bool failed() const;

private:
  std::shared_ptr<LocalJobState> state;
  std::vector<std::unique_ptr<Communicator>> ranks;
};

} // namespace cleave::rt

#endif // CLEAVE_RT_COMM_LOCAL_INPROCESSJOB_H
