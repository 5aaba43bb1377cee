//===- BundleWriter.cpp - write a compiled bundle ----------------*- C++ -*-===//
//
// Writes every file of the bundle, builds the program with the system C++
// compiler (or nvcc), and writes the manifest last with the SHA-256 of each
// file, so that a bundle whose manifest exists is complete. Weights are
// streamed from the model's files in slices; they are never all in memory.
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/Bundle.h"
#include "cleave/Support/Progress.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
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
static Error writeWeights(const DeviceProgram &program, StringRef path,
                          const BundleOptions &options) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return fileError(path, ec.message());
  constexpr int64_t kChunk = 8 << 20;
  std::vector<char> chunk;
  int64_t written = 0;
  ProgressStep step =
      beginProgress(options.progress, "writing weights", program.weightBytes,
                    "bytes");
  for (const WeightEntry &entry : program.weights) {
    os.write_zeros(entry.offset - written);
    written = entry.offset;
    if (entry.file.empty()) {
      os.write(entry.data.data(), entry.data.size());
    } else {
      int fd;
      if (std::error_code openError =
              llvm::sys::fs::openFileForRead(entry.file, fd))
        return fileError(entry.file, "cannot read weight '" + entry.name +
                                         "': " + openError.message());
      llvm::sys::fs::file_t handle = llvm::sys::fs::convertFDToNativeFile(fd);
      uint64_t size = 0;
      llvm::sys::fs::file_status status;
      if (!llvm::sys::fs::status(fd, status))
        size = status.getSize();
      if (static_cast<uint64_t>(entry.fileOffset + entry.bytes) > size) {
        llvm::sys::fs::closeFile(handle);
        return fileError(entry.file,
                         "weight '" + entry.name + "' needs bytes [" +
                             Twine(entry.fileOffset) + ", " +
                             Twine(entry.fileOffset + entry.bytes) +
                             ") but the file holds " + Twine(size));
      }
      int64_t left = entry.bytes, at = entry.fileOffset;
      while (left > 0) {
        int64_t n = std::min(left, kChunk);
        chunk.resize(n);
        llvm::Expected<size_t> got = llvm::sys::fs::readNativeFileSlice(
            handle, llvm::MutableArrayRef<char>(chunk.data(), n), at);
        if (!got || *got != static_cast<size_t>(n)) {
          llvm::sys::fs::closeFile(handle);
          if (!got)
            return fileError(entry.file, llvm::toString(got.takeError()));
          return fileError(entry.file, "short read of weight '" + entry.name +
                                           "'");
        }
        os.write(chunk.data(), n);
        step.advance(n);
        left -= n;
        at += n;
      }
      llvm::sys::fs::closeFile(handle);
    }
    if (entry.file.empty())
      step.advance(entry.bytes);
    written += entry.bytes;
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
      "building the program failed (exit " + Twine(status) + (message.empty() ? "" : ", " + message) +
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
    hasher.update(
        llvm::ArrayRef<uint8_t>(reinterpret_cast<uint8_t *>(chunk.data()), *got));
  }
  llvm::sys::fs::closeFile(handle);
  std::array<uint8_t, 32> digest = hasher.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

static llvm::json::Array describePorts(const DeviceProgram &program,
                                       ArrayRef<int> tensors,
                                       ArrayRef<std::string> names) {
  llvm::json::Array ports;
  for (auto [tensor, name] : llvm::zip(tensors, names)) {
    const ProgramTensor &t = program.tensors[tensor];
    llvm::json::Array shape;
    for (int64_t dim : t.shape)
      shape.push_back(dim);
    ports.push_back(llvm::json::Object{{"name", name},
                                       {"dtype", getDTypeName(t.dtype)},
                                       {"shape", std::move(shape)}});
  }
  return ports;
}

/// Writes every file of the bundle into `dir`, a new empty directory.
static Error writeBundleFiles(const DeviceProgram &program,
                              const BundleOptions &options, StringRef dir) {
  namespace fs = llvm::sys::fs;
  auto path = [&](StringRef relative) {
    SmallString<256> full(dir);
    llvm::sys::path::append(full, relative);
    return std::string(full);
  };
  for (StringRef sub : {"", "programs", "weights"})
    if (std::error_code ec = fs::create_directories(path(sub)))
      return fileError(path(sub), ec.message());

  bool cuda = options.language == ProgramLanguage::Cuda;
  std::string sourceName = cuda ? "programs/rank_0.cu" : "programs/rank_0.cpp";
  std::vector<std::string> files = {"plan.json", "model.mlir", sourceName,
                                    "weights/rank_0.bin"};

  // The emitted source.
  std::string source;
  {
    llvm::raw_string_ostream os(source);
    EmitOptions emitOptions;
    emitOptions.modelName = llvm::sys::path::filename(options.modelPath).str();
    emitOptions.targetName = options.targetName;
    std::string error;
    if (failed(emitProgram(program, options.language, emitOptions, os, error)))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  }
  if (Error error = writeText(path(sourceName), source))
    return error;
  if (Error error = writeText(path("model.mlir"), options.moduleText))
    return error;
  if (Error error = writeWeights(program, path("weights/rank_0.bin"), options))
    return error;

  // plan.json with the memory plan of each program.
  {
    Expected<llvm::json::Value> plan = llvm::json::parse(options.planJSON);
    if (!plan)
      return plan.takeError();
    llvm::json::Object *object = plan->getAsObject();
    if (!object)
      return fileError(path("plan.json"), "the plan is not a JSON object");
    (*object)["memory_plan"] = llvm::json::Object{
        {"programs",
         llvm::json::Array{llvm::json::Object{
             {"rank", 0},
             {"arena_bytes", program.arenaBytes},
             {"arena_bytes_without_reuse", program.unplannedArenaBytes},
             {"weight_bytes", program.weightBytes},
             {"steps", static_cast<int64_t>(program.steps.size())},
             {"in_place_steps", program.inPlaceSteps}}}}};
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(*plan))) << "\n";
    if (Error error = writeText(path("plan.json"), text))
      return error;
  }

  // Build the program.
  std::string library = "programs/rank_0.so";
  if (!options.emitOnly) {
    ProgressStep step =
        beginProgress(options.progress, "building the program", 0, "");
    std::vector<std::string> command;
    if (cuda) {
      command = {options.nvcc, "-std=c++17", "-O3", "-shared",
                 "-Xcompiler", "-fPIC"};
      for (const std::string &arch : options.cudaArchitectures)
        command.push_back("-gencode=arch=compute_" + arch + ",code=sm_" +
                          arch);
      command.insert(command.end(),
                     {"-I" + options.runtimeIncludeDir, path(sourceName), "-o",
                      path(library), "-L" + options.runtimeLibraryDir,
                      "-lcleave_rt_cuda", "-lcleave_rt",
                      "-Xlinker", "-rpath=" + options.runtimeLibraryDir});
    } else {
      command.push_back(options.cxx);
      command.insert(command.end(), options.cxxFlags.begin(),
                     options.cxxFlags.end());
      command.insert(command.end(),
                     {"-I" + options.runtimeIncludeDir, path(sourceName), "-o",
                      path(library), "-L" + options.runtimeLibraryDir,
                      "-lcleave_rt", "-Wl,-rpath," + options.runtimeLibraryDir});
    }
    std::string log = path("programs/build.log");
    if (Error error = runCompiler(command, log))
      return error;
    fs::remove(log);
    files.push_back(library);
  }

  // The manifest, last.
  llvm::json::Object hashes;
  for (const std::string &file : files) {
    Expected<std::string> hash = hashFile(path(file));
    if (!hash)
      return hash.takeError();
    hashes[file] = *hash;
  }
  llvm::json::Object programEntry{
      {"rank", 0},
      {"source", sourceName},
      {"weights", "weights/rank_0.bin"},
      {"entry", "cleave_program_main"},
      {"info", "cleave_program_info"},
      {"arena_bytes", program.arenaBytes},
      {"weight_bytes", program.weightBytes}};
  if (!options.emitOnly)
    programEntry["library"] = library;
  llvm::json::Object manifest{
      {"format", "cleave-bundle"},
      {"format_version", 1},
      {"abi_version", 1},
      {"model", llvm::sys::path::filename(options.modelPath).str()},
      {"target", options.targetName},
      {"device_kind", cuda ? "cuda" : "cpu"},
      {"devices", 1},
      {"inputs", describePorts(program, program.inputs, program.inputNames)},
      {"outputs",
       describePorts(program, program.outputs, program.outputNames)},
      {"programs", llvm::json::Array{std::move(programEntry)}},
      {"files", std::move(hashes)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  return writeText(path("manifest.json"), text);
}

Error cleave::writeBundle(const DeviceProgram &program,
                          const BundleOptions &options) {
  namespace fs = llvm::sys::fs;
  StringRef dir = options.directory;
  // Refuse to replace a directory that holds something else.
  if (fs::exists(dir)) {
    if (!fs::is_directory(dir))
      return fileError(dir, "exists and is not a directory");
    SmallString<256> manifest(dir);
    llvm::sys::path::append(manifest, "manifest.json");
    std::error_code ec;
    bool empty = fs::directory_iterator(dir, ec) == fs::directory_iterator();
    if (!empty && !fs::exists(manifest))
      return fileError(dir, "is not empty and is not a bundle; refusing to "
                            "write into it");
  }
  // Build beside it and swap at the end, so that a failed compile leaves
  // the old bundle (or nothing) rather than half a bundle.
  std::string staging = (dir + ".partial").str();
  if (fs::exists(staging))
    if (std::error_code ec = fs::remove_directories(staging))
      return fileError(staging, "cannot remove a stale partial bundle: " +
                                    ec.message());
  if (Error error = writeBundleFiles(program, options, staging)) {
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
