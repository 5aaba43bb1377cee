//===- TrainingProfile.h - measured training phases against the plan -----===//
//
// What `cleave train --profile DIR` collects: every rank's entry calls
// (forward and backward per microbatch, the update) over the run, written
// as one Chrome trace per rank, and per pipeline stage the measured time of
// each phase set beside the planner's prediction in the bundle's plan.json,
// with the cost model's error. Private to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_TRAININGPROFILE_H
#define CLEAVE_RT_SRC_TRAININGPROFILE_H

#include "cleave/rt/Runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cleave::rt {

class Communicator;

class TrainingProfile {
public:
  /// Profiles the ranks this process runs, `sessions` (opened with
  /// profiling), into `dir`, created if missing; throws Error naming it
  /// when it cannot be. With `comm` (one process per device), each process
  /// profiles its own device and the first rank reports for all.
  TrainingProfile(std::vector<const Session *> sessions, Communicator *comm,
                  std::string dir);

  /// Records the entry calls of every rank's last run: step `step`, which
  /// began `offset` seconds after the first recorded one and took
  /// `seconds`.
  void record(int64_t step, double offset, double seconds);

  /// Writes the traces and profile.json, and prints the measured phases
  /// against the plan's per stage. The first step is left out of the
  /// summary when there are others (it warms the caches and the pools).
  /// With a communicator, every rank calls it.
  void finish(const std::string &bundleDir) const;

private:
  struct Call {
    int64_t step;
    PhaseTime time;
  };
  /// The first step the summary counts.
  int64_t firstKept() const;
  /// Per session: its stage, then the total seconds and the count of each
  /// phase's calls in the kept steps.
  std::vector<double> phaseTotals(std::size_t session) const;

  std::vector<const Session *> sessions;
  Communicator *comm;
  std::string dir;
  /// Per session, every entry call, in order.
  std::vector<std::vector<Call>> calls;
  std::vector<std::pair<int64_t, double>> stepSeconds;
  std::vector<double> stepOffsets;
};

} // namespace cleave::rt

#endif // CLEAVE_RT_SRC_TRAININGPROFILE_H
