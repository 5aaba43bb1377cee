//===- Bundle.cpp - read, verify and load a bundle
//-------------------------===//
//
// Nothing of a bundle is used before its manifest is checked and every file
// it lists matches its SHA-256: a truncated copy or a stale program is
// refused, naming the file, rather than run.
//
//===----------------------------------------------------------------------===//

#include "Bundle.h"
#include "Files.h"

#include "cleave/rt/Checked.h"
#include "cleave/rt/Phases.h"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <mutex>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cleave::rt {

using nlohmann::json;

std::string joinPath(const std::string &dir, const std::string &relative) {
  if (dir.empty() || dir.back() == '/')
    return dir + relative;
  return dir + "/" + relative;
}

namespace {

constexpr int formatVersion = 1;

/// Reads the manifest fields with messages that name the file and the key.
class ManifestReader {
public:
  explicit ManifestReader(std::string path) : path(std::move(path)) {}

  [[noreturn]] void fail(const std::string &message) const {
    throw Error(path + ": " + message);
  }

  const json &field(const json &object, const std::string &key,
                    const std::string &where) const {
    auto it = object.find(key);
    if (it == object.end())
      fail(where + "missing '" + key + "'");
    return *it;
  }
  std::string string(const json &object, const std::string &key,
                     const std::string &where = "") const {
    const json &value = field(object, key, where);
    if (!value.is_string())
      fail(where + "'" + key + "' is not a string");
    return value.get<std::string>();
  }
  int64_t integer(const json &object, const std::string &key,
                  const std::string &where = "") const {
    const json &value = field(object, key, where);
    if (!value.is_number_integer())
      fail(where + "'" + key + "' is not an integer");
    return value.get<int64_t>();
  }
  double number(const json &object, const std::string &key,
                const std::string &where = "") const {
    const json &value = field(object, key, where);
    if (!value.is_number())
      fail(where + "'" + key + "' is not a number");
    return value.get<double>();
  }
  /// The learning-rate schedule of a training bundle.
  void training(const json &object, Manifest &manifest) const {
    const std::string where = "training: ";
    if (!object.is_object())
      fail("'training' is not an object");
    TrainingSchedule schedule;
    schedule.optimizer = string(object, "optimizer", where);
    schedule.learningRate = number(object, "learning_rate", where);
    schedule.warmupSteps = integer(object, "warmup_steps", where);
    schedule.decaySteps = integer(object, "decay_steps", where);
    schedule.minLrRatio = number(object, "min_lr_ratio", where);
    if (object.contains("zero"))
      schedule.zero = integer(object, "zero", where);
    if (!(schedule.learningRate > 0) || schedule.warmupSteps < 0 ||
        schedule.decaySteps < 0)
      fail(where + "a learning rate that is not positive or a negative "
                   "count of steps");
    manifest.training = schedule;
  }
  /// A path inside the bundle: relative and never climbing out of it.
  std::string relativePath(const json &object, const std::string &key,
                           const std::string &where) const {
    std::string value = string(object, key, where);
    checkRelative(value, where + "'" + key + "'");
    return value;
  }
  void checkRelative(const std::string &value, const std::string &what) const {
    bool climbs =
        value == ".." || value.rfind("../", 0) == 0 ||
        value.find("/../") != std::string::npos ||
        (value.size() >= 3 && value.compare(value.size() - 3, 3, "/..") == 0);
    if (value.empty() || value[0] == '/' || climbs)
      fail(what + " '" + value + "' is not a path inside the bundle");
  }

  std::vector<TensorInfo> tensors(const json &root,
                                  const std::string &key) const {
    const json &list = field(root, key, "");
    if (!list.is_array())
      fail("'" + key + "' is not a list");
    std::vector<TensorInfo> result;
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::string where = key + "[" + std::to_string(i) + "]: ";
      const json &item = list[i];
      if (!item.is_object())
        fail(where + "not an object");
      TensorInfo info;
      info.name = string(item, "name", where);
      std::string dtype = string(item, "dtype", where);
      info.dtype = dtypeFromName(dtype);
      if (info.dtype == CLEAVE_DTYPE_INVALID)
        fail(where + "unknown dtype '" + dtype + "'");
      const json &shape = field(item, "shape", where);
      if (!shape.is_array())
        fail(where + "'shape' is not a list");
      for (const json &dim : shape) {
        if (!dim.is_number_integer() || dim.get<int64_t>() < 0)
          fail(where + "'shape' holds " + dim.dump() +
               ", not a static dimension");
        info.shape.push_back(dim.get<int64_t>());
      }
      if (info.shape.size() > CLEAVE_MAX_RANK)
        fail(where + "rank " + std::to_string(info.shape.size()) +
             " exceeds the runtime's " + std::to_string(CLEAVE_MAX_RANK));
      if (item.contains("batch_dim")) {
        const json &dim = item["batch_dim"];
        if (!dim.is_number_integer() || dim.get<int64_t>() < 0 ||
            dim.get<int64_t>() >= static_cast<int64_t>(info.shape.size()))
          fail(where + "'batch_dim' is " + dim.dump() +
               ", not a dimension of the shape");
        info.batchDim = dim.get<int>();
      }
      if (item.contains("split_dim")) {
        const json &dim = item["split_dim"];
        if (!dim.is_number_integer() || dim.get<int64_t>() < 0 ||
            dim.get<int64_t>() >= static_cast<int64_t>(info.shape.size()))
          fail(where + "'split_dim' is " + dim.dump() +
               ", not a dimension of the shape");
        info.splitDim = dim.get<int>();
      }
      result.push_back(std::move(info));
    }
    return result;
  }

  /// A list of graph tensor indices below `limit`, each at most once.
  std::vector<int> indices(const json &object, const std::string &key,
                           const std::string &where, std::size_t limit,
                           const char *what) const {
    const json &list = field(object, key, where);
    if (!list.is_array())
      fail(where + "'" + key + "' is not a list");
    std::vector<int> result;
    for (const json &value : list) {
      if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
          value.get<int64_t>() >= static_cast<int64_t>(limit))
        fail(where + "'" + key + "' holds " + value.dump() +
             "; the graph has " + std::to_string(limit) + " " + what);
      int index = static_cast<int>(value.get<int64_t>());
      for (int seen : result)
        if (seen == index)
          fail(where + "'" + key + "' lists " + std::to_string(index) +
               " twice");
      result.push_back(index);
    }
    return result;
  }

  ProgramEntry program(const json &item, std::size_t index,
                       const Manifest &manifest) const {
    std::string where = "programs[" + std::to_string(index) + "]: ";
    if (!item.is_object())
      fail(where + "not an object");
    ProgramEntry entry;
    entry.stage = static_cast<int>(integer(item, "stage", where));
    if (entry.stage != static_cast<int>(index))
      fail(where + "'stage' is " + std::to_string(entry.stage) +
           "; programs are listed by stage, from 0");
    if (item.contains("source"))
      entry.source = relativePath(item, "source", where);
    entry.library = relativePath(item, "library", where);
    entry.info = item.contains("info") ? string(item, "info", where)
                                       : "cleave_program_info";
    entry.arenaBytes = integer(item, "arena_bytes", where);
    entry.weightBytes = integer(item, "weight_bytes", where);
    entry.persistentBytes = integer(item, "persistent_bytes", where);
    if (entry.arenaBytes < 0 || entry.weightBytes < 0 ||
        entry.persistentBytes < 0)
      fail(where +
           "negative 'arena_bytes', 'weight_bytes' or 'persistent_bytes'");
    entry.inputs =
        indices(item, "inputs", where, manifest.inputs.size(), "inputs");
    entry.outputs =
        indices(item, "outputs", where, manifest.outputs.size(), "outputs");
    entry.entries = entries(item, where, entry, manifest);
    entry.steps = steps(item, where, entry, manifest.microbatches);
    if (item.contains("trained_parameters"))
      entry.trainedParameters = persistentTensors(
          item, "trained_parameters", where, entry, entry.trainedOffsets);
    if (item.contains("states"))
      entry.states =
          persistentTensors(item, "states", where, entry, entry.stateOffsets);
    return entry;
  }

  /// Tensors the program keeps in persistent memory (the parameters a
  /// training step writes, its named states), each inside it.
  std::vector<TensorInfo>
  persistentTensors(const json &item, const char *key, const std::string &where,
                    const ProgramEntry &entry,
                    std::vector<int64_t> &offsets) const {
    std::vector<TensorInfo> result = tensors(item, key);
    const json &list = item[key];
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::string at = where + key + "[" + std::to_string(i) + "]: ";
      int64_t offset = integer(list[i], "persistent_offset", at);
      const TensorInfo &info = result[i];
      int64_t elements = 0, bytes = 0;
      if (!checkedTensorSize(info.shape, cleave_dtype_size(info.dtype),
                             elements, bytes) ||
          offset < 0 || offset > entry.persistentBytes ||
          bytes > entry.persistentBytes - offset)
        fail(at + "'persistent_offset' " + std::to_string(offset) + " puts '" +
             info.name + "' outside the persistent memory");
      offsets.push_back(offset);
    }
    return result;
  }

  /// A program's entry points, one per phase, with its forward among them;
  /// each takes some of the program's ports.
  std::vector<EntryPoint> entries(const json &item, const std::string &where,
                                  const ProgramEntry &program,
                                  const Manifest &manifest) const {
    const json &list = field(item, "entries", where);
    if (!list.is_array())
      fail(where + "'entries' is not a list");
    std::vector<EntryPoint> result;
    auto positions = [&](const std::vector<int> &graphPorts,
                         const std::vector<int> &programPorts,
                         const std::string &at, const char *key) {
      std::vector<int> result;
      for (int port : graphPorts) {
        auto found = std::find(programPorts.begin(), programPorts.end(), port);
        if (found == programPorts.end())
          fail(at + "'" + key + "' lists " + std::to_string(port) +
               ", which the program's '" + key + "' does not");
        result.push_back(static_cast<int>(found - programPorts.begin()));
      }
      return result;
    };
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::string at = where + "entries[" + std::to_string(i) + "]: ";
      if (!list[i].is_object())
        fail(at + "not an object");
      EntryPoint entry;
      entry.name = string(list[i], "name", at);
      entry.phase = string(list[i], "phase", at);
      entry.chunk = optionalChunk(list[i], at);
      for (const EntryPoint &other : result)
        if (other.phase == entry.phase && other.chunk == entry.chunk)
          fail(at + "a second entry of phase '" + entry.phase + "'" +
               (entry.chunk ? " on chunk " + std::to_string(entry.chunk)
                            : std::string()));
      entry.inputs = positions(
          indices(list[i], "inputs", at, manifest.inputs.size(), "inputs"),
          program.inputs, at, "inputs");
      entry.outputs = positions(
          indices(list[i], "outputs", at, manifest.outputs.size(), "outputs"),
          program.outputs, at, "outputs");
      result.push_back(std::move(entry));
    }
    const char *forward = phaseName(Phase::Forward);
    if (findEntry(result, forward) < 0)
      fail(where + "'entries' has no entry of phase '" + forward + "'");
    return result;
  }

  static int findEntry(const std::vector<EntryPoint> &entries,
                       const std::string &phase, int chunk = 0) {
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (entries[i].phase == phase && entries[i].chunk == chunk)
        return static_cast<int>(i);
    return -1;
  }

  /// The optional `chunk` of an entry or a step: a model chunk of the
  /// interleaved schedule, 0 when absent.
  int optionalChunk(const json &item, const std::string &at) const {
    if (!item.contains("chunk"))
      return 0;
    int64_t chunk = integer(item, "chunk", at);
    if (chunk < 0 || chunk > 4096)
      fail(at + "chunk " + std::to_string(chunk) +
           " is not a model chunk (0 to 4096)");
    return static_cast<int>(chunk);
  }

  /// A stage's recorded order: on every chunk's forward entry, microbatches
  /// 0 .. M-1, each once, in any order; at most one step of another entry
  /// per microbatch; and at most one update, which has no microbatch (-1)
  /// and no chunk; each (phase, chunk) names an entry of the program.
  std::vector<ScheduleStep> steps(const json &item, const std::string &where,
                                  const ProgramEntry &program,
                                  int microbatches) const {
    const json &list = field(item, "steps", where);
    if (!list.is_array())
      fail(where + "'steps' is not a list");
    std::vector<ScheduleStep> result;
    std::vector<std::vector<bool>> seen(program.entries.size(),
                                        std::vector<bool>(microbatches, false));
    int updates = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::string at = where + "steps[" + std::to_string(i) + "]: ";
      if (!list[i].is_object())
        fail(at + "not an object");
      std::string phase = string(list[i], "phase", at);
      int chunk = optionalChunk(list[i], at);
      int entry = findEntry(program.entries, phase, chunk);
      if (entry < 0) {
        std::string known;
        for (const EntryPoint &e : program.entries)
          known += (known.empty() ? "" : ", ") + e.phase +
                   (e.chunk ? " of chunk " + std::to_string(e.chunk) : "");
        fail(at + "phase '" + phase + "'" +
             (chunk ? " of chunk " + std::to_string(chunk) : std::string()) +
             ", but the program of stage " + std::to_string(program.stage) +
             " has no entry point for it (it has: " + known + ")");
      }
      int64_t microbatch = integer(list[i], "microbatch", at);
      if (phase == phaseName(Phase::Update)) {
        if (microbatch != -1)
          fail(at +
               "the update runs once per step, with microbatch -1, "
               "not " +
               std::to_string(microbatch));
        if (updates++ > 0)
          fail(at + "the update runs twice in a step");
        result.push_back({entry, -1});
        continue;
      }
      if (microbatch < 0 || microbatch >= microbatches)
        fail(at + "microbatch " + std::to_string(microbatch) +
             " is outside the " + std::to_string(microbatches) +
             " microbatches of a step");
      if (seen[entry][microbatch])
        fail(at + "microbatch " + std::to_string(microbatch) +
             " runs twice in a step");
      seen[entry][microbatch] = true;
      result.push_back({entry, static_cast<int>(microbatch)});
    }
    for (std::size_t entry = 0; entry < program.entries.size(); ++entry) {
      if (program.entries[entry].phase != phaseName(Phase::Forward))
        continue;
      std::size_t forwards =
          std::count(seen[entry].begin(), seen[entry].end(), true);
      if (forwards != static_cast<std::size_t>(microbatches))
        fail(where + "'steps' runs " + std::to_string(forwards) + " of the " +
             std::to_string(microbatches) + " microbatches of a step" +
             (program.entries[entry].chunk
                  ? " on chunk " + std::to_string(program.entries[entry].chunk)
                  : std::string()));
    }
    return result;
  }

  RankEntry rank(const json &item, std::size_t index,
                 const Manifest &manifest) const {
    std::string where = "ranks[" + std::to_string(index) + "]: ";
    if (!item.is_object())
      fail(where + "not an object");
    RankEntry entry;
    entry.rank = static_cast<int>(integer(item, "rank", where));
    if (entry.rank != static_cast<int>(index))
      fail(where + "'rank' is " + std::to_string(entry.rank) +
           "; ranks are listed in order, from 0");
    auto place = [&](const char *key, int size) {
      int64_t value = integer(item, key, where);
      if (value < 0 || value >= size)
        fail(where + "'" + key + "' is " + std::to_string(value) +
             ", outside the mesh's " + std::to_string(size));
      return static_cast<int>(value);
    };
    entry.stage = place("stage", manifest.pp);
    entry.tp = place("tp", manifest.tp);
    entry.dp = place("dp", manifest.dp);
    int expected = static_cast<int>(
        manifest.mesh().rankOf({entry.stage, entry.dp, entry.tp}));
    if (expected != entry.rank)
      fail(where + "stage " + std::to_string(entry.stage) + ", tp " +
           std::to_string(entry.tp) + ", dp " + std::to_string(entry.dp) +
           " is rank " + std::to_string(expected) + ", not " +
           std::to_string(entry.rank) +
           " (rank = (dp * pp + stage) * tp + tp index)");
    entry.weights = relativePath(item, "weights", where);
    if (item.contains("packed_weights"))
      entry.packedWeights = relativePath(item, "packed_weights", where);
    return entry;
  }

  /// The mesh and the microbatch count, checked against `devices`.
  void mesh(const json &root, Manifest &manifest) const {
    const json &mesh = field(root, "mesh", "");
    if (!mesh.is_object())
      fail("'mesh' is not an object");
    for (auto [key, size] : {std::pair<const char *, int *>{"pp", &manifest.pp},
                             {"tp", &manifest.tp},
                             {"dp", &manifest.dp}}) {
      int64_t value = integer(mesh, key, "mesh: ");
      if (value < 1 || value > (1 << 20))
        fail("mesh: '" + std::string(key) + "' is " + std::to_string(value) +
             ", not a positive size");
      *size = static_cast<int>(value);
    }
    int64_t devices = integer(root, "devices");
    int64_t product = int64_t(manifest.pp) * manifest.tp * manifest.dp;
    if (devices != product)
      fail("'devices' is " + std::to_string(devices) + ", but the mesh " +
           std::to_string(manifest.pp) + "x" + std::to_string(manifest.tp) +
           "x" + std::to_string(manifest.dp) + " (pp x tp x dp) holds " +
           std::to_string(product));
    manifest.devices = static_cast<int>(devices);
    int64_t microbatches = integer(root, "microbatches");
    if (microbatches < 1)
      fail("'microbatches' is " + std::to_string(microbatches) +
           ", not a positive count");
    manifest.microbatches = static_cast<int>(microbatches);
  }

private:
  std::string path;
};

} // namespace

namespace {
/// A SHA-256 computation, fed in pieces.
class Sha256 {
public:
  explicit Sha256(const std::string &what)
      : digest(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (!digest || !EVP_DigestInit_ex(digest.get(), EVP_sha256(), nullptr))
      throw Error(what + ": cannot compute SHA-256");
  }
  void update(const void *data, std::size_t bytes) {
    EVP_DigestUpdate(digest.get(), data, bytes);
  }
  /// The digest as lowercase hex.
  std::string finish();

private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX *)> digest;
};
} // namespace

/// manifest.sha256 holds the SHA-256 of manifest.json as `sha256sum`
/// writes it; the manifest read must be the one the compiler wrote.
static void checkManifestDigest(const std::string &bundleDir,
                                const std::string &manifestText) {
  std::string path = joinPath(bundleDir, "manifest.sha256");
  std::string line = readRegularFile(path, 4096);
  std::string recorded = line.substr(0, line.find_first_of(" \t\n"));
  Sha256 digest(path);
  digest.update(manifestText.data(), manifestText.size());
  std::string actual = digest.finish();
  if (recorded != actual)
    throw Error(joinPath(bundleDir, "manifest.json") + ": SHA-256 " + actual +
                " differs from '" + recorded.substr(0, 64) +
                "' in manifest.sha256; the manifest changed after the "
                "bundle was written");
}

Manifest readManifest(const std::string &bundleDir) {
  std::string path = joinPath(bundleDir, "manifest.json");
  struct stat status;
  if (::stat(bundleDir.c_str(), &status) != 0 || !S_ISDIR(status.st_mode))
    throw Error(bundleDir + ": not a bundle directory");
  // A manifest is a few kilobytes per device.
  std::string text = readRegularFile(path, std::int64_t(1) << 28);
  checkManifestDigest(bundleDir, text);
  Manifest manifest = parseManifest(text, path);
  manifest.digest = sha256Bytes(text.data(), text.size());
  return manifest;
}

Manifest parseManifest(const std::string &text, const std::string &path) {
  ManifestReader reader(path);
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception &e) {
    reader.fail(std::string("not valid JSON: ") + e.what());
  }
  if (!root.is_object())
    reader.fail("not a JSON object");

  std::string format = reader.string(root, "format");
  if (format != "cleave-bundle")
    reader.fail("format is '" + format + "', not 'cleave-bundle'");
  int64_t version = reader.integer(root, "format_version");
  if (version != formatVersion)
    reader.fail("format_version " + std::to_string(version) +
                " is not supported (this runtime reads version " +
                std::to_string(formatVersion) + ")");
  int64_t abi = reader.integer(root, "abi_version");
  if (abi != CLEAVE_ABI_VERSION)
    reader.fail("abi_version " + std::to_string(abi) +
                " differs from this runtime's kernel ABI " +
                std::to_string(CLEAVE_ABI_VERSION) +
                "; recompile the model with this cleave");

  Manifest manifest;
  if (root.contains("model") && root["model"].is_string())
    manifest.model = root["model"].get<std::string>();
  if (root.contains("target") && root["target"].is_string())
    manifest.target = root["target"].get<std::string>();
  manifest.deviceKind = reader.string(root, "device_kind");
  if (manifest.deviceKind != "cpu" && manifest.deviceKind != "cuda")
    reader.fail("device_kind '" + manifest.deviceKind +
                "' is neither 'cpu' nor 'cuda'");
  if (root.contains("cpu_isa")) {
    manifest.cpuIsa = reader.string(root, "cpu_isa");
    static const char *const known[] = {"x86-64", "x86-64-v2", "x86-64-v3",
                                        "x86-64-v4", "native"};
    if (std::find(std::begin(known), std::end(known), manifest.cpuIsa) ==
        std::end(known))
      reader.fail("cpu_isa '" + manifest.cpuIsa +
                  "' is not x86-64, x86-64-v2, x86-64-v3, x86-64-v4 or "
                  "native");
  }
  manifest.inputs = reader.tensors(root, "inputs");
  manifest.outputs = reader.tensors(root, "outputs");
  reader.mesh(root, manifest);
  if (root.contains("schedule"))
    manifest.schedule = reader.string(root, "schedule");
  // With several blocks of the batch, every graph tensor must say where its
  // batch is, and the batch must cut into the blocks.
  // An output that only an update writes (once per step, such as a
  // training step's mean loss) is whole; the programs below are checked for
  // that.
  int blocks = manifest.dp * manifest.microbatches;
  if (blocks > 1)
    for (const auto *list : {&manifest.inputs, &manifest.outputs})
      for (const TensorInfo &info : *list) {
        std::string where = std::string(list == &manifest.inputs ? "input"
                                                                 : "output") +
                            " '" + info.name + "': ";
        if (info.batchDim < 0 && list == &manifest.outputs)
          continue;
        if (info.batchDim < 0)
          reader.fail(where + "no 'batch_dim', but the bundle cuts the batch "
                              "into " +
                      std::to_string(blocks) +
                      " blocks (dp x microbatches)");
        if (info.shape[info.batchDim] % blocks != 0)
          reader.fail(where + "its batch of " +
                      std::to_string(info.shape[info.batchDim]) +
                      " does not cut into " + std::to_string(blocks) +
                      " blocks (dp x microbatches)");
      }

  const json &programs = reader.field(root, "programs", "");
  if (!programs.is_array())
    reader.fail("'programs' is not a list");
  if (programs.size() != static_cast<std::size_t>(manifest.pp))
    reader.fail("'programs' holds " + std::to_string(programs.size()) +
                " programs, but the mesh has " + std::to_string(manifest.pp) +
                " stages (one program per stage)");
  for (std::size_t i = 0; i < programs.size(); ++i)
    manifest.programs.push_back(reader.program(programs[i], i, manifest));
  if (blocks > 1)
    for (const ProgramEntry &program : manifest.programs)
      for (const EntryPoint &entry : program.entries)
        for (int port : entry.outputs) {
          const TensorInfo &info = manifest.outputs[program.outputs[port]];
          if (info.batchDim < 0 && entry.phase != phaseName(Phase::Update))
            reader.fail("output '" + info.name +
                        "': no 'batch_dim', but the bundle cuts the batch "
                        "into " +
                        std::to_string(blocks) +
                        " blocks (dp x microbatches) and the " + entry.phase +
                        " entry writes it per block");
        }
  // Each graph output comes from exactly one stage, so it is written once.
  for (std::size_t output = 0; output < manifest.outputs.size(); ++output) {
    std::vector<int> writers;
    for (const ProgramEntry &program : manifest.programs)
      for (int index : program.outputs)
        if (index == static_cast<int>(output))
          writers.push_back(program.stage);
    if (writers.size() != 1)
      reader.fail("output " + std::to_string(output) + " ('" +
                  manifest.outputs[output].name + "') is written by " +
                  std::to_string(writers.size()) +
                  " programs; exactly one stage must write it");
  }

  const json &ranks = reader.field(root, "ranks", "");
  if (!ranks.is_array())
    reader.fail("'ranks' is not a list");
  if (ranks.size() != static_cast<std::size_t>(manifest.devices))
    reader.fail("'ranks' lists " + std::to_string(ranks.size()) +
                " devices, but 'devices' is " +
                std::to_string(manifest.devices));
  for (std::size_t i = 0; i < ranks.size(); ++i)
    manifest.ranks.push_back(reader.rank(ranks[i], i, manifest));

  if (root.contains("training"))
    reader.training(root["training"], manifest);

  const json &files = reader.field(root, "files", "");
  if (!files.is_object())
    reader.fail("'files' is not an object");
  for (auto it = files.begin(); it != files.end(); ++it) {
    reader.checkRelative(it.key(), "files:");
    if (!it.value().is_string())
      reader.fail("files: the hash of '" + it.key() + "' is not a string");
    std::string hash = it.value().get<std::string>();
    for (char &c : hash)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    manifest.files[it.key()] = hash;
  }
  // A program's library and a rank's weights are what the runtime executes
  // and reads; a manifest that leaves them unhashed is not trusted.
  for (const ProgramEntry &entry : manifest.programs)
    if (!manifest.files.count(entry.library))
      reader.fail("'" + entry.library + "' of stage " +
                  std::to_string(entry.stage) + " is not listed in 'files'");
  for (const RankEntry &entry : manifest.ranks)
    for (const std::string *file : {&entry.weights, &entry.packedWeights})
      if (!file->empty() && !manifest.files.count(*file))
        reader.fail("'" + *file + "' of rank " + std::to_string(entry.rank) +
                    " is not listed in 'files'");
  return manifest;
}

std::string sha256File(const std::string &path) {
  RegularFile file(path, "missing from the bundle");
  int fd = file.descriptor();
  Sha256 digest(path);
  std::vector<unsigned char> buffer(1 << 20);
  while (true) {
    ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      throw Error(path + ": " + std::strerror(errno));
    if (got == 0)
      break;
    digest.update(buffer.data(), static_cast<size_t>(got));
  }
  return digest.finish();
}

std::string sha256Bytes(const void *data, std::size_t bytes) {
  Sha256 digest("a buffer");
  digest.update(data, bytes);
  return digest.finish();
}

std::string Sha256::finish() {
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(digest.get(), hash, &length);
  static const char hex[] = "0123456789abcdef";
  std::string text;
  for (unsigned int i = 0; i < length; ++i) {
    text += hex[hash[i] >> 4];
    text += hex[hash[i] & 15];
  }
  return text;
}

void verifyFiles(const std::string &bundleDir, const Manifest &manifest,
                 int rank) {
  // Weight files are most of a bundle's bytes; a device reads only its own.
  std::set<std::string> othersWeights;
  if (rank >= 0)
    for (const RankEntry &entry : manifest.ranks)
      if (entry.rank != rank)
        for (const std::string *file : {&entry.weights, &entry.packedWeights})
          if (!file->empty())
            othersWeights.insert(*file);
  for (const RankEntry &entry : manifest.ranks)
    if (entry.rank == rank) {
      othersWeights.erase(entry.weights);
      othersWeights.erase(entry.packedWeights);
    }
  for (const auto &[file, expected] : manifest.files) {
    if (othersWeights.count(file))
      continue;
    std::string path = joinPath(bundleDir, file);
    std::string actual = sha256File(path);
    if (actual != expected)
      throw Error(path + ": SHA-256 " + actual + " differs from " + expected +
                  " in manifest.json; the file changed after the bundle "
                  "was written");
  }
}

/// Whether this CPU runs code built with -march=`level`.
static bool cpuSupports(const std::string &level) {
  __builtin_cpu_init();
  if (level == "x86-64-v2")
    return __builtin_cpu_supports("x86-64-v2");
  if (level == "x86-64-v3")
    return __builtin_cpu_supports("x86-64-v3");
  if (level == "x86-64-v4")
    return __builtin_cpu_supports("x86-64-v4");
  return true; // x86-64 itself, and native (nothing recorded to check)
}

int kernelCpuLevel(const std::string &cpuIsa) {
  static const char *const levels[] = {"x86-64", "x86-64-v2", "x86-64-v3",
                                       "x86-64-v4"};
  int level = 1;
  while (level < 4 && cpuSupports(levels[level]))
    ++level;
  for (int cap = 1; cap <= 4; ++cap)
    if (cpuIsa == levels[cap - 1])
      return std::min(level, cap);
  return level;
}

/// A program built for instructions this CPU lacks would die of SIGILL in
/// its first kernel; refuse it before loading, saying what to do.
static void checkCpuIsa(const std::string &bundleDir,
                        const Manifest &manifest) {
  if (manifest.deviceKind != "cpu" || cpuSupports(manifest.cpuIsa))
    return;
  throw Error(joinPath(bundleDir, "manifest.json") +
              ": the programs were built for " + manifest.cpuIsa +
              " (cpu_isa), whose instructions this CPU does not have; "
              "compile the bundle for a level every node has (cleave "
              "compile --march x86-64-v2, x86-64-v3, ...)");
}

std::unique_ptr<Bundle> Bundle::load(const std::string &bundleDir, int rank) {
  std::unique_ptr<Bundle> bundle(new Bundle());
  bundle->dir = bundleDir;
  bundle->manifest_ = readManifest(bundleDir);
  const Manifest &manifest = bundle->manifest_;
  if (rank < 0 || rank >= manifest.devices)
    throw Error(joinPath(bundleDir, "manifest.json") + ": no rank " +
                std::to_string(rank) + " in a bundle for " +
                std::to_string(manifest.devices) + " devices");
  verifyFiles(bundleDir, manifest, rank);
  checkCpuIsa(bundleDir, manifest);
  bundle->rankEntry = &manifest.ranks[rank];
  bundle->entry = &manifest.programs[bundle->rankEntry->stage];
  bundle->mapWeights();
  if (!bundle->rankEntry->packedWeights.empty())
    bundle->packed = std::make_unique<PackedWeightFile>(
        joinPath(bundleDir, bundle->rankEntry->packedWeights),
        bundle->entry->weightBytes);
  bundle->loadProgram();
  return bundle;
}

/// Whether paths `a` and `b` name the same file.
static bool sameFile(const std::string &a, const std::string &b) {
  struct stat first, second;
  return ::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0 &&
         first.st_dev == second.st_dev && first.st_ino == second.st_ino;
}

void Bundle::mapWeights() {
  std::string path = joinPath(dir, rankEntry->weights);
  RegularFile file(path);
  if (file.size() != entry->weightBytes)
    throw Error(path + ": " + std::to_string(file.size()) +
                " bytes, but manifest.json says weight_bytes " +
                std::to_string(entry->weightBytes));
  if (file.size() == 0) {
    // Nothing to map; programs still get a valid, aligned pointer.
    alignas(64) static const uint8_t none[64] = {};
    weightData = none;
    return;
  }
  mapping = mapReadOnly(file, path);
  mappingBytes = static_cast<std::size_t>(file.size());
  weightData = static_cast<const uint8_t *>(mapping);
}

namespace {
/// The programs this process has loaded, by real path, with the SHA-256 of
/// the file loaded and the number of bundles using it. dlopen hands back
/// the library already loaded from a path even when the file there has
/// been rewritten since (a model compiled again into the same bundle).
struct LoadedPrograms {
  std::mutex mutex;
  std::map<std::string, std::pair<std::string, int>> byPath;
};
LoadedPrograms &loadedPrograms() {
  static LoadedPrograms loaded;
  return loaded;
}
} // namespace

void Bundle::claimProgramPath(const std::string &path) {
  char *real = ::realpath(path.c_str(), nullptr);
  if (!real)
    throw Error(path + ": " + std::strerror(errno));
  std::string key = real;
  std::free(real);
  const std::string &hash = manifest_.files.at(entry->library);
  LoadedPrograms &loaded = loadedPrograms();
  std::lock_guard<std::mutex> lock(loaded.mutex);
  auto [it, inserted] = loaded.byPath.try_emplace(key, hash, 0);
  if (!inserted && it->second.first != hash)
    throw Error(path + ": an open session still runs the program this file "
                       "held before it was rewritten; close that session "
                       "first");
  ++it->second.second;
  claimedPath = key;
}

/// The block of `info` one program call reads or writes: the batch cut into
/// `blocks` (data-parallel replicas times microbatches).
static std::vector<int64_t> blockShape(const TensorInfo &info, int blocks) {
  std::vector<int64_t> shape = info.shape;
  if (blocks > 1 && info.batchDim >= 0 &&
      info.batchDim < static_cast<int>(shape.size()))
    shape[info.batchDim] /= blocks;
  return shape;
}

void Bundle::checkPorts(const std::string &path, const EntryPoint &point,
                        const char *kind, const std::vector<int> &positions,
                        const std::vector<int> &graphIndices,
                        const std::vector<TensorInfo> &graphTensors,
                        const CleavePortInfo *ports) const {
  if (!positions.empty() && !ports)
    throw Error(path + ": entry point '" + point.name + "' records no " + kind +
                " ports");
  int blocks = manifest_.dp * manifest_.microbatches;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    // Positions and graph indices were bounded when the manifest was read.
    const TensorInfo &tensor = graphTensors[graphIndices[positions[i]]];
    const CleavePortInfo &port = ports[i];
    std::string where = path + ": " + kind + " " + std::to_string(i) +
                        " of entry point '" + point.name + "' ";
    if (!port.name || tensor.name != port.name)
      throw Error(where + "is '" + (port.name ? port.name : "") +
                  "' in the program, but manifest.json says '" + tensor.name +
                  "'");
    std::vector<int64_t> expected = blockShape(tensor, blocks);
    bool sameShape = port.rank >= 0 && port.rank <= CLEAVE_MAX_RANK &&
                     std::equal(expected.begin(), expected.end(), port.shape,
                                port.shape + port.rank) &&
                     expected.size() == static_cast<std::size_t>(port.rank);
    if (port.dtype != tensor.dtype || !sameShape) {
      std::vector<int64_t> compiled;
      if (port.rank >= 0 && port.rank <= CLEAVE_MAX_RANK)
        compiled.assign(port.shape, port.shape + port.rank);
      throw Error(where + "'" + tensor.name + "' was compiled as " +
                  typeString(static_cast<CleaveDType>(port.dtype), compiled) +
                  ", but manifest.json makes it " +
                  typeString(tensor.dtype, expected) +
                  (blocks > 1 ? " per block" : ""));
    }
  }
}

void Bundle::loadProgram() {
  std::string path = joinPath(dir, entry->library);
  // dlopen would search the loader's path for a name without a slash.
  if (path.find('/') == std::string::npos)
    path = "./" + path;
  claimProgramPath(path);
  library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library)
    throw Error(path + ": cannot load the program: " + dlerror());
  using InfoFn = const CleaveProgramInfo *(*)();
  void *symbol = dlsym(library, entry->info.c_str());
  if (!symbol)
    throw Error(path + ": does not define '" + entry->info + "'");
  // dlsym also finds the names of the program's dependencies (libc's
  // `system`, say): only a symbol the program itself defines is called.
  Dl_info where;
  if (!dladdr(symbol, &where) || !where.dli_fname ||
      !sameFile(where.dli_fname, path))
    throw Error(path + ": '" + entry->info +
                "' is not defined by the program itself (it comes from " +
                (where.dli_fname ? where.dli_fname : "elsewhere") + ")");
  auto infoFn = reinterpret_cast<InfoFn>(symbol);
  info = infoFn();
  if (!info)
    throw Error(path + ": '" + entry->info + "' returned null");

  auto mismatch = [&](const std::string &what, int64_t programValue,
                      int64_t manifestValue) {
    if (programValue != manifestValue)
      throw Error(path + ": the program's " + what + " " +
                  std::to_string(programValue) +
                  " differs from manifest.json's " +
                  std::to_string(manifestValue));
  };
  // The ABI version first: the rest of the info may be laid out otherwise.
  mismatch("ABI version", info->abiVersion, CLEAVE_ABI_VERSION);
  mismatch("arena_bytes", info->arenaBytes, entry->arenaBytes);
  mismatch("weight_bytes", info->weightBytes, entry->weightBytes);
  mismatch("persistent_bytes", info->persistentBytes, entry->persistentBytes);
  mismatch("entry count", info->numEntries,
           static_cast<int64_t>(entry->entries.size()));
  for (const EntryPoint &point : entry->entries) {
    const CleaveEntryInfo *found = nullptr;
    for (int32_t i = 0; i < info->numEntries; ++i)
      if (point.name == info->entries[i].name)
        found = &info->entries[i];
    if (!found || !found->fn)
      throw Error(path + ": has no entry point '" + point.name + "'");
    if (point.phase != found->phase)
      throw Error(path + ": entry point '" + point.name + "' runs phase '" +
                  found->phase + "', but manifest.json says '" + point.phase +
                  "'");
    mismatch("input count of entry '" + point.name + "'", found->numInputs,
             static_cast<int64_t>(point.inputs.size()));
    mismatch("output count of entry '" + point.name + "'", found->numOutputs,
             static_cast<int64_t>(point.outputs.size()));
    checkPorts(path, point, "input", point.inputs, entry->inputs,
               manifest_.inputs, found->inputs);
    checkPorts(path, point, "output", point.outputs, entry->outputs,
               manifest_.outputs, found->outputs);
    entryFns.push_back(found->fn);
  }
  for (int32_t i = 0; i < info->numWritableWeights; ++i) {
    const CleaveWritableWeight &weight = info->writableWeights[i];
    if (weight.weightOffset < 0 || weight.persistentOffset < 0 ||
        weight.bytes < 0 ||
        weight.weightOffset + weight.bytes > entry->weightBytes ||
        weight.persistentOffset + weight.bytes > entry->persistentBytes)
      throw Error(path + ": writable weight " + std::to_string(i) +
                  " lies outside the weights or the persistent memory");
  }
}

Bundle::~Bundle() {
  if (library)
    dlclose(library);
  if (!claimedPath.empty()) {
    LoadedPrograms &loaded = loadedPrograms();
    std::lock_guard<std::mutex> lock(loaded.mutex);
    auto it = loaded.byPath.find(claimedPath);
    if (it != loaded.byPath.end() && --it->second.second == 0)
      loaded.byPath.erase(it);
  }
  if (mapping)
    ::munmap(mapping, mappingBytes);
}

} // namespace cleave::rt
