//===- StagePartitioner.cpp - contiguous pipeline stages --------*- C++ -*-===//
//
// dp[k][j] is the best cost of running segments [0, j) as k stages. A stage
// range grows to the left while its time stays below the best found for its
// end, so the work per end is about one stage's length, not the whole model.
// A range is costed per class of segments (from prefix counts), so that
// choosing which of its segments take the lean sharding costs the number of
// classes, not the range's length.
//
//===----------------------------------------------------------------------===//

#include "cleave/Plan/StagePartitioner.h"

#include "cleave/Analysis/Cost/Target.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <vector>

using namespace cleave;

double StageSplit::maxStageTime() const {
  double result = 0;
  for (const StageRange &stage : stages)
    result = std::max(result, stage.time());
  return result;
}

double StageSplit::sumStageTime() const {
  double result = 0;
  for (const StageRange &stage : stages)
    result += stage.time();
  return result;
}

PhaseTimes StageRange::phaseTimes() const {
  PhaseTimes times;
  times[PipelinePhase::Forward] = (segmentTime - recomputeTime - backwardTime) +
                                  (sendTime - backwardSendTime);
  times[PipelinePhase::Recompute] = recomputeTime;
  times[PipelinePhase::Backward] = backwardTime + backwardSendTime;
  times[PipelinePhase::Update] = update.total();
  return times;
}

std::vector<PhaseTimes> cleave::getStageTimes(const StageSplit &split) {
  std::vector<PhaseTimes> times;
  for (const StageRange &stage : split.stages)
    times.push_back(stage.phaseTimes());
  return times;
}

int64_t StageSplit::largestStage() const {
  int64_t largest = 0;
  for (size_t k = 1; k < stages.size(); ++k)
    if (stages[k].memory.total() > stages[largest].memory.total())
      largest = static_cast<int64_t>(k);
  return largest;
}

namespace {

/// What the segments of a range add up to under one choice of candidates.
struct CandidateSums {
  /// Seconds per microbatch (with the sends when the caller starts from
  /// them), with the data in the caches.
  double time = 0;
  /// What `time` grows by with all of the data out of the caches.
  double missTime = 0;
  double recomputeTime = 0;
  double backwardTime = 0;
  int64_t weights = 0;
  int64_t gradients = 0;
  int64_t optimizerState = 0;
  int64_t saved = 0;
  TrainableParameters trainable;
  int64_t recomputed = 0;
  /// Largest over the segments.
  int64_t peak = 0;
  int64_t message = 0;

  /// Adds `n` segments taking `candidate`; the training terms only when
  /// `training` (for inference they are zero).
  void add(const SegmentCandidate &candidate, int64_t n, bool training) {
    auto count = static_cast<double>(n);
    time += count * candidate.time;
    missTime += count * candidate.missTime;
    weights += n * candidate.weightBytes;
    peak = std::max(peak, candidate.peakActivationBytes);
    message = std::max(message, candidate.largestMessageBytes);
    if (training)
      addTraining(candidate.training, n);
  }

  void addTraining(const SegmentTrainingCost &training, int64_t n) {
    auto count = static_cast<double>(n);
    recomputeTime += count * training.recomputeTime;
    backwardTime += count * training.backwardTime;
    gradients += n * training.gradientBytes;
    optimizerState += n * training.optimizerStateBytes;
    saved += n * training.savedActivationBytes;
    trainable += {n * training.trainable.elements, n * training.trainable.bytes,
                  n * training.trainable.masterBytes};
    recomputed += training.recomputes ? n : 0;
  }

  /// The sums of the segments past `before` (a prefix of this one), without
  /// the maxima.
  CandidateSums since(const CandidateSums &before) const {
    CandidateSums result;
    result.time = time - before.time;
    result.missTime = missTime - before.missTime;
    result.recomputeTime = recomputeTime - before.recomputeTime;
    result.backwardTime = backwardTime - before.backwardTime;
    result.weights = weights - before.weights;
    result.gradients = gradients - before.gradients;
    result.optimizerState = optimizerState - before.optimizerState;
    result.saved = saved - before.saved;
    result.trainable = {trainable.elements - before.trainable.elements,
                        trainable.bytes - before.trainable.bytes,
                        trainable.masterBytes - before.trainable.masterBytes};
    result.recomputed = recomputed - before.recomputed;
    return result;
  }
};

/// A range as the dynamic program sees it.
struct RangeCost {
  bool fits = false;
  /// Seconds per microbatch, with the share of the miss times that the
  /// range's memory keeps out of the caches (`missFraction`).
  double time = 0;
  double missFraction = 0;
  DeviceMemory memory;
  /// The choice's sums (`sums.time` without the sends).
  CandidateSums sums;
  /// Per class, how many of its segments in the range take each candidate.
  llvm::SmallVector<llvm::SmallVector<int64_t, 4>> levelCounts;
  /// Per segment of the range, its candidate, when chosen one by one (short
  /// ranges); empty when chosen by class.
  llvm::SmallVector<int64_t, 8> segmentLevels;
};

/// Ranges of at most this many segments, whose candidate combinations number
/// at most `kExactCombinations`, are costed exactly.
constexpr int64_t kExactSegments = 8;
constexpr int64_t kExactCombinations = 1 << 14;

/// Above this many distinct segments, ranges are first costed from prefix
/// sums and range maxima over the segments (constant time per range), and
/// per class only when the fastest choice does not fit. A training step
/// always is: the microbatches a stage holds differ from stage to stage, so
/// a range is costed once per count, and most fit with the fastest choice.
constexpr size_t kManyClasses = 256;

/// The largest value over any range of a fixed array in constant time.
class RangeMax {
public:
  RangeMax() = default;
  explicit RangeMax(std::vector<int64_t> values) {
    levels.push_back(std::move(values));
    size_t n = levels[0].size();
    for (size_t width = 2; width <= n; width *= 2) {
      const std::vector<int64_t> &below = levels.back();
      std::vector<int64_t> level(n - width + 1);
      for (size_t i = 0; i < level.size(); ++i)
        level[i] = std::max(below[i], below[i + width / 2]);
      levels.push_back(std::move(level));
    }
  }
  /// The maximum over [first, last].
  int64_t get(int64_t first, int64_t last) const {
    size_t length = static_cast<size_t>(last - first + 1);
    size_t level = llvm::Log2_64(length);
    return std::max(levels[level][first],
                    levels[level][last + 1 - (int64_t{1} << level)]);
  }

private:
  std::vector<std::vector<int64_t>> levels;
};

/// One step of a class down its candidates: from `level` to `level + 1`.
struct CandidateStep {
  int64_t segmentClass = 0;
  int64_t from = 0;
  int64_t to = 0;
  int64_t savedBytes = 0;
  double pricePerByte = 0;
};

/// The candidates (by index) on the lower convex hull of (footprint, time)
/// with `held` microbatches held, from the fastest to the leanest: stepping
/// along them, each byte saved costs more time than the one before.
llvm::SmallVector<int64_t> lowerHull(const std::vector<SegmentCandidate> &list,
                                     int64_t held) {
  llvm::SmallVector<int64_t> order;
  for (size_t i = 0; i < list.size(); ++i)
    order.push_back(static_cast<int64_t>(i));
  llvm::sort(order, [&](int64_t a, int64_t b) {
    if (list[a].footprint(held) != list[b].footprint(held))
      return list[a].footprint(held) > list[b].footprint(held);
    return list[a].time < list[b].time;
  });
  auto price = [&](int64_t from, int64_t to) {
    return (list[to].time - list[from].time) /
           static_cast<double>(list[from].footprint(held) -
                               list[to].footprint(held));
  };
  llvm::SmallVector<int64_t> hull;
  for (int64_t point : order) {
    // A lighter point that is no slower makes the heavier ones pointless.
    while (!hull.empty() && list[point].time <= list[hull.back()].time)
      hull.pop_back();
    while (hull.size() >= 2 && price(hull[hull.size() - 2], hull.back()) >=
                                   price(hull.back(), point))
      hull.pop_back();
    hull.push_back(point);
  }
  return hull;
}

/// Costs stage ranges from per-class prefix counts.
class StageRangeEvaluator {
public:
  /// `leastMemory`: the dynamic program looks for the split of least
  /// memory, and needs the memory of ranges that do not fit.
  StageRangeEvaluator(const StageSplitProblem &problem,
                      const StageSplitOptions &options,
                      bool leastMemory = false)
      : problem(problem), options(options), leastMemory(leastMemory) {
    int64_t numSegments = problem.numSegments();
    classOf.resize(numSegments);
    for (int64_t i = 0; i < numSegments; ++i)
      classOf[i] = problem.segmentClass.empty() ? i : problem.segmentClass[i];
    int64_t numClasses =
        numSegments == 0
            ? 0
            : *std::max_element(classOf.begin(), classOf.end()) + 1;
    representative.assign(numClasses, -1);
    for (int64_t i = numSegments - 1; i >= 0; --i)
      representative[classOf[i]] = i;
    positions.assign(numClasses, {});
    for (int64_t i = 0; i < numSegments; ++i)
      positions[classOf[i]].push_back(i);
    for (int64_t c = 0; c < numClasses; ++c)
      if (representative[c] >= 0)
        classes.push_back(c);
    if (classes.size() <= kManyClasses) {
      prefixCounts.assign(numClasses, {});
      for (int64_t c : classes) {
        std::vector<int64_t> &prefix = prefixCounts[c];
        prefix.assign(numSegments + 1, 0);
        for (int64_t i = 0; i < numSegments; ++i)
          prefix[i + 1] = prefix[i] + (classOf[i] == c ? 1 : 0);
      }
    }
    leastFixed.assign(numClasses, 0);
    leastSaved.assign(numClasses, 0);
    leastPeak.assign(numClasses, 0);
    for (int64_t c : classes) {
      leastFixed[c] = leastSaved[c] = leastPeak[c] =
          std::numeric_limits<int64_t>::max();
      for (const SegmentCandidate &candidate : candidatesOf(c)) {
        leastFixed[c] = std::min(leastFixed[c], candidate.footprint(0));
        leastSaved[c] =
            std::min(leastSaved[c], candidate.training.savedActivationBytes);
        leastPeak[c] = std::min(leastPeak[c], candidate.peakActivationBytes);
      }
    }
    if (classes.size() > kManyClasses || options.training)
      buildPrefixes();
  }
  // The summary cache points into itself.
  StageRangeEvaluator(const StageRangeEvaluator &) = delete;
  StageRangeEvaluator &operator=(const StageRangeEvaluator &) = delete;

  /// A stage that does not fit takes the steps that cost the least time
  /// per byte saved first; along a convex hull a class's steps come in
  /// order. What a step saves depends on the microbatches held.
  const std::vector<CandidateStep> &getSteps(int64_t held) const {
    auto [it, inserted] = steps.try_emplace(held);
    if (!inserted)
      return it->second;
    std::vector<CandidateStep> &result = it->second;
    for (int64_t c : classes) {
      const auto &list = candidatesOf(c);
      llvm::SmallVector<int64_t> hull = lowerHull(list, held);
      for (size_t i = 0; i + 1 < hull.size(); ++i) {
        const SegmentCandidate &from = list[hull[i]], &to = list[hull[i + 1]];
        int64_t saved = from.footprint(held) - to.footprint(held);
        double price = (to.time - from.time) /
                       static_cast<double>(std::max<int64_t>(saved, 1));
        result.push_back({c, hull[i], hull[i + 1], saved, price});
      }
    }
    std::stable_sort(result.begin(), result.end(),
                     [](const CandidateStep &a, const CandidateStep &b) {
                       return a.pricePerByte < b.pricePerByte;
                     });
    return result;
  }

  /// Prefix sums and range maxima over the segments, for models of many
  /// distinct segments.
  void buildPrefixes() {
    int64_t n = problem.numSegments();
    fastTimePrefix.assign(n + 1, 0);
    fastPrefix.assign(n + 1, {});
    leastFixedPrefix.assign(n + 1, 0);
    leastSavedPrefix.assign(n + 1, 0);
    std::vector<int64_t> fastPeak(n), fastMessage(n), leastPeak(n);
    for (int64_t i = 0; i < n; ++i) {
      const std::vector<SegmentCandidate> &list = problem.candidates[i];
      fastTimePrefix[i + 1] = fastTimePrefix[i] + list.front().time;
      fastPrefix[i + 1] = fastPrefix[i];
      fastPrefix[i + 1].add(list.front(), 1, /*training=*/true);
      int64_t leastFixed = std::numeric_limits<int64_t>::max();
      int64_t leastSaved = std::numeric_limits<int64_t>::max();
      leastPeak[i] = std::numeric_limits<int64_t>::max();
      for (const SegmentCandidate &candidate : list) {
        leastFixed = std::min(leastFixed, candidate.footprint(0));
        leastSaved =
            std::min(leastSaved, candidate.training.savedActivationBytes);
        leastPeak[i] = std::min(leastPeak[i], candidate.peakActivationBytes);
      }
      leastFixedPrefix[i + 1] = leastFixedPrefix[i] + leastFixed;
      leastSavedPrefix[i + 1] = leastSavedPrefix[i] + leastSaved;
      fastPeak[i] = list.front().peakActivationBytes;
      fastMessage[i] = list.front().largestMessageBytes;
    }
    fastPeakMax = RangeMax(std::move(fastPeak));
    fastMessageMax = RangeMax(std::move(fastMessage));
    leastPeakMax = RangeMax(std::move(leastPeak));
  }

  bool hasPrefixes() const { return !fastTimePrefix.empty(); }

  const std::vector<SegmentCandidate> &candidatesOf(int64_t c) const {
    return problem.candidates[representative[c]];
  }

  /// The microbatches stage `stage` holds for their backward (or buffers
  /// the inputs of).
  int64_t getHeld(int64_t stage) const {
    if (options.heldMicrobatches.empty())
      return options.inFlightMicrobatches;
    auto last = static_cast<int64_t>(options.heldMicrobatches.size()) - 1;
    return options.heldMicrobatches[std::min(stage, last)];
  }

  /// Seconds to send the outputs of segment `last` on from stage `stage`;
  /// none from the last stage (or from `numStages`: no stage).
  double sendTime(int64_t stage, int64_t last) const {
    if (stage + 1 >= options.numStages)
      return 0;
    bool crosses = stage < static_cast<int64_t>(options.sendCrossesNodes.size())
                       ? options.sendCrossesNodes[stage]
                       : true;
    return crosses ? problem.sendTimeInterNode[last]
                   : problem.sendTimeIntraNode[last];
  }

  /// In a training step, seconds to send the gradients of stage `stage`'s
  /// inputs (the outputs of segment `first - 1`) back to the stage before.
  double backwardSendTime(int64_t stage, int64_t first) const {
    if (!options.training || stage <= 0 || stage >= options.numStages)
      return 0;
    return sendTime(stage - 1, first - 1);
  }

  /// All the sends of stage `stage` running [first, last], per microbatch.
  double stageSendTime(int64_t stage, int64_t first, int64_t last) const {
    return sendTime(stage, last) + backwardSendTime(stage, first);
  }

  int64_t count(int64_t c, int64_t first, int64_t last) const {
    if (!prefixCounts.empty())
      return prefixCounts[c][last + 1] - prefixCounts[c][first];
    const std::vector<int64_t> &at = positions[c];
    return std::upper_bound(at.begin(), at.end(), last) -
           std::lower_bound(at.begin(), at.end(), first);
  }

  /// A lower bound on the memory of any choice over [first, last] holding
  /// `held` microbatches: it only grows as the range does.
  int64_t memoryLowerBound(int64_t first, int64_t last, int64_t held) const {
    if (hasPrefixes())
      return leastFixedPrefix[last + 1] - leastFixedPrefix[first] +
             held * (leastSavedPrefix[last + 1] - leastSavedPrefix[first]) +
             leastPeakMax.get(first, last);
    int64_t footprint = 0, peak = 0;
    for (int64_t c : classes) {
      int64_t n = count(c, first, last);
      if (n == 0)
        continue;
      footprint += n * (leastFixed[c] + held * leastSaved[c]);
      peak = std::max(peak, leastPeak[c]);
    }
    return footprint + peak;
  }

  /// Time of the range with every segment fastest (a lower bound: later
  /// candidates are never faster).
  double fastTime(int64_t stage, int64_t first, int64_t last) const {
    if (hasPrefixes())
      return stageSendTime(stage, first, last) + fastTimePrefix[last + 1] -
             fastTimePrefix[first];
    double time = stageSendTime(stage, first, last);
    for (int64_t c : classes)
      if (int64_t n = count(c, first, last))
        time += static_cast<double>(n) * candidatesOf(c).front().time;
    return time;
  }

  /// What the dynamic program reads of a range, computed once per range.
  struct RangeSummary {
    bool fits = false;
    double time = 0;
    int64_t memory = 0;
    /// Bounds that only grow as the range grows to the left: the time with
    /// every segment fastest, the least memory any choice needs.
    double fastTime = 0;
    int64_t memoryLowerBound = 0;
  };

  RangeSummary summarize(int64_t stage, int64_t first, int64_t last) const {
    int64_t held = getHeld(stage);
    RangeSummary summary;
    // A training step holds a different count on each stage, so that a range
    // is costed per count; when its fastest choice fits, that takes constant
    // time and is not worth keeping.
    if (!options.training || !summarizeFastest(first, last, held, summary)) {
      std::optional<RangeSummary> &entry = summaryEntry(first, last, held);
      if (!entry)
        entry = summarizeRange(first, last, held);
      summary = *entry;
    }
    double send = stageSendTime(stage, first, last);
    summary.time += send;
    summary.fastTime += send;
    return summary;
  }

  /// Where the summary of [first, last] holding `held` is kept. The dynamic
  /// program grows ranges leftwards from their last segment, so each last
  /// segment keeps a column of the ranges it has been looked at with, by
  /// length: a lookup is two indexings, and the table holds as many entries
  /// as the program visits, not every pair of segments.
  std::optional<RangeSummary> &summaryEntry(int64_t first, int64_t last,
                                            int64_t held) const {
    if (!summaryColumns || summaryHeld != held) {
      summaryColumns = &summaries[held];
      summaryHeld = held;
      if (summaryColumns->empty())
        summaryColumns->resize(problem.numSegments());
    }
    std::vector<std::optional<RangeSummary>> &column = (*summaryColumns)[last];
    auto length = static_cast<size_t>(last - first);
    if (column.size() <= length)
      column.resize(length + 1);
    return column[length];
  }

  /// The segments' part of a range's summary (no stage sends past the
  /// last); the send depends on the stage.
  RangeSummary summarizeRange(int64_t first, int64_t last, int64_t held) const {
    RangeSummary summary;
    if (summarizeFastest(first, last, held, summary))
      return summary;
    double fast = fastTime(options.numStages, first, last);
    int64_t lowerBound = memoryLowerBound(first, last, held);
    // A range that cannot fit only stops the dynamic program, unless it
    // looks for the least memory, fitting or not.
    if (lowerBound > options.memoryLimitBytes && !leastMemory)
      return {false, fast, lowerBound, fast, lowerBound};
    RangeCost cost = evaluate(options.numStages, first, last, held);
    return {cost.fits, cost.time, cost.memory.total(), fast, lowerBound};
  }

  /// With prefix sums: the summary of a range whose fastest choice fits, in
  /// constant time; false when it does not fit or there are no prefixes.
  bool summarizeFastest(int64_t first, int64_t last, int64_t held,
                        RangeSummary &summary) const {
    if (!hasPrefixes())
      return false;
    CandidateSums sums = fastPrefix[last + 1].since(fastPrefix[first]);
    sums.peak = fastPeakMax.get(first, last);
    sums.message = fastMessageMax.get(first, last);
    int64_t memory = rangeMemory(first, last, sums, held).total();
    if (memory > options.memoryLimitBytes)
      return false;
    double fast = fastTime(options.numStages, first, last);
    summary = {true, fast + missFraction(memory) * sums.missTime, memory, fast,
               memoryLowerBound(first, last, held)};
    return true;
  }

  RangeCost evaluate(int64_t stage, int64_t first, int64_t last) const {
    return evaluate(stage, first, last, getHeld(stage));
  }

  /// The range on stage `stage` (`numStages`: without sends) holding `held`
  /// microbatches.
  RangeCost evaluate(int64_t stage, int64_t first, int64_t last,
                     int64_t held) const {
    // A training step costs per class throughout: its segments have twice
    // the candidates (with and without recomputation), and its ranges are
    // costed once per count of microbatches held.
    if (last - first + 1 <= kExactSegments && !options.training) {
      double combinations = 1;
      for (int64_t i = first; i <= last; ++i)
        combinations *= static_cast<double>(problem.candidates[i].size());
      if (combinations <= kExactCombinations)
        return evaluateExactly(stage, first, last, held);
    }
    return evaluateByClass(stage, first, last, held);
  }

  /// Every combination of the segments' candidates (without those another
  /// beats in time and every memory term): the fastest that fits, or the
  /// one of least memory when none does.
  RangeCost evaluateExactly(int64_t stage, int64_t first, int64_t last,
                            int64_t held) const {
    auto key = std::make_tuple(first, last, held);
    auto cached = exactCache.find(key);
    if (cached == exactCache.end()) {
      struct Combination {
        CandidateSums sums;
        llvm::SmallVector<int64_t, 8> levels;
      };
      auto dominates = [&](const Combination &a, const Combination &b) {
        return a.sums.time <= b.sums.time &&
               a.sums.missTime <= b.sums.missTime &&
               a.sums.weights + a.sums.gradients + a.sums.optimizerState +
                       held * a.sums.saved <=
                   b.sums.weights + b.sums.gradients + b.sums.optimizerState +
                       held * b.sums.saved &&
               a.sums.peak <= b.sums.peak && a.sums.message <= b.sums.message;
      };
      std::vector<Combination> combinations(1);
      for (int64_t i = first; i <= last; ++i) {
        std::vector<Combination> next;
        for (const Combination &partial : combinations)
          for (auto [level, candidate] :
               llvm::enumerate(problem.candidates[i])) {
            Combination combined = partial;
            combined.sums.add(candidate, 1, options.training);
            combined.levels.push_back(static_cast<int64_t>(level));
            if (llvm::any_of(next, [&](const Combination &kept) {
                  return dominates(kept, combined);
                }))
              continue;
            llvm::erase_if(next, [&](const Combination &kept) {
              return dominates(combined, kept);
            });
            next.push_back(std::move(combined));
          }
        combinations = std::move(next);
      }
      std::vector<RangeCost> costs;
      for (const Combination &combination : combinations) {
        RangeCost cost;
        cost.sums = combination.sums;
        cost.memory = rangeMemory(first, last, combination.sums, held);
        cost.fits = cost.memory.total() <= options.memoryLimitBytes;
        cost.missFraction = missFraction(cost.memory.total());
        cost.time =
            combination.sums.time + cost.missFraction * cost.sums.missTime;
        cost.segmentLevels = combination.levels;
        costs.push_back(std::move(cost));
      }
      auto better = [](const RangeCost &a, const RangeCost &b) {
        if (a.fits != b.fits)
          return a.fits;
        if (a.fits)
          return a.time < b.time;
        return a.memory.total() < b.memory.total();
      };
      cached = exactCache
                   .emplace(key, *std::min_element(costs.begin(), costs.end(),
                                                   better))
                   .first;
    }
    RangeCost cost = cached->second;
    cost.time += stageSendTime(stage, first, last);
    return cost;
  }

  /// The share of a range's data out of the caches when it holds `memory`
  /// bytes.
  double missFraction(int64_t memory) const {
    return getCacheMissFraction(problem.cacheBytes,
                                static_cast<double>(memory));
  }

  DeviceMemory rangeMemory(int64_t first, int64_t last,
                           const CandidateSums &sums, int64_t held) const {
    int64_t input =
        first == 0 ? problem.inputBytes : problem.outputBytes[first - 1];
    bool sends = last + 1 < problem.numSegments();
    DeviceMemory memory;
    memory.weights = sums.weights;
    memory.gradients = sums.gradients;
    memory.optimizerState = sums.optimizerState;
    memory.activations = sums.peak + held * (input + sums.saved);
    memory.communication =
        sums.message + (sends ? problem.outputBytes[last] : 0) +
        (options.training
             ? options.training->getCommunicationBytes(sums.trainable)
             : 0);
    return memory;
  }

  /// Per class: every segment fastest, then the cheapest hull steps until
  /// the range fits.
  RangeCost evaluateByClass(int64_t stage, int64_t first, int64_t last,
                            int64_t held) const {
    RangeCost cost;
    cost.levelCounts.resize(representative.size());
    for (int64_t c : classes) {
      cost.levelCounts[c].assign(candidatesOf(c).size(), 0);
      cost.levelCounts[c][0] = count(c, first, last);
    }
    double send = stageSendTime(stage, first, last);
    auto compute = [&](RangeCost &cost) {
      CandidateSums sums;
      sums.time = send;
      for (int64_t c : classes) {
        const auto &list = candidatesOf(c);
        for (size_t level = 0; level < list.size(); ++level)
          if (int64_t n = cost.levelCounts[c][level])
            sums.add(list[level], n, options.training);
      }
      sums.time -= send;
      cost.sums = sums;
      cost.memory = rangeMemory(first, last, sums, held);
      cost.fits = cost.memory.total() <= options.memoryLimitBytes;
      cost.missFraction = missFraction(cost.memory.total());
      cost.time = send + sums.time + cost.missFraction * sums.missTime;
    };
    compute(cost);
    const std::vector<CandidateStep> &steps = getSteps(held);
    for (const CandidateStep &step : steps) {
      if (cost.fits)
        break;
      int64_t &from = cost.levelCounts[step.segmentClass][step.from];
      int64_t &to = cost.levelCounts[step.segmentClass][step.to];
      if (from == 0)
        continue;
      // Just enough segments of this class; all of them when the step
      // changes more than the weights.
      int64_t excess = cost.memory.total() - options.memoryLimitBytes;
      int64_t moved =
          std::min(from, (excess + step.savedBytes - 1) / step.savedBytes);
      from -= moved;
      to += moved;
      compute(cost);
      if (!cost.fits && from > 0) {
        to += from;
        from = 0;
        compute(cost);
      }
    }
    return cost;
  }

  StageRange toRange(int64_t stage, int64_t first, int64_t last,
                     const RangeCost &cost) const {
    StageRange range;
    range.firstSegment = first;
    range.lastSegment = last;
    range.sendTime = stageSendTime(stage, first, last);
    range.backwardSendTime = backwardSendTime(stage, first);
    range.segmentTime = cost.time - range.sendTime;
    range.missFraction = cost.missFraction;
    range.memory = cost.memory;
    range.recomputeTime = cost.sums.recomputeTime;
    range.backwardTime = cost.sums.backwardTime;
    range.trainable = cost.sums.trainable;
    range.numRecomputed = cost.sums.recomputed;
    if (options.training)
      range.update = options.training->getUpdateCost(cost.sums.trainable,
                                                     cost.sums.backwardTime);
    if (!cost.segmentLevels.empty()) {
      range.level.assign(cost.segmentLevels.begin(), cost.segmentLevels.end());
      return range;
    }
    // The first segments of each class in the range take its later
    // candidates.
    auto remaining = cost.levelCounts;
    for (int64_t i = first; i <= last; ++i) {
      auto &levels = remaining[classOf[i]];
      int64_t level = static_cast<int64_t>(levels.size()) - 1;
      while (level > 0 && levels[level] == 0)
        --level;
      --levels[level];
      range.level.push_back(level);
    }
    return range;
  }

private:
  const StageSplitProblem &problem;
  const StageSplitOptions &options;
  bool leastMemory;
  std::vector<int64_t> classOf;
  /// First segment of each class (-1 for unused class numbers).
  std::vector<int64_t> representative;
  /// positions[c]: the segments of class c, in order (memory linear in the
  /// segments however many classes there are).
  std::vector<std::vector<int64_t>> positions;
  /// With at most `kManyClasses` classes, prefixCounts[c][i]: the segments
  /// of class c before segment i, so that a count is two reads (the
  /// memory, classes x segments, stays small); empty otherwise.
  std::vector<std::vector<int64_t>> prefixCounts;
  std::vector<int64_t> classes;
  /// Per class, the least of its candidates' footprints without saved
  /// activations, saved activations and peaks (each on its own: together a
  /// lower bound).
  std::vector<int64_t> leastFixed, leastSaved, leastPeak;
  /// The hull steps per count of microbatches held.
  mutable std::map<int64_t, std::vector<CandidateStep>> steps;
  /// With many classes or in a training step: per segment boundary, sums of
  /// the fastest times and candidates, of the least footprints without the
  /// saved activations and of the least saved activations; range maxima of
  /// the fastest peaks and messages and of the least peaks. Empty otherwise.
  std::vector<double> fastTimePrefix;
  std::vector<CandidateSums> fastPrefix;
  std::vector<int64_t> leastFixedPrefix, leastSavedPrefix;
  RangeMax fastPeakMax, fastMessageMax, leastPeakMax;
  /// Exact costs of short ranges per count held, without the send.
  mutable std::map<std::tuple<int64_t, int64_t, int64_t>, RangeCost> exactCache;
  /// Summaries of the ranges the dynamic program visited, without the send:
  /// per count held, per last segment, by length minus one
  /// (`summaryEntry`); the columns of the count last asked for.
  using SummaryColumns = std::vector<std::vector<std::optional<RangeSummary>>>;
  mutable std::map<int64_t, SummaryColumns> summaries;
  mutable SummaryColumns *summaryColumns = nullptr;
  mutable int64_t summaryHeld = 0;
};

/// A (primary, secondary) cost compared lexicographically.
struct SplitCost {
  double primary = std::numeric_limits<double>::infinity();
  double secondary = std::numeric_limits<double>::infinity();
  bool operator<(const SplitCost &other) const {
    if (primary != other.primary)
      return primary < other.primary;
    return secondary < other.secondary;
  }
  bool isFinite() const {
    return primary != std::numeric_limits<double>::infinity();
  }
};

struct SplitCell {
  SplitCost cost;
  int64_t parent = -1;
};

/// What one run of the dynamic program minimises.
enum class SplitGoal {
  /// The largest stage time, then the sum.
  MaxThenSum,
  /// The sum of stage times, then the largest.
  SumThenMax,
  /// The sum of stage times among splits whose stages all take at most a
  /// bound.
  SumUnderBound,
  /// The memory of the fullest stage, fitting or not.
  LeastMemory,
};

/// Where stages may start and end: every segment boundary of a model of up
/// to this many segments. A longer model is cut into this many blocks of
/// about equal time, and stages start and end between blocks, so that the
/// dynamic program (quadratic in the boundaries) costs the same for a
/// 100,000-node chain as for a 2,000-node one.
constexpr int64_t kMaxStageBoundaries = 1024;

/// The segment indices at which a stage may start, then the end of the
/// model: 0 = cuts[0] < cuts[1] < ... < cuts.back() = numSegments.
std::vector<int64_t> getStageBoundaries(const StageSplitProblem &problem,
                                        int64_t numStages) {
  int64_t numSegments = problem.numSegments();
  int64_t numBlocks =
      std::min(numSegments, std::max(kMaxStageBoundaries, 4 * numStages));
  std::vector<int64_t> cuts;
  cuts.reserve(numBlocks + 1);
  cuts.push_back(0);
  if (numBlocks == numSegments) {
    for (int64_t i = 1; i <= numSegments; ++i)
      cuts.push_back(i);
    return cuts;
  }
  // Blocks of about equal fastest time; at least one segment each, and
  // room left for the blocks after.
  double total = 0;
  for (int64_t i = 0; i < numSegments; ++i)
    total += problem.candidates[i].front().time;
  double prefix = 0;
  for (int64_t i = 0; i < numSegments; ++i) {
    prefix += problem.candidates[i].front().time;
    int64_t block = static_cast<int64_t>(cuts.size());
    if (block == numBlocks)
      break;
    bool timeReached =
        total > 0 && prefix >= total * static_cast<double>(block) /
                                   static_cast<double>(numBlocks);
    bool countReached = (i + 1) * numBlocks >= block * numSegments;
    bool mustCut = numSegments - (i + 1) <= numBlocks - block;
    if ((timeReached && countReached) || mustCut ||
        (total <= 0 && countReached))
      cuts.push_back(i + 1);
  }
  cuts.back() = numSegments;
  return cuts;
}

/// table[k][b]: the best k stages over the segments before boundary b.
using SplitTable = std::vector<std::vector<SplitCell>>;

/// Fills the table of the dynamic program; false when no split fits.
bool fillSplitTable(const StageRangeEvaluator &evaluator,
                    llvm::ArrayRef<int64_t> cuts,
                    const StageSplitOptions &options, SplitGoal goal,
                    double bound, SplitTable &table) {
  int64_t numStages = options.numStages;
  int64_t numBlocks = static_cast<int64_t>(cuts.size()) - 1;
  table.assign(numStages + 1, std::vector<SplitCell>(numBlocks + 1));
  table[0][0].cost = {0, 0};
  bool memoryOnly = goal == SplitGoal::LeastMemory;

  for (int64_t k = 1; k <= numStages; ++k) {
    // Every later stage needs at least one block, and the last stage ends
    // the model: one cell, so one stage costs linear time.
    int64_t lastEnd = numBlocks - (numStages - k);
    int64_t firstEnd = k == numStages ? numBlocks : k;
    for (int64_t end = firstEnd; end <= lastEnd; ++end) {
      SplitCell &cell = table[k][end];
      int64_t last = cuts[end] - 1;
      for (int64_t start = end - 1; start >= k - 1; --start) {
        int64_t first = cuts[start];
        auto range = evaluator.summarize(k - 1, first, last);
        if (!memoryOnly) {
          // The range only gets slower and fuller as it grows to the left
          // (a lean sharding is never faster than the fast one).
          if (goal == SplitGoal::MaxThenSum && cell.cost.isFinite() &&
              range.fastTime >= cell.cost.primary)
            break;
          if (goal == SplitGoal::SumUnderBound && range.fastTime > bound)
            break;
          if (range.memoryLowerBound > options.memoryLimitBytes)
            break;
        }
        const SplitCell &previous = table[k - 1][start];
        if (!previous.cost.isFinite())
          continue;
        SplitCost candidate;
        switch (goal) {
        case SplitGoal::MaxThenSum:
          if (!range.fits)
            continue;
          candidate = {std::max(previous.cost.primary, range.time),
                       previous.cost.secondary + range.time};
          break;
        case SplitGoal::SumThenMax:
          if (!range.fits)
            continue;
          candidate = {previous.cost.primary + range.time,
                       std::max(previous.cost.secondary, range.time)};
          break;
        case SplitGoal::SumUnderBound:
          if (!range.fits || range.time > bound)
            continue;
          candidate = {previous.cost.primary + range.time, 0};
          break;
        case SplitGoal::LeastMemory:
          candidate = {std::max(previous.cost.primary,
                                static_cast<double>(range.memory)),
                       0};
          break;
        }
        if (candidate < cell.cost) {
          cell.cost = candidate;
          cell.parent = start;
        }
      }
    }
  }
  return table[numStages][numBlocks].cost.isFinite();
}

/// Reads the stages of the best split back from the table.
StageSplit traceSplit(const StageRangeEvaluator &evaluator,
                      llvm::ArrayRef<int64_t> cuts,
                      const StageSplitOptions &options,
                      const SplitTable &table) {
  StageSplit split;
  split.stages.resize(options.numStages);
  split.fits = true;
  int64_t end = static_cast<int64_t>(cuts.size()) - 1;
  for (int64_t k = options.numStages; k > 0; --k) {
    int64_t start = table[k][end].parent;
    int64_t first = cuts[start], last = cuts[end] - 1;
    RangeCost cost = evaluator.evaluate(k - 1, first, last);
    split.stages[k - 1] = evaluator.toRange(k - 1, first, last, cost);
    split.fits &= cost.fits;
    end = start;
  }
  return split;
}

/// One stage holds every segment: the only split, without the dynamic
/// program (linear in the segments). None when it does not fit, unless
/// `evenIfFull`.
std::optional<StageSplit>
evaluateWholeModel(const StageRangeEvaluator &evaluator, int64_t numSegments,
                   bool evenIfFull = false) {
  RangeCost cost = evaluator.evaluate(0, 0, numSegments - 1);
  if (!cost.fits && !evenIfFull)
    return std::nullopt;
  StageSplit split;
  split.fits = cost.fits;
  split.stages.push_back(evaluator.toRange(0, 0, numSegments - 1, cost));
  return split;
}

} // namespace

StageRange cleave::evaluateStageRange(const StageSplitProblem &problem,
                                      const StageSplitOptions &options,
                                      int64_t stage, int64_t first,
                                      int64_t last, bool &fits) {
  StageRangeEvaluator evaluator(problem, options);
  RangeCost cost = evaluator.evaluate(stage, first, last);
  fits = cost.fits;
  return evaluator.toRange(stage, first, last, cost);
}

std::optional<StageSplit>
cleave::splitStages(const StageSplitProblem &problem,
                    const StageSplitOptions &options) {
  int64_t numSegments = problem.numSegments();
  int64_t numStages = options.numStages;
  if (numStages < 1 || numStages > numSegments)
    return std::nullopt;
  StageRangeEvaluator evaluator(problem, options);
  if (numStages == 1)
    return evaluateWholeModel(evaluator, numSegments);

  if (options.uniform) {
    StageSplit split;
    split.fits = true;
    for (int64_t k = 0; k < numStages; ++k) {
      int64_t first = k * numSegments / numStages;
      int64_t last = (k + 1) * numSegments / numStages - 1;
      RangeCost cost = evaluator.evaluate(k, first, last);
      split.stages.push_back(evaluator.toRange(k, first, last, cost));
      split.fits &= cost.fits;
    }
    if (!split.fits)
      return std::nullopt;
    return split;
  }

  // The least max first; then, among the splits that reach it, the least
  // sum (both exact over the boundaries).
  std::vector<int64_t> cuts = getStageBoundaries(problem, numStages);
  SplitTable table;
  if (!fillSplitTable(evaluator, cuts, options, SplitGoal::MaxThenSum, 0,
                      table))
    return std::nullopt;
  double leastMax = table[numStages].back().cost.primary;
  auto boundedSplit = [&](double bound) -> std::optional<StageSplit> {
    SplitTable bounded;
    if (!fillSplitTable(evaluator, cuts, options, SplitGoal::SumUnderBound,
                        bound, bounded))
      return std::nullopt;
    return traceSplit(evaluator, cuts, options, bounded);
  };
  std::optional<StageSplit> best = boundedSplit(leastMax * (1 + 1e-12));
  if (!best)
    best = traceSplit(evaluator, cuts, options, table);

  // One microbatch (or latency): the step is the sum of the stages. The
  // least sum, unless the balanced split above is as good.
  assert(options.schedule.getNumVirtualStages() == numStages &&
         "the schedule must order the stages being split");
  int64_t microbatches = options.schedule.getNumMicrobatches();
  if (options.objective == PlanObjective::Latency || microbatches <= 1) {
    SplitTable sums;
    if (fillSplitTable(evaluator, cuts, options, SplitGoal::SumThenMax, 0,
                       sums)) {
      StageSplit leastSum = traceSplit(evaluator, cuts, options, sums);
      if (leastSum.sumStageTime() < best->sumStageTime() * (1 - 1e-12))
        best = std::move(leastSum);
    }
    return best;
  }

  auto stepTime = [&](const StageSplit &split) {
    return options.schedule.stepTime(getStageTimes(split));
  };
  // With m > 1 the step is about sum + (m - 1) * max (exactly, for GPipe): a
  // larger max pays only if the sum drops by more than (m - 1) times as
  // much; the sum cannot drop below the segments' fastest times, which
  // bounds how far a larger max is worth trying.
  double leastSum = 0;
  for (int64_t i = 0; i < numSegments; ++i)
    leastSum += problem.candidates[i].front().time;
  double reach =
      (best->sumStageTime() - leastSum) / static_cast<double>(microbatches - 1);
  constexpr int kLargerMaxima = 4;
  for (int i = 1; i <= kLargerMaxima && reach > 0; ++i) {
    double bound = leastMax + reach * i / kLargerMaxima;
    std::optional<StageSplit> candidate = boundedSplit(bound * (1 + 1e-12));
    if (candidate && stepTime(*candidate) < stepTime(*best))
      best = std::move(candidate);
  }
  return best;
}

std::optional<StageSplit>
cleave::splitStagesForMemory(const StageSplitProblem &problem,
                             const StageSplitOptions &options) {
  int64_t numSegments = problem.numSegments();
  if (options.numStages < 1 || options.numStages > numSegments)
    return std::nullopt;
  StageRangeEvaluator evaluator(problem, options, /*leastMemory=*/true);
  if (options.numStages == 1) {
    StageSplit split =
        evaluateWholeModel(evaluator, numSegments, /*evenIfFull=*/true)
            .value_or(StageSplit());
    split.fits = false;
    return split;
  }
  std::vector<int64_t> cuts = getStageBoundaries(problem, options.numStages);
  SplitTable table;
  if (!fillSplitTable(evaluator, cuts, options, SplitGoal::LeastMemory, 0,
                      table))
    return std::nullopt;
  StageSplit split = traceSplit(evaluator, cuts, options, table);
  split.fits = false;
  return split;
}
