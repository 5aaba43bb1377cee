//===- Checkpoint.cpp - a training run's state on disk --------------------===//
//
// A rank file is a header and the device's persistent memory as it is:
//
//   "CLEAVECK"  8 bytes
//   length      8 bytes, little-endian: the length of the JSON header
//   header      JSON: rank, persistent_bytes, layout_digest, data_offset,
//               the named regions and the training position
//   padding     zeros up to data_offset, a multiple of 64
//   memory      persistent_bytes bytes
//
// The regions are those the bundle's manifest names (its trained
// parameters); the bytes between them are the program's own state, whose
// layout the digest pins. Nothing here knows where an optimizer keeps what.
// The header also lists the program's named states (optimizer state, step
// counters, sums): with the regions, everything a step carries to the
// next, so that a checkpoint is restored into a bundle of another plan (one
// device, pipeline stages, replicas) by name, when neither shards its state
// over replicas (ZeRO).
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Checkpoint.h"

#include "Bundle.h"
#include "Files.h"
#include "cleave/rt/Checked.h"
#include "cleave/rt/Communicator.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <signal.h>
#include <unistd.h>

namespace cleave::rt {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char rankMagic[8] = {'C', 'L', 'E', 'A', 'V', 'E', 'C', 'K'};
constexpr int formatVersion = 1;
/// Where the memory starts in a rank file is a multiple of this.
constexpr std::size_t dataAlignment = 64;
/// A checkpoint's manifest is a few kilobytes per rank.
constexpr std::int64_t maxManifestBytes = std::int64_t(1) << 26;

std::string rankFileName(int rank) {
  return "rank_" + std::to_string(rank) + ".bin";
}

json positionToJson(const TrainingPosition &position) {
  return json{{"step", position.step},
              {"seed", position.seed},
              {"samples", position.samples},
              {"epoch", position.epoch},
              {"offset", position.offset}};
}

/// Reads the fields of a checkpoint's JSON with messages naming the file.
class FieldReader {
public:
  explicit FieldReader(std::string path) : path(std::move(path)) {}

  [[noreturn]] void fail(const std::string &message) const {
    throw Error(path + ": " + message);
  }
  const json &field(const json &object, const std::string &key) const {
    auto it = object.find(key);
    if (it == object.end())
      fail("missing '" + key + "'");
    return *it;
  }
  std::string string(const json &object, const std::string &key) const {
    const json &value = field(object, key);
    if (!value.is_string())
      fail("'" + key + "' is not a string");
    return value.get<std::string>();
  }
  int64_t integer(const json &object, const std::string &key) const {
    const json &value = field(object, key);
    if (!value.is_number_integer())
      fail("'" + key + "' is not an integer");
    return value.get<int64_t>();
  }
  uint64_t unsignedInteger(const json &object, const std::string &key) const {
    const json &value = field(object, key);
    if (!value.is_number_unsigned())
      fail("'" + key + "' is not a non-negative integer");
    return value.get<uint64_t>();
  }
  TrainingPosition position(const json &object) const {
    if (!object.is_object())
      fail("'position' is not an object");
    TrainingPosition position;
    position.step = integer(object, "step");
    position.seed = unsignedInteger(object, "seed");
    position.samples = integer(object, "samples");
    position.epoch = integer(object, "epoch");
    position.offset = integer(object, "offset");
    if (position.step < 0 || position.samples < 0 || position.epoch < 0 ||
        position.offset < 0 ||
        (position.samples > 0 && position.offset >= position.samples))
      fail("'position' is out of range");
    return position;
  }
  json parse(const std::string &text) const {
    try {
      json root = json::parse(text);
      if (!root.is_object())
        fail("not a JSON object");
      return root;
    } catch (const json::exception &e) {
      fail(std::string("not valid JSON: ") + e.what());
    }
  }

private:
  std::string path;
};

/// A file name inside the checkpoint directory itself.
bool isPlainName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string::npos;
}

/// The parsed header of a rank file and the memory it holds.
struct RankFile {
  json header;
  std::vector<uint8_t> memory;
};

/// Reads exactly `bytes` bytes at `offset` of an open file.
void readAt(const RegularFile &file, const std::string &path, void *into,
            std::size_t bytes, std::size_t offset) {
  auto *at = static_cast<char *>(into);
  while (bytes > 0) {
    ssize_t got =
        ::pread(file.descriptor(), at, bytes, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      throw Error(path + ": cannot read: " +
                  (got < 0 ? std::strerror(errno) : "shorter than its size"));
    at += got;
    offset += static_cast<std::size_t>(got);
    bytes -= static_cast<std::size_t>(got);
  }
}

/// Reads a rank file's header, then its memory straight into place.
RankFile readRankFile(const std::string &path) {
  FieldReader reader(path);
  RegularFile file(path);
  auto size = static_cast<uint64_t>(file.size());
  char prefix[16];
  if (size < 16)
    reader.fail("not a cleave checkpoint rank file");
  readAt(file, path, prefix, 16, 0);
  if (std::memcmp(prefix, rankMagic, 8) != 0)
    reader.fail("not a cleave checkpoint rank file");
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i)
    length |= static_cast<uint64_t>(static_cast<uint8_t>(prefix[8 + i]))
              << (8 * i);
  if (length > size - 16 || length > static_cast<uint64_t>(maxManifestBytes))
    reader.fail("truncated header");
  std::string text(static_cast<std::size_t>(length), '\0');
  readAt(file, path, text.data(), text.size(), 16);
  RankFile rank;
  rank.header = reader.parse(text);
  int64_t bytes = reader.integer(rank.header, "persistent_bytes");
  int64_t offset = reader.integer(rank.header, "data_offset");
  if (bytes < 0 || offset < static_cast<int64_t>(16 + length) ||
      static_cast<uint64_t>(offset) + static_cast<uint64_t>(bytes) != size)
    reader.fail("holds " + std::to_string(size) +
                " bytes, which its header's data_offset and "
                "persistent_bytes do not account for");
  rank.memory.resize(static_cast<std::size_t>(bytes));
  readAt(file, path, rank.memory.data(), rank.memory.size(),
         static_cast<std::size_t>(offset));
  return rank;
}

/// Removes a directory tree on the way out unless released.
class TemporaryDirectory {
public:
  explicit TemporaryDirectory(fs::path path) : path(std::move(path)) {}
  ~TemporaryDirectory() {
    if (path.empty())
      return;
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  void release() { path.clear(); }

private:
  fs::path path;
};

/// Writes the rank file of `session` into `dir`; returns its name.
std::string writeRankFile(const Session &session,
                          const TrainingPosition &position,
                          const fs::path &dir) {
  PersistentLayout layout = session.persistentLayout();
  std::vector<uint8_t> memory = session.readPersistent();
  auto describe = [](const std::vector<PersistentRegion> &list) {
    json described = json::array();
    for (const PersistentRegion &region : list) {
      json entry{{"name", region.name},
                 {"dtype", dtypeName(region.dtype)},
                 {"shape", region.shape},
                 {"offset", region.offset},
                 {"bytes", region.bytes}};
      if (region.splitDim >= 0)
        entry["split_dim"] = region.splitDim;
      described.push_back(std::move(entry));
    }
    return described;
  };
  json header{{"rank", session.place().rank},
              {"stage", session.place().stage},
              {"tp", layout.tpIndex},
              {"tp_size", layout.tpSize},
              {"persistent_bytes", layout.bytes},
              {"layout_digest", layout.digest},
              {"regions", describe(layout.regions)},
              {"states", describe(layout.states)},
              {"zero", layout.zero},
              {"position", positionToJson(position)}};
  // data_offset depends on the header's length, which depends on it: the
  // padding absorbs the difference as long as the number keeps its width.
  header["data_offset"] = 0;
  std::size_t base = 16 + header.dump().size() + 32;
  std::size_t offset =
      (base + dataAlignment - 1) / dataAlignment * dataAlignment;
  header["data_offset"] = offset;
  std::string text = header.dump();
  std::string prefix(rankMagic, 8);
  for (int i = 0; i < 8; ++i)
    prefix += static_cast<char>((text.size() >> (8 * i)) & 0xff);
  prefix += text;
  prefix.resize(offset, '\0');

  std::string name = rankFileName(session.place().rank);
  DurableFile file((dir / name).string());
  file.write(prefix.data(), prefix.size());
  file.write(memory.data(), memory.size());
  file.commit();
  return name;
}

} // namespace

std::string checkpointName(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step_%08lld",
                static_cast<long long>(step));
  return name;
}

namespace {

/// The name of this machine as a number (FNV-1a of its host name, 31 bits),
/// which ranks agree on through an integer reduction.
int hostNumber() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0)
    return 0;
  uint32_t hash = 2166136261u;
  for (const char *c = host; *c; ++c)
    hash = (hash ^ static_cast<unsigned char>(*c)) * 16777619u;
  return static_cast<int>(hash & 0x7fffffff);
}

/// The token of a staging directory: the saving process's machine and
/// process id.
std::string stagingToken(int host, int pid) {
  return std::to_string(host) + "-" + std::to_string(pid);
}

/// Where checkpoint `dir` is written before it takes its name: a hidden
/// directory beside it, named by `token` (the machine and process id of the
/// process that saves), so that a crash while saving leaves nothing under
/// the checkpoint's own name.
struct CheckpointPaths {
  fs::path target;
  fs::path parent;
  fs::path staging;
  std::string token;

  CheckpointPaths(const std::string &dir, std::string token)
      : token(std::move(token)) {
    target = fs::path(dir).lexically_normal();
    if (!target.has_filename())
      target = target.parent_path();
    parent = target.parent_path();
    if (parent.empty())
      parent = ".";
    staging = parent / ("." + name() + ".tmp-" + this->token);
  }
  std::string name() const { return target.filename().string(); }
};

/// Removes the staging directories beside `paths` that a save killed
/// midway left behind: `.<name>.tmp-<host>-<pid>` of this machine whose
/// process is gone. A save in progress (its process alive), one of another
/// machine, and anything else are left alone.
void removeAbandonedStaging(const CheckpointPaths &paths) {
  std::string host = std::to_string(hostNumber()) + "-";
  std::error_code error;
  for (fs::directory_iterator it(paths.parent, error), end; !error && it != end;
       it.increment(error)) {
    std::string name = it->path().filename().string();
    std::size_t at = name.rfind(".tmp-");
    if (name.empty() || name[0] != '.' || at == std::string::npos ||
        name.compare(at + 5, host.size(), host) != 0)
      continue;
    std::string pid = name.substr(at + 5 + host.size());
    if (pid.empty() || pid.size() > 9 ||
        !std::all_of(pid.begin(), pid.end(),
                     [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    if (::kill(std::stoi(pid), 0) == 0 || errno != ESRCH)
      continue;
    std::error_code ignored;
    if (it->is_directory(ignored) && !it->is_symlink(ignored))
      fs::remove_all(it->path(), ignored);
  }
}

/// Creates the staging directory of `paths` (and the directories above it),
/// after removing the ones saves killed midway left beside it.
void createStaging(const CheckpointPaths &paths) {
  std::error_code error;
  fs::create_directories(paths.parent, error);
  if (error)
    throw Error(paths.parent.string() +
                ": cannot create the checkpoint directory: " + error.message());
  removeAbandonedStaging(paths);
  fs::remove_all(paths.staging, error);
  if (!fs::create_directory(paths.staging, error) || error)
    throw Error(paths.staging.string() +
                ": cannot create: " + (error ? error.message() : "it exists"));
}

/// What the checkpoint's manifest lists of one rank.
struct SavedRank {
  int rank = 0;
  std::string file;
  std::string sha256;
  std::string layoutDigest;
};

/// Writes the rank file of `session` into the staging directory.
SavedRank saveRank(const Session &session, const TrainingPosition &position,
                   const fs::path &staging) {
  SavedRank saved;
  saved.rank = session.place().rank;
  saved.file = writeRankFile(session, position, staging);
  saved.sha256 = sha256File((staging / saved.file).string());
  saved.layoutDigest = session.persistentLayout().digest;
  return saved;
}

/// Writes the manifest of the rank files in the staging directory, in rank
/// order, and gives the checkpoint its name, replacing one of that name
/// only once the new one is complete.
void publish(const CheckpointPaths &paths, const Session &session,
             const TrainingPosition &position,
             const std::vector<SavedRank> &ranks) {
  json rankList = json::array();
  json files = json::object();
  for (const SavedRank &rank : ranks) {
    files[rank.file] = rank.sha256;
    rankList.push_back(json{{"rank", rank.rank},
                            {"file", rank.file},
                            {"layout_digest", rank.layoutDigest}});
  }
  std::error_code error;
  json manifest{
      {"format", "cleave-checkpoint"},
      {"format_version", formatVersion},
      {"step", position.step},
      {"bundle", fs::absolute(session.bundleDirectory(), error).string()},
      {"bundle_digest", session.bundleDigest()},
      {"model", session.modelName()},
      {"position", positionToJson(position)},
      {"ranks", std::move(rankList)},
      {"files", std::move(files)}};
  std::string text = manifest.dump(2) + "\n";
  {
    DurableFile file((paths.staging / "manifest.json").string());
    file.write(text.data(), text.size());
    file.commit();
  }
  syncDirectory(paths.staging.string());

  // A checkpoint of the same name is swapped with the new one in one step
  // where the file system can (Linux's RENAME_EXCHANGE), else set aside
  // until the new one has taken its place; either way it is removed last.
  const fs::path &target = paths.target;
  if (fs::exists(target, error) &&
      ::renameat2(AT_FDCWD, paths.staging.c_str(), AT_FDCWD, target.c_str(),
                  RENAME_EXCHANGE) == 0) {
    fs::remove_all(paths.staging, error);
  } else if (fs::exists(target, error)) {
    fs::path old = paths.parent / ("." + paths.name() + ".old-" + paths.token);
    fs::remove_all(old, error);
    fs::rename(target, old, error);
    if (error)
      throw Error(target.string() + ": cannot replace: " + error.message());
    fs::rename(paths.staging, target, error);
    if (error) {
      std::error_code ignored;
      fs::rename(old, target, ignored);
      throw Error(target.string() + ": cannot replace: " + error.message());
    }
    fs::remove_all(old, error);
  } else {
    fs::rename(paths.staging, target, error);
    if (error)
      throw Error(target.string() + ": cannot create: " + error.message());
  }
  syncDirectory(paths.parent.string());
}

/// Saves the persistent memory of `ranks`, every device of one bundle in
/// rank order, as checkpoint `dir`.
void saveRanks(const std::vector<const Session *> &ranks,
               const TrainingPosition &position, const std::string &dir) {
  CheckpointPaths paths(dir, stagingToken(hostNumber(), ::getpid()));
  createStaging(paths);
  TemporaryDirectory cleanup(paths.staging);
  std::vector<SavedRank> saved;
  for (const Session *rank : ranks)
    saved.push_back(saveRank(*rank, position, paths.staging));
  publish(paths, *ranks.front(), position, saved);
  cleanup.release();
}

/// The tag of the runtime's own messages that carry a saved rank's entry
/// to the first rank.
constexpr int savedRankTag = 0x436b;

/// Sends `text` to rank 0, its length first.
void sendText(Communicator &comm, const std::string &text) {
  uint64_t length = text.size();
  comm.sendToRank(&length, sizeof(length), 0, savedRankTag);
  comm.sendToRank(text.data(), text.size(), 0, savedRankTag);
}

std::string receiveText(Communicator &comm, int rank) {
  uint64_t length = 0;
  comm.recvFromRank(&length, sizeof(length), rank, savedRankTag);
  if (length > static_cast<uint64_t>(maxManifestBytes))
    throw Error("rank " + std::to_string(rank) +
                " sent a checkpoint entry of " + std::to_string(length) +
                " bytes");
  std::string text(static_cast<std::size_t>(length), '\0');
  comm.recvFromRank(text.data(), text.size(), rank, savedRankTag);
  return text;
}

/// A named tensor a rank file's header lists (`regions` or `states`),
/// checked against its type and the file's memory.
PersistentRegion readRegion(const FieldReader &reader, const json &entry,
                            const RankFile &file) {
  PersistentRegion region;
  region.name = reader.string(entry, "name");
  region.dtype = dtypeFromName(reader.string(entry, "dtype"));
  const json &shape = reader.field(entry, "shape");
  if (region.dtype == CLEAVE_DTYPE_INVALID || !shape.is_array())
    reader.fail("region '" + region.name + "' has no valid type");
  for (const json &dim : shape) {
    if (!dim.is_number_unsigned())
      reader.fail("region '" + region.name + "' has a bad shape");
    region.shape.push_back(dim.get<int64_t>());
  }
  region.offset = reader.integer(entry, "offset");
  region.bytes = reader.integer(entry, "bytes");
  if (entry.contains("split_dim")) {
    int64_t dim = reader.integer(entry, "split_dim");
    if (dim < 0 || dim >= static_cast<int64_t>(region.shape.size()))
      reader.fail("region '" + region.name + "' has 'split_dim' " +
                  std::to_string(dim) + ", not a dimension of its shape");
    region.splitDim = static_cast<int>(dim);
  }
  int64_t elements = 0, expected = 0;
  auto memory = static_cast<int64_t>(file.memory.size());
  if (!checkedTensorSize(region.shape, cleave_dtype_size(region.dtype),
                         elements, expected) ||
      expected != region.bytes || region.offset < 0 || region.offset > memory ||
      region.bytes > memory - region.offset)
    reader.fail("region '" + region.name +
                "' does not fit its type or the persistent memory");
  return region;
}

/// Which block of a tensor split over tensor-parallel devices a rank file
/// holds: its `tp` index of `tp_size` (0 of 1 in files saved without them).
struct TensorParallelPlace {
  int index = 0;
  int size = 1;
};

TensorParallelPlace readTensorParallelPlace(const FieldReader &reader,
                                            const RankFile &file) {
  TensorParallelPlace place;
  if (!file.header.contains("tp"))
    return place;
  int64_t index = reader.integer(file.header, "tp");
  int64_t size = reader.integer(file.header, "tp_size");
  if (size < 1 || index < 0 || index >= size)
    reader.fail("'tp' " + std::to_string(index) + " of 'tp_size' " +
                std::to_string(size) + " is no tensor-parallel place");
  place.index = static_cast<int>(index);
  place.size = static_cast<int>(size);
  return place;
}

/// Every named tensor of a checkpoint's rank files (the parameters, and
/// with `states` the states too), whole, by name: a tensor held whole from
/// the first rank that holds it (the replicas of a data-parallel plan hold
/// the same), one split over tensor-parallel devices (`split_dim`) joined
/// from the blocks of its first stage's devices.
class WholeTensors {
public:
  WholeTensors(const CheckpointInfo &info, const std::string &dir,
               bool states) {
    std::map<std::string, Blocks> blocks;
    for (const std::string &name : info.rankFiles) {
      std::string path = joinPath(dir, name);
      RankFile file = readRankFile(path);
      FieldReader reader(path);
      TensorParallelPlace place = readTensorParallelPlace(reader, file);
      int stage = static_cast<int>(reader.integer(file.header, "stage"));
      std::vector<const char *> keys = {"regions"};
      if (states)
        keys.push_back("states");
      for (const char *key : keys) {
        const json &list = reader.field(file.header, key);
        if (!list.is_array())
          reader.fail("'" + std::string(key) + "' is not a list");
        for (const json &entry : list) {
          PersistentRegion region = readRegion(reader, entry, file);
          Blocks &known = blocks[region.name];
          if (known.parts.empty()) {
            known.stage = stage;
            known.splitDim = region.splitDim;
            known.parts.resize(region.splitDim >= 0 ? place.size : 1);
            known.path = path;
          }
          if (known.stage != stage)
            continue;
          if (known.splitDim != region.splitDim ||
              (region.splitDim >= 0 &&
               static_cast<int>(known.parts.size()) != place.size))
            reader.fail("region '" + region.name +
                        "' is split otherwise than in " + known.path);
          std::optional<Tensor> &part =
              known.parts[region.splitDim >= 0 ? place.index : 0];
          if (!part)
            part.emplace(region.dtype, region.shape,
                         file.memory.data() + region.offset);
        }
      }
    }
    for (auto &[name, known] : blocks) {
      std::vector<Tensor> parts;
      for (std::optional<Tensor> &part : known.parts) {
        if (!part)
          throw Error(known.path + ": a block of '" + name +
                      "' is in no rank file of " + dir);
        parts.push_back(std::move(*part));
      }
      tensors.emplace(name, known.splitDim < 0
                                ? std::move(parts.front())
                                : concatenate(parts, known.splitDim));
    }
  }

  const std::map<std::string, Tensor> &byName() const { return tensors; }
  std::map<std::string, Tensor> take() { return std::move(tensors); }

private:
  struct Blocks {
    int stage = 0;
    int splitDim = -1;
    std::string path;
    std::vector<std::optional<Tensor>> parts;
  };
  std::map<std::string, Tensor> tensors;
};

/// A checkpoint's tensors, whole, for restoring into a bundle of another
/// plan. Fails when the checkpoint names no states (saved before they were
/// named) or holds ZeRO blocks.
class SavedTensors {
public:
  SavedTensors(const CheckpointInfo &info, const std::string &dir)
      : source(info.bundle), tensors(checked(info, dir)) {}

  /// The bytes of every region and state of `layout`, by name (a region
  /// split over tensor-parallel devices as this device's block): the sums
  /// a step clears start at zero; anything else the checkpoint lacks, or
  /// holds with another type, is an error naming it.
  std::vector<uint8_t> image(const PersistentLayout &layout,
                             const std::string &dir,
                             const std::string &bundle) const {
    std::vector<uint8_t> memory(static_cast<std::size_t>(layout.bytes), 0);
    auto place = [&](const PersistentRegion &wanted) {
      auto found = tensors.byName().find(wanted.name);
      if (found != tensors.byName().end())
        restored.insert(wanted.name);
      if (found == tensors.byName().end()) {
        if (wanted.name.rfind("grad:", 0) == 0 ||
            wanted.name.rfind("loss.sum:", 0) == 0)
          return;
        throw Error(dir + ": saved from another bundle (" + source +
                    ") that has no '" + wanted.name + "', which " + bundle +
                    " keeps (another optimizer or model?)");
      }
      const Tensor &whole = found->second;
      std::vector<int64_t> wholeShape = wanted.shape;
      if (wanted.splitDim >= 0)
        wholeShape[wanted.splitDim] *= layout.tpSize;
      if (whole.dtype() != wanted.dtype || whole.shape() != wholeShape)
        throw Error(dir + ": saved from another bundle (" + source +
                    ") whose '" + wanted.name + "' is " +
                    typeString(whole.dtype(), whole.shape()) + ", but " +
                    bundle + " keeps it as " +
                    typeString(wanted.dtype, wholeShape));
      if (wanted.splitDim < 0) {
        std::memcpy(memory.data() + wanted.offset, whole.data(),
                    static_cast<std::size_t>(wanted.bytes));
        return;
      }
      Tensor block =
          blockOf(whole, wanted.splitDim, layout.tpIndex, layout.tpSize);
      std::memcpy(memory.data() + wanted.offset, block.data(),
                  static_cast<std::size_t>(wanted.bytes));
    };
    for (const PersistentRegion &region : layout.regions)
      place(region);
    for (const PersistentRegion &state : layout.states)
      place(state);
    return memory;
  }

  /// The names of the checkpoint's tensors, in the same order on every
  /// device.
  std::vector<std::string> names() const {
    std::vector<std::string> names;
    for (const auto &[name, tensor] : tensors.byName())
      names.push_back(name);
    return names;
  }
  bool isRestored(const std::string &name) const {
    return restored.count(name) != 0;
  }

  /// The checkpoint's tensors that no `image` so far has taken.
  std::vector<std::string> unrestored() const {
    std::vector<std::string> names;
    for (const auto &[name, tensor] : tensors.byName())
      if (!restored.count(name))
        names.push_back(name);
    return names;
  }

private:
  static WholeTensors checked(const CheckpointInfo &info,
                              const std::string &dir) {
    for (const std::string &name : info.rankFiles) {
      std::string path = joinPath(dir, name);
      RankFile file = readRankFile(path);
      FieldReader reader(path);
      if (!file.header.contains("states"))
        reader.fail("names no states (it was saved by an older runtime), so "
                    "it is restored only into the bundle that saved it");
      if (file.header.contains("zero") &&
          reader.integer(file.header, "zero") > 0)
        reader.fail("holds ZeRO-sharded state (each replica a block of it), "
                    "which is restored only into the bundle that saved it");
    }
    return WholeTensors(info, dir, /*states=*/true);
  }

  /// The bundle that saved the checkpoint.
  std::string source;
  WholeTensors tensors;
  /// The names `image` has taken.
  mutable std::set<std::string> restored;
};

/// Restores `session` from checkpoint `dir`, which `info` describes: the
/// rank's own file when the checkpoint was saved from a bundle of the same
/// plan, else (`others`, read once for every rank) its tensors by name.
/// Returns whether it restored the rank's own file.
bool restoreRank(Session &session, const CheckpointInfo &info,
                 const std::string &dir, std::optional<SavedTensors> &others) {
  int rank = session.place().rank;
  PersistentLayout layout = session.persistentLayout();
  bool samePlan =
      static_cast<int>(info.rankFiles.size()) == session.devices() &&
      rank < static_cast<int>(info.rankFiles.size()) &&
      info.layoutDigests[rank] == layout.digest;
  if (!samePlan) {
    // Another plan (or another bundle): resharded by name, when both sides
    // name everything a step keeps.
    if (layout.zero > 0)
      throw Error(dir + ": saved from another bundle (" + info.bundle + ", " +
                  std::to_string(info.rankFiles.size()) + " ranks); " +
                  session.bundleDirectory() +
                  " shards its state over its replicas (ZeRO), and takes "
                  "only a checkpoint it saved");
    if (!others)
      others.emplace(info, dir);
    session.writePersistent(
        others->image(layout, dir, session.bundleDirectory()));
    return false;
  }
  std::string path = joinPath(dir, info.rankFiles[rank]);
  RankFile file = readRankFile(path);
  FieldReader reader(path);
  if (reader.string(file.header, "layout_digest") != layout.digest ||
      static_cast<int64_t>(file.memory.size()) != layout.bytes)
    reader.fail("its header disagrees with " + dir + "/manifest.json");
  session.writePersistent(file.memory);
  return true;
}

/// The names of the tensors a device keeps: what restoring its own rank
/// file restored.
void addKeptNames(const Session &session, std::set<std::string> &names) {
  PersistentLayout layout = session.persistentLayout();
  for (const PersistentRegion &region : layout.regions)
    names.insert(region.name);
  for (const PersistentRegion &state : layout.states)
    names.insert(state.name);
}

} // namespace

void saveCheckpoint(const Session &session, const TrainingPosition &position,
                    const std::string &dir) {
  if (session.devices() != 1)
    throw Error(session.bundleDirectory() + ": the bundle is for " +
                std::to_string(session.devices()) +
                " devices; its checkpoint holds every device's memory (save "
                "it from all of them together)");
  saveRanks({&session}, position, dir);
}

void saveCheckpoint(const SessionGroup &group, const TrainingPosition &position,
                    const std::string &dir) {
  std::vector<const Session *> ranks;
  for (int rank = 0; rank < group.size(); ++rank)
    ranks.push_back(&group.rank(rank));
  saveRanks(ranks, position, dir);
}

void saveCheckpoint(const Session &session, Communicator &comm,
                    const TrainingPosition &position, const std::string &dir) {
  // Every rank stages into the directory the first rank creates, named by
  // its machine and process id.
  int host = comm.maxOverDevices(comm.rank() == 0 ? hostNumber() : 0);
  int pid = comm.maxOverDevices(comm.rank() == 0 ? ::getpid() : 0);
  CheckpointPaths paths(dir, stagingToken(host, pid));
  std::optional<TemporaryDirectory> cleanup;
  if (comm.rank() == 0) {
    createStaging(paths);
    cleanup.emplace(paths.staging);
  }
  comm.barrier();
  std::error_code error;
  if (!fs::is_directory(paths.staging, error))
    throw Error(paths.staging.string() +
                ": missing on this rank's machine; the checkpoint directory "
                "must be on a file system that every rank shares");
  SavedRank own = saveRank(session, position, paths.staging);
  if (comm.rank() != 0) {
    sendText(comm, json{{"rank", own.rank},
                        {"file", own.file},
                        {"sha256", own.sha256},
                        {"layout_digest", own.layoutDigest}}
                       .dump());
  } else {
    std::vector<SavedRank> ranks{own};
    for (int rank = 1; rank < comm.size(); ++rank) {
      json entry = json::parse(receiveText(comm, rank), nullptr,
                               /*allow_exceptions=*/false);
      if (!entry.is_object() || !entry.value("rank", json()).is_number() ||
          entry["rank"].get<int>() != rank)
        throw Error("rank " + std::to_string(rank) +
                    " sent a malformed checkpoint entry");
      ranks.push_back({rank, entry.value("file", ""), entry.value("sha256", ""),
                       entry.value("layout_digest", "")});
    }
    publish(paths, session, position, ranks);
    cleanup->release();
  }
  // Every rank returns once the checkpoint has its name.
  comm.barrier();
}

CheckpointInfo readCheckpoint(const std::string &dir) {
  std::string path = joinPath(dir, "manifest.json");
  FieldReader reader(path);
  std::error_code error;
  if (!fs::exists(path, error))
    reader.fail(fs::is_directory(dir, error)
                    ? "missing: not a checkpoint, or one whose saving did "
                      "not finish"
                    : "missing: " + dir + " is not a directory");
  json root = reader.parse(readRegularFile(path, maxManifestBytes));
  if (reader.string(root, "format") != "cleave-checkpoint")
    reader.fail("format is not 'cleave-checkpoint'");
  int64_t version = reader.integer(root, "format_version");
  if (version != formatVersion)
    reader.fail("format_version " + std::to_string(version) +
                " is not supported (this runtime reads version " +
                std::to_string(formatVersion) + ")");
  CheckpointInfo info;
  info.directory = dir;
  info.position = reader.position(reader.field(root, "position"));
  if (reader.integer(root, "step") != info.position.step)
    reader.fail("'step' differs from the step of 'position'");
  info.bundleDigest = reader.string(root, "bundle_digest");
  info.bundle = reader.string(root, "bundle");
  info.model = reader.string(root, "model");

  const json &files = reader.field(root, "files");
  if (!files.is_object())
    reader.fail("'files' is not an object");
  const json &ranks = reader.field(root, "ranks");
  if (!ranks.is_array() || ranks.empty())
    reader.fail("'ranks' is not a list of ranks");
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (reader.integer(ranks[i], "rank") != static_cast<int64_t>(i))
      reader.fail("'ranks' is not in rank order");
    std::string file = reader.string(ranks[i], "file");
    if (!isPlainName(file) || !files.contains(file))
      reader.fail("rank " + std::to_string(i) + "'s file '" + file +
                  "' is not a file of the checkpoint listed in 'files'");
    info.rankFiles.push_back(file);
    info.layoutDigests.push_back(reader.string(ranks[i], "layout_digest"));
  }
  for (auto it = files.begin(); it != files.end(); ++it) {
    if (!isPlainName(it.key()) || !it.value().is_string())
      reader.fail("'files' holds '" + it.key() +
                  "', which is not a file name with its SHA-256");
    std::string file = joinPath(dir, it.key());
    std::string actual = sha256File(file);
    std::string expected = it.value().get<std::string>();
    if (actual != expected)
      throw Error(file + ": SHA-256 " + actual + " differs from " + expected +
                  " in " + path +
                  "; the file changed after the checkpoint was saved");
  }
  return info;
}

TrainingPosition loadCheckpoint(Session &session, const std::string &dir) {
  CheckpointInfo info = readCheckpoint(dir);
  std::optional<SavedTensors> others;
  (void)restoreRank(session, info, dir, others);
  return info.position;
}

TrainingPosition loadCheckpoint(SessionGroup &group, const std::string &dir,
                                std::vector<std::string> *unrestored) {
  CheckpointInfo info = readCheckpoint(dir);
  std::optional<SavedTensors> others;
  // What the devices that restored their own rank files took.
  std::set<std::string> ownTaken;
  for (int rank = 0; rank < group.size(); ++rank)
    if (restoreRank(group.rank(rank), info, dir, others))
      addKeptNames(group.rank(rank), ownTaken);
  if (!unrestored)
    return info.position;
  unrestored->clear();
  if (others)
    for (const std::string &name : others->unrestored())
      if (!ownTaken.count(name))
        unrestored->push_back(name);
  return info.position;
}

TrainingPosition loadCheckpoint(Session &session, Communicator &comm,
                                const std::string &dir,
                                std::vector<std::string> *unrestored) {
  CheckpointInfo info = readCheckpoint(dir);
  std::optional<SavedTensors> others;
  bool ownFile = restoreRank(session, info, dir, others);
  if (unrestored)
    unrestored->clear();
  // Restored by name on some device: a tensor is unrestored when no device
  // took it, by name or in its own rank file.
  if (comm.maxOverDevices(ownFile ? 0 : 1) == 0)
    return info.position;
  if (!others)
    others.emplace(info, dir);
  std::set<std::string> ownTaken;
  if (ownFile)
    addKeptNames(session, ownTaken);
  std::vector<std::string> names = others->names();
  std::vector<double> taken;
  for (const std::string &name : names)
    taken.push_back(ownTaken.count(name) || others->isRestored(name) ? 1.0
                                                                     : 0.0);
  std::vector<double> table = comm.gatherToFirst(taken);
  if (!unrestored || table.empty())
    return info.position;
  for (std::size_t index = 0; index < names.size(); ++index) {
    bool anywhere = false;
    for (std::size_t row = index; row < table.size(); row += names.size())
      anywhere |= table[row] != 0;
    if (!anywhere)
      unrestored->push_back(names[index]);
  }
  return info.position;
}

std::vector<std::string> listCheckpoints(const std::string &root) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code error;
  if (!fs::is_directory(root, error))
    return {};
  for (const fs::directory_entry &entry : fs::directory_iterator(root, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("step_", 0) != 0 || name.size() == 5 ||
        name.find_first_not_of("0123456789", 5) != std::string::npos ||
        name.size() > 5 + 18)
      continue;
    found.emplace_back(std::stoll(name.substr(5)), entry.path().string());
  }
  std::sort(found.begin(), found.end(),
            [](const auto &a, const auto &b) { return a.first > b.first; });
  std::vector<std::string> paths;
  for (auto &[step, path] : found)
    paths.push_back(std::move(path));
  return paths;
}

bool readCheckpointParameters(const std::string &dir, CheckpointInfo &info,
                              std::map<std::string, Tensor> &parameters,
                              std::string &error) noexcept {
  try {
    info = readCheckpoint(dir);
    parameters = WholeTensors(info, dir, /*states=*/false).take();
    return true;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
}

} // namespace cleave::rt
