//===- TrainCommand.cpp - `cleave train` ----------------------------------===//
//
// Runs the training step of a bundle compiled with --train over a data set,
// step after step: each step takes the bundle's batch of samples in the
// data order (a permutation per epoch, from the seed), runs the step,
// reports the loss, and saves a checkpoint every K steps and after the last.
// A run resumed from a checkpoint takes the steps an uninterrupted run
// would have taken, on the same samples, and ends with the same bytes. A
// bundle for several devices (data-parallel replicas) runs every device as
// a thread of this process.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/TrainCommand.h"

#include "Arguments.h"
#include "Bundle.h"
#include "TrainingData.h"
#include "TrainingProfile.h"
#include "cleave/rt/Checkpoint.h"
#include "cleave/rt/Communicator.h"
#include "cleave/rt/RunCommand.h"
#include "cleave/rt/Runtime.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <unistd.h>

namespace cleave::rt {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char *usage =
    "usage: train BUNDLE --data DIR --steps N [options]\n"
    "\n"
    "Trains a bundle written by `cleave compile --train`: each step runs the\n"
    "forward, the backward and the update on the bundle's batch of samples.\n"
    "\n"
    "  --data DIR            one NAME.npy per input of the bundle, its first\n"
    "                        dimension the samples (all files the same\n"
    "                        number), the rest one sample of the input\n"
    "  --steps N             train until N steps are done (a resumed run\n"
    "                        counts the steps before it)\n"
    "  --seed S              the seed of the data order, a new permutation\n"
    "                        of the samples every epoch (0)\n"
    "  --log FILE            append one JSON line per step to FILE\n"
    "  --checkpoint-dir DIR  save checkpoints to DIR/step_N after the last\n"
    "                        step and every --checkpoint-every steps\n"
    "  --checkpoint-every K  save a checkpoint every K steps\n"
    "  --print-every K       print a progress line every K steps and after\n"
    "                        the last, whatever the output is\n"
    "  --keep-checkpoints K  keep only the newest K checkpoints up to the\n"
    "                        step saved (all)\n"
    "  --resume              continue from the newest valid checkpoint in\n"
    "                        --checkpoint-dir (damaged ones are skipped with\n"
    "                        a warning; none: start at step 0)\n"
    "  --resume-from CKPT    continue from checkpoint directory CKPT\n"
    "  --profile DIR         time every rank's forward, backward and update\n"
    "                        calls: DIR/trace_rank_R.json (Chrome traces),\n"
    "                        and per stage the measured phases against the\n"
    "                        plan's prediction (printed, DIR/profile.json)\n"
    "  --threads N           CPU kernel threads (all cores)\n"
    "  --device DEV          cpu or cuda:N (the bundle's kind)\n"
    "  --timeout S           a bundle for several devices: end every rank\n"
    "                        when one program step or communication call\n"
    "                        takes longer than S seconds (300; 0 never)\n"
    "\n"
    "A bundle for several devices runs every device as a thread of this\n"
    "process; under mpirun or srun (with as many ranks as the bundle has\n"
    "devices) each process runs the device of its MPI rank, every process\n"
    "reads --data, and rank 0 prints and writes the log. Checkpoints then\n"
    "need a --checkpoint-dir that every rank's machine sees (a shared file\n"
    "system): each rank writes its own rank file.\n"
    "\n"
    "On a terminal a line shows the step, the loss, the learning rate, the\n"
    "samples per second and the time left; under mpirun or srun rank 0\n"
    "prints it as a line of its own every twentieth of the run (or every\n"
    "--print-every K steps); otherwise, with no --print-every, only a\n"
    "summary is printed when the run ends. A float16 step also shows (and "
    "logs) its\n"
    "loss scale and whether it was skipped for inf or NaN gradients. SIGINT "
    "(Ctrl-C) or SIGTERM ends the run\n"
    "after the step in flight, saving a checkpoint of it.\n";

struct TrainOptions {
  std::string bundle;
  std::string data;
  int64_t steps = 0;
  bool stepsGiven = false;
  std::optional<uint64_t> seed;
  std::string log;
  std::string checkpointDir;
  int64_t checkpointEvery = 0;
  int64_t printEvery = 0;
  int64_t keepCheckpoints = 0;
  bool resume = false;
  std::string resumeFrom;
  int threads = 0;
  std::string device;
  std::string profileDir;
  double timeout = 300;
  bool help = false;
};

/// A whole number of `option`, at least `least`.
int64_t parseCount(const std::string &option, const std::string &text,
                   int64_t least) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno == ERANGE || value < least)
    throw Error(option + " wants a whole number from " + std::to_string(least) +
                ", not '" + text + "'");
  return value;
}

TrainOptions parseArguments(int argc, char **argv) {
  TrainOptions options;
  ArgumentScanner args(argc, argv, "train");
  while (args.advance()) {
    const std::string &arg = args.arg();
    if (arg == "-h" || arg == "--help") {
      options.help = true;
    } else if (arg == "--data") {
      options.data = args.value();
    } else if (arg == "--steps") {
      options.steps = parseCount(arg, args.value(), 1);
      options.stepsGiven = true;
    } else if (arg == "--seed") {
      std::string text = args.value();
      char *end = nullptr;
      errno = 0;
      unsigned long long seed = std::strtoull(text.c_str(), &end, 10);
      if (text.empty() || text[0] == '-' || *end || errno == ERANGE)
        throw Error("--seed wants a whole number from 0, not '" + text + "'");
      options.seed = seed;
    } else if (arg == "--log") {
      options.log = args.value();
    } else if (arg == "--checkpoint-dir") {
      options.checkpointDir = args.value();
      if (options.checkpointDir.empty())
        throw Error("--checkpoint-dir wants a directory");
    } else if (arg == "--checkpoint-every") {
      options.checkpointEvery = parseCount(arg, args.value(), 1);
    } else if (arg == "--print-every") {
      options.printEvery = parseCount(arg, args.value(), 1);
    } else if (arg == "--keep-checkpoints") {
      options.keepCheckpoints = parseCount(arg, args.value(), 1);
    } else if (arg == "--resume") {
      options.resume = true;
    } else if (arg == "--resume-from") {
      options.resumeFrom = args.value();
    } else if (arg == "--profile") {
      options.profileDir = args.value();
      if (options.profileDir.empty())
        throw Error("--profile wants a directory");
    } else if (arg == "--threads") {
      options.threads = static_cast<int>(parseCount(arg, args.value(), 0));
    } else if (arg == "--device") {
      options.device = args.value();
    } else if (arg == "--timeout") {
      std::string text = args.value();
      char *end = nullptr;
      double seconds = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || !(seconds >= 0) || !std::isfinite(seconds))
        throw Error("--timeout wants a non-negative number of seconds, not '" +
                    text + "'");
      options.timeout = seconds;
    } else if (args.isOption()) {
      throw Error("unknown option '" + arg + "' (see --help)");
    } else if (options.bundle.empty()) {
      options.bundle = arg;
    } else {
      throw Error("unexpected argument '" + arg + "'");
    }
  }
  if (options.help)
    return options;
  if (options.bundle.empty())
    throw Error("no bundle given (see --help)");
  if (options.data.empty())
    throw Error("no --data DIR given (see --help)");
  if (!options.stepsGiven)
    throw Error("no --steps N given (see --help)");
  if (options.checkpointEvery && options.checkpointDir.empty())
    throw Error("--checkpoint-every needs --checkpoint-dir DIR");
  if (options.keepCheckpoints && options.checkpointDir.empty())
    throw Error("--keep-checkpoints needs --checkpoint-dir DIR");
  if (options.resume && options.checkpointDir.empty())
    throw Error("--resume needs --checkpoint-dir DIR (or use --resume-from "
                "CHECKPOINT)");
  if (options.resume && !options.resumeFrom.empty())
    throw Error("--resume and --resume-from exclude each other");
  return options;
}

/// splitmix64: a small generator whose every output is fixed by its seed.
class SampleGenerator {
public:
  explicit SampleGenerator(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, bound), without the bias of a bare modulo.
  uint64_t below(uint64_t bound) {
    uint64_t limit = std::numeric_limits<uint64_t>::max() -
                     std::numeric_limits<uint64_t>::max() % bound;
    uint64_t value;
    do
      value = next();
    while (value >= limit);
    return value % bound;
  }

private:
  uint64_t state;
};

/// The signal that asked the run to stop (SIGINT, SIGTERM), or 0.
volatile std::sig_atomic_t stopSignal = 0;

extern "C" void requestStop(int signal) {
  stopSignal = signal;
  // A second one ends the process at once.
  std::signal(signal, SIG_DFL);
}

/// While a run lasts, Ctrl-C and a scheduler's SIGTERM (preemption) end it
/// after the step in flight, with a checkpoint of that step.
class StopRequests {
public:
  StopRequests() {
    stopSignal = 0;
    previousInterrupt = std::signal(SIGINT, requestStop);
    previousTerminate = std::signal(SIGTERM, requestStop);
  }
  ~StopRequests() {
    std::signal(SIGINT, previousInterrupt);
    std::signal(SIGTERM, previousTerminate);
  }
  StopRequests(const StopRequests &) = delete;
  StopRequests &operator=(const StopRequests &) = delete;

private:
  void (*previousInterrupt)(int);
  void (*previousTerminate)(int);
};

/// Creates `dir` and checks that files can be made in it, before any step
/// runs, so that a run is not lost to a directory it cannot save to.
void prepareCheckpointDir(const std::string &dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir))
    throw Error("--checkpoint-dir " + dir + ": cannot create the directory" +
                (error ? ": " + error.message() : ""));
  fs::path probe =
      fs::path(dir) / (".write-test-" + std::to_string(::getpid()));
  std::FILE *file = std::fopen(probe.c_str(), "w");
  if (!file)
    throw Error("--checkpoint-dir " + dir +
                ": cannot write in it: " + std::strerror(errno));
  std::fclose(file);
  fs::remove(probe, error);
}

/// The checkpoint a resumed run starts from: the newest of the directory
/// that reads back intact, or none. Warns of those it skips when `warn`.
std::optional<std::string> newestCheckpoint(const std::string &root,
                                            bool warn) {
  for (const std::string &candidate : listCheckpoints(root)) {
    try {
      readCheckpoint(candidate);
      return candidate;
    } catch (const Error &e) {
      if (warn)
        std::fprintf(stderr,
                     "cleave train: warning: skipping checkpoint %s: %s\n",
                     candidate.c_str(), e.what());
    }
  }
  return std::nullopt;
}

/// The step of checkpoint `path` (a step_N directory).
int64_t checkpointStep(const std::string &path) {
  return std::stoll(fs::path(path).filename().string().substr(5));
}

/// "1:02:03" or "2:03".
std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "?";
  long total = std::lround(seconds);
  char text[32];
  if (total >= 3600)
    std::snprintf(text, sizeof(text), "%ld:%02ld:%02ld", total / 3600,
                  total / 60 % 60, total % 60);
  else
    std::snprintf(text, sizeof(text), "%ld:%02ld", total / 60, total % 60);
  return text;
}

/// The loss a step returned: the bundle's one output, of one element.
double lossOf(const Tensor &output) {
  switch (output.dtype()) {
  case CLEAVE_F32:
    return output.data<float>()[0];
  case CLEAVE_F64:
    return output.data<double>()[0];
  default:
    return std::nan("");
  }
}

/// A float32 scalar state of a device; none when its program has no such
/// state.
std::optional<double> scalarState(const Session &session,
                                  const std::string &name) {
  std::optional<Tensor> state = session.state(name);
  if (!state || state->dtype() != CLEAVE_F32 || state->numElements() != 1)
    return std::nullopt;
  return state->data<float>()[0];
}

/// Dynamic loss scaling as a step left it (a float16 step's states).
struct LossScaleStatus {
  double scale = 0;
  /// The steps skipped so far, and whether the last step was one.
  int64_t skippedSteps = 0;
  bool skipped = false;
};

/// The devices a run steps together: every rank of the bundle as a thread
/// of this process, or this process's own rank of a job that runs one
/// process per device (mpirun, srun).
class TrainingDevices {
public:
  virtual ~TrainingDevices() = default;
  /// The first device of this process: the bundle's inputs, the learning
  /// rate, the scalar states.
  virtual const Session &primary() const = 0;
  /// The devices this process runs.
  virtual std::vector<const Session *> local() const = 0;
  /// The job's communicator when each process runs one device.
  virtual Communicator *job() const { return nullptr; }
  /// Whether this process prints, logs and reports for the run.
  bool reports() const { return !job() || job()->rank() == 0; }
  /// Whether any device of the bundle updates parameters.
  virtual bool updatesParameters() const = 0;
  /// Runs one step on every device; returns the loss on the process that
  /// reports (NaN on the others).
  virtual double step(const std::map<std::string, Tensor> &feeds) = 0;
  /// The largest `value` of every process: what one rank decides (a stop
  /// it was asked for) every rank does.
  virtual int agree(int value) { return value; }
  virtual void save(const TrainingPosition &position,
                    const std::string &dir) = 0;
  virtual TrainingPosition load(const std::string &dir) = 0;
};

/// Every device as a thread of this process.
/// Names the tensors of checkpoint `dir` that the bundle does not keep, so
/// that they are not dropped in silence.
static void warnUnrestored(const std::string &dir,
                           const std::vector<std::string> &unrestored) {
  if (unrestored.empty())
    return;
  std::string names;
  for (const std::string &name : unrestored)
    names += (names.empty() ? "'" : ", '") + name + "'";
  std::fprintf(stderr,
               "cleave train: warning: %s holds %s, which this bundle does "
               "not keep: not restored\n",
               dir.c_str(), names.c_str());
}

class ThreadRanks final : public TrainingDevices {
public:
  explicit ThreadRanks(std::unique_ptr<SessionGroup> group)
      : group(std::move(group)) {}
  const Session &primary() const override { return group->primary(); }
  std::vector<const Session *> local() const override {
    std::vector<const Session *> sessions;
    for (int rank = 0; rank < group->size(); ++rank)
      sessions.push_back(&group->rank(rank));
    return sessions;
  }
  bool updatesParameters() const override {
    return !group->trainedParameters().empty();
  }
  double step(const std::map<std::string, Tensor> &feeds) override {
    return lossOf(group->run(feeds)[0]);
  }
  void save(const TrainingPosition &position, const std::string &dir) override {
    saveCheckpoint(*group, position, dir);
  }
  TrainingPosition load(const std::string &dir) override {
    std::vector<std::string> unrestored;
    TrainingPosition position = loadCheckpoint(*group, dir, &unrestored);
    warnUnrestored(dir, unrestored);
    return position;
  }

private:
  std::unique_ptr<SessionGroup> group;
};

/// This process's device of a job of one process per device.
class ProcessRank final : public TrainingDevices {
public:
  ProcessRank(Communicator &comm, std::unique_ptr<Session> session)
      : comm(&comm), session(std::move(session)) {}
  const Session &primary() const override { return *session; }
  std::vector<const Session *> local() const override {
    return {session.get()};
  }
  Communicator *job() const override { return comm; }
  bool updatesParameters() const override {
    return comm->maxOverDevices(!session->trainedParameters().empty()) != 0;
  }
  double step(const std::map<std::string, Tensor> &feeds) override {
    std::vector<Tensor> outputs = session->run(feeds);
    // The loss is the first replica's, as a thread group reports it: the
    // lowest rank of replica 0 that writes the output.
    bool writes = session->place().dp == 0 && session->writesOutput(0);
    std::vector<double> table = comm->gatherToFirst(
        {writes ? 1.0 : 0.0, writes ? lossOf(outputs[0]) : 0.0});
    for (std::size_t row = 0; row + 1 < table.size(); row += 2)
      if (table[row] != 0)
        return table[row + 1];
    return std::nan("");
  }
  int agree(int value) override { return comm->maxOverDevices(value); }
  void save(const TrainingPosition &position, const std::string &dir) override {
    saveCheckpoint(*session, *comm, position, dir);
  }
  TrainingPosition load(const std::string &dir) override {
    std::vector<std::string> unrestored;
    TrainingPosition position =
        loadCheckpoint(*session, *comm, dir, &unrestored);
    warnUnrestored(dir, unrestored);
    return position;
  }

private:
  /// Outlives the session.
  Communicator *comm;
  std::unique_ptr<Session> session;
};

/// Refuses a bundle whose step is not a training step.
void checkTrainingBundle(const TrainingDevices &devices,
                         const std::string &bundle) {
  const Session &session = devices.primary();
  const std::vector<TensorInfo> &outputs = session.outputs();
  bool lossOnly =
      outputs.size() == 1 &&
      (outputs[0].dtype == CLEAVE_F32 || outputs[0].dtype == CLEAVE_F64) &&
      (outputs[0].shape.empty() || outputs[0].shape == std::vector<int64_t>{1});
  if (!lossOnly || !devices.updatesParameters())
    throw Error(bundle +
                ": not a training bundle; a bundle compiled with `cleave "
                "compile --train --loss NAME` updates its parameters and "
                "returns the loss alone");
  if (session.inputs().empty())
    throw Error(bundle + ": the bundle has no inputs; cleave train feeds "
                         "samples from --data to them");
}

class TrainingRun {
public:
  TrainingRun(const TrainOptions &options, TrainingDevices &devices,
              const TrainingData &data)
      : options(options), devices(devices), data(data),
        // A launcher may hand its processes a terminal of its own, which
        // a progress line redrawn in place does not suit.
        terminal(!devices.job() && !options.printEvery &&
                 ::isatty(STDOUT_FILENO)) {
    if (!options.profileDir.empty())
      profile.emplace(devices.local(), devices.job(), options.profileDir);
  }

  /// Restores the checkpoint to resume from, if any.
  void resume();
  /// Opens the log (appended to by a resumed run).
  void openLog();
  /// Runs the steps up to --steps; returns the exit status.
  int run();

private:
  std::vector<int64_t> nextBatch();
  void report(int64_t first, double loss, double rate, double seconds);
  /// Reads the loss scale after a step (none for a bundle without loss
  /// scaling).
  std::optional<LossScaleStatus> readLossScale() const;
  void save();
  /// Keeps the newest --keep-checkpoints checkpoints up to this step.
  void removeOlderCheckpoints();

  const TrainOptions &options;
  /// Every device of the bundle, run together.
  TrainingDevices &devices;
  const TrainingData &data;
  /// Whether the progress line is redrawn in place (a terminal of this
  /// process), rather than printed as lines of their own.
  bool terminal;
  TrainingPosition position;
  bool resumed = false;
  std::vector<int64_t> order;
  int64_t orderEpoch = -1;
  std::ofstream log;
  std::string lastCheckpoint;
  Clock::time_point lastDraw;
  std::optional<TrainingProfile> profile;
  std::optional<LossScaleStatus> lossScale;
};

std::optional<LossScaleStatus> TrainingRun::readLossScale() const {
  std::optional<double> scale = scalarState(devices.primary(), "loss_scale");
  std::optional<double> skipped =
      scalarState(devices.primary(), "loss_scale.skipped_steps");
  if (!scale || !skipped)
    return std::nullopt;
  LossScaleStatus status;
  status.scale = *scale;
  status.skippedSteps = static_cast<int64_t>(*skipped);
  status.skipped = lossScale && status.skippedSteps > lossScale->skippedSteps;
  return status;
}

void TrainingRun::resume() {
  position.seed = options.seed.value_or(0);
  position.samples = data.samples();
  std::string from = options.resumeFrom;
  // A run from step 0 would save over the checkpoints of the run before.
  if (!options.resume && from.empty() && !options.checkpointDir.empty()) {
    std::vector<std::string> saved = listCheckpoints(options.checkpointDir);
    if (!saved.empty())
      throw Error("--checkpoint-dir " + options.checkpointDir +
                  " holds the checkpoints of another run (newest " +
                  saved.front() +
                  "); continue it with --resume, or choose another "
                  "directory");
  }
  if (options.resume) {
    std::optional<std::string> newest =
        newestCheckpoint(options.checkpointDir, devices.reports());
    // Every rank must resume from the same step.
    int step =
        newest
            ? static_cast<int>(std::min<int64_t>(
                  checkpointStep(*newest), std::numeric_limits<int>::max() - 1))
            : -1;
    int newestOnAny = devices.agree(step);
    int newestOnAll = -devices.agree(-step);
    if (newestOnAny != newestOnAll) {
      auto describe = [](int newestStep) {
        return newestStep < 0 ? std::string("none")
                              : "step " + std::to_string(newestStep);
      };
      throw Error("--checkpoint-dir " + options.checkpointDir +
                  ": the ranks find different newest checkpoints (" +
                  describe(newestOnAll) + " on one, " + describe(newestOnAny) +
                  " on another); it must be on a file system every rank "
                  "shares");
    }
    if (!newest) {
      if (devices.reports())
        std::fprintf(stderr,
                     "cleave train: note: no checkpoint in %s; starting at "
                     "step 0\n",
                     options.checkpointDir.c_str());
      return;
    }
    from = *newest;
  }
  if (from.empty())
    return;
  TrainingPosition saved = devices.load(from);
  if (saved.samples == 0) {
    // Saved by cleave.Trainer, which feeds its own batches.
    if (devices.reports())
      std::fprintf(stderr,
                   "cleave train: note: %s records no data order; the order "
                   "starts at its first sample\n",
                   from.c_str());
    saved.seed = position.seed;
    saved.samples = position.samples;
  }
  if (saved.samples != data.samples())
    throw Error(from + ": its data order runs over " +
                std::to_string(saved.samples) + " samples, but --data " +
                options.data + " holds " + std::to_string(data.samples()) +
                "; resume with the data it was trained on");
  if (options.seed && *options.seed != saved.seed)
    throw Error(from + ": saved with --seed " + std::to_string(saved.seed) +
                ", not " + std::to_string(*options.seed) +
                "; resume with its seed (or without --seed)");
  position = saved;
  resumed = true;
  if (devices.reports())
    std::fprintf(stderr, "cleave train: resuming from %s (step %lld)\n",
                 from.c_str(), static_cast<long long>(position.step));
}

void TrainingRun::openLog() {
  if (options.log.empty() || !devices.reports())
    return;
  log.open(options.log, resumed ? std::ios::app : std::ios::trunc);
  if (!log)
    throw Error("--log " + options.log +
                ": cannot open: " + std::strerror(errno));
}

std::vector<int64_t> TrainingRun::nextBatch() {
  std::vector<int64_t> batch;
  batch.reserve(static_cast<std::size_t>(data.batch()));
  // A batch that runs past the end of an epoch goes on in the next one.
  while (static_cast<int64_t>(batch.size()) < data.batch()) {
    if (orderEpoch != position.epoch) {
      order = sampleOrder(data.samples(), position.seed, position.epoch);
      orderEpoch = position.epoch;
    }
    batch.push_back(order[static_cast<std::size_t>(position.offset)]);
    if (++position.offset == data.samples()) {
      position.offset = 0;
      ++position.epoch;
    }
  }
  return batch;
}

void TrainingRun::report(int64_t first, double loss, double rate,
                         double seconds) {
  int64_t done = position.step - first;
  double samplesPerSecond =
      seconds > 0 ? static_cast<double>(done * data.batch()) / seconds : 0;
  if (log.is_open()) {
    char rateText[32] = "null";
    if (rate >= 0)
      std::snprintf(rateText, sizeof(rateText), "%.9g", rate);
    // JSON has no NaN: a diverged step logs null.
    char lossText[32] = "null";
    if (std::isfinite(loss))
      std::snprintf(lossText, sizeof(lossText), "%.9g", loss);
    char scaling[96] = "";
    if (lossScale)
      std::snprintf(scaling, sizeof(scaling),
                    ", \"loss_scale\": %.9g, \"skipped\": %s", lossScale->scale,
                    lossScale->skipped ? "true" : "false");
    char line[512];
    std::snprintf(line, sizeof(line),
                  "{\"step\": %lld, \"loss\": %s, \"lr\": %s%s, \"epoch\": "
                  "%lld, \"samples_per_s\": %.6g, \"seconds\": %.6f}\n",
                  static_cast<long long>(position.step), lossText, rateText,
                  scaling, static_cast<long long>(position.epoch),
                  samplesPerSecond, seconds);
    log << line;
    log.flush();
    if (!log)
      throw Error("--log " + options.log + ": cannot write");
  }
  bool last = position.step == options.steps;
  if (!terminal) {
    // Lines of their own: every --print-every steps, or under a launcher
    // every twentieth of the run; piped, none unless asked for.
    int64_t every = options.printEvery;
    if (!every && devices.job())
      every = std::max<int64_t>(1, (options.steps - first + 19) / 20);
    if (!every || (!last && position.step % every != 0))
      return;
  } else {
    Clock::time_point now = Clock::now();
    if (!last && now - lastDraw < std::chrono::milliseconds(100))
      return;
    lastDraw = now;
  }
  double left = done > 0
                    ? seconds / static_cast<double>(done) *
                          static_cast<double>(options.steps - position.step)
                    : NAN;
  std::string lr;
  if (rate >= 0) {
    char text[32];
    std::snprintf(text, sizeof(text), "  lr %.3e", rate);
    lr = text;
  }
  if (lossScale) {
    char text[48];
    std::snprintf(text, sizeof(text), "  scale %.4g%s", lossScale->scale,
                  lossScale->skipped ? " (skipped)" : "");
    lr += text;
  }
  std::printf("%sstep %lld/%lld  loss %.6g%s  %.1f samples/s  ETA %s%s",
              terminal ? "\r" : "", static_cast<long long>(position.step),
              static_cast<long long>(options.steps), loss, lr.c_str(),
              samplesPerSecond, formatDuration(left).c_str(),
              terminal ? "\x1b[K" : "\n");
  if (terminal && last)
    std::printf("\n");
  std::fflush(stdout);
}

void TrainingRun::save() {
  std::string dir =
      (fs::path(options.checkpointDir) / checkpointName(position.step))
          .string();
  devices.save(position, dir);
  lastCheckpoint = dir;
  if (options.keepCheckpoints)
    removeOlderCheckpoints();
}

void TrainingRun::removeOlderCheckpoints() {
  // Only those before the one just saved: newer ones (a run resumed from
  // before a damaged checkpoint) are not this run's to remove.
  int64_t kept = 1;
  for (const std::string &path : listCheckpoints(options.checkpointDir)) {
    std::string name = fs::path(path).filename().string();
    if (std::stoll(name.substr(5)) >= position.step ||
        kept++ < options.keepCheckpoints)
      continue;
    std::error_code error;
    fs::remove_all(path, error);
    if (error)
      std::fprintf(stderr,
                   "cleave train: warning: cannot remove old checkpoint %s: "
                   "%s\n",
                   path.c_str(), error.message().c_str());
  }
}

int TrainingRun::run() {
  bool reports = devices.reports();
  int64_t first = position.step;
  if (first >= options.steps) {
    if (reports)
      std::printf("%s is at step %lld already; --steps %lld asks for no "
                  "more\n",
                  options.bundle.c_str(), static_cast<long long>(first),
                  static_cast<long long>(options.steps));
    return 0;
  }
  Clock::time_point start = Clock::now();
  // A resumed run's skipped steps so far.
  lossScale = readLossScale();
  double firstLoss = NAN, loss = NAN;
  StopRequests stops;
  // The signal that stops the run, once every rank knows of it: a signal
  // to one process of a job stops all of them after the same step.
  int stop = 0;
  while (position.step < options.steps && !stop) {
    std::map<std::string, Tensor> feeds = data.gather(nextBatch());
    // A skipped step does not advance the schedule.
    int64_t updates = position.step - (lossScale ? lossScale->skippedSteps : 0);
    double rate = devices.primary().learningRate(updates);
    Clock::time_point stepStart = Clock::now();
    loss = devices.step(feeds);
    if (profile)
      profile->record(
          position.step + 1,
          std::chrono::duration<double>(stepStart - start).count(),
          std::chrono::duration<double>(Clock::now() - stepStart).count());
    lossScale = readLossScale();
    if (position.step == first)
      firstLoss = loss;
    ++position.step;
    double seconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    if (reports)
      report(first, loss, rate, seconds);
    stop = devices.agree(stopSignal);
    // The last step is always saved, and the one a signal stops after.
    if (!options.checkpointDir.empty() &&
        ((options.checkpointEvery &&
          position.step % options.checkpointEvery == 0) ||
         position.step == options.steps || stop))
      save();
  }
  if (stop && reports) {
    if (terminal)
      std::printf("\n");
    std::fprintf(stderr, "cleave train: %s after step %lld\n",
                 stop == SIGINT ? "interrupted" : "terminated",
                 static_cast<long long>(position.step));
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  int64_t done = position.step - first;
  if (reports) {
    std::printf("trained %s: steps %lld to %lld (%lld samples, epoch %lld) "
                "in %.2f s, %.1f samples/s; loss %.6g -> %.6g\n",
                options.bundle.c_str(), static_cast<long long>(first + 1),
                static_cast<long long>(position.step),
                static_cast<long long>(done * data.batch()),
                static_cast<long long>(position.epoch), seconds,
                seconds > 0 ? static_cast<double>(done * data.batch()) / seconds
                            : 0.0,
                firstLoss, loss);
    if (!lastCheckpoint.empty())
      std::printf("checkpoint: %s\n", lastCheckpoint.c_str());
  }
  if (profile)
    profile->finish(options.bundle);
  std::fflush(stdout);
  // As a shell reports a process the signal ended.
  return stop ? 128 + stop : 0;
}

} // namespace

std::vector<int64_t> sampleOrder(int64_t samples, uint64_t seed,
                                 int64_t epoch) {
  std::vector<int64_t> order(static_cast<std::size_t>(samples));
  for (int64_t i = 0; i < samples; ++i)
    order[static_cast<std::size_t>(i)] = i;
  // One stream per (seed, epoch): the epoch is mixed in through the
  // generator itself, so that neighbouring seeds do not share epochs.
  SampleGenerator mix(seed);
  SampleGenerator generator(
      mix.next() ^ SampleGenerator(static_cast<uint64_t>(epoch)).next());
  for (int64_t i = samples - 1; i > 0; --i) {
    auto j =
        static_cast<int64_t>(generator.below(static_cast<uint64_t>(i) + 1));
    std::swap(order[static_cast<std::size_t>(i)],
              order[static_cast<std::size_t>(j)]);
  }
  return order;
}

int trainCommand(int argc, char **argv) {
  // Under mpirun or srun: this process's link to the others, which a
  // failure ends with it. Declared before the devices, which it outlives.
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<TrainingDevices> devices;
  try {
    TrainOptions options = parseArguments(argc, argv);
    if (options.help) {
      std::fputs(usage, stdout);
      return 0;
    }
    execWithRuntimeSettings(options.threads);
    if (!options.checkpointDir.empty())
      prepareCheckpointDir(options.checkpointDir);
    SessionOptions sessionOptions;
    sessionOptions.numThreads = options.threads;
    sessionOptions.device = options.device;
    sessionOptions.profile = !options.profileDir.empty();
    sessionOptions.timeoutSeconds = options.timeout;
    sessionOptions.command = "cleave train";
    if (inMpiJob()) {
      // One process per device: this one runs its MPI rank's.
      Manifest manifest = readManifest(options.bundle);
      try {
        comm = createMpiCommunicator(manifest.mesh());
      } catch (const Error &e) {
        throw Error(options.bundle + ": " + e.what());
      }
      if (manifest.deviceKind == "cuda")
        joinGpuRanks(comm, sessionOptions.device);
      sessionOptions.communicator = comm.get();
      devices = std::make_unique<ProcessRank>(
          *comm, Session::open(options.bundle, sessionOptions));
    } else {
      devices = std::make_unique<ThreadRanks>(
          SessionGroup::open(options.bundle, sessionOptions));
    }
    checkTrainingBundle(*devices, options.bundle);
    TrainingData data(options.data, devices->primary().inputs());
    TrainingRun run(options, *devices, data);
    run.resume();
    run.openLog();
    int status = run.run();
    devices.reset();
    return status;
  } catch (const std::exception &e) {
    // Past a progress line, which ends without a newline.
    if (::isatty(STDOUT_FILENO))
      std::printf("\n");
    std::fflush(stdout);
    if (!comm) {
      std::fprintf(stderr, "cleave train: error: %s\n", e.what());
      return 2;
    }
    // The other ranks may wait on this one: end them all, naming it.
    DevicePlace place = comm->place();
    std::fprintf(stderr,
                 "cleave train: error: rank %d (stage %d, tp %d, dp %d): %s\n",
                 place.rank, place.stage, place.tp, place.dp, e.what());
    std::fflush(stderr);
    comm->abort(2);
  }
  return 2;
}

} // namespace cleave::rt
