//===- PipelineSchedule.h - the order of pipeline work ----------*- C++ -*-===//
//
// A pipeline schedule says in which order each stage runs the phases
// (forward, backward, ...) of the microbatches of a step. It is the one
// place that knows that order: the planner reads the step time, the
// activations a stage holds and the bubble from it, the plan trace draws it,
// the partitioner's deadlock check replays it, and the bundle records it for
// the runtime to execute.
//
// Three schedules:
//   - GPipe: every forward, then every backward (microbatches in order).
//   - 1F1B (PipeDream-flush, Megatron-LM's non-interleaved schedule): stage
//     s of p runs min(p - s - 1, m) forwards, then alternates one forward
//     and one backward, then runs the backwards left. Without a backward
//     phase it is GPipe's order.
//   - Interleaved 1F1B (Megatron-LM's interleaved schedule): each device
//     holds v model chunks (virtual stages); chunk c of device s is virtual
//     stage c * p + s. The microbatches go through in groups of p, which
//     requires m to be a multiple of p.
//
// The step time comes from simulating the dependencies of the order (a
// forward needs the previous virtual stage's forward of its microbatch, a
// backward the next one's backward); only the forward-only schedules of one
// chunk per device, whose critical path is known, take the closed form.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_PLAN_PIPELINESCHEDULE_H
#define CLEAVE_PLAN_PIPELINESCHEDULE_H

#include "cleave/rt/Phases.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cleave {

/// What a stage does for a microbatch (rt/Phases.h: the bundle and the
/// runtime name phases as the schedule does).
using PipelinePhase = rt::Phase;

inline constexpr int kNumPipelinePhases = rt::kNumPhases;

/// `forward`, `recompute`, `backward`, `update`.
llvm::StringRef stringifyPipelinePhase(PipelinePhase phase);
std::optional<PipelinePhase> parsePipelinePhase(llvm::StringRef name);

/// Which schedule.
enum class ScheduleKind : uint8_t { GPipe, OneFOneB, Interleaved };

/// `gpipe`, `1f1b`, `interleaved`.
llvm::StringRef stringifyScheduleKind(ScheduleKind kind);
std::optional<ScheduleKind> parseScheduleKind(llvm::StringRef name);

/// A schedule as the user names it: `gpipe`, `1f1b`, `interleaved` (two
/// virtual stages per device) or `interleaved:V`.
struct ScheduleChoice {
  ScheduleKind kind = ScheduleKind::GPipe;
  /// Model chunks per device; above 1 only for `Interleaved`.
  int64_t virtualStages = 1;

  /// The spelling `parse` reads.
  std::string str() const;
  /// Fails with a message saying what is accepted.
  static llvm::Expected<ScheduleChoice> parse(llvm::StringRef text);
  bool operator==(const ScheduleChoice &other) const {
    return kind == other.kind && virtualStages == other.virtualStages;
  }
};

/// One unit of a stage's work: a phase of a microbatch on one of the
/// device's model chunks.
struct PipelineStep {
  PipelinePhase phase = PipelinePhase::Forward;
  /// -1 for `Update`.
  int64_t microbatch = 0;
  int64_t chunk = 0;

  bool operator==(const PipelineStep &other) const {
    return phase == other.phase && microbatch == other.microbatch &&
           chunk == other.chunk;
  }
};

/// Seconds one virtual stage takes in each phase, for one microbatch
/// (`Update`: for the step).
class PhaseTimes {
public:
  PhaseTimes() = default;
  /// A stage that only runs forwards, taking `seconds` each.
  static PhaseTimes forward(double seconds) {
    PhaseTimes times;
    times[PipelinePhase::Forward] = seconds;
    return times;
  }
  double &operator[](PipelinePhase phase) {
    return seconds[static_cast<size_t>(phase)];
  }
  double operator[](PipelinePhase phase) const {
    return seconds[static_cast<size_t>(phase)];
  }

private:
  std::array<double, kNumPipelinePhases> seconds{};
};

/// When each step of a schedule runs, per device.
struct ScheduleTimeline {
  struct Interval {
    double start = 0;
    double end = 0;
  };
  /// Per device, per step of its order: when it runs.
  std::vector<std::vector<Interval>> intervals;
  /// When the last step ends.
  double makespan = 0;
};

/// The shape of a step to schedule.
struct PipelineScheduleOptions {
  ScheduleChoice choice;
  /// Devices of the pipeline (p) and microbatches per step (m).
  int64_t numStages = 1;
  int64_t numMicrobatches = 1;
  /// The phases of the step, in enumerator order, `Forward` first. Adding a
  /// phase changes the order, never the callers.
  llvm::SmallVector<PipelinePhase, kNumPipelinePhases> phases = {
      PipelinePhase::Forward};
};

/// The order of (phase, microbatch, chunk) on every device of a pipeline,
/// and what follows from it.
class PipelineSchedule {
public:
  /// GPipe, one stage, one microbatch, forward only.
  PipelineSchedule();

  /// The schedule of `options`; fails with a message naming the rule broken
  /// (counts below 1, virtual stages on a schedule other than interleaved,
  /// an interleaved m that is not a multiple of p, phases out of order).
  static llvm::Expected<PipelineSchedule>
  create(const PipelineScheduleOptions &options);

  const ScheduleChoice &getChoice() const { return choice; }
  ScheduleKind getKind() const { return choice.kind; }
  int64_t getNumStages() const { return numStages; }
  int64_t getNumMicrobatches() const { return numMicrobatches; }
  int64_t getNumChunks() const { return choice.virtualStages; }
  /// Devices times chunks: the model's pieces, in the order data flows.
  int64_t getNumVirtualStages() const { return numStages * getNumChunks(); }
  llvm::ArrayRef<PipelinePhase> getPhases() const { return phases; }
  bool hasPhase(PipelinePhase phase) const;

  /// Chunk `chunk` of device `stage` is this piece of the model.
  int64_t getVirtualStage(int64_t stage, int64_t chunk) const {
    return chunk * numStages + stage;
  }

  /// The steps device `stage` runs, in order.
  llvm::ArrayRef<PipelineStep> getOrder(int64_t stage) const {
    return orders[stage];
  }

  /// Runs the orders with `times[v]` the phase times of virtual stage `v`
  /// (one entry per virtual stage): each step starts when its device has
  /// finished the step before and the steps it needs have ended.
  ScheduleTimeline simulate(llvm::ArrayRef<PhaseTimes> times) const;

  /// Seconds from the first step to the last, the sum of the steps along
  /// the critical path of `simulate`, added per (virtual stage, phase): each
  /// once in order, then the repeats (for forward-only GPipe that is exactly
  /// `sum + (m - 1) * max` of the stage times).
  /// Forward-only schedules of one chunk per device take that closed form
  /// directly; the others simulate (`criticalPathTime`).
  double stepTime(llvm::ArrayRef<PhaseTimes> times) const;
  /// The step time as the simulation finds it, whatever the schedule.
  double criticalPathTime(llvm::ArrayRef<PhaseTimes> times) const;

  /// Share of the step the devices idle: 1 - busy / (p * step time).
  double bubbleFraction(llvm::ArrayRef<PhaseTimes> times) const;
  /// The same for a step time known already (`stepTime(times)`, or one the
  /// caller computed from the same stage times summed otherwise).
  double bubbleFraction(llvm::ArrayRef<PhaseTimes> times,
                        double stepTime) const;

  /// The most microbatches whose activations device `stage` keeps at once
  /// (per chunk: a microbatch held by two chunks counts twice). With a
  /// backward phase: forwards run whose backward has not (GPipe m, 1F1B
  /// min(m, p - s)). Forward only: nothing waits for a backward, and a
  /// stage buffers the inputs of the microbatches in the pipeline, as many
  /// as it holds at once when every step takes the same time (GPipe
  /// min(m, p)).
  int64_t activationsHeld(int64_t stage) const;
  /// The largest `activationsHeld` of any device.
  int64_t maxActivationsHeld() const;
  /// The most microbatches whose activations model chunk `chunk` of device
  /// `stage` keeps at once (with a backward phase; forward only, the
  /// device's `activationsHeld`): the slots of that chunk's stash.
  int64_t activationsHeld(int64_t stage, int64_t chunk) const;

private:
  void buildOrders();
  void buildGPipe(int64_t stage);
  void buildOneFOneB(int64_t stage);
  void buildInterleaved(int64_t stage);
  /// Appends the forward of `microbatch` on `chunk`, or its recompute (when
  /// the step has one) and backward.
  void appendForward(int64_t stage, int64_t microbatch, int64_t chunk);
  void appendBackward(int64_t stage, int64_t microbatch, int64_t chunk);
  /// `activationsHeld`, computed once when the orders are built.
  int64_t countActivationsHeld(int64_t stage) const;
  /// The step's index in the flat tables of the simulation.
  int64_t slotOf(const PipelineStep &step, int64_t stage) const;
  /// The simulation with, per step, the step it waited for last (-1: none).
  ScheduleTimeline
  simulate(llvm::ArrayRef<PhaseTimes> times,
           std::vector<std::pair<int64_t, int64_t>> *binding) const;

  ScheduleChoice choice;
  int64_t numStages = 1;
  int64_t numMicrobatches = 1;
  llvm::SmallVector<PipelinePhase, kNumPipelinePhases> phases;
  std::vector<std::vector<PipelineStep>> orders;
  std::vector<int64_t> held;
};

} // namespace cleave

#endif // CLEAVE_PLAN_PIPELINESCHEDULE_H
