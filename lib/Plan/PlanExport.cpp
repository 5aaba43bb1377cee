//===- PlanExport.cpp - plans for people and tools --------------*- C++ -*-===//

#include "cleave/Plan/PlanExport.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

using namespace cleave;

//===----------------------------------------------------------------------===//
// plan.json
//===----------------------------------------------------------------------===//

static void writeMesh(llvm::json::OStream &json, const DeviceMesh &mesh) {
  json.attributeObject("mesh", [&] {
    json.attribute("pp", mesh.pp);
    json.attribute("tp", mesh.tp);
    json.attribute("dp", mesh.dp);
  });
}

static void writeRanks(llvm::json::OStream &json, llvm::StringRef name,
                       llvm::ArrayRef<int64_t> ranks) {
  json.attributeArray(name, [&] {
    for (int64_t rank : ranks)
      json.value(rank);
  });
}

/// A training plan also names the gradients and the optimizer state.
static void writeMemory(llvm::json::OStream &json, const DeviceMemory &memory,
                        bool training) {
  json.attributeObject("memory_bytes", [&] {
    json.attribute("weights", memory.weights);
    if (training) {
      json.attribute("gradients", memory.gradients);
      json.attribute("optimizer_state", memory.optimizerState);
    }
    json.attribute("activations", memory.activations);
    json.attribute("communication", memory.communication);
    json.attribute("total", memory.total());
  });
}

/// `model` for the model's own element types, else as `--precision` spells
/// it.
static std::string getPrecisionName(const PlanTraining &training) {
  return training.precision
             ? stringifyTrainingPrecision(*training.precision).str()
             : std::string("model");
}

static void writeTraining(llvm::json::OStream &json,
                          const PlanTraining &training) {
  json.attributeObject("training", [&] {
    json.attribute("optimizer", stringifyOptimizer(training.optimizer));
    json.attribute("precision", getPrecisionName(training));
    json.attributeObject("zero", [&] {
      json.attribute("stage", static_cast<int64_t>(training.zero));
      json.attribute("searched", training.zeroSearched);
    });
    json.attributeObject("recompute", [&] {
      json.attribute("segments", training.recomputedSegments);
      json.attribute("joined", training.joinedSegments);
      json.attribute("searched", training.recomputeSearched);
    });
    json.attributeObject("flops", [&] {
      json.attribute("forward", training.forwardFlops);
      json.attribute("backward", training.backwardFlops);
      json.attribute("recompute", training.recomputeFlops);
      json.attribute("total", training.totalFlops());
    });
  });
}

/// A stage's phases and update in a training plan.
static void writeStageTraining(llvm::json::OStream &json,
                               const PlanStage &stage) {
  const PlanStageUpdate &update = stage.update;
  json.attributeObject("training", [&] {
    json.attribute("recomputed_segments", stage.recomputedSegments);
    json.attributeObject("phase_time_s", [&] {
      PhaseTimes times = stage.phaseTimes();
      for (PipelinePhase phase :
           {PipelinePhase::Forward, PipelinePhase::Recompute,
            PipelinePhase::Backward, PipelinePhase::Update})
        json.attribute(stringifyPipelinePhase(phase), times[phase]);
    });
    json.attributeObject("backward_time_s", [&] {
      json.attribute("compute", stage.backwardComputeTime);
      json.attribute("collectives", stage.backwardCollectiveTime);
      json.attribute("send", stage.backwardSendTime);
      json.attribute("total", stage.backwardTime());
    });
    json.attributeObject("update", [&] {
      json.attribute("trainable_parameters", update.trainable.elements);
      json.attribute("gradient_bytes", update.trainable.bytes);
      json.attributeObject("gradient_reduction", [&] {
        json.attribute("kind", stringifyCollectiveKind(update.reductionKind));
        json.attributeArray("group", [&] {
          for (int64_t rank : update.group)
            json.value(rank);
        });
        json.attribute("link",
                       update.crossesNodes ? "inter_node" : "intra_node");
        json.attribute("buckets", update.reduction.buckets);
        json.attribute("time_s", update.reduction.totalTime);
        json.attribute("exposed_s", update.reduction.exposedTime);
      });
      json.attribute("optimizer_s", update.cost.optimizer);
      json.attribute("weight_gather_s", update.cost.weightGather);
      json.attribute("total_s", update.cost.total());
    });
  });
}

/// `compute`, `send`, or the collective's kind.
static llvm::StringRef getEventKindName(const PlanStageEvent &event) {
  switch (event.kind) {
  case PlanStageEvent::Kind::Compute:
    return "compute";
  case PlanStageEvent::Kind::Send:
    return "send";
  case PlanStageEvent::Kind::Collective:
    break;
  }
  return stringifyCollectiveKind(event.collective);
}

/// Samples per second; null when the predicted step takes no time (a
/// model that only reshapes), since JSON has no infinity.
static void writeThroughput(llvm::json::OStream &json, double throughput) {
  if (std::isfinite(throughput))
    json.attribute("throughput_samples_per_s", throughput);
  else
    json.attribute("throughput_samples_per_s", nullptr);
}

void cleave::writeTrivialPlanJSON(llvm::StringRef functionName,
                                  llvm::StringRef targetName,
                                  llvm::raw_ostream &os) {
  llvm::json::Object plan{
      {"function", functionName},
      {"target", targetName},
      {"mesh", llvm::json::Object{{"pp", 1}, {"tp", 1}, {"dp", 1}}},
      {"microbatches", 1},
      {"stages", llvm::json::Array{}},
      {"note", "the model computes nothing: its outputs are inputs or "
               "constants"}};
  os << llvm::formatv("{0}", llvm::json::Value(std::move(plan)));
}

/// The stage times of `plan` as its schedule reads them.
static std::vector<PhaseTimes> getStageTimes(const Plan &plan) {
  std::vector<PhaseTimes> times;
  for (const PlanStage &stage : plan.stages)
    times.push_back(stage.phaseTimes());
  return times;
}

/// Per pipeline stage, the steps of the schedule with when they run.
static void writeTimeline(llvm::json::OStream &json, const Plan &plan) {
  const PipelineSchedule &schedule = plan.schedule;
  ScheduleTimeline timeline = schedule.simulate(getStageTimes(plan));
  json.attributeArray("timeline", [&] {
    for (int64_t device = 0; device < schedule.getNumStages(); ++device)
      json.array([&] {
        for (auto [step, interval] :
             llvm::zip(schedule.getOrder(device), timeline.intervals[device]))
          json.object([&] {
            json.attribute("stage",
                           schedule.getVirtualStage(device, step.chunk));
            json.attribute("phase", stringifyPipelinePhase(step.phase));
            json.attribute("microbatch", step.microbatch);
            json.attribute("start_s", interval.start);
            json.attribute("end_s", interval.end);
          });
      });
  });
}

void cleave::writePlanJSON(const Plan &plan, llvm::raw_ostream &os) {
  llvm::json::OStream json(os, 2);
  json.object([&] {
    json.attribute("format", "cleave.plan");
    json.attribute("version", kPlanFormatVersion);
    json.attribute("function", plan.functionName);
    json.attributeObject("target", [&] {
      json.attribute("name", plan.targetName);
      json.attribute("devices", plan.numDevices);
      json.attribute("devices_per_node", plan.devicesPerNode);
      json.attribute("memory_bytes", plan.memoryCapacityBytes);
      json.attribute("usable_memory_bytes", plan.usableMemoryBytes);
    });
    json.attribute("objective", stringifyPlanObjective(plan.objective));
    writeMesh(json, plan.mesh);
    json.attribute("microbatches", plan.microbatches);
    json.attribute("microbatch_size", plan.microbatchSize);
    json.attribute("global_batch", plan.globalBatch);
    json.attribute("schedule", stringifyScheduleKind(plan.schedule.getKind()));
    json.attribute("virtual_stages", plan.schedule.getNumChunks());
    json.attribute("sequence_parallel", plan.sequenceParallel);
    json.attribute("sequence_parallel_weighed", plan.sequenceParallelWeighed);
    if (plan.training)
      writeTraining(json, *plan.training);
    json.attributeObject("model", [&] {
      json.attribute("ops", plan.numOps);
      json.attribute("segments", plan.numSegments);
      json.attribute("distinct_segments", plan.numDistinctSegments);
      json.attribute("sharding_search_exact", plan.shardingExact);
    });
    json.attributeObject("predicted", [&] {
      json.attribute("step_time_s", plan.stepTime);
      json.attribute("latency_s", plan.latency);
      writeThroughput(json, plan.throughput);
      json.attribute("bubble_fraction", plan.bubbleFraction);
      json.attribute("peak_memory_bytes", plan.peakMemoryBytes);
    });

    json.attributeArray("stages", [&] {
      for (const PlanStage &stage : plan.stages)
        json.object([&] {
          json.attribute("index", stage.index);
          json.attribute("first_op", stage.firstOpName);
          json.attribute("last_op", stage.lastOpName);
          json.attributeArray("op_range", [&] {
            json.value(stage.firstOp);
            json.value(stage.lastOp);
          });
          json.attributeArray("segment_range", [&] {
            json.value(stage.firstSegment);
            json.value(stage.lastSegment);
          });
          writeRanks(json, "ranks", stage.ranks);
          json.attribute("lean_segments", stage.leanSegments);
          json.attributeObject("time_s", [&] {
            json.attribute("compute", stage.computeTime);
            json.attribute("collectives", stage.collectiveTime);
            json.attribute("send", stage.sendTime);
            json.attribute("total", stage.time());
          });
          writeMemory(json, stage.memory, plan.training.has_value());
          if (plan.training)
            writeStageTraining(json, stage);
          json.attributeArray("schedule", [&] {
            for (const PlanStageEvent &event : stage.schedule)
              json.object([&] {
                json.attribute("kind", getEventKindName(event));
                json.attribute("name", event.name);
                json.attribute("time_s", event.duration);
              });
          });
        });
    });

    json.attributeArray("segments", [&] {
      for (const PlanSegment &segment : plan.segments)
        json.object([&] {
          json.attribute("index", segment.index);
          json.attribute("class", segment.segmentClass);
          json.attribute("stage", segment.stage);
          json.attribute("first_op", segment.firstOpName);
          json.attribute("last_op", segment.lastOpName);
          json.attributeArray("op_range", [&] {
            json.value(segment.firstOp);
            json.value(segment.lastOp);
          });
          json.attribute("split_ops", segment.splitOps);
          json.attribute("lean", segment.lean);
          json.attributeObject("time_s", [&] {
            json.attribute("compute", segment.computeTime);
            json.attribute("collectives", segment.collectiveTime);
          });
          if (plan.training) {
            json.attribute("recompute", segment.recompute);
            json.attribute("recompute_joined", segment.recomputeJoined);
            json.attributeObject("backward_time_s", [&] {
              json.attribute("compute", segment.backwardComputeTime);
              json.attribute("collectives", segment.backwardCollectiveTime);
            });
          }
        });
    });

    json.attributeArray("weights", [&] {
      for (const PlanWeight &weight : plan.weights)
        json.object([&] {
          json.attribute("name", weight.name);
          json.attributeArray("shape", [&] {
            for (int64_t dim : weight.shape)
              json.value(dim);
          });
          if (!weight.windowStarts.empty())
            json.attributeArray("window_starts", [&] {
              for (int64_t start : weight.windowStarts)
                json.value(start);
            });
          json.attribute("stage", weight.stage);
          json.attribute("layout", weight.splitDim ? "split" : "replicated");
          if (weight.splitDim)
            json.attribute("split_dim", *weight.splitDim);
          else
            json.attribute("split_dim", nullptr);
          json.attribute("bytes", weight.bytes);
          json.attribute("bytes_per_device", weight.bytesPerDevice);
        });
    });

    json.attributeArray("communications", [&] {
      for (const PlanCommunication &communication : plan.communications)
        json.object([&] {
          json.attribute("kind", stringifyCollectiveKind(communication.kind));
          json.attribute("stage", communication.stage);
          json.attribute("producer", communication.producer);
          json.attribute("op", communication.op);
          writeRanks(json, "group", communication.group);
          json.attribute("instances", communication.instances);
          json.attribute("bytes", communication.bytes);
          json.attribute("time_s", communication.time);
          json.attribute("link", communication.crossesNodes ? "inter_node"
                                                            : "intra_node");
          if (plan.training)
            json.attribute("phase",
                           stringifyPipelinePhase(communication.phase));
          if (!communication.parameter.empty())
            json.attribute("parameter", communication.parameter);
        });
    });

    json.attributeArray("alternatives", [&] {
      for (const PlanAlternative &alternative : plan.alternatives)
        json.object([&] {
          writeMesh(json, alternative.mesh);
          json.attribute("microbatches", alternative.microbatches);
          if (alternative.schedule)
            json.attribute("schedule", alternative.schedule->str());
          json.attribute("fits", alternative.feasible);
          if (alternative.feasible) {
            writeThroughput(json, alternative.throughput);
            json.attribute("step_time_s", alternative.stepTime);
            json.attribute("latency_s", alternative.latency);
          }
          if (alternative.peakMemoryBytes > 0)
            json.attribute("peak_memory_bytes", alternative.peakMemoryBytes);
          json.attribute("verdict", alternative.verdict);
        });
    });

    writeTimeline(json, plan);
  });
  os << "\n";
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

static std::string formatSeconds(double seconds) {
  if (seconds == 0)
    return "0";
  if (seconds < 1e-6)
    return llvm::formatv("{0:f1} ns", seconds * 1e9).str();
  if (seconds < 1e-3)
    return llvm::formatv("{0:f1} us", seconds * 1e6).str();
  if (seconds < 1)
    return llvm::formatv("{0:f2} ms", seconds * 1e3).str();
  return llvm::formatv("{0:f2} s", seconds).str();
}

static std::string formatBytes(int64_t bytes) {
  double value = static_cast<double>(bytes);
  const char *units[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  while (std::abs(value) >= 1000 && unit < 4) {
    value /= 1000;
    ++unit;
  }
  if (unit == 0)
    return llvm::formatv("{0} B", bytes).str();
  return llvm::formatv("{0:f1} {1}", value, units[unit]).str();
}

static std::string formatRanks(llvm::ArrayRef<int64_t> ranks) {
  if (ranks.empty())
    return "-";
  if (ranks.size() == 1)
    return std::to_string(ranks.front());
  bool consecutive =
      ranks.back() - ranks.front() == static_cast<int64_t>(ranks.size()) - 1;
  if (consecutive)
    return std::to_string(ranks.front()) + "-" + std::to_string(ranks.back());
  return llvm::join(
      llvm::map_range(ranks, [](int64_t rank) { return std::to_string(rank); }),
      ",");
}

static std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  return llvm::join(
      llvm::map_range(shape, [](int64_t dim) { return std::to_string(dim); }),
      "x");
}

/// `[0:64, 128:192]`: the window of a weight that starts at `starts`.
static std::string formatWindow(llvm::ArrayRef<int64_t> starts,
                                llvm::ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (size_t i = 0; i < starts.size() && i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text +=
        std::to_string(starts[i]) + ":" + std::to_string(starts[i] + shape[i]);
  }
  return text + "]";
}

namespace {
/// Columns padded to their widest cell.
class TextTable {
public:
  explicit TextTable(std::vector<std::string> header) {
    rows.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) { rows.push_back(std::move(row)); }
  void print(llvm::raw_ostream &os, llvm::StringRef indent = "  ") const {
    std::vector<size_t> widths;
    for (const auto &row : rows)
      for (size_t i = 0; i < row.size(); ++i) {
        if (widths.size() <= i)
          widths.push_back(0);
        widths[i] = std::max(widths[i], row[i].size());
      }
    for (const auto &row : rows) {
      os << indent;
      for (size_t i = 0; i < row.size(); ++i) {
        os << row[i];
        if (i + 1 < row.size())
          os.indent(widths[i] - row[i].size() + 2);
      }
      os << "\n";
    }
  }

private:
  std::vector<std::vector<std::string>> rows;
};
} // namespace

/// FLOPs in a short human form.
static std::string formatFlops(double flops) {
  if (flops == 0)
    return "0";
  const char *units[] = {"FLOP",  "kFLOP", "MFLOP", "GFLOP",
                         "TFLOP", "PFLOP", "EFLOP"};
  int unit = 0;
  while (flops >= 1000 && unit < 6) {
    flops /= 1000;
    ++unit;
  }
  return llvm::formatv("{0:f2} {1}", flops, units[unit]).str();
}

/// The optimizer, precision, ZeRO stage, recomputation and FLOPs of a
/// training plan.
static void printTrainingHeader(const Plan &plan, llvm::raw_ostream &os) {
  const PlanTraining &training = *plan.training;
  bool masters = llvm::any_of(plan.stages, [](const PlanStage &stage) {
    return stage.update.trainable.masterBytes > 0;
  });
  auto searched = [](bool value) { return value ? " (searched)" : ""; };
  os << "  training      " << stringifyOptimizer(training.optimizer) << ", "
     << (training.precision ? stringifyTrainingPrecision(*training.precision)
                            : llvm::StringRef("the model's precision"))
     << (masters ? " with fp32 master weights" : "") << ", ZeRO "
     << stringifyZeroStage(training.zero) << searched(training.zeroSearched)
     << ", " << training.recomputedSegments << " of " << plan.numSegments
     << " segments recompute";
  if (training.joinedSegments > 0)
    os << " (" << training.joinedSegments << " joined to the next)";
  os << searched(training.recomputeSearched) << "\n";
  os << "  step FLOPs    " << formatFlops(training.totalFlops()) << " (forward "
     << formatFlops(training.forwardFlops) << ", backward "
     << formatFlops(training.backwardFlops) << ", recompute "
     << formatFlops(training.recomputeFlops) << ")\n";
}

/// Per stage of a training plan: the phases' times and the memory terms.
static void printTrainingStages(const Plan &plan, llvm::raw_ostream &os) {
  os << "\nstages (forward, recompute and backward per microbatch, update per "
        "step; memory per device)\n";
  TextTable stages({"stage", "ranks", "first op", "last op", "ops", "forward",
                    "recompute", "backward", "update", "weights", "gradients",
                    "optimizer", "activations", "communication", "total"});
  for (const PlanStage &stage : plan.stages) {
    PhaseTimes times = stage.phaseTimes();
    stages.add({std::to_string(stage.index), formatRanks(stage.ranks),
                stage.firstOpName, stage.lastOpName,
                std::to_string(stage.lastOp - stage.firstOp + 1),
                formatSeconds(times[PipelinePhase::Forward]),
                formatSeconds(times[PipelinePhase::Recompute]),
                formatSeconds(times[PipelinePhase::Backward]),
                formatSeconds(times[PipelinePhase::Update]),
                formatBytes(stage.memory.weights),
                formatBytes(stage.memory.gradients),
                formatBytes(stage.memory.optimizerState),
                formatBytes(stage.memory.activations),
                formatBytes(stage.memory.communication),
                formatBytes(stage.memory.total())});
  }
  stages.print(os);
}

/// Per stage of a training plan: the update phase.
static void printUpdates(const Plan &plan, llvm::raw_ostream &os) {
  os << "\nupdate per step (gradient reduction over the data-parallel group, "
        "what the backward does not hide of it, optimizer, weight gather)\n";
  TextTable updates({"stage", "parameters", "gradients", "reduction", "buckets",
                     "time", "exposed", "optimizer", "gather", "group",
                     "link"});
  for (const PlanStage &stage : plan.stages) {
    const PlanStageUpdate &update = stage.update;
    bool reduces = update.group.size() > 1;
    updates.add(
        {std::to_string(stage.index),
         llvm::formatv("{0:f3} M", update.trainable.elements / 1e6).str(),
         formatBytes(update.trainable.bytes),
         reduces ? stringifyCollectiveKind(update.reductionKind).str() : "-",
         std::to_string(update.reduction.buckets),
         formatSeconds(update.reduction.totalTime),
         formatSeconds(update.cost.exposedReduction),
         formatSeconds(update.cost.optimizer),
         formatSeconds(update.cost.weightGather), formatRanks(update.group),
         !reduces              ? "-"
         : update.crossesNodes ? "inter-node"
                               : "intra-node"});
  }
  updates.print(os);
}

/// The mesh, the predictions, the schedule and the model.
static void printHeader(const Plan &plan, llvm::raw_ostream &os) {
  const DeviceMesh &mesh = plan.mesh;
  os << "plan for @" << plan.functionName << " on " << plan.numDevices << " x "
     << plan.targetName << " (" << plan.devicesPerNode << " per node)\n";
  os << llvm::formatv("  mesh          pp={0} tp={1} dp={2}\n", mesh.pp,
                      mesh.tp, mesh.dp);
  os << llvm::formatv("  microbatches  {0} of {1} sample{2} (global batch "
                      "{3})\n",
                      plan.microbatches, plan.microbatchSize,
                      plan.microbatchSize == 1 ? "" : "s", plan.globalBatch);
  os << "  objective     " << stringifyPlanObjective(plan.objective)
     << (plan.sequenceParallel ? ", sequence parallel" : "")
     << (!plan.sequenceParallelWeighed ? ""
         : plan.sequenceParallel       ? " (weighed against none)"
                                       : ", no sequence parallelism (weighed)")
     << "\n";
  if (plan.training)
    printTrainingHeader(plan, os);
  os << llvm::formatv("  predicted     {0:f2} samples/s, step {1}, "
                      "microbatch latency {2}, bubble {3:f1}%\n",
                      plan.throughput, formatSeconds(plan.stepTime),
                      formatSeconds(plan.latency), 100.0 * plan.bubbleFraction);
  os << "  schedule      " << stringifyScheduleKind(plan.schedule.getKind());
  if (plan.schedule.getNumChunks() > 1)
    os << ", " << plan.schedule.getNumChunks()
       << " model chunks per device (stage s runs on the devices of "
          "pipeline stage s mod "
       << plan.mesh.pp << ")";
  int64_t held = plan.schedule.maxActivationsHeld();
  os << ", up to " << held << " microbatch" << (held == 1 ? "" : "es")
     << " held per device\n";
  os << "  peak memory   " << formatBytes(plan.peakMemoryBytes) << " of "
     << formatBytes(plan.usableMemoryBytes) << " usable per device\n";
  os << "  model         " << plan.numOps << " ops in " << plan.numSegments
     << " segments, " << plan.numDistinctSegments << " distinct"
     << (plan.shardingExact ? "" : " (sharding search bounded)") << "\n";
}

/// Per stage: times per microbatch and memory per device.
static void printStages(const Plan &plan, llvm::raw_ostream &os) {
  if (plan.training)
    return printTrainingStages(plan, os);
  os << "\nstages (times per microbatch, memory per device)\n";
  TextTable stages({"stage", "ranks", "first op", "last op", "ops", "compute",
                    "collectives", "send", "weights", "activations", "total"});
  for (const PlanStage &stage : plan.stages)
    stages.add(
        {std::to_string(stage.index), formatRanks(stage.ranks),
         stage.firstOpName, stage.lastOpName,
         std::to_string(stage.lastOp - stage.firstOp + 1),
         formatSeconds(stage.computeTime), formatSeconds(stage.collectiveTime),
         formatSeconds(stage.sendTime), formatBytes(stage.memory.weights),
         formatBytes(stage.memory.activations),
         formatBytes(stage.memory.total())});
  stages.print(os);
}

/// Collectives of one kind, size, group and phase, counted together (the
/// phase is a column of training plans only).
static void printCommunication(const Plan &plan, llvm::raw_ostream &os) {
  os << "\ncommunication per microbatch\n";
  if (plan.communications.empty()) {
    os << "  none\n";
    return;
  }
  using Key = std::tuple<int64_t, int, int, int64_t, bool, std::string>;
  std::map<Key, std::pair<int64_t, double>> groups;
  for (const PlanCommunication &communication : plan.communications) {
    Key key{communication.stage,
            static_cast<int>(communication.phase),
            static_cast<int>(communication.kind),
            communication.bytes,
            communication.crossesNodes,
            formatRanks(communication.group)};
    groups[key].first += 1;
    groups[key].second += communication.time;
  }
  std::vector<std::string> header = {"stage", "kind",  "count", "bytes",
                                     "time",  "group", "link"};
  if (plan.training)
    header.insert(header.begin() + 1, "phase");
  TextTable table(header);
  for (const auto &[key, value] : groups) {
    auto [stage, phase, kind, bytes, crosses, group] = key;
    std::vector<std::string> row = {
        std::to_string(stage),
        stringifyCollectiveKind(static_cast<CollectiveKind>(kind)).str(),
        std::to_string(value.first),
        formatBytes(bytes),
        formatSeconds(value.second),
        group,
        crosses ? "inter-node" : "intra-node"};
    if (plan.training)
      row.insert(
          row.begin() + 1,
          stringifyPipelinePhase(static_cast<PipelinePhase>(phase)).str());
    table.add(std::move(row));
  }
  table.print(os);
}

/// The layout of the weights of the first instance of each distinct segment.
static void printWeights(const Plan &plan, llvm::raw_ostream &os) {
  os << "\nweights (one instance of each distinct segment)\n";
  llvm::DenseMap<int64_t, int64_t> firstSegmentOfClass;
  llvm::DenseMap<int64_t, int64_t> instances;
  for (auto [segment, segmentClass] : llvm::enumerate(plan.segmentClasses)) {
    firstSegmentOfClass.try_emplace(segmentClass,
                                    static_cast<int64_t>(segment));
    ++instances[segmentClass];
  }
  TextTable weights({"segment", "weight", "shape", "layout", "per device"});
  bool anyWeight = false;
  for (const PlanWeight &weight : plan.weights) {
    if (weight.segment >= static_cast<int64_t>(plan.segmentClasses.size()))
      continue;
    int64_t segmentClass = plan.segmentClasses[weight.segment];
    if (firstSegmentOfClass.lookup(segmentClass) != weight.segment)
      continue;
    anyWeight = true;
    weights.add(
        {llvm::formatv("{0} (x{1})", weight.segment,
                       instances.lookup(segmentClass))
             .str(),
         weight.windowStarts.empty()
             ? weight.name
             : weight.name + formatWindow(weight.windowStarts, weight.shape),
         formatShape(weight.shape),
         weight.splitDim ? "split dim " + std::to_string(*weight.splitDim)
                         : "replicated",
         formatBytes(weight.bytesPerDevice)});
  }
  if (anyWeight)
    weights.print(os);
  else
    os << "  none\n";
}

static void printAlternatives(const Plan &plan, llvm::raw_ostream &os) {
  os << "\nalternatives\n";
  TextTable alternatives({"pp", "tp", "dp", "mb", "throughput", "step",
                          "latency", "peak memory", "schedule", "verdict"});
  constexpr size_t kMaxAlternatives = 24;
  for (size_t i = 0; i < plan.alternatives.size() && i < kMaxAlternatives;
       ++i) {
    const PlanAlternative &alternative = plan.alternatives[i];
    bool fits = alternative.feasible;
    alternatives.add(
        {std::to_string(alternative.mesh.pp),
         std::to_string(alternative.mesh.tp),
         std::to_string(alternative.mesh.dp),
         alternative.microbatches ? std::to_string(alternative.microbatches)
                                  : "-",
         fits ? llvm::formatv("{0:f2}/s", alternative.throughput).str() : "-",
         fits ? formatSeconds(alternative.stepTime) : "-",
         fits ? formatSeconds(alternative.latency) : "-",
         alternative.peakMemoryBytes ? formatBytes(alternative.peakMemoryBytes)
                                     : "-",
         alternative.schedule ? alternative.schedule->str() : "-",
         alternative.verdict});
  }
  alternatives.print(os);
  if (plan.alternatives.size() > kMaxAlternatives)
    os << "  ... " << plan.alternatives.size() - kMaxAlternatives
       << " more in plan.json\n";
}

void cleave::printPlanTable(const Plan &plan, llvm::raw_ostream &os) {
  printHeader(plan, os);
  printStages(plan, os);
  if (plan.training)
    printUpdates(plan, os);
  printCommunication(plan, os);
  printWeights(plan, os);
  printAlternatives(plan, os);
}

//===----------------------------------------------------------------------===//
// Chrome trace
//===----------------------------------------------------------------------===//

/// The name of a stage event in the trace.
static std::string getTraceName(const PlanStageEvent &event) {
  if (event.kind != PlanStageEvent::Kind::Collective)
    return event.name;
  return (stringifyCollectiveKind(event.collective) + " " + event.name).str();
}

/// A step of a training phase other than the forward, as one event on the
/// compute track: the trace does not split a backward, a recompute or an
/// update into its parts.
static void writePhaseEvent(llvm::json::OStream &json, const PipelineStep &step,
                            const ScheduleTimeline::Interval &interval,
                            int64_t rank, int64_t stage, bool namesStage) {
  json.object([&] {
    json.attribute("ph", "X");
    json.attribute("name", stringifyPipelinePhase(step.phase));
    json.attribute("cat", "compute");
    json.attribute("pid", rank);
    json.attribute("tid", 0);
    json.attribute("ts", interval.start * 1e6);
    json.attribute("dur", (interval.end - interval.start) * 1e6);
    json.attributeObject("args", [&] {
      json.attribute("microbatch", step.microbatch);
      json.attribute("phase", stringifyPipelinePhase(step.phase));
      if (namesStage)
        json.attribute("stage", stage);
    });
  });
}

void cleave::writePlanTrace(const Plan &plan, llvm::raw_ostream &os) {
  // Each device runs its schedule's steps in order, each as soon as the
  // steps it needs have ended (sends are part of a stage's time).
  const PipelineSchedule &schedule = plan.schedule;
  ScheduleTimeline timeline = schedule.simulate(getStageTimes(plan));

  llvm::json::OStream json(os);
  json.object([&] {
    json.attribute("displayTimeUnit", "ns");
    json.attributeObject("otherData", [&] {
      json.attribute("format", "cleave.plan.trace");
      json.attribute("function", plan.functionName);
      json.attribute("target", plan.targetName);
      json.attribute("pp", plan.mesh.pp);
      json.attribute("tp", plan.mesh.tp);
      json.attribute("dp", plan.mesh.dp);
      json.attribute("microbatches", plan.microbatches);
      json.attribute("schedule", schedule.getChoice().str());
      json.attribute("step_time_s", plan.stepTime);
    });
    json.attributeArray("traceEvents", [&] {
      for (int64_t device = 0; device < schedule.getNumStages(); ++device) {
        const PlanStage &first = plan.stages[device];
        for (auto [shard, rank] : llvm::enumerate(first.ranks)) {
          json.object([&] {
            json.attribute("ph", "M");
            json.attribute("name", "process_name");
            json.attribute("pid", rank);
            json.attributeObject("args", [&] {
              json.attribute("name", llvm::formatv("rank {0} (stage {1}, "
                                                   "shard {2})",
                                                   rank, device, shard)
                                         .str());
            });
          });
          json.object([&] {
            json.attribute("ph", "M");
            json.attribute("name", "process_sort_index");
            json.attribute("pid", rank);
            json.attributeObject("args",
                                 [&] { json.attribute("sort_index", rank); });
          });
          static const char *const kTracks[] = {"compute", "communication"};
          for (auto [tid, name] : llvm::enumerate(kTracks))
            json.object([&] {
              json.attribute("ph", "M");
              json.attribute("name", "thread_name");
              json.attribute("pid", rank);
              json.attribute("tid", static_cast<int64_t>(tid));
              json.attributeObject("args",
                                   [&] { json.attribute("name", name); });
            });
          for (auto [step, interval] : llvm::zip(schedule.getOrder(device),
                                                 timeline.intervals[device])) {
            const PlanStage &stage =
                plan.stages[schedule.getVirtualStage(device, step.chunk)];
            if (step.phase != PipelinePhase::Forward) {
              writePhaseEvent(json, step, interval, rank, stage.index,
                              schedule.getNumChunks() > 1);
              continue;
            }
            double now = interval.start;
            for (const PlanStageEvent &event : stage.schedule) {
              bool isCompute = event.kind == PlanStageEvent::Kind::Compute;
              json.object([&] {
                json.attribute("ph", "X");
                json.attribute("name", getTraceName(event));
                json.attribute("cat", isCompute ? "compute" : "communication");
                json.attribute("pid", rank);
                json.attribute("tid", isCompute ? 0 : 1);
                json.attribute("ts", now * 1e6);
                json.attribute("dur", event.duration * 1e6);
                json.attributeObject("args", [&] {
                  json.attribute("microbatch", step.microbatch);
                  if (step.phase != PipelinePhase::Forward)
                    json.attribute("phase", stringifyPipelinePhase(step.phase));
                  if (schedule.getNumChunks() > 1)
                    json.attribute("stage", stage.index);
                });
              });
              now += event.duration;
            }
          }
        }
      }
    });
  });
  os << "\n";
}
