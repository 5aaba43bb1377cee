//===- InProcessRun.h - every rank of a bundle in this process ----*- C++
//-*-===//
//
// `cleave run --single-process`: the ranks of a bundle for several devices
// run as threads of one process, joined by an in-process job
// (runtime/comm/local), instead of as MPI processes. It is how several GPU
// ranks share one GPU (NCCL refuses that), and it needs no MPI.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_INPROCESSRUN_H
#define CLEAVE_RT_SRC_INPROCESSRUN_H

#include "cleave/rt/Communicator.h"

#include <functional>

namespace cleave::rt {

struct Manifest;

/// Runs `runRank(rank, comm)` for every rank of `manifest` on a thread of
/// its own and returns the job's status: the largest a rank returned, or 2
/// when a rank failed, after printing the first failure with the rank's
/// place (the others' follow from it). Waits for another rank longer than
/// `timeoutSeconds` fail (0: never).
int runRanksInProcess(
    const Manifest &manifest, double timeoutSeconds,
    const std::function<int(int rank, Communicator &comm)> &runRank);

} // namespace cleave::rt

#endif // CLEAVE_RT_SRC_INPROCESSRUN_H
