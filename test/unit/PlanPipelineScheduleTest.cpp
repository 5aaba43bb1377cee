//===- PlanPipelineScheduleTest.cpp - pipeline schedules -----------------===//
//
// The orders, step times, activations and bubbles of the schedules against
// timelines worked out by hand, and forward-only GPipe against its closed
// form `sum + (m - 1) * max` (bit for bit: plans must not move).
//
//===----------------------------------------------------------------------===//

#include "cleave/Plan/PipelineSchedule.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace cleave;

namespace {

constexpr PipelinePhase F = PipelinePhase::Forward;
constexpr PipelinePhase B = PipelinePhase::Backward;
constexpr PipelinePhase R = PipelinePhase::Recompute;
constexpr PipelinePhase U = PipelinePhase::Update;

PipelineSchedule makeSchedule(ScheduleChoice choice, int64_t stages,
                              int64_t microbatches,
                              llvm::ArrayRef<PipelinePhase> phases = {F}) {
  PipelineScheduleOptions options;
  options.choice = choice;
  options.numStages = stages;
  options.numMicrobatches = microbatches;
  options.phases.assign(phases.begin(), phases.end());
  llvm::Expected<PipelineSchedule> schedule = PipelineSchedule::create(options);
  if (!schedule) {
    ADD_FAILURE() << llvm::toString(schedule.takeError());
    return PipelineSchedule();
  }
  return std::move(*schedule);
}

/// `F0 F1 B0 ...`, with `.c` for the chunk when there are several, `U` for
/// the update.
std::string spell(llvm::ArrayRef<PipelineStep> order, bool chunks = false) {
  std::string text;
  for (const PipelineStep &step : order) {
    if (!text.empty())
      text += " ";
    text += step.phase == F   ? "F"
            : step.phase == B ? "B"
            : step.phase == R ? "R"
                              : "U";
    if (step.phase == U)
      continue;
    text += std::to_string(step.microbatch);
    if (chunks)
      text += "." + std::to_string(step.chunk);
  }
  return text;
}

std::vector<PhaseTimes> uniformTimes(int64_t count, double forward,
                                     double backward) {
  PhaseTimes times;
  times[F] = forward;
  times[B] = backward;
  return std::vector<PhaseTimes>(count, times);
}

const ScheduleChoice kGPipe{ScheduleKind::GPipe, 1};
const ScheduleChoice k1F1B{ScheduleKind::OneFOneB, 1};

TEST(PipelineScheduleTest, GPipeOrderRunsEveryForwardThenEveryBackward) {
  PipelineSchedule schedule = makeSchedule(kGPipe, 4, 8, {F, B});
  for (int64_t stage = 0; stage < 4; ++stage)
    EXPECT_EQ(spell(schedule.getOrder(stage)),
              "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7");
}

TEST(PipelineScheduleTest, OneFOneBOrderWarmsUpThenAlternates) {
  PipelineSchedule schedule = makeSchedule(k1F1B, 4, 8, {F, B});
  EXPECT_EQ(spell(schedule.getOrder(0)),
            "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(spell(schedule.getOrder(1)),
            "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7");
  EXPECT_EQ(spell(schedule.getOrder(2)),
            "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7");
  EXPECT_EQ(spell(schedule.getOrder(3)),
            "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
}

TEST(PipelineScheduleTest, OneFOneBWithFewMicrobatchesOnlyWarmsUp) {
  // m = 2 < p - 1: stage 0 runs both forwards before any backward.
  PipelineSchedule schedule = makeSchedule(k1F1B, 4, 2, {F, B});
  EXPECT_EQ(spell(schedule.getOrder(0)), "F0 F1 B0 B1");
  EXPECT_EQ(spell(schedule.getOrder(2)), "F0 F1 B0 B1");
  EXPECT_EQ(spell(schedule.getOrder(3)), "F0 B0 F1 B1");
}

TEST(PipelineScheduleTest, RecomputeAndUpdateJoinTheOrder) {
  PipelineSchedule schedule = makeSchedule(k1F1B, 2, 3, {F, R, B, U});
  EXPECT_EQ(spell(schedule.getOrder(0)), "F0 F1 R0 B0 F2 R1 B1 R2 B2 U");
  EXPECT_EQ(spell(schedule.getOrder(1)), "F0 R0 B0 F1 R1 B1 F2 R2 B2 U");
}

TEST(PipelineScheduleTest, ForwardOnlyOneFOneBIsGPipe) {
  PipelineSchedule gpipe = makeSchedule(kGPipe, 4, 8);
  PipelineSchedule oneFOneB = makeSchedule(k1F1B, 4, 8);
  for (int64_t stage = 0; stage < 4; ++stage) {
    EXPECT_EQ(spell(oneFOneB.getOrder(stage)), "F0 F1 F2 F3 F4 F5 F6 F7");
    EXPECT_EQ(spell(gpipe.getOrder(stage)), spell(oneFOneB.getOrder(stage)));
    EXPECT_EQ(gpipe.activationsHeld(stage), oneFOneB.activationsHeld(stage));
  }
}

TEST(PipelineScheduleTest, StepTimesOfForwardAndBackward) {
  // F = 1, B = 2 on each of 4 stages, 8 microbatches. GPipe: the forwards
  // end on stage 3 at 3 + 8 = 11; the backwards leave it at 11 + 16 = 27
  // and reach stage 0 three backwards (6) later: 33 = (m + p - 1)(F + B).
  // 1F1B only reorders the same work: the same step, less memory.
  std::vector<PhaseTimes> times = uniformTimes(4, 1, 2);
  PipelineSchedule gpipe = makeSchedule(kGPipe, 4, 8, {F, B});
  PipelineSchedule oneFOneB = makeSchedule(k1F1B, 4, 8, {F, B});
  EXPECT_DOUBLE_EQ(gpipe.stepTime(times), 33);
  EXPECT_DOUBLE_EQ(oneFOneB.stepTime(times), 33);
  // Bubble (p - 1) / (m + p - 1).
  EXPECT_DOUBLE_EQ(gpipe.bubbleFraction(times), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(oneFOneB.bubbleFraction(times), 3.0 / 11.0);

  // Stage 0 under 1F1B: F0-F3 at 0-4, then B0 waits for the backward to
  // come back from stage 3 (F0 reaches it at 3-4, B0 runs there at 4-6,
  // then 6-8 on stage 2, 8-10 on stage 1): B0 at 10-12.
  ScheduleTimeline timeline = oneFOneB.simulate(times);
  ASSERT_EQ(timeline.intervals[0].size(), 16u);
  EXPECT_DOUBLE_EQ(timeline.intervals[0][3].start, 3);
  EXPECT_DOUBLE_EQ(timeline.intervals[0][4].start, 10);
  EXPECT_DOUBLE_EQ(timeline.intervals[0][4].end, 12);
  EXPECT_DOUBLE_EQ(timeline.makespan, 33);
}

TEST(PipelineScheduleTest, UnevenStagesFollowTheSlowestStage) {
  // Forward only, stage times 1, 3, 2 and 4 microbatches: stage 1 runs
  // back to back from 1 to 13, stage 2 ends 2 later.
  PipelineSchedule schedule = makeSchedule(kGPipe, 3, 4);
  std::vector<PhaseTimes> times = {
      PhaseTimes::forward(1), PhaseTimes::forward(3), PhaseTimes::forward(2)};
  EXPECT_DOUBLE_EQ(schedule.stepTime(times), 15);
  EXPECT_DOUBLE_EQ(schedule.criticalPathTime(times), 15);
  ScheduleTimeline timeline = schedule.simulate(times);
  EXPECT_DOUBLE_EQ(timeline.intervals[1][3].end, 13);
  EXPECT_DOUBLE_EQ(timeline.intervals[2][3].start, 13);
  // Busy 4 * 6 of 3 * 15.
  EXPECT_DOUBLE_EQ(schedule.bubbleFraction(times), 1 - 24.0 / 45.0);
}

TEST(PipelineScheduleTest, ForwardOnlyGPipeIsTheClosedFormBitForBit) {
  std::mt19937_64 random(13);
  std::uniform_real_distribution<double> seconds(1e-6, 1e-2);
  for (int trial = 0; trial < 1000; ++trial) {
    int64_t stages = 1 + trial % 9;
    int64_t microbatches = 1 + (trial * 7) % 67;
    std::vector<PhaseTimes> times;
    double sum = 0, max = 0;
    for (int64_t stage = 0; stage < stages; ++stage) {
      double time = seconds(random);
      // Ties, and near ties (one rounding step apart), between stages.
      if (stage > 0 && trial % 5 == 0)
        time = times.front()[F];
      if (stage > 0 && trial % 5 == 1)
        time = std::nextafter(times[stage - 1][F], stage % 2 ? 0.0 : 1.0);
      times.push_back(PhaseTimes::forward(time));
      sum += time;
      max = std::max(max, time);
    }
    double closedForm = sum + static_cast<double>(microbatches - 1) * max;
    PipelineSchedule schedule = makeSchedule(kGPipe, stages, microbatches);
    EXPECT_EQ(schedule.stepTime(times), closedForm)
        << stages << " stages, " << microbatches << " microbatches";
    // The simulation finds the same critical path, to the bit.
    EXPECT_EQ(schedule.criticalPathTime(times), closedForm)
        << stages << " stages, " << microbatches << " microbatches";
    double busy = 0;
    for (const PhaseTimes &stage : times)
      busy += static_cast<double>(microbatches) * stage[F];
    EXPECT_EQ(schedule.bubbleFraction(times, closedForm),
              1.0 - busy / (static_cast<double>(stages) * closedForm));
  }
}

TEST(PipelineScheduleTest, ActivationsHeld) {
  PipelineSchedule gpipe = makeSchedule(kGPipe, 4, 8, {F, B});
  PipelineSchedule oneFOneB = makeSchedule(k1F1B, 4, 8, {F, B});
  for (int64_t stage = 0; stage < 4; ++stage) {
    EXPECT_EQ(gpipe.activationsHeld(stage), 8);
    EXPECT_EQ(oneFOneB.activationsHeld(stage), 4 - stage);
  }
  EXPECT_EQ(oneFOneB.maxActivationsHeld(), 4);
  // Fewer microbatches than the warm-up: all of them.
  EXPECT_EQ(makeSchedule(k1F1B, 4, 2, {F, B}).activationsHeld(0), 2);
  // Forward only: the microbatches in the pipeline at once, min(m, p).
  EXPECT_EQ(makeSchedule(kGPipe, 4, 8).activationsHeld(2), 4);
  EXPECT_EQ(makeSchedule(kGPipe, 4, 2).activationsHeld(0), 2);
  EXPECT_EQ(makeSchedule(kGPipe, 1, 5).activationsHeld(0), 1);
}

TEST(PipelineScheduleTest, InterleavedOrder) {
  // p = 2, v = 2, m = 4: chunk c of device s is virtual stage 2c + s. The
  // warm-up of device s is 2 (p - s - 1) + (v - 1) p forwards; microbatches
  // go in groups of p through chunk 0, then chunk 1; backwards take the
  // chunks the other way.
  ScheduleChoice interleaved{ScheduleKind::Interleaved, 2};
  PipelineSchedule schedule = makeSchedule(interleaved, 2, 4, {F, B});
  EXPECT_EQ(schedule.getNumVirtualStages(), 4);
  EXPECT_EQ(spell(schedule.getOrder(0), true),
            "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 "
            "B2.1 B3.1 B2.0 B3.0");
  EXPECT_EQ(spell(schedule.getOrder(1), true),
            "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 "
            "F3.1 B3.1 B2.0 B3.0");
  EXPECT_EQ(schedule.activationsHeld(0), 5);
  EXPECT_EQ(schedule.activationsHeld(1), 3);

  // Per chunk F = 1, B = 2 (half a device's layers each).
  std::vector<PhaseTimes> times = uniformTimes(4, 1, 2);
  ScheduleTimeline timeline = schedule.simulate(times);
  EXPECT_EQ(timeline.intervals[0].size(), 16u);
  EXPECT_EQ(timeline.intervals[1].size(), 16u);
  double step = schedule.stepTime(times);
  EXPECT_DOUBLE_EQ(step, timeline.makespan);
  // Device 0 runs F0.0-F2.0 back to back (F0.1 gets F0.0 back from device
  // 1 at 2); B0.1 waits for B0 of the last chunk on device 1 (4-6).
  EXPECT_DOUBLE_EQ(timeline.intervals[0][4].end, 5);
  EXPECT_DOUBLE_EQ(timeline.intervals[0][5].start, 6);
  // 24 of work per device plus Megatron's interleaved bubble
  // (p - 1)(F + B) / v = 1 * 6 / 2 (with F, B a device's whole times).
  EXPECT_DOUBLE_EQ(step, 27);
  EXPECT_DOUBLE_EQ(schedule.bubbleFraction(times), 1.0 / 9.0);
  // The same work without chunks (F = 2, B = 4 per device) under 1F1B
  // takes (m + p - 1)(F + B) = 30; interleaving shrinks the bubble.
  PipelineSchedule plain = makeSchedule(k1F1B, 2, 4, {F, B});
  EXPECT_DOUBLE_EQ(plain.stepTime(uniformTimes(2, 2, 4)), 30);
  EXPECT_LT(step, 30);
  EXPECT_GE(step, 24);

  // Forward only: every forward, group by group.
  EXPECT_EQ(spell(makeSchedule(interleaved, 2, 4).getOrder(0), true),
            "F0.0 F1.0 F0.1 F1.1 F2.0 F3.0 F2.1 F3.1");
}

TEST(PipelineScheduleTest, Rules) {
  auto fails = [](ScheduleChoice choice, int64_t stages, int64_t microbatches,
                  llvm::ArrayRef<PipelinePhase> phases,
                  llvm::StringRef message) {
    PipelineScheduleOptions options;
    options.choice = choice;
    options.numStages = stages;
    options.numMicrobatches = microbatches;
    options.phases.assign(phases.begin(), phases.end());
    llvm::Expected<PipelineSchedule> schedule =
        PipelineSchedule::create(options);
    if (schedule) {
      ADD_FAILURE() << "accepted: " << message.str();
      return;
    }
    EXPECT_NE(llvm::toString(schedule.takeError()).find(message.str()),
              std::string::npos)
        << message.str();
  };
  ScheduleChoice interleaved{ScheduleKind::Interleaved, 2};
  fails(interleaved, 4, 6, {F}, "must be a multiple of 4, got 6");
  fails({ScheduleKind::Interleaved, 1}, 2, 2, {F}, "at least 2 model chunks");
  fails({ScheduleKind::GPipe, 2}, 2, 2, {F}, "only the interleaved");
  fails(kGPipe, 0, 2, {F}, "at least one stage");
  fails(kGPipe, 2, 2, {B}, "must start with forward");
  fails(kGPipe, 2, 2, {F, B, R}, "in the order");
  fails(kGPipe, 2, 2, {F, U}, "need a backward");
}

TEST(PipelineScheduleTest, ParsesChoices) {
  auto parse = [](llvm::StringRef text) -> std::string {
    llvm::Expected<ScheduleChoice> choice = ScheduleChoice::parse(text);
    if (!choice) {
      llvm::consumeError(choice.takeError());
      return "error";
    }
    return choice->str();
  };
  EXPECT_EQ(parse("gpipe"), "gpipe");
  EXPECT_EQ(parse("1f1b"), "1f1b");
  EXPECT_EQ(parse("interleaved"), "interleaved:2");
  EXPECT_EQ(parse("interleaved:4"), "interleaved:4");
  EXPECT_EQ(parse("interleaved:1"), "error");
  EXPECT_EQ(parse("interleaved:x"), "error");
  EXPECT_EQ(parse("gpipe:2"), "error");
  EXPECT_EQ(parse("pipedream"), "error");
  EXPECT_EQ(parse(""), "error");
  EXPECT_EQ(stringifyPipelinePhase(R), "recompute");
  EXPECT_EQ(parsePipelinePhase("backward"), B);
  EXPECT_EQ(parsePipelinePhase("sideways"), std::nullopt);
}

} // namespace
