//===- RunCommand.cpp - `cleave run` and cleave-worker
//---------------------===//
//
// Opens a bundle, binds inputs from .npy or ONNX .pb files, runs it once and
// writes or checks the outputs. With --test-data it reads an ONNX backend
// test folder (input_N.pb / output_N.pb) and compares like the ONNX backend
// tests do: an element passes when |got - expected| <= atol + rtol *
// |expected|.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/RunCommand.h"

#include "Arguments.h"
#include "BlasCore.h"
#include "Bundle.h"
#include "InProcessRun.h"
#include "Npy.h"
#include "Profile.h"
#include "cleave/rt/Communicator.h"
#include "cleave/rt/Runtime.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <sched.h>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace cleave::rt {

namespace {

namespace fs = std::filesystem;

constexpr const char *usage =
    "usage: run BUNDLE [options]\n"
    "\n"
    "Runs a bundle written by `cleave compile` once.\n"
    "\n"
    "  --input NAME=FILE   the value of graph input NAME, from a .npy or an\n"
    "                      ONNX TensorProto .pb file (repeatable); a FILE\n"
    "                      alone binds the next input in graph order\n"
    "  --output-dir DIR    write each graph output to DIR/NAME.npy (bfloat16\n"
    "                      is written as float32)\n"
    "  --test-data DIR     read an ONNX backend test folder (input_N.pb,\n"
    "                      output_N.pb in graph order), run, and compare;\n"
    "                      exits 1 when an element is outside tolerance\n"
    "  --rtol R            relative tolerance of --test-data (1e-3)\n"
    "  --atol A            absolute tolerance of --test-data (1e-5)\n"
    "  --threads N         CPU kernel threads (all cores)\n"
    "  --device DEV        cpu or cuda:N (the bundle's kind)\n"
    "  --profile           print the time of every program step, write a\n"
    "                      Chrome trace per rank (trace_rank_R.json) and\n"
    "                      print each stage's measured time beside the\n"
    "                      plan's prediction (also as profile.json)\n"
    "  --profile-dir DIR   where --profile writes its files (the output\n"
    "                      directory; none without either); implies --profile\n"
    "  --repeat K          time K runs after one untimed warm-up run and\n"
    "                      report their median (1)\n"
    "  --timeout S         a bundle for several devices: end every rank when\n"
    "                      one program step or communication call takes\n"
    "                      longer than S seconds (300; 0 never)\n"
    "  --launcher-args A   extra mpirun options when the run starts its own\n"
    "                      ranks (one string, split at spaces)\n"
    "  --single-process    run every rank of a bundle for several devices as\n"
    "                      a thread of this process (no MPI); automatic for\n"
    "                      a CUDA bundle with more ranks than visible GPUs\n"
    "\n"
    "A bundle for several devices runs one process (rank) per device: started\n"
    "by hand, the command starts them itself with `mpirun -np N`; under\n"
    "mpirun or srun each process runs the device of its MPI rank. GPU ranks\n"
    "talk over NCCL and use GPU (local rank mod the host's GPU count).\n";

struct RunOptions {
  std::string bundle;
  std::vector<std::string> inputs;
  std::string outputDir;
  std::string testData;
  double rtol = 1e-3;
  double atol = 1e-5;
  int threads = 0;
  std::string device;
  bool profile = false;
  std::string profileDir;
  int repeat = 1;
  double timeout = 300;
  std::string launcherArgs;
  bool singleProcess = false;
  bool help = false;
};

double parseNumber(const std::string &option, const std::string &text) {
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !(value >= 0))
    throw Error(option + " wants a non-negative number, not '" + text + "'");
  return value;
}

RunOptions parseArguments(int argc, char **argv) {
  RunOptions options;
  ArgumentScanner args(argc, argv, "run");
  while (args.advance()) {
    const std::string &arg = args.arg();
    if (arg == "-h" || arg == "--help") {
      options.help = true;
    } else if (arg == "--input") {
      options.inputs.push_back(args.value());
    } else if (arg == "--output-dir") {
      options.outputDir = args.value();
    } else if (arg == "--test-data") {
      options.testData = args.value();
    } else if (arg == "--rtol") {
      options.rtol = parseNumber(arg, args.value());
    } else if (arg == "--atol") {
      options.atol = parseNumber(arg, args.value());
    } else if (arg == "--threads") {
      std::string text = args.value();
      double threads = parseNumber(arg, text);
      if (threads != std::floor(threads))
        throw Error("--threads wants a whole number, not '" + text + "'");
      if (threads > 4096)
        throw Error("--threads " + text +
                    " is more than the 4096 threads cleave runs a kernel on");
      options.threads = static_cast<int>(threads);
    } else if (arg == "--device") {
      options.device = args.value();
    } else if (arg == "--profile") {
      options.profile = true;
    } else if (arg == "--profile-dir") {
      options.profileDir = args.value();
      if (options.profileDir.empty())
        throw Error("--profile-dir wants a directory");
      options.profile = true;
    } else if (arg == "--repeat") {
      std::string text = args.value();
      double repeat = parseNumber(arg, text);
      if (repeat != std::floor(repeat) || repeat < 1 || repeat > 1e6)
        throw Error("--repeat wants a whole number of runs from 1, not '" +
                    text + "'");
      options.repeat = static_cast<int>(repeat);
    } else if (arg == "--timeout") {
      options.timeout = parseNumber(arg, args.value());
    } else if (arg == "--launcher-args") {
      options.launcherArgs = args.value();
    } else if (arg == "--single-process") {
      options.singleProcess = true;
    } else if (args.isOption()) {
      throw Error("unknown option '" + arg + "' (see --help)");
    } else if (options.bundle.empty()) {
      options.bundle = arg;
    } else {
      throw Error("unexpected argument '" + arg +
                  "'; inputs are passed with --input NAME=FILE");
    }
  }
  if (!options.help && options.bundle.empty())
    throw Error("no bundle given (see --help)");
  if (!options.testData.empty() && !options.inputs.empty())
    throw Error("--test-data brings its own inputs; drop --input");
  return options;
}

/// Binds every --input to a graph input and reads the files of the inputs
/// this device's program reads.
std::map<std::string, Tensor> readInputs(const Session &session,
                                         const std::vector<std::string> &args) {
  const std::vector<TensorInfo> &graphInputs = session.inputs();
  auto indexOf = [&](const std::string &name) -> int {
    for (std::size_t i = 0; i < graphInputs.size(); ++i)
      if (graphInputs[i].name == name)
        return static_cast<int>(i);
    return -1;
  };
  std::map<std::string, std::string> files;
  std::size_t position = 0;
  for (const std::string &arg : args) {
    std::string name, file = arg;
    std::size_t equals = arg.find('=');
    if (equals != std::string::npos &&
        (indexOf(arg.substr(0, equals)) >= 0 || !fs::exists(arg))) {
      name = arg.substr(0, equals);
      file = arg.substr(equals + 1);
      if (indexOf(name) < 0) {
        std::string known;
        for (const TensorInfo &info : graphInputs)
          known += (known.empty() ? "" : ", ") + info.name;
        throw Error("--input " + arg + ": the model has no input '" + name +
                    "' (its inputs: " + (known.empty() ? "none" : known) + ")");
      }
    } else {
      // A bare file binds the first input not bound yet.
      while (position < graphInputs.size() &&
             files.count(graphInputs[position].name))
        ++position;
      if (position == graphInputs.size())
        throw Error("--input " + arg + ": every input of the model is bound");
      name = graphInputs[position].name;
    }
    if (files.count(name))
      throw Error("--input " + arg + ": input '" + name + "' is bound twice");
    files.emplace(name, file);
  }
  std::map<std::string, Tensor> feeds;
  for (const auto &[name, file] : files)
    if (session.readsInput(static_cast<std::size_t>(indexOf(name))))
      feeds.emplace(name, readTensorFile(file));
  return feeds;
}

/// The files of an ONNX backend test folder, in order, checked for count.
std::vector<std::string> testDataFiles(const std::string &dir,
                                       const char *prefix, std::size_t expected,
                                       const char *what) {
  std::vector<std::string> files;
  for (std::size_t i = 0;; ++i) {
    fs::path file = fs::path(dir) / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(file))
      break;
    files.push_back(file.string());
  }
  if (files.size() != expected)
    throw Error(dir + ": holds " + std::to_string(files.size()) + " " + prefix +
                "N.pb files, but the model has " + std::to_string(expected) +
                " " + what);
  return files;
}

uint32_t halfToFloatBits(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f;
  uint32_t mantissa = half & 0x3ff;
  if (exponent == 0x1f)
    return sign | 0x7f800000 | (mantissa << 13);
  if (exponent != 0)
    return sign | ((exponent + 112) << 23) | (mantissa << 13);
  if (mantissa == 0)
    return sign;
  // Subnormal: normalise.
  exponent = 113;
  while (!(mantissa & 0x400)) {
    mantissa <<= 1;
    --exponent;
  }
  return sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
}

double element(const Tensor &tensor, int64_t i) {
  const void *data = tensor.data();
  auto bitsToFloat = [](uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, 4);
    return static_cast<double>(value);
  };
  switch (tensor.dtype()) {
  case CLEAVE_F32:
    return static_cast<const float *>(data)[i];
  case CLEAVE_F64:
    return static_cast<const double *>(data)[i];
  case CLEAVE_F16:
    return bitsToFloat(halfToFloatBits(static_cast<const uint16_t *>(data)[i]));
  case CLEAVE_BF16:
    return bitsToFloat(
        static_cast<uint32_t>(static_cast<const uint16_t *>(data)[i]) << 16);
  case CLEAVE_I64:
    return static_cast<double>(static_cast<const int64_t *>(data)[i]);
  case CLEAVE_I32:
    return static_cast<const int32_t *>(data)[i];
  case CLEAVE_I16:
    return static_cast<const int16_t *>(data)[i];
  case CLEAVE_I8:
    return static_cast<const int8_t *>(data)[i];
  case CLEAVE_U8:
  case CLEAVE_BOOL:
    return static_cast<const uint8_t *>(data)[i];
  case CLEAVE_U16:
    return static_cast<const uint16_t *>(data)[i];
  case CLEAVE_U32:
    return static_cast<const uint32_t *>(data)[i];
  case CLEAVE_U64:
    return static_cast<double>(static_cast<const uint64_t *>(data)[i]);
  default:
    return 0;
  }
}

/// Compares one output with its expected value; prints a line and returns
/// whether every element is within tolerance.
bool compareOutput(const TensorInfo &info, const Tensor &got,
                   const Tensor &expected, const RunOptions &options) {
  if (got.dtype() != expected.dtype() || got.shape() != expected.shape()) {
    std::printf("output '%s': expected %s, got %s\n", info.name.c_str(),
                typeString(expected.dtype(), expected.shape()).c_str(),
                typeString(got.dtype(), got.shape()).c_str());
    return false;
  }
  double maxAbs = 0, maxRel = 0;
  int64_t failures = 0, firstFailure = -1;
  for (int64_t i = 0; i < got.numElements(); ++i) {
    double g = element(got, i), e = element(expected, i);
    if (std::isnan(g) && std::isnan(e))
      continue;
    if (g == e) // also equal infinities
      continue;
    double abs = std::fabs(g - e); // NaN against a number stays NaN
    double rel = e != 0 ? abs / std::fabs(e) : 0;
    if (std::isnan(abs))
      abs = rel = INFINITY;
    maxAbs = std::max(maxAbs, abs);
    maxRel = std::max(maxRel, rel);
    if (!(abs <= options.atol + options.rtol * std::fabs(e))) {
      if (failures++ == 0)
        firstFailure = i;
    }
  }
  std::printf("output '%s' %s: max abs error %.3g, max rel error %.3g, %lld "
              "of %lld elements outside tolerance",
              info.name.c_str(), typeString(got.dtype(), got.shape()).c_str(),
              maxAbs, maxRel, static_cast<long long>(failures),
              static_cast<long long>(got.numElements()));
  if (failures)
    std::printf(" (first at flat index %lld: got %.9g, expected %.9g)",
                static_cast<long long>(firstFailure),
                element(got, firstFailure), element(expected, firstFailure));
  std::printf("\n");
  return failures == 0;
}

/// A file name for an output: names may hold '/' or ':' (ONNX allows any
/// string). Collisions after sanitising get a numeric suffix.
std::string outputFileName(const std::string &name,
                           std::set<std::string> &taken) {
  std::string base;
  for (char c : name)
    base += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
                    c == '-' || c == '.'
                ? c
                : '_';
  if (base.empty() || base[0] == '.')
    base = "output" + base;
  std::string candidate = base;
  for (int n = 1; taken.count(candidate); ++n)
    candidate = base + "_" + std::to_string(n);
  taken.insert(candidate);
  return candidate + ".npy";
}

/// Where --profile writes its files: --profile-dir, else the output
/// directory; "" writes none.
std::string profileDirectory(const RunOptions &options) {
  return options.profileDir.empty() ? options.outputDir : options.profileDir;
}

/// Creates the profile directory, or says why it cannot be one.
void prepareProfileDirectory(const RunOptions &options) {
  std::string dir = profileDirectory(options);
  if (!options.profile || dir.empty())
    return;
  std::error_code error;
  if (fs::exists(dir, error) && !fs::is_directory(dir, error))
    throw Error("--profile-dir " + dir + ": exists and is not a directory");
  fs::create_directories(dir, error);
  // Several ranks create it at once; one of them may lose the race.
  if (!fs::is_directory(dir))
    throw Error("--profile-dir " + dir + ": " +
                (error ? error.message() : std::string("cannot create it")));
}

/// The median over `runs` of each step's time (runs of one program have
/// the same steps).
std::vector<StepTime> medianSteps(const std::vector<TimedRun> &runs) {
  std::vector<StepTime> steps =
      runs.empty() ? std::vector<StepTime>() : runs.front().steps;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::vector<double> times;
    for (const TimedRun &run : runs)
      if (i < run.steps.size())
        times.push_back(run.steps[i].seconds);
    std::sort(times.begin(), times.end());
    std::size_t middle = times.size() / 2;
    steps[i].seconds = times.size() % 2
                           ? times[middle]
                           : (times[middle - 1] + times[middle]) / 2;
  }
  return steps;
}

/// --profile: every rank writes its trace; rank 0 gathers the stage times
/// and prints (and writes) the summary.
void profileRuns(const RunOptions &options, const Manifest &manifest,
                 const Session &session, Communicator *comm,
                 const std::vector<TimedRun> &runs) {
  DevicePlace place = session.place();
  std::string dir = profileDirectory(options);
  const ProgramEntry &program = manifest.programs.at(place.stage);
  std::vector<StepDescription> steps =
      describeSteps((fs::path(options.bundle) / program.source).string());
  auto traceName = [](int rank) {
    return "trace_rank_" + std::to_string(rank) + ".json";
  };
  if (!dir.empty())
    writeRankTrace((fs::path(dir) / traceName(place.rank)).string(),
                   options.bundle, place, steps, runs);

  std::size_t count = runs.size();
  std::vector<double> mine;
  for (const TimedRun &run : runs)
    mine.push_back(stageSeconds(run, steps));
  for (const TimedRun &run : runs)
    mine.push_back(run.seconds);
  std::vector<double> all = comm ? comm->gatherToFirst(mine) : mine;
  if (place.rank != 0)
    return;

  MeasuredProfile measured;
  measured.bundle = options.bundle;
  measured.pp = manifest.pp;
  measured.tp = manifest.tp;
  measured.devices = manifest.devices;
  measured.warmupRuns = 1;
  measured.stageRanks.resize(manifest.pp);
  measured.stageRuns.resize(manifest.pp);
  measured.stepRuns.assign(count, 0);
  for (const RankEntry &rank : manifest.ranks) {
    const double *values = all.data() + 2 * count * rank.rank;
    for (std::size_t k = 0; k < count; ++k)
      measured.stepRuns[k] = std::max(measured.stepRuns[k], values[count + k]);
    if (rank.dp != 0)
      continue;
    measured.stageRanks[rank.stage].push_back(rank.rank);
    if (rank.tp == 0)
      measured.stageRuns[rank.stage].assign(values, values + count);
  }
  if (!dir.empty())
    for (const RankEntry &rank : manifest.ranks)
      measured.traces.push_back(traceName(rank.rank));
  reportProfile(measured, readPrediction(options.bundle, manifest.pp),
                dir.empty() ? "" : (fs::path(dir) / "profile.json").string());
}

/// Writes, lists or checks the outputs this device owns; returns the exit
/// status (1: an output outside tolerance).
int deliverOutputs(const RunOptions &options, const Session &session,
                   const std::vector<Tensor> &outputs,
                   const std::vector<std::string> &expectedFiles,
                   const std::string &who) {
  const std::vector<TensorInfo> &graphOutputs = session.outputs();
  std::vector<std::size_t> owned;
  for (std::size_t i = 0; i < outputs.size(); ++i)
    if (session.writesOutput(i))
      owned.push_back(i);

  if (!options.outputDir.empty()) {
    fs::create_directories(options.outputDir);
    // File names are chosen over every output, so that each rank picks the
    // same one for an output whatever the others write.
    std::set<std::string> taken;
    std::vector<std::string> names;
    for (const TensorInfo &info : graphOutputs)
      names.push_back(outputFileName(info.name, taken));
    for (std::size_t i : owned) {
      const TensorInfo &info = graphOutputs[i];
      fs::path file = fs::path(options.outputDir) / names[i];
      writeNpy(file.string(), outputs[i]);
      std::printf("%soutput '%s' %s -> %s\n", who.c_str(), info.name.c_str(),
                  info.typeString().c_str(), file.string().c_str());
    }
  }

  if (expectedFiles.empty()) {
    if (options.outputDir.empty())
      for (std::size_t i : owned)
        std::printf("%soutput '%s' %s\n", who.c_str(),
                    graphOutputs[i].name.c_str(),
                    graphOutputs[i].typeString().c_str());
    return 0;
  }
  std::size_t failed = 0;
  for (std::size_t i : owned) {
    std::printf("%s", who.c_str());
    failed += !compareOutput(graphOutputs[i], outputs[i],
                             readTensorProto(expectedFiles[i]), options);
  }
  if (owned.empty())
    return 0;
  if (failed) {
    std::printf("%sFAIL: %zu of %zu outputs outside rtol %g, atol %g\n",
                who.c_str(), failed, owned.size(), options.rtol, options.atol);
    return 1;
  }
  std::printf("%sPASS: %zu outputs within rtol %g, atol %g\n", who.c_str(),
              owned.size(), options.rtol, options.atol);
  return 0;
}

int run(const RunOptions &options, const Manifest &manifest,
        Communicator *comm) {
  using Clock = std::chrono::steady_clock;
  prepareProfileDirectory(options);
  SessionOptions sessionOptions;
  sessionOptions.numThreads = options.threads;
  sessionOptions.device = options.device;
  sessionOptions.profile = options.profile;
  sessionOptions.communicator = comm;
  sessionOptions.timeoutSeconds = options.timeout;
  std::unique_ptr<Session> session =
      Session::open(options.bundle, sessionOptions);
  const std::vector<TensorInfo> &graphInputs = session->inputs();
  const std::vector<TensorInfo> &graphOutputs = session->outputs();
  // Several devices print with their rank; only the one owning an output
  // writes, checks or lists it.
  std::string who;
  if (comm)
    who = "rank " + std::to_string(session->place().rank) + ": ";

  std::map<std::string, Tensor> feeds;
  std::vector<std::string> expectedFiles;
  if (!options.testData.empty()) {
    std::vector<std::string> inputFiles =
        testDataFiles(options.testData, "input_", graphInputs.size(), "inputs");
    expectedFiles = testDataFiles(options.testData, "output_",
                                  graphOutputs.size(), "outputs");
    for (std::size_t i = 0; i < inputFiles.size(); ++i)
      if (session->readsInput(i))
        feeds.emplace(graphInputs[i].name, readTensorProto(inputFiles[i]));
  } else {
    feeds = readInputs(*session, options.inputs);
  }

  // A first run pays for page faults, lazy binding and cold caches; timed
  // runs leave it out.
  if (options.profile || options.repeat > 1) {
    if (comm)
      comm->barrier();
    session->run(feeds);
  }
  std::vector<Tensor> outputs;
  std::vector<TimedRun> runs;
  std::vector<double> jobSeconds;
  Clock::time_point first;
  for (int k = 0; k < options.repeat; ++k) {
    // Peers still loading are not a hang: time starts when all are ready.
    if (comm)
      comm->barrier();
    Clock::time_point start = Clock::now();
    if (k == 0)
      first = start;
    outputs = session->run(feeds);
    Clock::time_point end = Clock::now();
    if (comm)
      comm->barrier();
    TimedRun timed;
    timed.offset = std::chrono::duration<double>(start - first).count();
    timed.seconds = std::chrono::duration<double>(end - start).count();
    if (options.profile)
      timed.steps = session->profile();
    runs.push_back(std::move(timed));
    jobSeconds.push_back(
        std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(jobSeconds.begin(), jobSeconds.end());
  double seconds = jobSeconds[jobSeconds.size() / 2];
  std::string repeated =
      options.repeat > 1
          ? " (median of " + std::to_string(options.repeat) + " runs)"
          : "";
  if (!comm)
    std::printf("ran %s on %s in %.3f ms%s\n", options.bundle.c_str(),
                session->deviceName().c_str(), seconds * 1e3, repeated.c_str());
  else if (session->place().rank == 0)
    std::printf("ran %s on %d %s devices in %.3f ms%s\n",
                options.bundle.c_str(), session->devices(),
                session->deviceName().c_str(), seconds * 1e3, repeated.c_str());

  if (options.profile)
    for (const StepTime &step : medianSteps(runs))
      std::printf("%s  step %4d  %10.3f ms  %s\n", who.c_str(), step.step,
                  step.seconds * 1e3, step.node.c_str());

  int status = deliverOutputs(options, *session, outputs, expectedFiles, who);
  std::fflush(stdout);
  if (options.profile)
    profileRuns(options, manifest, *session, comm, runs);
  std::fflush(stdout);
  return status;
}

/// One device of a bundle for several, in the MPI job that started it. A
/// failure ends every rank, naming this one.
int runRank(RunOptions options, const Manifest &manifest) {
  std::unique_ptr<Communicator> comm = createMpiCommunicator(manifest.mesh());
  int status = 0;
  try {
    // GPU ranks talk over NCCL, bootstrapped over MPI.
    if (manifest.deviceKind == "cuda")
      joinGpuRanks(comm, options.device);
    status = run(options, manifest, comm.get());
  } catch (const std::exception &e) {
    DevicePlace place = comm->place();
    std::fflush(stdout);
    std::fprintf(stderr, "cleave run: error: rank %d (stage %d, tp %d): %s\n",
                 place.rank, place.stage, place.tp, e.what());
    std::fflush(stderr);
    comm->abort(2);
  }
  // The job's status is its worst rank's (an output outside tolerance).
  return comm->maxOverDevices(status);
}

/// The first executable `name` on PATH, or "" when there is none.
std::string findOnPath(const std::string &name) {
  const char *path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate.string();
  }
  return "";
}

/// cleave-worker of this build: beside the running program (build/bin), or
/// in the bin/ beside the lib/ holding libcleave_rt.so.
std::string findWorker() {
  std::vector<fs::path> candidates;
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error)
    candidates.push_back(self.parent_path() / "cleave-worker");
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&runCommand), &info) && info.dli_fname) {
    fs::path library = fs::absolute(info.dli_fname, error);
    candidates.push_back(library.parent_path().parent_path() / "bin" /
                         "cleave-worker");
  }
  std::string looked;
  for (const fs::path &candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate.string();
    looked += (looked.empty() ? "" : ", ") + candidate.string();
  }
  throw Error("cannot find cleave-worker to start the ranks (looked at " +
              looked + ")");
}

/// What mpirun's LD_PRELOAD should be, when it should differ from this
/// process's. A process that is not built with AddressSanitizer (the tests'
/// Python) must preload its runtime to load this runtime's sanitized module,
/// and the preload passes to every process it starts. mpirun and its daemons
/// are OpenMPI's code, not built with the sanitizers; under the preloaded
/// runtime their own memory errors would fail the run as if they were
/// cleave's. In a sanitized build mpirun therefore starts without it: the
/// ranks (cleave-worker) are built with the sanitizers and load the runtime
/// themselves. Returns the remaining entries, or nothing where there is no
/// ASan runtime to take out.
std::optional<std::string> launcherPreload() {
#ifdef __SANITIZE_ADDRESS__
  const char *preload = std::getenv("LD_PRELOAD");
  if (!preload)
    return std::nullopt;
  // The loader separates entries with spaces or colons.
  std::string entries = preload, kept;
  bool removed = false;
  for (size_t start = 0; start <= entries.size();) {
    size_t end = std::min(entries.find_first_of(" :", start), entries.size());
    std::string entry = entries.substr(start, end - start);
    start = end + 1;
    if (entry.empty())
      continue;
    if (fs::path(entry).filename().string().rfind("libclang_rt.asan", 0) == 0) {
      removed = true;
      continue;
    }
    kept += (kept.empty() ? "" : " ") + entry;
  }
  if (removed)
    return kept;
#endif
  return std::nullopt;
}

/// Starts the bundle's ranks on this machine with mpirun and waits for them.
int launch(const RunOptions &options, int argc, char **argv,
           const Manifest &manifest) {
  // Checked once here, so that a damaged bundle is refused before any rank
  // starts and with one message.
  verifyFiles(options.bundle, manifest);
  std::string mpirun = findOnPath("mpirun");
  if (mpirun.empty())
    throw Error(options.bundle + ": the bundle is for " +
                std::to_string(manifest.devices) +
                " devices, and starting them takes mpirun, which is not on "
                "PATH (install OpenMPI, or start cleave-worker with your "
                "cluster's launcher)");
  std::vector<std::string> args = {
      mpirun, "-np", std::to_string(manifest.devices), "--oversubscribe"};
  if (::geteuid() == 0)
    args.push_back("--allow-run-as-root");
  std::stringstream extra(options.launcherArgs);
  for (std::string word; extra >> word;)
    args.push_back(word);
  args.push_back(findWorker());
  args.push_back("run");
  int first = 1;
  if (first < argc && std::strcmp(argv[first], "run") == 0)
    ++first;
  for (int i = first; i < argc; ++i)
    args.push_back(argv[i]);
  // The ranks share this machine's cores unless told otherwise.
  if (options.threads == 0) {
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    args.push_back("--threads=" +
                   std::to_string(std::max(1u, cores / manifest.devices)));
  }

  // OpenMPI keeps its session files under one directory per user and
  // machine, which two mpirun starting at once can both fail to create
  // ("File exists"): each launch gets a directory of its own, unless the
  // user chose one.
  std::string sessionBase;
  if (!std::getenv("OMPI_MCA_orte_tmpdir_base")) {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/cleave-mpirun-XXXXXX";
    if (::mkdtemp(pattern.data()))
      sessionBase = pattern;
  }

  std::optional<std::string> preload = launcherPreload();

  std::fflush(stdout);
  std::fflush(stderr);
  pid_t child = ::fork();
  if (child < 0)
    throw Error(std::string("cannot start mpirun: ") + std::strerror(errno));
  if (child == 0) {
    if (!sessionBase.empty())
      ::setenv("OMPI_MCA_orte_tmpdir_base", sessionBase.c_str(), 1);
    if (preload && preload->empty())
      ::unsetenv("LD_PRELOAD");
    else if (preload)
      ::setenv("LD_PRELOAD", preload->c_str(), 1);
    std::vector<char *> pointers;
    for (std::string &arg : args)
      pointers.push_back(arg.data());
    pointers.push_back(nullptr);
    ::execv(mpirun.c_str(), pointers.data());
    std::fprintf(stderr, "cleave run: error: cannot run %s: %s\n",
                 mpirun.c_str(), std::strerror(errno));
    std::_Exit(2);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!sessionBase.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(sessionBase, ignored);
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code == 0 || code == 1)
    return code;
  std::fprintf(stderr,
               "cleave run: error: the %d ranks of %s failed (mpirun exit "
               "status %d)\n",
               manifest.devices, options.bundle.c_str(), code);
  return 2;
}

/// Every rank in this process (InProcessRun.h), sharing the cores, and
/// the GPUs rank after rank.
int runSingleProcess(const RunOptions &options, const Manifest &manifest) {
  verifyFiles(options.bundle, manifest);
  prepareProfileDirectory(options);
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  int gpus = manifest.deviceKind == "cuda" && options.device.empty()
                 ? visibleCudaDevices()
                 : 0;
  return runRanksInProcess(
      manifest, options.timeout, [&](int rank, Communicator &comm) {
        RunOptions own = options;
        if (own.threads == 0)
          own.threads =
              static_cast<int>(std::max(1u, cores / manifest.devices));
        if (gpus > 0)
          own.device = "cuda:" + std::to_string(rank % gpus);
        return run(own, manifest, &comm);
      });
}

} // namespace

void joinGpuRanks(std::unique_ptr<Communicator> &comm, std::string &device) {
  // The GPU --device names ("cuda:N"), or -1 to let the rank choose.
  int gpu = -1;
  if (device.rfind("cuda:", 0) == 0) {
    char *end = nullptr;
    long index = std::strtol(device.c_str() + 5, &end, 10);
    if (!*end && index >= 0)
      gpu = static_cast<int>(index);
  }
  comm = createNcclCommunicator(comm, gpu);
  device = "cuda:" + std::to_string(gpu);
}

namespace {

/// How many spins libgomp's idle threads make before they sleep where a
/// rank has its cores to itself: about a millisecond on the machines of
/// docs/PERFORMANCE.md ("Short spinning waits"). Waking a sleeping thread
/// cost 40-70 us there at every parallel region, more than most of a small
/// program's kernels; spinning that long covers the gaps between one
/// program step's regions, and sleeps soon after a run ends.
constexpr const char *kOpenMpSpinCount = "30000";

/// Set beside the wait variables that a process chose, to its pid: the
/// process keeps them after its own exec (which keeps the pid), and the
/// processes it starts (mpirun's ranks) choose again for themselves.
constexpr const char *kWaitsMarker = "CLEAVE_OPENMP_WAITS";

/// The CPUs this process may run on.
int availableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

/// The ranks of this process's MPI job on this machine, as its launcher
/// says (OpenMPI, MPICH's hydra, Slurm); 1 outside a job, 0 where a job's
/// launcher does not say.
int localRanks() {
  if (!inMpiJob())
    return 1;
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                           "SLURM_NTASKS_PER_NODE"})
    if (const char *value = std::getenv(name)) {
      char *end = nullptr;
      long ranks = std::strtol(value, &end, 10);
      if (end != value && *end == '\0' && ranks > 0)
        return static_cast<int>(ranks);
    }
  return 0;
}

/// The threads of other processes that are running on this machine now:
/// the fewest of five readings of the kernel's count of running threads
/// (/proc/stat's procs_running), a millisecond apart, less this process's
/// own; CLEAVE_OPENMP_OTHERS, where set, instead (the tests' fixed
/// machine). 0 where /proc/stat cannot be read.
int othersRunning() {
  if (const char *given = std::getenv("CLEAVE_OPENMP_OTHERS")) {
    char *end = nullptr;
    long others = std::strtol(given, &end, 10);
    if (end != given && *end == '\0' && others >= 0)
      return static_cast<int>(std::min<long>(others, INT_MAX));
  }
  long fewest = LONG_MAX;
  for (int reading = 0; reading < 5; ++reading) {
    if (reading)
      ::usleep(1000);
    std::ifstream stat("/proc/stat");
    std::string key;
    long running = -1;
    while (stat >> key)
      if (key == "procs_running") {
        stat >> running;
        break;
      } else {
        stat.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
      }
    if (running < 0)
      return 0;
    fewest = std::min(fewest, running);
  }
  return static_cast<int>(std::max(0L, fewest - 1));
}

} // namespace

/// Runs this process again with the OpenMP waits chosen for it, unless the
/// user chose how OpenMP threads wait (OMP_WAIT_POLICY, GOMP_SPINCOUNT), and
/// with OPENBLAS_CORETYPE set where OpenBLAS chose kernels of fewer
/// instructions than the CPU has (BlasCore.h). libgomp's idle threads spin
/// 300000 times before they sleep by default. Where this machine's ranks,
/// their threads and the other processes running now fit its CPUs, they
/// spin kOpenMpSpinCount times: a sleeping thread takes tens of
/// microseconds to wake at every parallel region. Where they do not (more
/// ranks than cores, other work on the cores, or a launcher that does not
/// say how many ranks share the machine), they sleep at once
/// (OMP_WAIT_POLICY=PASSIVE): a spinning thread takes the core that
/// another's working thread needs, and beside two busy processes on two
/// cores a 2-thread ResNet step took 6-24 ms spinning against 3-6 ms
/// asleep (docs/PERFORMANCE.md). libgomp and OpenBLAS read their variables
/// once, when they load, hence the exec; where it fails, the run goes on
/// as it is.
void execWithRuntimeSettings(int threads) {
  const char *blasCore = getBlasCoreOverride();
  // Waits this process chose before its exec stand; those a parent chose
  // are chosen again (a rank's share of the machine is its own); the
  // user's stand.
  const char *marker = std::getenv(kWaitsMarker);
  const std::string self = std::to_string(::getpid());
  const bool ours = marker && self == marker;
  const bool userChose = !marker && (std::getenv("OMP_WAIT_POLICY") ||
                                     std::getenv("GOMP_SPINCOUNT"));
  bool waits = false;
  if (!ours && !userChose) {
    const int cpus = availableCpus();
    const int ranks = localRanks();
    const int perRank =
        threads > 0 ? threads : std::max(1, cpus / std::max(1, ranks));
    const bool spin =
        ranks > 0 &&
        static_cast<long>(ranks) * perRank + othersRunning() <= cpus;
    const char *name = spin ? "GOMP_SPINCOUNT" : "OMP_WAIT_POLICY";
    const char *value = spin ? kOpenMpSpinCount : "PASSIVE";
    const char *other = spin ? "OMP_WAIT_POLICY" : "GOMP_SPINCOUNT";
    const char *current = std::getenv(name);
    waits = !marker || !current || std::strcmp(current, value) != 0 ||
            std::getenv(other);
    if (::unsetenv(other) != 0 || ::setenv(name, value, 1) != 0 ||
        ::setenv(kWaitsMarker, self.c_str(), 1) != 0)
      return;
  }
  if (!waits && !blasCore)
    return;
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(file)),
                   std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find('\0', begin);
    if (end == std::string::npos)
      end = text.size();
    args.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  if (args.empty() ||
      (blasCore && ::setenv("OPENBLAS_CORETYPE", blasCore, 0) != 0))
    return;
  std::vector<char *> pointers;
  for (std::string &arg : args)
    pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  ::execv("/proc/self/exe", pointers.data());
}

int runCommand(int argc, char **argv) {
  try {
    RunOptions options = parseArguments(argc, argv);
    if (options.help) {
      std::fputs(usage, stdout);
      return 0;
    }
    execWithRuntimeSettings(options.threads);
    Manifest manifest = readManifest(options.bundle);
    if (manifest.devices == 1)
      return run(options, manifest, nullptr);
    if (options.singleProcess && inMpiJob())
      throw Error("--single-process runs every rank of " + options.bundle +
                  " in one process; start it once, not under mpirun or srun");
    // NCCL refuses two ranks on one GPU.
    if (!options.singleProcess && !inMpiJob() &&
        manifest.deviceKind == "cuda") {
      int gpus = visibleCudaDevices();
      if (gpus < manifest.devices) {
        std::fprintf(stderr,
                     "cleave run: note: %s has %d ranks and this machine %d "
                     "GPU%s: running them as threads of one process "
                     "(--single-process)\n",
                     options.bundle.c_str(), manifest.devices, gpus,
                     gpus == 1 ? "" : "s");
        options.singleProcess = true;
      }
    }
    if (options.singleProcess)
      return runSingleProcess(options, manifest);
    if (!inMpiJob()) {
      // Refused once here rather than by every rank.
      prepareProfileDirectory(options);
      return launch(options, argc, argv, manifest);
    }
    return runRank(options, manifest);
  } catch (const std::exception &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "cleave run: error: %s\n", e.what());
    return 2;
  } catch (...) {
    std::fflush(stdout);
    std::fprintf(stderr, "cleave run: error: unknown failure\n");
    return 2;
  }
}

} // namespace cleave::rt
