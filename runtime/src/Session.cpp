//===- Session.cpp - run a bundle on a device
//------------------------------===//
//
// A session owns one device, the program's arena on it (allocated once) and,
// on a device that is not the host, a copy of the weights and buffers for
// the graph's inputs and outputs. A run checks the feeds against the
// manifest, calls the program, and turns a failure it recorded into an
// Error naming the step.
//
//===----------------------------------------------------------------------===//

#include "BlasCore.h"
#include "Bundle.h"
#include "OptimizerMath.h"
#include "Watchdog.h"

#include "cleave/rt/Communicator.h"
#include "cleave/rt/Context.h"
#include "cleave/rt/Device.h"
#include "cleave/rt/Runtime.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <utility>

namespace cleave::rt {

namespace {

using Clock = std::chrono::steady_clock;

/// Times one stretch of a run under the watchdog, and stops timing when the
/// scope ends, however it ends (a failed synchronisation throws).
class WatchScope {
public:
  WatchScope(Watchdog *watchdog, const char *op) : watchdog(watchdog) {
    begin(op);
  }
  ~WatchScope() {
    if (watchdog)
      watchdog->end();
  }
  WatchScope(const WatchScope &) = delete;
  WatchScope &operator=(const WatchScope &) = delete;

  void begin(const char *op) {
    if (watchdog)
      watchdog->begin(op, nullptr);
  }

private:
  Watchdog *watchdog;
};

/// Creates the device `name` names ("cpu", "cuda", "cuda:N") for a bundle
/// compiled for `kind`.
std::unique_ptr<Device> createDevice(const std::string &name,
                                     const std::string &kind,
                                     const SessionOptions &options,
                                     const std::string &bundleDir) {
  std::string wanted = name.empty() ? kind : name;
  std::string wantedKind = wanted.substr(0, wanted.find(':'));
  if (wantedKind != "cpu" && wantedKind != "cuda")
    throw Error("unknown device '" + wanted + "' (expected cpu or cuda:N)");
  if (wantedKind != kind)
    throw Error(bundleDir + ": compiled for " + kind + ", it cannot run on " +
                wanted);
  if (wantedKind == "cpu") {
    if (wanted != "cpu")
      throw Error("unknown device '" + wanted + "' (expected cpu or cuda:N)");
    return createCpuDevice(options.numThreads);
  }
  int index = 0;
  if (wanted.size() > 5) {
    std::string digits = wanted.substr(5);
    char *end = nullptr;
    long value = std::strtol(digits.c_str(), &end, 10);
    if (wanted[4] != ':' || digits.empty() || *end || value < 0)
      throw Error("unknown device '" + wanted + "' (expected cpu or cuda:N)");
    index = static_cast<int>(value);
  } else if (wanted != "cuda") {
    throw Error("unknown device '" + wanted + "' (expected cpu or cuda:N)");
  }
  return createCudaDevice(index);
}

std::size_t byteSize(const TensorInfo &info) {
  std::size_t count = 1;
  for (int64_t dim : info.shape)
    count *= static_cast<std::size_t>(dim);
  return count * cleave_dtype_size(info.dtype);
}

/// A graph tensor cut into `parts` equal blocks along its batch dimension,
/// seen as [outer, parts, row] bytes: block j is `outer` rows of `row`
/// bytes, `parts * row` apart.
struct Blocks {
  std::size_t outer = 1;
  std::size_t row = 0;
  int parts = 1;

  /// A tensor with no batch dimension (an output that an update writes
  /// once per step) is one whole block.
  Blocks(const TensorInfo &info, int parts)
      : parts(info.batchDim < 0 ? 1 : parts) {
    row = byteSize(info);
    if (this->parts == 1)
      return;
    for (int d = 0; d < info.batchDim; ++d)
      outer *= static_cast<std::size_t>(info.shape[d]);
    row /= outer * static_cast<std::size_t>(parts);
  }
  std::size_t blockBytes() const { return outer * row; }
  /// Whether a block is one contiguous run of the whole (the batch is the
  /// outermost dimension).
  bool contiguous() const { return outer == 1; }
  /// The block that the call on batch block `block` reads or writes.
  int blockOf(int block) const { return parts == 1 ? 0 : block; }
  const uint8_t *blockIn(const uint8_t *whole, int j) const {
    return whole + static_cast<std::size_t>(j) * row;
  }
  void copyOut(const uint8_t *whole, int j, uint8_t *block) const {
    for (std::size_t o = 0; o < outer; ++o)
      std::memcpy(block + o * row, whole + (o * parts + j) * row, row);
  }
  void copyIn(const uint8_t *block, int j, uint8_t *whole) const {
    for (std::size_t o = 0; o < outer; ++o)
      std::memcpy(whole + (o * parts + j) * row, block + o * row, row);
  }
};

} // namespace

struct Session::Impl {
  std::unique_ptr<Bundle> bundle;
  std::unique_ptr<Device> device;
  std::string programPath;
  DevicePlace place;
  Communicator *comm = nullptr;
  /// What was allocated and mapped, as it was.
  SessionMemory memory;
  std::unique_ptr<Watchdog> watchdog;
  /// What the kernels report of the weights they pack, where the bundle's
  /// packed-weight file does not take the reports: a recorder while the
  /// bundle is packed (SessionOptions::recordPackedWeights), else a
  /// counter.
  std::unique_ptr<PackedWeightRecorder> recorder;
  std::unique_ptr<RepackCounter> repackCounter;

  void *arena = nullptr;
  /// Memory that outlives a run: zeroed, then the writable weights.
  void *persistent = nullptr;
  /// The weights the program reads: the mapping on the host, a copy on
  /// other devices (`deviceWeights`).
  const uint8_t *weights = nullptr;
  void *deviceWeights = nullptr;
  /// Device buffers of the program's inputs and outputs (not on the host).
  std::vector<void *> deviceInputs;
  std::vector<void *> deviceOutputs;

  std::mutex running;
  bool profiling = false;
  std::vector<StepTime> steps;
  std::vector<PhaseTime> phases;
  Clock::time_point runStart;
  Clock::time_point stepStart;
  /// A device error that a profiled step's synchronisation found (and
  /// cleared) while the program ran; thrown when it returns.
  std::exception_ptr deferredFault;

  ~Impl() {
    watchdog.reset();
    if (!device)
      return;
    CleaveContext *ctx = device->context();
    ctx->watchdog = nullptr;
    // The communicator outlives the session: it must stop queuing on this
    // device before the device goes.
    if (comm)
      comm->releaseContext(ctx);
    for (void *buffer : deviceInputs)
      releaseQuietly(buffer);
    for (void *buffer : deviceOutputs)
      releaseQuietly(buffer);
    releaseQuietly(deviceWeights);
    releaseQuietly(arena);
    releaseQuietly(persistent);
    releaseQuietly(ctx->scratch);
    ctx->scratch = nullptr;
    ctx->scratchBytes = 0;
  }

  /// Allocates the persistent memory once: zeroed, with each writable
  /// weight copied in from the weight file.
  void initPersistent() {
    std::size_t bytes =
        static_cast<std::size_t>(bundle->program().persistentBytes);
    persistent = device->allocate(bytes);
    memory.persistent = static_cast<int64_t>(bytes);
    std::vector<uint8_t> initial(bytes, 0);
    const CleaveProgramInfo &info = bundle->programInfo();
    for (int32_t i = 0; i < info.numWritableWeights; ++i) {
      const CleaveWritableWeight &weight = info.writableWeights[i];
      std::memcpy(initial.data() + weight.persistentOffset,
                  bundle->weights() + weight.weightOffset,
                  static_cast<std::size_t>(weight.bytes));
    }
    if (device->isHost()) {
      if (bytes)
        std::memcpy(persistent, initial.data(), bytes);
    } else {
      device->copyToDevice(persistent, initial.data(), bytes);
      device->synchronize();
    }
  }

  /// Frees device memory on the way out. After a device fault every free
  /// reports it again; the run has reported it already, and a destructor
  /// that threw while an exception unwinds would end the process.
  void releaseQuietly(void *buffer) noexcept {
    if (!buffer)
      return;
    try {
      device->release(buffer);
    } catch (const std::exception &) {
    }
  }

  void checkFeeds(const std::map<std::string, Tensor> &feeds) const;
  /// Brings the other replicas' blocks of this device's outputs to the
  /// first replica.
  void gatherReplicas(std::vector<Tensor> &outputs);
  void closeStep();
  static void onStep(CleaveContext *ctx, int32_t step, const char *node);
};

Session::Session(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Session::~Session() = default;

std::unique_ptr<Session> Session::open(const std::string &bundleDir,
                                       const SessionOptions &options) {
  auto impl = std::make_unique<Impl>();
  Communicator *comm = options.communicator;
  if (!comm) {
    Manifest manifest = readManifest(bundleDir);
    if (manifest.devices > 1)
      throw Error(bundleDir + ": the bundle is for " +
                  std::to_string(manifest.devices) +
                  " devices; `cleave run` starts them, or start "
                  "cleave-worker under mpirun/srun with that many ranks");
  }
  impl->bundle = Bundle::load(bundleDir, comm ? comm->rank() : 0);
  const Manifest &manifest = impl->bundle->manifest();
  if (comm && comm->size() != manifest.devices)
    throw Error(bundleDir + ": the bundle is for " +
                std::to_string(manifest.devices) + " devices, but " +
                std::to_string(comm->size()) + " ranks were started");
  const RankEntry &rank = impl->bundle->place();
  impl->place = {rank.rank, rank.stage, rank.tp, rank.dp};
  impl->comm = comm;
  const ProgramEntry &program = impl->bundle->program();
  impl->programPath = bundleDir + "/" + program.library;
  impl->profiling = options.profile;
  impl->device =
      createDevice(options.device, manifest.deviceKind, options, bundleDir);
  Device &device = *impl->device;
  CleaveContext *ctx = device.context();
  if (device.isHost()) {
    ctx->cpuLevel = kernelCpuLevel(manifest.cpuIsa);
    // Packing a bundle times nothing: OpenBLAS's kernels do not matter.
    if (!options.recordPackedWeights)
      warnAboutBlasCore();
  }
  ctx->comm = comm;
  ctx->rank = rank.rank;
  ctx->stage = rank.stage;
  ctx->mesh = manifest.mesh();
  ctx->coords = {rank.stage, rank.dp, rank.tp};
  if (comm && options.timeoutSeconds > 0) {
    DevicePlace place = impl->place;
    impl->watchdog = std::make_unique<Watchdog>(
        options.timeoutSeconds,
        [comm, place, command = options.command](const std::string &message) {
          std::fflush(stdout);
          std::fprintf(stderr, "%s: error: rank %d (stage %d, tp %d): %s\n",
                       command.c_str(), place.rank, place.stage, place.tp,
                       message.c_str());
          std::fflush(stderr);
          comm->abort(2);
        });
    ctx->watchdog = impl->watchdog.get();
  }

  impl->arena = device.allocate(static_cast<std::size_t>(program.arenaBytes));
  SessionMemory &memory = impl->memory;
  memory.arena = program.arenaBytes;
  memory.weights = program.weightBytes;
  if (device.isHost()) {
    impl->weights = impl->bundle->weights();
    // The mapping is read-only and outlives the context: kernels may keep
    // what they derive from it (cleave_rt_constant_weights).
    ctx->constantWeights = impl->weights;
    ctx->constantWeightBytes = static_cast<std::size_t>(program.weightBytes);
    if (options.recordPackedWeights) {
      impl->recorder = std::make_unique<PackedWeightRecorder>();
      ctx->packedWeights = impl->recorder.get();
    } else if (PackedWeightFile *file = impl->bundle->packedWeights()) {
      ctx->packedWeights = file;
      memory.packed = file->fileBytes();
    } else {
      impl->repackCounter = std::make_unique<RepackCounter>();
      ctx->packedWeights = impl->repackCounter.get();
    }
  } else {
    std::size_t bytes = static_cast<std::size_t>(program.weightBytes);
    impl->deviceWeights = device.allocate(bytes);
    device.copyToDevice(impl->deviceWeights, impl->bundle->weights(), bytes);
    impl->weights = static_cast<const uint8_t *>(impl->deviceWeights);
    int blocks = manifest.dp * manifest.microbatches;
    auto port = [&](const TensorInfo &info) {
      std::size_t bytes = Blocks(info, blocks).blockBytes();
      memory.ports += static_cast<int64_t>(bytes);
      return device.allocate(bytes);
    };
    for (int index : program.inputs)
      impl->deviceInputs.push_back(port(manifest.inputs[index]));
    for (int index : program.outputs)
      impl->deviceOutputs.push_back(port(manifest.outputs[index]));
    device.synchronize();
  }
  impl->initPersistent();
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::vector<TensorInfo> &Session::inputs() const {
  return impl->bundle->manifest().inputs;
}
const std::vector<TensorInfo> &Session::outputs() const {
  return impl->bundle->manifest().outputs;
}
std::string Session::deviceName() const { return impl->device->name(); }
std::string Session::kernelIsa() const {
  if (!impl->device->isHost())
    return "";
  switch (impl->device->context()->cpuLevel) {
  case 4:
    return "x86-64-v4";
  case 3:
    return "x86-64-v3";
  default:
    return "x86-64";
  }
}
int Session::devices() const { return impl->bundle->manifest().devices; }
DevicePlace Session::place() const { return impl->place; }

bool Session::readsInput(std::size_t index) const {
  for (int read : impl->bundle->program().inputs)
    if (read == static_cast<int>(index))
      return true;
  return false;
}

bool Session::writesOutput(std::size_t index) const {
  // The first replica's device with tp index 0 gathers the other replicas'
  // blocks and writes them.
  if (impl->place.tp != 0 || impl->place.dp != 0)
    return false;
  for (int written : impl->bundle->program().outputs)
    if (written == static_cast<int>(index))
      return true;
  return false;
}

std::map<std::string, Tensor> Session::trainedParameters() const {
  std::lock_guard<std::mutex> lock(impl->running);
  const ProgramEntry &program = impl->bundle->program();
  std::map<std::string, Tensor> result;
  for (std::size_t i = 0; i < program.trainedParameters.size(); ++i) {
    const TensorInfo &info = program.trainedParameters[i];
    Tensor tensor(info.dtype, info.shape);
    const uint8_t *source = static_cast<const uint8_t *>(impl->persistent) +
                            program.trainedOffsets[i];
    if (impl->device->isHost())
      std::memcpy(tensor.data(), source, tensor.byteSize());
    else
      impl->device->copyToHost(tensor.data(), source, tensor.byteSize());
    result.emplace(info.name, std::move(tensor));
  }
  if (!impl->device->isHost())
    impl->device->synchronize();
  return result;
}

std::optional<Tensor> Session::state(const std::string &name) const {
  std::lock_guard<std::mutex> lock(impl->running);
  const ProgramEntry &program = impl->bundle->program();
  for (std::size_t i = 0; i < program.states.size(); ++i) {
    const TensorInfo &info = program.states[i];
    if (info.name != name)
      continue;
    Tensor tensor(info.dtype, info.shape);
    const uint8_t *source = static_cast<const uint8_t *>(impl->persistent) +
                            program.stateOffsets[i];
    if (impl->device->isHost()) {
      std::memcpy(tensor.data(), source, tensor.byteSize());
    } else {
      impl->device->copyToHost(tensor.data(), source, tensor.byteSize());
      impl->device->synchronize();
    }
    return tensor;
  }
  return std::nullopt;
}

const std::string &Session::bundleDirectory() const {
  return impl->bundle->directory();
}
std::string Session::bundleDigest() const {
  return impl->bundle->manifest().digest;
}
std::string Session::modelName() const {
  return impl->bundle->manifest().model;
}

PersistentLayout Session::persistentLayout() const {
  const ProgramEntry &program = impl->bundle->program();
  PersistentLayout layout;
  layout.bytes = program.persistentBytes;
  // The program owns the bytes between the regions: its hash stands for
  // their layout.
  std::string text = "persistent_bytes " + std::to_string(layout.bytes) +
                     "\nprogram " +
                     impl->bundle->manifest().files.at(program.library) + "\n";
  for (std::size_t i = 0; i < program.trainedParameters.size(); ++i) {
    const TensorInfo &info = program.trainedParameters[i];
    PersistentRegion region;
    region.name = info.name;
    region.dtype = info.dtype;
    region.shape = info.shape;
    region.offset = program.trainedOffsets[i];
    region.bytes = static_cast<int64_t>(byteSize(info));
    region.splitDim = info.splitDim;
    text += "region " + info.name + " " + info.typeString() + " " +
            std::to_string(region.offset) + "\n";
    layout.regions.push_back(std::move(region));
  }
  layout.digest = sha256Bytes(text.data(), text.size());
  for (std::size_t i = 0; i < program.states.size(); ++i) {
    const TensorInfo &info = program.states[i];
    layout.states.push_back(
        {info.name, info.dtype, info.shape, program.stateOffsets[i],
         static_cast<int64_t>(byteSize(info)), info.splitDim});
  }
  if (const std::optional<TrainingSchedule> &training =
          impl->bundle->manifest().training)
    layout.zero = training->zero;
  layout.tpSize = static_cast<int>(impl->bundle->manifest().mesh().tp);
  layout.tpIndex = place().tp;
  return layout;
}

std::vector<uint8_t> Session::readPersistent() const {
  std::lock_guard<std::mutex> lock(impl->running);
  std::size_t bytes =
      static_cast<std::size_t>(impl->bundle->program().persistentBytes);
  std::vector<uint8_t> image(bytes);
  if (bytes == 0)
    return image;
  if (impl->device->isHost()) {
    std::memcpy(image.data(), impl->persistent, bytes);
  } else {
    impl->device->copyToHost(image.data(), impl->persistent, bytes);
    impl->device->synchronize();
  }
  return image;
}

void Session::writePersistent(const std::vector<uint8_t> &image) {
  std::lock_guard<std::mutex> lock(impl->running);
  std::size_t bytes =
      static_cast<std::size_t>(impl->bundle->program().persistentBytes);
  if (image.size() != bytes)
    throw Error(impl->bundle->directory() + ": persistent memory of " +
                std::to_string(bytes) + " bytes cannot take " +
                std::to_string(image.size()));
  if (bytes == 0)
    return;
  if (impl->device->isHost()) {
    std::memcpy(impl->persistent, image.data(), bytes);
  } else {
    impl->device->copyToDevice(impl->persistent, image.data(), bytes);
    impl->device->synchronize();
  }
}

double Session::learningRate(int64_t step) const {
  const std::optional<TrainingSchedule> &schedule =
      impl->bundle->manifest().training;
  if (!schedule)
    return -1;
  return optimizer::learningRateAt(schedule->learningRate, step,
                                   schedule->warmupSteps, schedule->decaySteps,
                                   schedule->minLrRatio);
}

SessionMemory Session::memory() const {
  SessionMemory memory = impl->memory;
  if (PackedWeightFile *file = impl->bundle->packedWeights())
    memory.repacked = file->repackedBytes();
  if (impl->repackCounter)
    memory.repacked = impl->repackCounter->repackedBytes();
  return memory;
}

bool Session::writePackedWeights(const std::string &path) const {
  if (!impl->recorder || impl->recorder->recorded().empty())
    return false;
  cleave::rt::writePackedWeights(path, *impl->recorder);
  return true;
}

std::vector<StepTime> Session::profile() const {
  std::lock_guard<std::mutex> lock(impl->running);
  return impl->steps;
}

std::vector<PhaseTime> Session::phaseTimes() const {
  std::lock_guard<std::mutex> lock(impl->running);
  return impl->phases;
}

void Session::Impl::checkFeeds(
    const std::map<std::string, Tensor> &feeds) const {
  const std::vector<TensorInfo> &inputs = bundle->manifest().inputs;
  for (const auto &[name, tensor] : feeds) {
    bool known = false;
    for (const TensorInfo &info : inputs)
      known |= info.name == name;
    if (known)
      continue;
    std::string expected;
    for (const TensorInfo &info : inputs)
      expected += (expected.empty() ? "" : ", ") + info.name + " (" +
                  info.typeString() + ")";
    throw Error("unknown input '" + name + "'; the model's inputs are " +
                (expected.empty() ? std::string("none") : expected));
  }
  for (int index : bundle->program().inputs) {
    const TensorInfo &info = inputs[index];
    auto it = feeds.find(info.name);
    if (it == feeds.end())
      throw Error("missing input '" + info.name + "' (" + info.typeString() +
                  ")");
    const Tensor &tensor = it->second;
    if (tensor.dtype() != info.dtype || tensor.shape() != info.shape)
      throw Error("input '" + info.name + "': expected " + info.typeString() +
                  ", got " + typeString(tensor.dtype(), tensor.shape()));
  }
}

void Session::Impl::closeStep() {
  if (steps.empty())
    return;
  // Device work is asynchronous; a step ends when its work has run.
  if (!device->isHost())
    device->synchronize();
  steps.back().seconds =
      std::chrono::duration<double>(Clock::now() - stepStart).count();
}

void Session::Impl::onStep(CleaveContext *ctx, int32_t step, const char *node) {
  auto *self = static_cast<Impl *>(ctx->onStepData);
  // Called from the program: nothing may unwind through it. A device error
  // found here is kept and thrown once the program has returned.
  try {
    self->closeStep();
  } catch (const std::exception &) {
    if (!self->deferredFault)
      self->deferredFault = std::current_exception();
  }
  self->stepStart = Clock::now();
  double start =
      std::chrono::duration<double>(self->stepStart - self->runStart).count();
  self->steps.push_back({step, node ? node : "", 0.0, start});
}

std::vector<Tensor> Session::run(const std::map<std::string, Tensor> &feeds) {
  std::lock_guard<std::mutex> lock(impl->running);
  impl->runStart = Clock::now();
  impl->checkFeeds(feeds);
  const Manifest &manifest = impl->bundle->manifest();
  Device &device = *impl->device;

  CleaveContext *ctx = device.context();
  ctx->error.clear();
  ctx->failedKernel.clear();
  ctx->step = -1;
  ctx->node = nullptr;
  impl->steps.clear();
  impl->phases.clear();
  impl->deferredFault = nullptr;
  ctx->onStep = impl->profiling ? &Impl::onStep : nullptr;
  ctx->onStepData = impl.get();

  const ProgramEntry &program = impl->bundle->program();
  // Not zeroed: the program writes each of its outputs whole, as one
  // step's result or a copy of one (DeviceProgram's placeOutputs), in every
  // block of the batch.
  std::vector<Tensor> outputs(manifest.outputs.size());
  for (int index : program.outputs)
    outputs[index] = Tensor::uninitialized(manifest.outputs[index].dtype,
                                           manifest.outputs[index].shape);

  // The batch is cut into dp x microbatches blocks: this device's replica
  // runs the program once per microbatch k, on block dp * microbatches + k,
  // in the order the bundle's schedule recorded for its stage.
  int blocks = manifest.dp * manifest.microbatches;
  std::vector<Blocks> inputBlocks, outputBlocks;
  for (int index : program.inputs)
    inputBlocks.emplace_back(manifest.inputs[index], blocks);
  for (int index : program.outputs)
    outputBlocks.emplace_back(manifest.outputs[index], blocks);
  // Host copies of blocks that are not contiguous in the whole tensor.
  std::vector<std::vector<uint8_t>> inputStaging(program.inputs.size());
  std::vector<std::vector<uint8_t>> outputStaging(program.outputs.size());

  std::vector<const void *> inputPointers(program.inputs.size());
  std::vector<void *> outputPointers(program.outputs.size());
  // The pointers of the ports the step's entry takes.
  std::vector<const void *> entryInputs;
  std::vector<void *> entryOutputs;
  ctx->batchBlocks = blocks;
  // The gradient sums are final after the last backward call (of each
  // model chunk's backward entry, under the interleaved schedule).
  std::vector<bool> lastBackward(program.steps.size(), false);
  std::vector<bool> entrySeen(program.entries.size(), false);
  for (std::size_t step = program.steps.size(); step-- > 0;) {
    int entry = program.steps[step].entry;
    if (program.entries[entry].phase == "backward" && !entrySeen[entry])
      lastBackward[step] = true;
    entrySeen[entry] = true;
  }
  for (std::size_t step = 0; step < program.steps.size(); ++step) {
    // An update (microbatch -1) runs once per step, on whole tensors.
    int k = program.steps[step].microbatch;
    int block = k < 0 ? 0 : impl->place.dp * manifest.microbatches + k;
    ctx->batchBlock = block;
    ctx->lastBackward = lastBackward[step];
    const EntryPoint &entry = program.entries[program.steps[step].entry];
    // Only the ports the step's entry takes are cut and copied.
    for (int i : entry.inputs) {
      const Tensor &feed = feeds.at(manifest.inputs[program.inputs[i]].name);
      const auto *whole = static_cast<const uint8_t *>(feed.data());
      const Blocks &cut = inputBlocks[i];
      int at = cut.blockOf(block);
      const uint8_t *host = nullptr;
      if (cut.contiguous()) {
        host = cut.blockIn(whole, at);
      } else {
        inputStaging[i].resize(cut.blockBytes());
        cut.copyOut(whole, at, inputStaging[i].data());
        host = inputStaging[i].data();
      }
      if (device.isHost()) {
        inputPointers[i] = host;
      } else {
        device.copyToDevice(impl->deviceInputs[i], host, cut.blockBytes());
        inputPointers[i] = impl->deviceInputs[i];
      }
    }
    for (int i : entry.outputs) {
      const Blocks &cut = outputBlocks[i];
      auto *whole = static_cast<uint8_t *>(outputs[program.outputs[i]].data());
      if (!device.isHost())
        outputPointers[i] = impl->deviceOutputs[i];
      else if (cut.contiguous())
        outputPointers[i] =
            const_cast<uint8_t *>(cut.blockIn(whole, cut.blockOf(block)));
      else {
        outputStaging[i].resize(cut.blockBytes());
        outputPointers[i] = outputStaging[i].data();
      }
    }

    int32_t status = 0;
    Clock::time_point callStart = Clock::now();
    {
      // Watched until the device has run the microbatch: on a GPU the
      // program only queues its kernels and transfers, and a transfer that
      // never matches shows in the synchronisation.
      WatchScope watch(impl->watchdog.get(), "step");
      entryInputs.clear();
      for (int port : entry.inputs)
        entryInputs.push_back(inputPointers[port]);
      entryOutputs.clear();
      for (int port : entry.outputs)
        entryOutputs.push_back(outputPointers[port]);
      status = impl->bundle->entryFunction(program.steps[step].entry)(
          ctx, k, static_cast<uint8_t *>(impl->arena),
          static_cast<uint8_t *>(impl->persistent), impl->weights,
          entryInputs.data(), entryOutputs.data());
      if (status == 0 && impl->comm && step + 1 == program.steps.size()) {
        // The sends still in flight belong to this step.
        watch.begin("send");
        impl->comm->flush();
      }
      if (status == 0)
        impl->closeStep();
      if (!device.isHost()) {
        watch.begin("step");
        // A fault found during the run came first; what this
        // synchronisation finds may be its consequence.
        try {
          device.synchronize();
        } catch (const std::exception &) {
          if (!impl->deferredFault)
            throw;
        }
      }
      if (impl->deferredFault)
        std::rethrow_exception(std::exchange(impl->deferredFault, nullptr));
    }
    if (impl->profiling) {
      Clock::time_point callEnd = Clock::now();
      impl->phases.push_back(
          {entry.phase, k,
           std::chrono::duration<double>(callStart - impl->runStart).count(),
           std::chrono::duration<double>(callEnd - callStart).count()});
    }
    if (status != 0)
      throw Error(impl->programPath + ": " +
                  (ctx->error.empty()
                       ? "failed with status " + std::to_string(status) +
                             " without saying why"
                       : ctx->error));

    // Only the outputs the step's entry wrote come back.
    for (int i : entry.outputs) {
      const Blocks &cut = outputBlocks[i];
      int at = cut.blockOf(block);
      auto *whole = static_cast<uint8_t *>(outputs[program.outputs[i]].data());
      if (!device.isHost()) {
        uint8_t *host = nullptr;
        if (cut.contiguous()) {
          host = const_cast<uint8_t *>(cut.blockIn(whole, at));
        } else {
          outputStaging[i].resize(cut.blockBytes());
          host = outputStaging[i].data();
        }
        device.copyToHost(host, impl->deviceOutputs[i], cut.blockBytes());
        device.synchronize();
        if (!cut.contiguous())
          cut.copyIn(host, at, whole);
      } else if (!cut.contiguous()) {
        cut.copyIn(outputStaging[i].data(), at, whole);
      }
    }
  }

  if (manifest.dp > 1 && impl->place.tp == 0 && !program.outputs.empty())
    impl->gatherReplicas(outputs);
  return outputs;
}

void Session::Impl::gatherReplicas(std::vector<Tensor> &outputs) {
  // Each replica's blocks are one block of the batch cut dp ways; the
  // device of the first replica that writes the outputs collects them.
  const Manifest &manifest = bundle->manifest();
  const ProgramEntry &program = bundle->program();
  if (!comm)
    throw Error("a bundle with " + std::to_string(manifest.dp) +
                " data-parallel replicas needs its devices started together");
  auto rankOf = [&](int dp) {
    return static_cast<int>(manifest.mesh().rankOf({place.stage, dp, 0}));
  };
  if (watchdog)
    watchdog->begin("gather outputs", nullptr);
  std::vector<uint8_t> staging;
  for (std::size_t i = 0; i < program.outputs.size(); ++i) {
    int index = program.outputs[i];
    // An output without a batch dimension (a training step's loss, reduced
    // over the replicas) is whole on every replica already.
    if (manifest.outputs[index].batchDim < 0)
      continue;
    Blocks cut(manifest.outputs[index], manifest.dp);
    auto *whole = static_cast<uint8_t *>(outputs[index].data());
    staging.resize(cut.blockBytes());
    if (place.dp != 0) {
      cut.copyOut(whole, place.dp, staging.data());
      comm->sendToRank(staging.data(), staging.size(), rankOf(0), index);
      outputs[index] = Tensor();
      continue;
    }
    for (int r = 1; r < manifest.dp; ++r) {
      comm->recvFromRank(staging.data(), staging.size(), rankOf(r), index);
      cut.copyIn(staging.data(), r, whole);
    }
  }
  if (watchdog)
    watchdog->end();
}

} // namespace cleave::rt
