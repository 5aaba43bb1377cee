//===- Profile.cpp - measured step times against the plan ----------------===//
//
// Reads what each step of an emitted program does from its source, writes
// a rank's timed runs as a Chrome trace, and sets measured stage times
// beside plan.json's predictions. The error figure is the cost model's:
// (predicted - measured) / measured, so a negative error is a prediction
// that is too fast.
//
//===----------------------------------------------------------------------===//

#include "Profile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace cleave::rt {

namespace {

using nlohmann::json;

const std::set<std::string> &communicationCalls() {
  static const std::set<std::string> names = {
#define CLEAVE_COMM(name, signature) #name,
#include "cleave/rt/CommList.def"
  };
  return names;
}

/// The step number of a `// N: OPS (NODE)` comment line, and its OPS.
bool parseStepComment(const std::string &line, int &step, std::string &ops) {
  std::size_t at = line.find_first_not_of(" \t");
  if (at == std::string::npos || line.compare(at, 3, "// ") != 0)
    return false;
  at += 3;
  std::size_t colon = line.find(": ", at);
  if (colon == std::string::npos || colon == at)
    return false;
  for (std::size_t i = at; i < colon; ++i)
    if (!std::isdigit(static_cast<unsigned char>(line[i])))
      return false;
  step = std::stoi(line.substr(at, colon - at));
  ops = line.substr(colon + 2);
  // The node in parentheses at the end is the cleave_rt_step call's too.
  std::size_t paren = ops.rfind(" (");
  if (paren != std::string::npos && !ops.empty() && ops.back() == ')')
    ops.resize(paren);
  return true;
}

/// The step number of a `cleave_rt_step(ctx, N, ...)` call on `line`.
bool parseStepCall(const std::string &line, int &step) {
  std::size_t at = line.find("cleave_rt_step(");
  if (at == std::string::npos)
    return false;
  std::size_t comma = line.find(',', at);
  if (comma == std::string::npos)
    return false;
  char *end = nullptr;
  long value = std::strtol(line.c_str() + comma + 1, &end, 10);
  if (end == line.c_str() + comma + 1 || value < 0)
    return false;
  step = static_cast<int>(value);
  return true;
}

/// The first cleave_cpu_NAME( or cleave_cuda_NAME( call on `line`: NAME.
std::string libraryCall(const std::string &line) {
  for (const char *prefix : {"cleave_cpu_", "cleave_cuda_"}) {
    std::size_t at = line.find(prefix);
    if (at == std::string::npos)
      continue;
    std::size_t begin = at + std::string(prefix).size(), end = begin;
    while (end < line.size() &&
           (std::isalnum(static_cast<unsigned char>(line[end])) ||
            line[end] == '_'))
      ++end;
    if (end > begin && end < line.size() && line[end] == '(')
      return line.substr(begin, end - begin);
  }
  return "";
}

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle]
                           : (values[middle - 1] + values[middle]) / 2;
}

json optionalNumber(std::optional<double> value) {
  return value ? json(*value) : json(nullptr);
}

std::string rankList(const std::vector<int> &ranks) {
  std::string text;
  for (int rank : ranks)
    text += (text.empty() ? "" : ",") + std::to_string(rank);
  return text;
}

} // namespace

std::optional<double> errorPercent(std::optional<double> predicted,
                                   double measured) {
  if (!predicted || !(measured > 0))
    return std::nullopt;
  return (*predicted - measured) / measured * 100;
}

std::string cell(std::optional<double> value, const char *format) {
  if (!value)
    return "-";
  char text[64];
  std::snprintf(text, sizeof(text), format, *value);
  return text;
}

std::vector<StepDescription> describeSteps(const std::string &sourcePath) {
  std::ifstream stream(sourcePath);
  std::vector<StepDescription> steps;
  std::map<int, std::string> ops;
  int current = -1;
  for (std::string line; std::getline(stream, line);) {
    int step = 0;
    std::string text;
    if (parseStepComment(line, step, text)) {
      ops[step] = text;
      continue;
    }
    if (parseStepCall(line, step)) {
      current = step;
      if (steps.size() <= static_cast<std::size_t>(step))
        steps.resize(static_cast<std::size_t>(step) + 1);
      steps[step].ops = ops.count(step) ? ops[step] : "";
      continue;
    }
    if (current >= 0 && steps[current].call.empty())
      steps[current].call = libraryCall(line);
  }
  for (StepDescription &step : steps)
    step.kind = step.call.empty()                       ? "fused loop"
                : communicationCalls().count(step.call) ? "communication"
                                                        : "kernel";
  return steps;
}

double stageSeconds(const TimedRun &run,
                    const std::vector<StepDescription> &steps) {
  double total = 0;
  for (const StepTime &step : run.steps) {
    bool receives = step.step >= 0 &&
                    static_cast<std::size_t>(step.step) < steps.size() &&
                    steps[step.step].call == "recv";
    if (!receives)
      total += step.seconds;
  }
  return total;
}

void writeRankTrace(const std::string &path, const std::string &bundle,
                    const DevicePlace &place,
                    const std::vector<StepDescription> &steps,
                    const std::vector<TimedRun> &runs) {
  json events = json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 0},
                    {"args", {{"name", "cleave run " + bundle}}}});
  events.push_back(
      {{"name", "thread_name"},
       {"ph", "M"},
       {"pid", 0},
       {"tid", place.rank},
       {"args",
        {{"name", "rank " + std::to_string(place.rank) + " (stage " +
                      std::to_string(place.stage) + ", tp " +
                      std::to_string(place.tp) + ")"}}}});
  events.push_back({{"name", "thread_sort_index"},
                    {"ph", "M"},
                    {"pid", 0},
                    {"tid", place.rank},
                    {"args", {{"sort_index", place.rank}}}});
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (const StepTime &step : runs[r].steps) {
      StepDescription description;
      if (step.step >= 0 && static_cast<std::size_t>(step.step) < steps.size())
        description = steps[step.step];
      json args = {
          {"run", r},
          {"step", step.step},
          {"stage", place.stage},
          {"kind", description.kind.empty() ? "step" : description.kind}};
      if (!description.ops.empty())
        args["ops"] = description.ops;
      if (!description.call.empty())
        args["call"] = description.call;
      events.push_back({{"name", step.node},
                        {"cat", args["kind"]},
                        {"ph", "X"},
                        {"pid", 0},
                        {"tid", place.rank},
                        {"ts", (runs[r].offset + step.start) * 1e6},
                        {"dur", step.seconds * 1e6},
                        {"args", args}});
    }
  json trace = {{"traceEvents", events},
                {"displayTimeUnit", "ms"},
                {"otherData",
                 {{"bundle", bundle},
                  {"rank", place.rank},
                  {"stage", place.stage},
                  {"tp", place.tp},
                  {"runs", runs.size()}}}};
  std::ofstream stream(path);
  stream << trace.dump() << "\n";
  stream.close();
  if (!stream)
    throw Error("cannot write the trace " + path);
}

namespace {

Prediction predictionOf(const json &plan, int stages) {
  Prediction prediction;
  prediction.stageSeconds.resize(static_cast<std::size_t>(stages));
  if (!plan.is_object())
    return prediction;
  auto number = [](const json &object, const char *key,
                   const char *inner) -> std::optional<double> {
    if (!object.is_object() || !object.contains(key))
      return std::nullopt;
    const json &value = object[key];
    if (value.is_object() && value.contains(inner) && value[inner].is_number())
      return value[inner].get<double>();
    return std::nullopt;
  };
  prediction.stepSeconds = number(plan, "predicted", "step_time_s");
  // The plan's stage times are per microbatch; a step runs them all.
  double microbatches = 1;
  if (plan.contains("microbatches") && plan["microbatches"].is_number() &&
      plan["microbatches"].get<double>() >= 1)
    microbatches = plan["microbatches"].get<double>();
  if (plan.contains("stages") && plan["stages"].is_array())
    for (const json &stage : plan["stages"]) {
      if (!stage.is_object() || !stage.contains("index") ||
          !stage["index"].is_number_integer())
        continue;
      int index = stage["index"].get<int>();
      if (index >= 0 && index < stages)
        if (std::optional<double> time = number(stage, "time_s", "total"))
          prediction.stageSeconds[index] = *time * microbatches;
    }
  return prediction;
}

} // namespace

Prediction readPrediction(const std::string &bundleDir, int stages) {
  std::ifstream stream(bundleDir + "/plan.json");
  return predictionOf(json::parse(stream, nullptr, /*allow_exceptions=*/false),
                      stages);
}

Prediction parsePrediction(const std::string &planText, int stages) {
  return predictionOf(
      json::parse(planText, nullptr, /*allow_exceptions=*/false), stages);
}

void reportProfile(const MeasuredProfile &measured,
                   const Prediction &prediction, const std::string &jsonPath) {
  std::size_t runs = measured.stepRuns.size();
  std::printf("profile of %s: %d device%s (pp %d, tp %d), median of %zu "
              "timed run%s after %d warm-up\n",
              measured.bundle.c_str(), measured.devices,
              measured.devices == 1 ? "" : "s", measured.pp, measured.tp, runs,
              runs == 1 ? "" : "s", measured.warmupRuns);
  std::printf("%-6s %-8s %13s %13s %9s\n", "stage", "ranks", "measured ms",
              "predicted ms", "error %");
  json stages = json::array();
  for (std::size_t s = 0; s < measured.stageRuns.size(); ++s) {
    double time = median(measured.stageRuns[s]);
    std::optional<double> predicted = prediction.stageSeconds[s];
    std::optional<double> error = errorPercent(predicted, time);
    std::printf(
        "%-6zu %-8s %13.3f %13s %9s\n", s,
        rankList(measured.stageRanks[s]).c_str(), time * 1e3,
        cell(predicted ? std::optional<double>(*predicted * 1e3) : std::nullopt,
             "%.3f")
            .c_str(),
        cell(error, "%+.1f").c_str());
    stages.push_back({{"index", s},
                      {"ranks", measured.stageRanks[s]},
                      {"measured_s", time},
                      {"predicted_s", optionalNumber(predicted)},
                      {"error_percent", optionalNumber(error)},
                      {"runs_s", measured.stageRuns[s]}});
  }
  double step = median(measured.stepRuns);
  std::optional<double> stepError = errorPercent(prediction.stepSeconds, step);
  std::printf("%-6s %-8s %13.3f %13s %9s\n", "step", "all", step * 1e3,
              cell(prediction.stepSeconds
                       ? std::optional<double>(*prediction.stepSeconds * 1e3)
                       : std::nullopt,
                   "%.3f")
                  .c_str(),
              cell(stepError, "%+.1f").c_str());
  std::printf("error = (predicted - measured) / measured; a stage's time is "
              "its tp-0 rank's steps without receives, over every "
              "microbatch; the step is the slowest rank's run\n");
  if (jsonPath.empty()) {
    std::fflush(stdout);
    return;
  }
  json summary = {{"format", "cleave.profile"},
                  {"version", 1},
                  {"bundle", measured.bundle},
                  {"devices", measured.devices},
                  {"mesh", {{"pp", measured.pp}, {"tp", measured.tp}}},
                  {"timed_runs", runs},
                  {"warmup_runs", measured.warmupRuns},
                  {"stages", stages},
                  {"step",
                   {{"measured_s", step},
                    {"predicted_s", optionalNumber(prediction.stepSeconds)},
                    {"error_percent", optionalNumber(stepError)},
                    {"runs_s", measured.stepRuns}}},
                  {"traces", measured.traces}};
  std::ofstream stream(jsonPath);
  stream << summary.dump(1) << "\n";
  stream.close();
  if (!stream)
    throw Error("cannot write the profile summary " + jsonPath);
  std::printf("profile -> %s\n", jsonPath.c_str());
  std::fflush(stdout);
}

} // namespace cleave::rt
