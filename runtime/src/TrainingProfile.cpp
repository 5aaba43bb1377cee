//===- TrainingProfile.cpp - measured training phases against the plan ---===//

#include "TrainingProfile.h"

#include "Profile.h"
#include "cleave/rt/Communicator.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>

namespace cleave::rt {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// The phases of a training step, in the order they are reported.
constexpr const char *phaseNames[] = {"forward", "backward", "update"};

std::string traceName(int rank) {
  return "trace_rank_" + std::to_string(rank) + ".json";
}

/// The plan's prediction of one call of `phase` on stage `stage` (a
/// microbatch's forward or backward, the step's update), when plan.json
/// gives one.
std::optional<double> predictedPhase(const json &plan, int stage,
                                     const std::string &phase) {
  if (!plan.is_object() || !plan.contains("stages") ||
      !plan["stages"].is_array() ||
      stage >= static_cast<int>(plan["stages"].size()))
    return std::nullopt;
  const json &entry = plan["stages"][static_cast<std::size_t>(stage)];
  if (!entry.is_object() || !entry.contains("training"))
    return std::nullopt;
  const json &times = entry["training"].value("phase_time_s", json());
  if (!times.is_object() || !times.contains(phase) || !times[phase].is_number())
    return std::nullopt;
  return times[phase].get<double>();
}

std::optional<double> predictedStep(const json &plan) {
  if (!plan.is_object() || !plan.contains("predicted") ||
      !plan["predicted"].is_object())
    return std::nullopt;
  const json &step = plan["predicted"].value("step_time_s", json());
  if (!step.is_number())
    return std::nullopt;
  return step.get<double>();
}

json optional(std::optional<double> value) {
  return value ? json(*value) : json(nullptr);
}

} // namespace

TrainingProfile::TrainingProfile(std::vector<const Session *> sessions,
                                 Communicator *comm, std::string dir)
    : sessions(std::move(sessions)), comm(comm), dir(std::move(dir)),
      calls(this->sessions.size()) {
  std::error_code error;
  fs::create_directories(this->dir, error);
  if (error || !fs::is_directory(this->dir))
    throw Error("--profile " + this->dir + ": cannot create the directory" +
                (error ? ": " + error.message() : ""));
}

void TrainingProfile::record(int64_t step, double offset, double seconds) {
  for (std::size_t index = 0; index < sessions.size(); ++index)
    for (PhaseTime &time : sessions[index]->phaseTimes()) {
      time.start += offset;
      calls[index].push_back({step, std::move(time)});
    }
  stepSeconds.emplace_back(step, seconds);
}

int64_t TrainingProfile::firstKept() const {
  // The first step warms the caches and the thread pools.
  return stepSeconds.size() > 1 ? stepSeconds[1].first : stepSeconds[0].first;
}

std::vector<double> TrainingProfile::phaseTotals(std::size_t session) const {
  std::vector<double> totals{
      static_cast<double>(sessions[session]->place().stage)};
  for (const char *phase : phaseNames) {
    double total = 0;
    double count = 0;
    for (const Call &call : calls[session])
      if (call.step >= firstKept() && call.time.phase == phase) {
        total += call.time.seconds;
        ++count;
      }
    totals.push_back(total);
    totals.push_back(count);
  }
  return totals;
}

void TrainingProfile::finish(const std::string &bundleDir) const {
  if (stepSeconds.empty())
    return;
  int64_t firstKept = this->firstKept();
  std::size_t kept = 0;
  double stepTotal = 0;
  for (const auto &[step, seconds] : stepSeconds)
    if (step >= firstKept) {
      ++kept;
      stepTotal += seconds;
    }

  // Each rank's trace: one complete event per entry call.
  for (std::size_t index = 0; index < sessions.size(); ++index) {
    DevicePlace place = sessions[index]->place();
    int rank = place.rank;
    json events = json::array();
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", rank},
                      {"args",
                       {{"name", "rank " + std::to_string(rank) + " (stage " +
                                     std::to_string(place.stage) + ", tp " +
                                     std::to_string(place.tp) + ", dp " +
                                     std::to_string(place.dp) + ")"}}}});
    for (const Call &call : calls[index]) {
      std::string name = call.time.phase;
      if (call.time.microbatch >= 0)
        name += " " + std::to_string(call.time.microbatch);
      events.push_back({{"name", name},
                        {"cat", call.time.phase},
                        {"ph", "X"},
                        {"pid", 0},
                        {"tid", rank},
                        {"ts", call.time.start * 1e6},
                        {"dur", call.time.seconds * 1e6},
                        {"args", {{"step", call.step}}}});
    }
    std::string path = (fs::path(dir) / traceName(rank)).string();
    std::ofstream stream(path);
    stream << json{{"traceEvents", std::move(events)}}.dump() << "\n";
    if (!stream)
      throw Error("--profile: cannot write " + path);
  }

  // Every rank's phase totals, on the process that reports.
  const std::size_t width = 1 + 2 * std::size(phaseNames);
  std::vector<double> table;
  if (comm) {
    table = comm->gatherToFirst(phaseTotals(0));
    if (comm->rank() != 0)
      return;
  } else {
    for (std::size_t index = 0; index < sessions.size(); ++index) {
      std::vector<double> totals = phaseTotals(index);
      table.insert(table.end(), totals.begin(), totals.end());
    }
  }
  int devices = static_cast<int>(table.size() / width);

  // Per stage and phase: the mean call of the stage's slowest rank over
  // the kept steps.
  std::ifstream planStream((fs::path(bundleDir) / "plan.json").string());
  json plan = json::parse(planStream, nullptr, /*allow_exceptions=*/false);
  int stages = 0;
  for (int rank = 0; rank < devices; ++rank)
    stages = std::max(stages, static_cast<int>(table[rank * width]) + 1);
  std::printf("profile of steps %lld to %lld%s, the mean call of each "
              "stage's slowest rank:\n",
              static_cast<long long>(firstKept),
              static_cast<long long>(stepSeconds.back().first),
              firstKept > stepSeconds.front().first ? " (the first left out)"
                                                    : "");
  std::printf("%-6s %-9s %7s %13s %13s %9s\n", "stage", "phase", "calls",
              "measured ms", "predicted ms", "error %");
  json stageSummaries = json::array();
  for (int stage = 0; stage < stages; ++stage) {
    json phases = json::object();
    for (std::size_t p = 0; p < std::size(phaseNames); ++p) {
      const char *phase = phaseNames[p];
      double slowest = 0;
      std::size_t count = 0;
      for (int rank = 0; rank < devices; ++rank) {
        const double *row = table.data() + rank * width;
        if (static_cast<int>(row[0]) != stage)
          continue;
        double total = row[1 + 2 * p];
        auto n = static_cast<std::size_t>(row[2 + 2 * p]);
        if (n > 0 && total / static_cast<double>(n) > slowest) {
          slowest = total / static_cast<double>(n);
          count = n;
        }
      }
      if (count == 0)
        continue;
      std::optional<double> predicted = predictedPhase(plan, stage, phase);
      std::optional<double> error = errorPercent(predicted, slowest);
      std::printf("%-6d %-9s %7zu %13.3f %13s %9s\n", stage, phase, count,
                  slowest * 1e3,
                  cell(predicted ? std::optional<double>(*predicted * 1e3)
                                 : std::nullopt,
                       "%.3f")
                      .c_str(),
                  cell(error, "%+.1f").c_str());
      phases[phase] = {{"calls", count},
                       {"measured_s", slowest},
                       {"predicted_s", optional(predicted)},
                       {"error_percent", optional(error)}};
    }
    stageSummaries.push_back({{"index", stage}, {"phases", std::move(phases)}});
  }
  double step = kept ? stepTotal / static_cast<double>(kept) : 0;
  std::optional<double> predicted = predictedStep(plan);
  std::optional<double> error = errorPercent(predicted, step);
  std::printf(
      "%-6s %-9s %7zu %13.3f %13s %9s\n", "step", "all", kept, step * 1e3,
      cell(predicted ? std::optional<double>(*predicted * 1e3) : std::nullopt,
           "%.3f")
          .c_str(),
      cell(error, "%+.1f").c_str());
  std::printf("error = (predicted - measured) / measured; forward and "
              "backward per microbatch, the update and the step per step\n");

  json traces = json::array();
  for (int rank = 0; rank < devices; ++rank)
    traces.push_back(traceName(rank));
  json summary = {{"format", "cleave.training-profile"},
                  {"version", 1},
                  {"bundle", bundleDir},
                  {"devices", devices},
                  {"steps", kept},
                  {"first_step", firstKept},
                  {"stages", std::move(stageSummaries)},
                  {"step",
                   {{"measured_s", step},
                    {"predicted_s", optional(predicted)},
                    {"error_percent", optional(error)}}},
                  {"traces", std::move(traces)}};
  std::string path = (fs::path(dir) / "profile.json").string();
  std::ofstream stream(path);
  stream << summary.dump(1) << "\n";
  stream.close();
  if (!stream)
    throw Error("--profile: cannot write " + path);
  std::printf("profile -> %s\n", path.c_str());
  std::fflush(stdout);
}

} // namespace cleave::rt
