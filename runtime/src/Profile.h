//===- Profile.h - measured step times against the plan ----------*- C++
//-*-===//
//
// What `cleave run --profile` writes: a Chrome trace of every timed run per
// rank, and a summary that sets each stage's measured time beside the time
// the planner predicted for it in plan.json. Private to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_PROFILE_H
#define CLEAVE_RT_SRC_PROFILE_H

#include "cleave/rt/Runtime.h"

#include <optional>
#include <string>
#include <vector>

namespace cleave::rt {

/// What a program step does, read from the emitted program's source: the
/// `// N: OPS (NODE)` comment above its cleave_rt_step call and the first
/// library function the step calls.
struct StepDescription {
  /// The ops the step computes ("matmul", "add + gelu"); empty when the
  /// source has no comment for it.
  std::string ops;
  /// The library function called, without its cleave_cpu_/cleave_cuda_
  /// prefix ("matmul", "all_reduce"); empty for a loop of the program's own.
  std::string call;
  /// "communication" (a CommList.def call), "kernel" (another library
  /// call) or "fused loop" (the program's own code).
  std::string kind;
};

/// The steps of the program at `sourcePath`, indexed by step number. A
/// source that cannot be read gives an empty list.
std::vector<StepDescription> describeSteps(const std::string &sourcePath);

/// One timed run on one device.
struct TimedRun {
  /// Seconds from the first timed run's start to this one's.
  double offset = 0;
  /// From the start (every rank ready) to this device's run returning.
  double seconds = 0;
  std::vector<StepTime> steps;
};

/// The time a run spent in its stage's own work: every step except those
/// receiving from another stage (waiting for it; the plan counts the
/// transfer in the sender's stage).
double stageSeconds(const TimedRun &run,
                    const std::vector<StepDescription> &steps);

/// Writes the runs of the device at `place` as a Chrome trace (Trace Event
/// Format): one complete event per step per run, thread id = rank, so that
/// the files of every rank merge into one timeline. Throws Error when the
/// file cannot be written.
void writeRankTrace(const std::string &path, const std::string &bundle,
                    const DevicePlace &place,
                    const std::vector<StepDescription> &steps,
                    const std::vector<TimedRun> &runs);

/// The planner's predictions of a bundle (its plan.json): per stage, the
/// time of one microbatch, and the step; unset where the plan says nothing.
struct Prediction {
  std::vector<std::optional<double>> stageSeconds;
  std::optional<double> stepSeconds;
};
Prediction readPrediction(const std::string &bundleDir, int stages);
/// The predictions of the plan.json text `planText`.
Prediction parsePrediction(const std::string &planText, int stages);

/// The measured side of the summary, gathered on rank 0.
struct MeasuredProfile {
  std::string bundle;
  int pp = 1, tp = 1, devices = 1;
  int warmupRuns = 0;
  /// Per stage: its ranks and the stage time of each timed run (of its
  /// tp-0 rank).
  std::vector<std::vector<int>> stageRanks;
  std::vector<std::vector<double>> stageRuns;
  /// Per timed run: the slowest rank's run time.
  std::vector<double> stepRuns;
  /// The trace files written, relative to `directory` (empty: none).
  std::vector<std::string> traces;
};

/// The cost model's error, (predicted - measured) / measured in percent;
/// none without a prediction or a positive measurement.
std::optional<double> errorPercent(std::optional<double> predicted,
                                   double measured);

/// `value` printed with `format` for a table cell, or "-" without one.
std::string cell(std::optional<double> value, const char *format);

/// Prints the summary table (median of the timed runs against the
/// prediction, with the cost model's error) and, when `jsonPath` is not
/// empty, writes it as JSON.
void reportProfile(const MeasuredProfile &measured,
                   const Prediction &prediction, const std::string &jsonPath);

} // namespace cleave::rt

#endif // CLEAVE_RT_SRC_PROFILE_H
