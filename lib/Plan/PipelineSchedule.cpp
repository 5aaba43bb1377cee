//===- PipelineSchedule.cpp - the order of work on pipeline stages -------===//
//
// The orders follow Megatron-LM's `schedules.py` (forward_backward_pipelining
// without and with interleaving). The simulation keeps one cursor per device
// and runs a device's next step as soon as the steps it needs have ended; a
// device that waits is woken by the step it waits for, so a simulation costs
// one visit per step.
//
//===----------------------------------------------------------------------===//

#include "cleave/Plan/PipelineSchedule.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <limits>

using namespace cleave;

llvm::StringRef cleave::stringifyPipelinePhase(PipelinePhase phase) {
  return rt::phaseName(phase);
}

std::optional<PipelinePhase> cleave::parsePipelinePhase(llvm::StringRef name) {
  for (int i = 0; i < kNumPipelinePhases; ++i) {
    auto phase = static_cast<PipelinePhase>(i);
    if (name == stringifyPipelinePhase(phase))
      return phase;
  }
  return std::nullopt;
}

llvm::StringRef cleave::stringifyScheduleKind(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::GPipe:
    return "gpipe";
  case ScheduleKind::OneFOneB:
    return "1f1b";
  case ScheduleKind::Interleaved:
    return "interleaved";
  }
  return "";
}

std::optional<ScheduleKind> cleave::parseScheduleKind(llvm::StringRef name) {
  for (ScheduleKind kind :
       {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved})
    if (name == stringifyScheduleKind(kind))
      return kind;
  return std::nullopt;
}

std::string ScheduleChoice::str() const {
  if (kind == ScheduleKind::Interleaved)
    return llvm::formatv("interleaved:{0}", virtualStages).str();
  return stringifyScheduleKind(kind).str();
}

llvm::Expected<ScheduleChoice> ScheduleChoice::parse(llvm::StringRef text) {
  auto [name, count] = text.split(':');
  bool counted = text.contains(':');
  if (std::optional<ScheduleKind> kind = parseScheduleKind(name)) {
    if (*kind != ScheduleKind::Interleaved && !counted)
      return ScheduleChoice{*kind, 1};
    int64_t chunks = 2;
    if (*kind == ScheduleKind::Interleaved &&
        (!counted || (!count.getAsInteger(10, chunks) && chunks >= 2)))
      return ScheduleChoice{*kind, chunks};
  }
  return llvm::createStringError(
      "expected gpipe, 1f1b, interleaved or interleaved:V (V >= 2 model "
      "chunks per device), got '" +
      text + "'");
}

//===----------------------------------------------------------------------===//
// Orders
//===----------------------------------------------------------------------===//

PipelineSchedule::PipelineSchedule() : phases({PipelinePhase::Forward}) {
  buildOrders();
}

llvm::Expected<PipelineSchedule>
PipelineSchedule::create(const PipelineScheduleOptions &options) {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(message);
  };
  const ScheduleChoice &choice = options.choice;
  if (options.numStages < 1 || options.numMicrobatches < 1)
    return error(llvm::formatv("a pipeline needs at least one stage and one "
                               "microbatch, got {0} and {1}",
                               options.numStages, options.numMicrobatches)
                     .str());
  if (choice.kind == ScheduleKind::Interleaved) {
    if (choice.virtualStages < 2)
      return error("the interleaved schedule needs at least 2 model chunks "
                   "per device, got " +
                   llvm::Twine(choice.virtualStages));
    if (options.numMicrobatches % options.numStages != 0)
      return error(llvm::formatv("the interleaved schedule runs microbatches "
                                 "in groups of the {0} pipeline stages, so "
                                 "their count must be a multiple of {0}, "
                                 "got {1}",
                                 options.numStages, options.numMicrobatches)
                       .str());
  } else if (choice.virtualStages != 1) {
    return error("only the interleaved schedule has several model chunks per "
                 "device, got " +
                 llvm::Twine(choice.virtualStages) + " for " +
                 stringifyScheduleKind(choice.kind));
  }
  llvm::ArrayRef<PipelinePhase> phases = options.phases;
  auto has = [&](PipelinePhase phase) {
    return llvm::is_contained(phases, phase);
  };
  if (phases.empty() || phases.front() != PipelinePhase::Forward)
    return error("the phases of a step must start with forward");
  for (size_t i = 1; i < phases.size(); ++i)
    if (phases[i] <= phases[i - 1])
      return error("the phases of a step must be listed once each, in the "
                   "order forward, recompute, backward, update");
  if ((has(PipelinePhase::Recompute) || has(PipelinePhase::Update)) &&
      !has(PipelinePhase::Backward))
    return error("recompute and update need a backward phase");

  PipelineSchedule schedule;
  schedule.choice = choice;
  schedule.numStages = options.numStages;
  schedule.numMicrobatches = options.numMicrobatches;
  schedule.phases.assign(phases.begin(), phases.end());
  schedule.buildOrders();
  return schedule;
}

bool PipelineSchedule::hasPhase(PipelinePhase phase) const {
  return llvm::is_contained(phases, phase);
}

void PipelineSchedule::buildOrders() {
  orders.assign(numStages, {});
  for (int64_t stage = 0; stage < numStages; ++stage) {
    switch (choice.kind) {
    case ScheduleKind::GPipe:
      buildGPipe(stage);
      break;
    case ScheduleKind::OneFOneB:
      buildOneFOneB(stage);
      break;
    case ScheduleKind::Interleaved:
      buildInterleaved(stage);
      break;
    }
    if (hasPhase(PipelinePhase::Update))
      orders[stage].push_back({PipelinePhase::Update, -1, 0});
  }
  held.clear();
  // Forward only, every device holds the same (the pipeline's) count.
  for (int64_t stage = 0; stage < numStages; ++stage)
    held.push_back(stage > 0 && !hasPhase(PipelinePhase::Backward)
                       ? held.front()
                       : countActivationsHeld(stage));
}

void PipelineSchedule::appendForward(int64_t stage, int64_t microbatch,
                                     int64_t chunk) {
  orders[stage].push_back({PipelinePhase::Forward, microbatch, chunk});
}

void PipelineSchedule::appendBackward(int64_t stage, int64_t microbatch,
                                      int64_t chunk) {
  if (hasPhase(PipelinePhase::Recompute))
    orders[stage].push_back({PipelinePhase::Recompute, microbatch, chunk});
  orders[stage].push_back({PipelinePhase::Backward, microbatch, chunk});
}

void PipelineSchedule::buildGPipe(int64_t stage) {
  for (int64_t microbatch = 0; microbatch < numMicrobatches; ++microbatch)
    appendForward(stage, microbatch, 0);
  if (hasPhase(PipelinePhase::Backward))
    for (int64_t microbatch = 0; microbatch < numMicrobatches; ++microbatch)
      appendBackward(stage, microbatch, 0);
}

void PipelineSchedule::buildOneFOneB(int64_t stage) {
  if (!hasPhase(PipelinePhase::Backward))
    return buildGPipe(stage);
  // Stage s runs forwards until the first backward can come back from the
  // last stage; from then on it keeps p - s microbatches' activations.
  int64_t warmup = std::min(numStages - stage - 1, numMicrobatches);
  for (int64_t microbatch = 0; microbatch < warmup; ++microbatch)
    appendForward(stage, microbatch, 0);
  for (int64_t i = 0; i + warmup < numMicrobatches; ++i) {
    appendForward(stage, warmup + i, 0);
    appendBackward(stage, i, 0);
  }
  for (int64_t microbatch = std::max<int64_t>(numMicrobatches - warmup, 0);
       microbatch < numMicrobatches; ++microbatch)
    appendBackward(stage, microbatch, 0);
}

void PipelineSchedule::buildInterleaved(int64_t stage) {
  // The k-th forward of a device takes microbatch group k / (p v), chunk
  // (k mod p v) / p of it, and microbatch k mod p of the group; backwards
  // walk the chunks the other way.
  int64_t chunks = getNumChunks();
  int64_t group = numStages * chunks;
  int64_t total = numMicrobatches * chunks;
  auto microbatchOf = [&](int64_t k) {
    return k / group * numStages + k % numStages;
  };
  auto forward = [&](int64_t k) {
    appendForward(stage, microbatchOf(k), k % group / numStages);
  };
  auto backward = [&](int64_t k) {
    appendBackward(stage, microbatchOf(k), chunks - 1 - k % group / numStages);
  };
  int64_t warmup = total;
  if (hasPhase(PipelinePhase::Backward) && numMicrobatches != numStages)
    warmup =
        std::min((numStages - stage - 1) * 2 + (chunks - 1) * numStages, total);
  int64_t steady = total - warmup;
  for (int64_t k = 0; k < warmup; ++k)
    forward(k);
  if (!hasPhase(PipelinePhase::Backward))
    return;
  for (int64_t k = 0; k < steady; ++k) {
    forward(warmup + k);
    backward(k);
  }
  for (int64_t k = steady; k < total; ++k)
    backward(k);
}

//===----------------------------------------------------------------------===//
// Simulation
//===----------------------------------------------------------------------===//

namespace {
/// A sum of doubles carried to about twice a double's precision (Knuth's
/// two-sum), so that which step a step waited for does not turn on the
/// rounding of the plain sums: two chains of stage times that are equal
/// compare equal, and a chain longer by one rounding step of a stage time
/// compares longer.
struct PreciseTime {
  double high = 0;
  double low = 0;

  PreciseTime plus(double x) const {
    double sum = high + x;
    double virtualX = sum - high;
    double error = (high - (sum - virtualX)) + (x - virtualX);
    double rest = low + error;
    PreciseTime result;
    result.high = sum + rest;
    result.low = rest - (result.high - sum);
    return result;
  }
  /// Later than `other` by more than the error of the extended sums.
  bool isLaterThan(const PreciseTime &other) const {
    double difference = (high - other.high) + (low - other.low);
    return difference > 0x1p-80 * std::max(std::abs(high), 1e-300);
  }
};
} // namespace

int64_t PipelineSchedule::slotOf(const PipelineStep &step,
                                 int64_t stage) const {
  int64_t perPhase = getNumVirtualStages() * numMicrobatches;
  if (step.phase == PipelinePhase::Update)
    return kNumPipelinePhases * perPhase + stage;
  int64_t virtualStage = getVirtualStage(stage, step.chunk);
  return static_cast<int64_t>(step.phase) * perPhase +
         virtualStage * numMicrobatches + step.microbatch;
}

ScheduleTimeline PipelineSchedule::simulate(
    llvm::ArrayRef<PhaseTimes> times,
    std::vector<std::pair<int64_t, int64_t>> *binding) const {
  assert(static_cast<int64_t>(times.size()) == getNumVirtualStages() &&
         "one PhaseTimes per virtual stage");
  int64_t numVirtual = getNumVirtualStages();
  int64_t perPhase = numVirtual * numMicrobatches;
  auto slot = [&](PipelinePhase phase, int64_t virtualStage,
                  int64_t microbatch) {
    return static_cast<int64_t>(phase) * perPhase +
           virtualStage * numMicrobatches + microbatch;
  };
  int64_t numSlots = kNumPipelinePhases * perPhase + numStages;
  constexpr double kPending = -1;
  std::vector<double> ends(numSlots, kPending);
  std::vector<PreciseTime> preciseEnds(numSlots);
  /// Where each slot's step is: (device, index in its order).
  std::vector<std::pair<int64_t, int64_t>> located(numSlots, {-1, -1});
  std::vector<int64_t> waiter(numSlots, -1);

  ScheduleTimeline timeline;
  timeline.intervals.resize(numStages);
  if (binding) {
    binding->clear();
    binding->resize(numSlots, {-1, -1});
  }
  std::vector<size_t> cursor(numStages, 0);
  std::vector<double> free(numStages, 0);
  std::vector<PreciseTime> preciseFree(numStages);
  std::deque<int64_t> ready;
  for (int64_t stage = 0; stage < numStages; ++stage)
    ready.push_back(stage);

  while (!ready.empty()) {
    int64_t stage = ready.front();
    ready.pop_front();
    const std::vector<PipelineStep> &order = orders[stage];
    while (cursor[stage] < order.size()) {
      const PipelineStep &step = order[cursor[stage]];
      int64_t virtualStage = getVirtualStage(stage, step.chunk);
      llvm::SmallVector<int64_t, 3> needs;
      double duration = 0;
      switch (step.phase) {
      case PipelinePhase::Forward:
        if (virtualStage > 0)
          needs.push_back(
              slot(PipelinePhase::Forward, virtualStage - 1, step.microbatch));
        break;
      case PipelinePhase::Recompute:
        needs.push_back(
            slot(PipelinePhase::Forward, virtualStage, step.microbatch));
        break;
      case PipelinePhase::Backward:
        needs.push_back(
            virtualStage + 1 < numVirtual
                ? slot(PipelinePhase::Backward, virtualStage + 1,
                       step.microbatch)
                : slot(PipelinePhase::Forward, virtualStage, step.microbatch));
        needs.push_back(
            slot(PipelinePhase::Forward, virtualStage, step.microbatch));
        if (hasPhase(PipelinePhase::Recompute))
          needs.push_back(
              slot(PipelinePhase::Recompute, virtualStage, step.microbatch));
        break;
      case PipelinePhase::Update:
        break;
      }
      if (step.phase == PipelinePhase::Update)
        for (int64_t chunk = 0; chunk < getNumChunks(); ++chunk)
          duration += times[getVirtualStage(stage, chunk)][step.phase];
      else
        duration = times[virtualStage][step.phase];

      auto blocked = llvm::find_if(
          needs, [&](int64_t need) { return ends[need] == kPending; });
      if (blocked != needs.end()) {
        waiter[*blocked] = stage;
        break;
      }
      double start = free[stage];
      for (int64_t need : needs)
        start = std::max(start, ends[need]);
      // The step waited for: on a tie the device's own previous one, so
      // that the critical path stays on a device while it can.
      PreciseTime preciseStart = preciseFree[stage];
      std::pair<int64_t, int64_t> waitedFor{-1, -1};
      if (cursor[stage] > 0)
        waitedFor = {stage, static_cast<int64_t>(cursor[stage]) - 1};
      for (int64_t need : needs)
        if (preciseEnds[need].isLaterThan(preciseStart)) {
          preciseStart = preciseEnds[need];
          waitedFor = located[need];
        }
      double end = start + duration;
      int64_t self = slotOf(step, stage);
      ends[self] = end;
      preciseEnds[self] = preciseStart.plus(duration);
      preciseFree[stage] = preciseEnds[self];
      located[self] = {stage, static_cast<int64_t>(cursor[stage])};
      if (binding)
        (*binding)[self] = waitedFor;
      timeline.intervals[stage].push_back({start, end});
      timeline.makespan = std::max(timeline.makespan, end);
      free[stage] = end;
      ++cursor[stage];
      if (waiter[self] >= 0) {
        ready.push_back(waiter[self]);
        waiter[self] = -1;
      }
    }
  }
  for (int64_t stage = 0; stage < numStages; ++stage)
    assert(cursor[stage] == orders[stage].size() &&
           "a schedule's order waits for a step that never runs");
  return timeline;
}

ScheduleTimeline
PipelineSchedule::simulate(llvm::ArrayRef<PhaseTimes> times) const {
  return simulate(times, nullptr);
}

double PipelineSchedule::stepTime(llvm::ArrayRef<PhaseTimes> times) const {
  // Forward only on one chunk per device (GPipe, and 1F1B, which orders the
  // same steps): the critical path is known, and the planner asks for it
  // for every mesh and microbatch count it weighs.
  if (phases.size() == 1 && getNumChunks() == 1) {
    double sum = 0, max = 0;
    for (const PhaseTimes &stage : times) {
      sum += stage[PipelinePhase::Forward];
      max = std::max(max, stage[PipelinePhase::Forward]);
    }
    return sum + static_cast<double>(numMicrobatches - 1) * max;
  }
  return criticalPathTime(times);
}

double
PipelineSchedule::criticalPathTime(llvm::ArrayRef<PhaseTimes> times) const {
  std::vector<std::pair<int64_t, int64_t>> binding;
  ScheduleTimeline timeline = simulate(times, &binding);
  // The step that ends last, on the last device among equals.
  std::pair<int64_t, int64_t> at{-1, -1};
  double latest = -1;
  for (int64_t stage = numStages - 1; stage >= 0; --stage)
    for (auto [index, interval] : llvm::enumerate(timeline.intervals[stage]))
      if (interval.end > latest) {
        latest = interval.end;
        at = {stage, static_cast<int64_t>(index)};
      }
  // How often each (virtual stage, phase) lies on the critical path; Update
  // is counted on the device's first chunk.
  int64_t numKeys = getNumVirtualStages() * kNumPipelinePhases;
  std::vector<int64_t> count(numKeys, 0);
  std::vector<double> duration(numKeys, 0);
  while (at.first >= 0) {
    const PipelineStep &step = orders[at.first][at.second];
    int64_t chunk = step.phase == PipelinePhase::Update ? 0 : step.chunk;
    int64_t key = getVirtualStage(at.first, chunk) * kNumPipelinePhases +
                  static_cast<int64_t>(step.phase);
    ++count[key];
    if (step.phase != PipelinePhase::Update) {
      duration[key] = times[getVirtualStage(at.first, chunk)][step.phase];
    } else {
      duration[key] = 0;
      for (int64_t c = 0; c < getNumChunks(); ++c)
        duration[key] += times[getVirtualStage(at.first, c)][step.phase];
    }
    at = binding[slotOf(step, at.first)];
  }
  // Each piece once, in the order of the pipeline, then the repeats: the
  // sum of the pieces plus what the slowest ones add.
  double once = 0, repeats = 0;
  for (int64_t key = 0; key < numKeys; ++key)
    if (count[key] > 0)
      once += duration[key];
  for (int64_t key = 0; key < numKeys; ++key)
    if (count[key] > 1)
      repeats += static_cast<double>(count[key] - 1) * duration[key];
  return once + repeats;
}

double PipelineSchedule::bubbleFraction(llvm::ArrayRef<PhaseTimes> times,
                                        double step) const {
  if (step <= 0)
    return 0.0;
  double busy = 0;
  for (const PhaseTimes &stageTimes : times)
    for (PipelinePhase phase : phases)
      busy += (phase == PipelinePhase::Update
                   ? 1.0
                   : static_cast<double>(numMicrobatches)) *
              stageTimes[phase];
  return 1.0 - busy / (static_cast<double>(numStages) * step);
}

double
PipelineSchedule::bubbleFraction(llvm::ArrayRef<PhaseTimes> times) const {
  return bubbleFraction(times, stepTime(times));
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

int64_t PipelineSchedule::activationsHeld(int64_t stage) const {
  return held[stage];
}

int64_t PipelineSchedule::countActivationsHeld(int64_t stage) const {
  if (hasPhase(PipelinePhase::Backward)) {
    int64_t held = 0, peak = 0;
    for (const PipelineStep &step : orders[stage]) {
      if (step.phase == PipelinePhase::Forward)
        peak = std::max(peak, ++held);
      else if (step.phase == PipelinePhase::Backward)
        --held;
    }
    return peak;
  }
  // Forward only: the microbatches in the pipeline at once, when every step
  // takes the same time. A microbatch is in it from the start of its first
  // forward to the end of its last.
  std::vector<PhaseTimes> unit(getNumVirtualStages(), PhaseTimes::forward(1));
  ScheduleTimeline timeline = simulate(unit);
  std::vector<double> first(numMicrobatches,
                            std::numeric_limits<double>::infinity());
  std::vector<double> last(numMicrobatches, 0);
  for (int64_t device = 0; device < numStages; ++device)
    for (auto [step, interval] :
         llvm::zip(orders[device], timeline.intervals[device])) {
      first[step.microbatch] = std::min(first[step.microbatch], interval.start);
      last[step.microbatch] = std::max(last[step.microbatch], interval.end);
    }
  // Ends before starts at the same time: a microbatch that leaves as another
  // enters is not held with it.
  std::vector<std::pair<double, int>> events;
  for (int64_t microbatch = 0; microbatch < numMicrobatches; ++microbatch) {
    events.push_back({first[microbatch], +1});
    events.push_back({last[microbatch], -1});
  }
  llvm::sort(events);
  int64_t inFlight = 0, peak = 0;
  for (auto [time, change] : events)
    peak = std::max(peak, inFlight += change);
  return peak;
}

int64_t PipelineSchedule::activationsHeld(int64_t stage, int64_t chunk) const {
  if (!hasPhase(PipelinePhase::Backward))
    return held[stage];
  int64_t inFlight = 0, peak = 0;
  for (const PipelineStep &step : orders[stage]) {
    if (step.chunk != chunk)
      continue;
    if (step.phase == PipelinePhase::Forward)
      peak = std::max(peak, ++inFlight);
    else if (step.phase == PipelinePhase::Backward)
      --inFlight;
  }
  return peak;
}

int64_t PipelineSchedule::maxActivationsHeld() const {
  return *std::max_element(held.begin(), held.end());
}
