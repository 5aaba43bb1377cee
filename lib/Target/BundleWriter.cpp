//===- BundleWriter.cpp - write a compiled bundle ----------------*- C++
//-*-===//
//
// Writes every file of the bundle, builds the program with the system C++
// compiler (or nvcc), and writes the manifest last with the SHA-256 of each
// file, so that a bundle whose manifest exists is complete. Weights are
// streamed from the model's files in slices; they are never all in memory.
//
//===----------------------------------------------------------------------===//

#include "cleave/Support/JSON.h"
#include "cleave/Support/Progress.h"
#include "cleave/Target/Bundle.h"

#include "cleave/rt/Kernels.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace cleave;
using llvm::Error;
using llvm::Expected;

static Error fileError(const Twine &path, const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + path + "': " + message);
}

static Error writeText(StringRef path, StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return fileError(path, ec.message());
  os << text;
  os.close();
  if (os.has_error())
    return fileError(path, os.error().message());
  return Error::success();
}

/// Streams the weight file: each entry at its offset, zero padding between.
/// Reads `bytes` at `offset` of an open file into `out`.
static Error readSlice(llvm::sys::fs::file_t handle, StringRef file,
                       int64_t offset, int64_t bytes, std::vector<char> &out) {
  out.resize(bytes);
  int64_t done = 0;
  while (done < bytes) {
    llvm::Expected<size_t> got = llvm::sys::fs::readNativeFileSlice(
        handle, llvm::MutableArrayRef<char>(out.data() + done, bytes - done),
        offset + done);
    if (!got)
      return fileError(file, llvm::toString(got.takeError()));
    if (*got == 0)
      return fileError(file, "ends before byte " + Twine(offset + bytes));
    done += *got;
  }
  return Error::success();
}

/// Streams the bytes of one weight entry for the device with tensor-parallel
/// index `tpIndex`: whole, or its box of the row-major source tensor, one
/// contiguous run of the innermost dimension at a time.
static Error copyWeight(const WeightEntry &entry, int64_t tpIndex,
                        llvm::raw_ostream &os, ProgressStep &step) {
  int fd;
  if (std::error_code openError =
          llvm::sys::fs::openFileForRead(entry.file, fd))
    return fileError(entry.file, "cannot read weight '" + entry.name +
                                     "': " + openError.message());
  llvm::sys::fs::file_t handle = llvm::sys::fs::convertFDToNativeFile(fd);
  llvm::scope_exit close([&] { llvm::sys::fs::closeFile(handle); });
  llvm::sys::fs::file_status status;
  uint64_t size = 0;
  if (!llvm::sys::fs::status(fd, status))
    size = status.getSize();
  int64_t sourceBytes = entry.bytes;
  if (!entry.window.empty()) {
    sourceBytes = entry.elementBytes;
    for (int64_t dim : entry.shape)
      sourceBytes *= dim;
  }
  if (static_cast<uint64_t>(entry.fileOffset + sourceBytes) > size)
    return fileError(entry.file, "weight '" + entry.name + "' needs bytes [" +
                                     Twine(entry.fileOffset) + ", " +
                                     Twine(entry.fileOffset + sourceBytes) +
                                     ") but the file holds " + Twine(size));
  constexpr int64_t kChunk = 8 << 20;
  std::vector<char> chunk;
  if (entry.window.empty()) {
    for (int64_t at = 0; at < entry.bytes; at += kChunk) {
      int64_t n = std::min(kChunk, entry.bytes - at);
      if (Error error =
              readSlice(handle, entry.file, entry.fileOffset + at, n, chunk))
        return error;
      os.write(chunk.data(), n);
      step.advance(n);
    }
    return Error::success();
  }
  // The device's box: the window moved tpIndex extents along the split.
  int64_t rank = entry.shape.size();
  SmallVector<int64_t> starts(entry.starts.begin(), entry.starts.end());
  if (entry.splitDim >= 0)
    starts[entry.splitDim] += tpIndex * entry.window[entry.splitDim];
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * entry.shape[d + 1];
  int64_t runBytes = (rank ? entry.window[rank - 1] : 1) * entry.elementBytes;
  SmallVector<int64_t> index(rank, 0);
  int64_t runs = 1;
  for (int64_t d = 0; d + 1 < rank; ++d)
    runs *= entry.window[d];
  for (int64_t run = 0; run < runs; ++run) {
    int64_t element = 0;
    for (int64_t d = 0; d < rank; ++d)
      element += (starts[d] + index[d]) * strides[d];
    if (Error error = readSlice(handle, entry.file,
                                entry.fileOffset + element * entry.elementBytes,
                                runBytes, chunk))
      return error;
    os.write(chunk.data(), runBytes);
    step.advance(runBytes);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < entry.window[d])
        break;
      index[d] = 0;
    }
  }
  return Error::success();
}

/// Writes the weight file of one device: each entry at its offset, zero
/// padding between.
static Error writeWeights(const DeviceProgram &program, int64_t tpIndex,
                          StringRef path, ProgressStep &step) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return fileError(path, ec.message());
  int64_t written = 0;
  for (const WeightEntry &entry : program.weights) {
    os.write_zeros(entry.offset - written);
    if (entry.file.empty()) {
      os.write(entry.data.data(), entry.data.size());
      step.advance(entry.bytes);
    } else if (Error error = copyWeight(entry, tpIndex, os, step)) {
      return error;
    }
    written = entry.offset + entry.bytes;
  }
  os.write_zeros(program.weightBytes - written);
  os.close();
  if (os.has_error())
    return fileError(path, os.error().message());
  return Error::success();
}

/// Runs a compiler; its output goes to `logPath`, and a failure quotes the
/// command and the log's end.

static Error runCompiler(ArrayRef<std::string> command, StringRef logPath) {
  llvm::ErrorOr<std::string> program = llvm::sys::findProgramByName(command[0]);
  if (!program || !llvm::sys::fs::can_execute(*program))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "compiler '" + command[0] +
                                       "' not found on PATH");
  SmallVector<StringRef> args(command.begin(), command.end());
  std::optional<StringRef> redirects[] = {std::nullopt, logPath.str(),
                                          logPath.str()};
  std::string log = logPath.str();
  redirects[1] = log;
  redirects[2] = log;
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*program, args, std::nullopt,
                                         redirects, 0, 0, &message);
  if (status == 0)
    return Error::success();
  std::string text;
  if (auto buffer = llvm::MemoryBuffer::getFile(log)) {
    StringRef all = (*buffer)->getBuffer();
    text = all.take_back(4000).str();
  }
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "building the program failed (exit " + Twine(status) +
          (message.empty() ? "" : ", " + message) +
          "): " + llvm::join(command, " ") + "\n" + text);
}

static Expected<std::string> hashFile(StringRef path) {
  llvm::SHA256 hasher;
  int fd;
  if (std::error_code ec = llvm::sys::fs::openFileForRead(path, fd))
    return fileError(path, ec.message());
  llvm::sys::fs::file_t handle = llvm::sys::fs::convertFDToNativeFile(fd);
  std::vector<char> chunk(8 << 20);
  while (true) {
    Expected<size_t> got = llvm::sys::fs::readNativeFile(
        handle, llvm::MutableArrayRef<char>(chunk.data(), chunk.size()));
    if (!got) {
      llvm::sys::fs::closeFile(handle);
      return got.takeError();
    }
    if (*got == 0)
      break;
    hasher.update(llvm::ArrayRef<uint8_t>(
        reinterpret_cast<uint8_t *>(chunk.data()), *got));
  }
  llvm::sys::fs::closeFile(handle);
  std::array<uint8_t, 32> digest = hasher.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

static llvm::json::Array describePorts(ArrayRef<BundlePort> ports) {
  llvm::json::Array described;
  for (const BundlePort &port : ports) {
    llvm::json::Array shape;
    for (int64_t dim : port.shape)
      shape.push_back(dim);
    llvm::json::Object entry{{"name", port.name},
                             {"dtype", getDTypeName(port.dtype)},
                             {"shape", std::move(shape)}};
    if (port.batchDim >= 0)
      entry["batch_dim"] = port.batchDim;
    described.push_back(std::move(entry));
  }
  return described;
}

/// What stage `stage` runs in a step, in order: the runtime executes this
/// list rather than knowing any schedule.
static llvm::json::Array describeSteps(const BundleContents &contents,
                                       int64_t stage) {
  llvm::json::Array steps;
  for (const PipelineStep &step : contents.schedule.getOrder(stage)) {
    llvm::json::Object described{{"phase", stringifyPipelinePhase(step.phase)},
                                 {"microbatch", step.microbatch}};
    // Under the interleaved schedule each step names its model chunk; the
    // update runs every chunk's.
    if (contents.schedule.getNumChunks() > 1 &&
        step.phase != PipelinePhase::Update)
      described["chunk"] = step.chunk;
    steps.push_back(std::move(described));
  }
  return steps;
}

static llvm::json::Array toJSON(ArrayRef<int64_t> values) {
  llvm::json::Array array;
  for (int64_t value : values)
    array.push_back(value);
  return array;
}

/// The entry points of a stage's program, each with the graph inputs and
/// outputs it reads and writes: every entry's ports are among the
/// program's.
static Expected<llvm::json::Array> describeEntries(const StageProgram &stage) {
  ProgramPorts forward = stage.program.getPorts();
  auto graphPorts =
      [&](ArrayRef<int> tensors, ArrayRef<int> forwardTensors,
          ArrayRef<int64_t> graphIds,
          const ProgramEntry &entry) -> Expected<llvm::json::Array> {
    llvm::json::Array ports;
    for (int tensor : tensors) {
      const int *found = llvm::find(forwardTensors, tensor);
      if (found == forwardTensors.end())
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "entry '" + entry.name + "' of stage " +
                std::to_string(stage.stage) +
                " has a port its forward does not have");
      ports.push_back(graphIds[found - forwardTensors.begin()]);
    }
    return ports;
  };
  llvm::json::Array entries;
  for (const ProgramEntry &entry : stage.program.entries) {
    Expected<llvm::json::Array> inputs =
        graphPorts(entry.inputs, forward.inputs, stage.graphInputs, entry);
    if (!inputs)
      return inputs.takeError();
    Expected<llvm::json::Array> outputs =
        graphPorts(entry.outputs, forward.outputs, stage.graphOutputs, entry);
    if (!outputs)
      return outputs.takeError();
    llvm::json::Object described{{"name", entry.name},
                                 {"phase", entry.phase},
                                 {"inputs", std::move(*inputs)},
                                 {"outputs", std::move(*outputs)}};
    if (entry.chunk > 0)
      described["chunk"] = entry.chunk;
    entries.push_back(std::move(described));
  }
  return entries;
}

/// The writable weights of `program`, which a training step updates, with
/// their places in persistent memory: the runtime reads them back by name.
static llvm::json::Array
describeTrainedParameters(const DeviceProgram &program) {
  llvm::json::Array trained;
  for (const WeightEntry &weight : program.weights) {
    if (!weight.writable)
      continue;
    auto tensor = llvm::find_if(program.tensors, [&](const ProgramTensor &t) {
      return t.space == MemorySpace::Persistent &&
             t.offset == weight.persistentOffset;
    });
    if (tensor == program.tensors.end())
      continue;
    llvm::json::Object parameter{
        {"name", weight.name},
        {"dtype", getDTypeName(tensor->dtype)},
        {"shape", llvm::json::Array(tensor->shape)},
        {"persistent_offset", weight.persistentOffset}};
    if (weight.splitDim >= 0)
      parameter["split_dim"] = weight.splitDim;
    trained.push_back(std::move(parameter));
  }
  return trained;
}

/// The persistent states of `program` (optimizer state, step counters,
/// accumulated sums, running statistics) by name, with their places in
/// persistent memory: a checkpoint is restored into another plan's bundle
/// by these names.
static llvm::json::Array describeStates(const DeviceProgram &program) {
  llvm::json::Array states;
  for (const ProgramState &state : program.states) {
    const ProgramTensor &tensor = program.tensors[state.tensor];
    if (tensor.space != MemorySpace::Persistent)
      continue;
    llvm::json::Object object{{"name", state.name},
                              {"dtype", getDTypeName(tensor.dtype)},
                              {"shape", llvm::json::Array(tensor.shape)},
                              {"persistent_offset", tensor.offset}};
    if (state.splitDim >= 0)
      object["split_dim"] = state.splitDim;
    states.push_back(std::move(object));
  }
  return states;
}

BundleContents cleave::makeSingleDeviceContents(DeviceProgram program) {
  BundleContents contents;
  auto ports = [&](ArrayRef<int> tensors, ArrayRef<std::string> names,
                   std::vector<BundlePort> &out, std::vector<int64_t> &ids) {
    for (auto [index, tensor] : llvm::enumerate(tensors)) {
      const ProgramTensor &t = program.tensors[tensor];
      out.push_back({names[index], t.dtype,
                     std::vector<int64_t>(t.shape.begin(), t.shape.end())});
      ids.push_back(index);
    }
  };
  StageProgram stage;
  ProgramPorts forward = program.getPorts();
  ports(forward.inputs, forward.inputNames, contents.inputs, stage.graphInputs);
  ports(forward.outputs, forward.outputNames, contents.outputs,
        stage.graphOutputs);
  stage.program = std::move(program);
  contents.stages.push_back(std::move(stage));
  return contents;
}

/// Whether `cxx` is Clang (or a compiler built on it): whether it defines
/// `__clang__`. False where it cannot be asked; building the program then
/// reports the compiler.
static bool isClang(StringRef cxx) {
  llvm::ErrorOr<std::string> program = llvm::sys::findProgramByName(cxx);
  if (!program)
    return false;
  SmallString<128> macros;
  if (llvm::sys::fs::createTemporaryFile("cleave-cxx-macros", "txt", macros))
    return false;
  llvm::scope_exit removeMacros([&] { llvm::sys::fs::remove(macros); });
  StringRef args[] = {cxx, "-dM", "-E", "-x", "c++", "/dev/null"};
  std::optional<StringRef> redirects[] = {StringRef(""), macros.str(),
                                          StringRef("")};
  if (llvm::sys::ExecuteAndWait(*program, args, std::nullopt, redirects) != 0)
    return false;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(macros);
  return text && (*text)->getBuffer().contains("#define __clang__ ");
}

/// The flags that make `cxx` call the vector forms of the math functions
/// in vectorised loops. GCC takes them from rt/VectorMath.h's declarations;
/// Clang reads its table of vector functions from -fveclib, and its libmvec
/// table has the forms of exp, log, sin, cos and pow (not yet those of tanh,
/// erf, expm1 and log1p, which stay scalar in a program Clang builds).
static std::vector<std::string> getVectorMathFlags(StringRef cxx) {
  if (isClang(cxx))
    return {"-fveclib=libmvec"};
  return {};
}

/// Compiles one stage's source into its library.
static Error buildProgram(const BundleOptions &options, StringRef source,
                          StringRef library, StringRef log,
                          ArrayRef<std::string> vectorMathFlags) {
  bool cuda = options.language == ProgramLanguage::Cuda;
  std::vector<std::string> command;
  if (cuda) {
    command = {options.nvcc, "-std=c++17", "-O3",
               "-shared",    "-Xcompiler", "-fPIC"};
    for (const std::string &arch : options.cudaArchitectures)
      command.push_back("-gencode=arch=compute_" + arch + ",code=sm_" + arch);
    command.insert(command.end(),
                   {"-I" + options.runtimeIncludeDir, source.str(), "-o",
                    library.str(), "-L" + options.runtimeLibraryDir,
                    "-lcleave_rt_cuda", "-lcleave_rt", "-Xlinker",
                    "-rpath=" + options.runtimeLibraryDir});
  } else {
    command.push_back(options.cxx);
    command.insert(command.end(), options.cxxFlags.begin(),
                   options.cxxFlags.end());
    command.insert(command.end(), vectorMathFlags.begin(),
                   vectorMathFlags.end());
    command.push_back("-march=" + options.cpuIsa);
    command.insert(command.end(),
                   {"-I" + options.runtimeIncludeDir, source.str(), "-o",
                    library.str(), "-L" + options.runtimeLibraryDir,
                    "-lcleave_rt", "-Wl,-rpath," + options.runtimeLibraryDir});
  }
  if (Error error = runCompiler(command, log))
    return error;
  llvm::sys::fs::remove(log);
  return Error::success();
}

/// Writes every file of the bundle into `dir`, a new empty directory.
static Error writeBundleFiles(const BundleContents &contents,
                              const BundleOptions &options, StringRef dir) {
  namespace fs = llvm::sys::fs;
  const PipelineSchedule &schedule = contents.schedule;
  if (schedule.getNumStages() != contents.pp ||
      schedule.getNumMicrobatches() != contents.microbatches)
    return llvm::createStringError(
        llvm::formatv("the bundle's schedule orders {0} microbatches on {1} "
                      "stages, but the bundle has {2} microbatches and {3} "
                      "stages",
                      schedule.getNumMicrobatches(), schedule.getNumStages(),
                      contents.microbatches, contents.pp)
            .str());
  // Every step names an entry of its stage's program: each model chunk has
  // its forward.
  for (const StageProgram &stage : contents.stages)
    for (int64_t chunk = 0; chunk < schedule.getNumChunks(); ++chunk)
      if (!stage.program.getEntry(rt::phaseName(rt::Phase::Forward), chunk))
        return llvm::createStringError(
            llvm::formatv("the bundle's schedule runs {0} model chunks per "
                          "device, but the program of stage {1} has no "
                          "forward entry for chunk {2}",
                          schedule.getNumChunks(), stage.stage, chunk)
                .str());
  auto path = [&](StringRef relative) {
    SmallString<256> full(dir);
    llvm::sys::path::append(full, relative);
    return std::string(full);
  };
  for (StringRef sub : {"", "programs", "weights"})
    if (std::error_code ec = fs::create_directories(path(sub)))
      return fileError(path(sub), ec.message());

  bool cuda = options.language == ProgramLanguage::Cuda;
  std::vector<std::string> files = {"plan.json", "model.mlir"};
  if (Error error = writeText(path("model.mlir"), options.moduleText))
    return error;

  // plan.json with the memory plan of each program.
  llvm::json::Array memory;
  for (const StageProgram &stage : contents.stages)
    memory.push_back(llvm::json::Object{
        {"stage", stage.stage},
        {"arena_bytes", stage.program.arenaBytes},
        {"arena_bytes_without_reuse", stage.program.unplannedArenaBytes},
        {"weight_bytes", stage.program.weightBytes},
        {"persistent_bytes", stage.program.persistentBytes},
        {"steps", stage.program.getNumSteps()},
        {"in_place_steps", stage.program.getInPlaceSteps()}});
  {
    Expected<llvm::json::Value> plan = llvm::json::parse(options.planJSON);
    if (!plan)
      return plan.takeError();
    llvm::json::Object *object = plan->getAsObject();
    if (!object)
      return fileError(path("plan.json"), "the plan is not a JSON object");
    (*object)["memory_plan"] =
        llvm::json::Object{{"programs", std::move(memory)}};
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(*plan))) << "\n";
    if (Error error = writeText(path("plan.json"), text))
      return error;
  }

  // One program per stage.
  std::vector<std::string> vectorMathFlags;
  if (!cuda && !options.emitOnly)
    vectorMathFlags = getVectorMathFlags(options.cxx);
  llvm::json::Array programs;
  for (const StageProgram &stage : contents.stages) {
    std::string base = "programs/stage_" + std::to_string(stage.stage);
    std::string sourceName = base + (cuda ? ".cu" : ".cpp");
    std::string libraryName = base + ".so";
    std::string source;
    {
      llvm::raw_string_ostream os(source);
      EmitOptions emitOptions;
      emitOptions.modelName =
          llvm::sys::path::filename(options.modelPath).str();
      emitOptions.targetName = options.targetName;
      if (contents.stages.size() > 1)
        emitOptions.targetName +=
            ", pipeline stage " + std::to_string(stage.stage);
      std::string error;
      if (failed(emitProgram(stage.program, options.language, emitOptions, os,
                             error)))
        return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
    }
    if (Error error = writeText(path(sourceName), source))
      return error;
    files.push_back(sourceName);
    Expected<llvm::json::Array> entries = describeEntries(stage);
    if (!entries)
      return entries.takeError();
    llvm::json::Object entry{
        {"stage", stage.stage},
        {"source", sourceName},
        {"info", "cleave_program_info"},
        {"entries", std::move(*entries)},
        {"arena_bytes", stage.program.arenaBytes},
        {"weight_bytes", stage.program.weightBytes},
        {"persistent_bytes", stage.program.persistentBytes},
        {"inputs", toJSON(stage.graphInputs)},
        {"outputs", toJSON(stage.graphOutputs)},
        {"steps", describeSteps(contents, stage.stage)}};
    if (llvm::json::Array trained = describeTrainedParameters(stage.program);
        !trained.empty())
      entry["trained_parameters"] = std::move(trained);
    if (llvm::json::Array states = describeStates(stage.program);
        !states.empty())
      entry["states"] = std::move(states);
    if (!options.emitOnly) {
      ProgressStep step = beginProgress(options.progress,
                                        "building the program of stage " +
                                            std::to_string(stage.stage),
                                        0, "");
      if (Error error =
              buildProgram(options, path(sourceName), path(libraryName),
                           path(base + ".build.log"), vectorMathFlags))
        return error;
      files.push_back(libraryName);
      entry["library"] = libraryName;
    }
    programs.push_back(std::move(entry));
  }

  // One weight file per device of the first replica, in rank order; the
  // devices of the other replicas read the same files.
  llvm::json::Array ranks;
  int64_t totalBytes = 0;
  for (const StageProgram &stage : contents.stages)
    totalBytes += stage.program.weightBytes * contents.tp;
  ProgressStep step = beginProgress(options.progress, "writing weight shards",
                                    totalBytes, "bytes");
  for (int64_t d = 0; d < contents.dp; ++d) {
    for (const StageProgram &stage : contents.stages) {
      for (int64_t t = 0; t < contents.tp; ++t) {
        rt::MeshShape mesh = contents.getMesh();
        int64_t rank = mesh.rankOf({stage.stage, d, t});
        int64_t firstReplicaRank = mesh.rankOf({stage.stage, 0, t});
        std::string name =
            "weights/rank_" + std::to_string(firstReplicaRank) + ".bin";
        if (d == 0) {
          if (Error error = writeWeights(stage.program, t, path(name), step))
            return error;
          files.push_back(name);
        }
        ranks.push_back(llvm::json::Object{{"rank", rank},
                                           {"stage", stage.stage},
                                           {"tp", t},
                                           {"dp", d},
                                           {"weights", name}});
      }
    }
  }
  step.finish();

  // The manifest, last.
  llvm::json::Object hashes;
  for (const std::string &file : files) {
    Expected<std::string> hash = hashFile(path(file));
    if (!hash)
      return hash.takeError();
    hashes[file] = *hash;
  }
  llvm::json::Object manifest{
      {"format", "cleave-bundle"},
      {"format_version", 1},
      {"abi_version", CLEAVE_ABI_VERSION},
      {"model", llvm::sys::path::filename(options.modelPath).str()},
      {"target", options.targetName},
      {"device_kind", cuda ? "cuda" : "cpu"},
      {"devices", contents.getNumDevices()},
      {"mesh", llvm::json::Object{{"pp", contents.pp},
                                  {"tp", contents.tp},
                                  {"dp", contents.dp}}},
      {"microbatches", contents.microbatches},
      {"schedule", contents.schedule.getChoice().str()},
      {"inputs", describePorts(contents.inputs)},
      {"outputs", describePorts(contents.outputs)},
      {"programs", std::move(programs)},
      {"ranks", std::move(ranks)},
      {"files", std::move(hashes)}};
  if (!cuda)
    manifest["cpu_isa"] = options.cpuIsa;
  if (const std::optional<TrainingSchedule> &training = options.training)
    manifest["training"] =
        llvm::json::Object{{"optimizer", training->optimizer},
                           {"learning_rate", training->learningRate},
                           {"warmup_steps", training->warmupSteps},
                           {"decay_steps", training->decaySteps},
                           {"min_lr_ratio", training->minLrRatio},
                           {"zero", training->zero}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  if (Error error = writeText(path("manifest.json"), text))
    return error;
  // The manifest's own digest, as sha256sum writes it: the runtime reads
  // no manifest that changed after this.
  Expected<std::string> digest = hashFile(path("manifest.json"));
  if (!digest)
    return digest.takeError();
  return writeText(path("manifest.sha256"), *digest + "  manifest.json\n");
}

/// Fails, naming the path, unless `dir` is absent, empty, or a bundle that
/// cleave wrote holding only its own files (those its manifest lists):
/// replacing it must not delete anything a user put there.
static Error checkReplaceable(StringRef dir) {
  namespace fs = llvm::sys::fs;
  if (!fs::exists(dir))
    return Error::success();
  if (!fs::is_directory(dir))
    return fileError(dir, "exists and is not a directory");
  std::error_code ec;
  if (fs::directory_iterator(dir, ec) == fs::directory_iterator())
    return Error::success();
  auto notABundle = [&](const Twine &why) {
    return fileError(dir, "is not empty and is not a bundle that cleave "
                          "wrote (" +
                              why + "); refusing to replace it");
  };
  SmallString<256> manifestPath(dir);
  llvm::sys::path::append(manifestPath, "manifest.json");
  if (!fs::is_regular_file(manifestPath))
    return notABundle("no manifest.json");
  auto buffer = llvm::MemoryBuffer::getFile(manifestPath);
  if (!buffer)
    return notABundle("manifest.json cannot be read");
  llvm::Expected<llvm::json::Value> manifest =
      parseBoundedJSON((*buffer)->getBuffer());
  const llvm::json::Object *root = manifest ? manifest->getAsObject() : nullptr;
  const llvm::json::Object *files = root ? root->getObject("files") : nullptr;
  if (!files || root->getString("format") != "cleave-bundle") {
    if (!manifest)
      llvm::consumeError(manifest.takeError());
    return notABundle("manifest.json is not a cleave manifest");
  }
  for (fs::recursive_directory_iterator it(dir, ec, /*follow_symlinks=*/false),
       end;
       it != end && !ec; it.increment(ec)) {
    if (it->type() == fs::file_type::directory_file)
      continue;
    StringRef relative = StringRef(it->path()).drop_front(dir.size());
    relative = relative.ltrim(llvm::sys::path::get_separator());
    if (relative != "manifest.json" && relative != "manifest.sha256" &&
        !files->get(relative))
      return fileError(dir, "holds '" + relative +
                                "', which the bundle there did not write; "
                                "refusing to replace it");
  }
  if (ec)
    return fileError(dir, "cannot be listed: " + ec.message());
  return Error::success();
}

Error cleave::writeBundle(const BundleContents &contents,
                          const BundleOptions &options) {
  namespace fs = llvm::sys::fs;
  StringRef dir = options.directory;
  if (dir.empty())
    return llvm::createStringError("the bundle's output path is empty");
  if (Error error = checkReplaceable(dir))
    return error;
  // Build beside it and swap at the end, so that a failed compile leaves
  // the old bundle (or nothing) rather than half a bundle.
  std::string staging = (dir + ".partial").str();
  if (fs::exists(staging))
    if (std::error_code ec = fs::remove_directories(staging))
      return fileError(staging,
                       "cannot remove a stale partial bundle: " + ec.message());
  if (Error error = writeBundleFiles(contents, options, staging)) {
    (void)fs::remove_directories(staging);
    return error;
  }
  if (fs::exists(dir))
    if (std::error_code ec = fs::remove_directories(dir))
      return fileError(dir, "cannot replace the old bundle: " + ec.message());
  if (std::error_code ec = fs::rename(staging, dir))
    return fileError(dir, "cannot move the new bundle into place from '" +
                              staging + "': " + ec.message());
  return Error::success();
}
