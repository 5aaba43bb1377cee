//===- Checkpoint.h - a training run's state on disk ------------*- C++ -*-===//
//
// A checkpoint is a directory that holds what a training bundle keeps
// between steps, so that a run stopped at any point goes on as if it had
// not stopped (docs/guide/training.md):
//
//   step_00000100/
//     manifest.json    format, step, bundle digest, data order, and the
//                      SHA-256 of every other file
//     rank_0.bin       device 0's persistent memory: trained parameters,
//                      optimizer state and step counters, with a header
//                      naming the regions the bundle's manifest gives
//
// It is written under a temporary name, synced and renamed into place, so a
// crash while saving leaves the checkpoints before it as they were.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_CHECKPOINT_H
#define CLEAVE_RT_CHECKPOINT_H

#include "cleave/rt/Runtime.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cleave::rt {

class Communicator;

/// Where a training run stands: the steps taken and, for a run over a data
/// set (`cleave train`), its place in the data order, which is a function
/// of the seed, the number of samples and the epoch.
struct TrainingPosition {
  int64_t step = 0;
  uint64_t seed = 0;
  /// The samples the order runs over; 0 when no data order is recorded.
  int64_t samples = 0;
  int64_t epoch = 0;
  /// Samples of the epoch already taken.
  int64_t offset = 0;
};

/// What a checkpoint's manifest says, once every file it lists matched its
/// SHA-256.
struct CheckpointInfo {
  std::string directory;
  TrainingPosition position;
  std::string bundleDigest;
  /// The bundle's directory and model when it was saved (informative).
  std::string bundle;
  std::string model;
  /// Per rank: its file (relative to the checkpoint) and the digest of its
  /// persistent layout.
  std::vector<std::string> rankFiles;
  std::vector<std::string> layoutDigests;
};

/// The name of step `step`'s checkpoint under a checkpoint directory:
/// "step_00000042".
std::string checkpointName(int64_t step);

/// Saves `session`'s persistent memory and `position` as checkpoint `dir`
/// (a bundle for one device). An existing checkpoint of that name is
/// replaced only once the new one is complete. Throws Error naming the path
/// that could not be written.
void saveCheckpoint(const Session &session, const TrainingPosition &position,
                    const std::string &dir);
/// The same for every device of a bundle: one rank file per device (the
/// replicas of a data-parallel bundle each save theirs).
void saveCheckpoint(const SessionGroup &group, const TrainingPosition &position,
                    const std::string &dir);
/// The same for the device of this process in a job of one process per
/// device (mpirun, srun): every rank calls it, each writes its own rank
/// file, and the first rank writes the manifest and gives the checkpoint
/// its name once all are written. `dir` must be on a file system every
/// rank shares.
void saveCheckpoint(const Session &session, Communicator &comm,
                    const TrainingPosition &position, const std::string &dir);

/// Reads checkpoint `dir` and checks the SHA-256 of every file it lists;
/// throws Error naming the file that is missing, malformed or damaged.
CheckpointInfo readCheckpoint(const std::string &dir);

/// Restores `session` from checkpoint `dir`, checked as `readCheckpoint`
/// does and refused when it was saved from another bundle or another
/// persistent layout. Returns the position it was saved at.
TrainingPosition loadCheckpoint(Session &session, const std::string &dir);
/// The same for every device of `group`, each from its own rank file. A
/// checkpoint of another plan is restored by name; `unrestored`, when
/// given, receives the names of the tensors it holds that no device of
/// `group` keeps (a momentum buffer restored into plain SGD), which are not
/// restored.
TrainingPosition loadCheckpoint(SessionGroup &group, const std::string &dir,
                                std::vector<std::string> *unrestored = nullptr);
/// The same for this process's device of a job of one process per device
/// (`comm`: every device calls it). `unrestored`, when given, receives on
/// the job's first device the names of the tensors the checkpoint holds
/// that no device of the job keeps; on the others, none.
TrainingPosition loadCheckpoint(Session &session, Communicator &comm,
                                const std::string &dir,
                                std::vector<std::string> *unrestored = nullptr);

/// The checkpoints (step_N directories) under `root`, newest first; none
/// when `root` does not exist.
std::vector<std::string> listCheckpoints(const std::string &root);

/// The trained parameters checkpoint `dir` holds, by name, each read from
/// the region the bundle's manifest gave it, and what its manifest says.
/// Never throws (for callers built without exceptions): on failure,
/// returns false with `error` naming the file at fault.
bool readCheckpointParameters(const std::string &dir, CheckpointInfo &info,
                              std::map<std::string, Tensor> &parameters,
                              std::string &error) noexcept;

} // namespace cleave::rt

#endif // CLEAVE_RT_CHECKPOINT_H
