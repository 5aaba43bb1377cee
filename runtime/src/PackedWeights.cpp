//===- PackedWeights.cpp - constant weights packed ahead of time ----------===//
//
// The file (little-endian; docs/bundle-format.md):
//
//   "CLVPACK1"                        8 bytes
//   entry count                       uint64
//   per entry: weight offset          int64   (in the rank's weight file)
//              layout bytes L         uint64
//              data offset            uint64  (from the file's start, a
//                                              multiple of 64)
//              data bytes             uint64
//              the layout             L bytes, then zeros to a multiple
//                                     of 8
//   the packed data of every entry
//
//===----------------------------------------------------------------------===//

#include "PackedWeights.h"

#include "Bundle.h"
#include "Files.h"
#include "cleave/rt/Runtime.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace cleave::rt {

namespace {
constexpr char kMagic[8] = {'C', 'L', 'V', 'P', 'A', 'C', 'K', '1'};
constexpr uint64_t kDataAlignment = 64;

uint64_t roundUp(uint64_t value, uint64_t to) {
  return (value + to - 1) / to * to;
}
} // namespace

PackedWeightFile::PackedWeightFile(const std::string &path,
                                   int64_t weightBytes) {
  RegularFile file(path);
  auto bad = [&](const std::string &why) {
    return Error(path + ": not a packed-weight file of this bundle: " + why);
  };
  if (file.size() < 16)
    throw bad("shorter than its header");
  mapping = mapReadOnly(file, path);
  mappingBytes = static_cast<std::size_t>(file.size());
  try {
    const auto *bytes = static_cast<const char *>(mapping);
    const uint64_t size = mappingBytes;
    if (std::memcmp(bytes, kMagic, sizeof(kMagic)) != 0)
      throw bad("it does not begin with CLVPACK1");
    uint64_t at = 8;
    auto word = [&]() {
      if (size - at < 8)
        throw bad("its index runs past its end");
      uint64_t value;
      std::memcpy(&value, bytes + at, 8);
      at += 8;
      return value;
    };
    const uint64_t count = word();
    for (uint64_t i = 0; i < count; ++i) {
      const std::string which = "entry " + std::to_string(i) + ": ";
      const int64_t offset = static_cast<int64_t>(word());
      const uint64_t layoutBytes = word();
      const uint64_t dataOffset = word();
      const uint64_t dataBytes = word();
      if (layoutBytes > size - at)
        throw bad(which + "its layout runs past the end");
      std::string layout(bytes + at, layoutBytes);
      at += roundUp(layoutBytes, 8);
      if (at > size)
        throw bad(which + "its layout runs past the end");
      if (offset < 0 || offset >= weightBytes)
        throw bad(which + "weight offset " + std::to_string(offset) +
                  " lies outside the weight file's " +
                  std::to_string(weightBytes) + " bytes");
      if (dataOffset % kDataAlignment != 0 || dataOffset > size ||
          dataBytes > size - dataOffset)
        throw bad(which + "its data (" + std::to_string(dataBytes) +
                  " bytes at " + std::to_string(dataOffset) +
                  ") lies outside the file or is not 64-byte aligned");
      entries[{offset, std::move(layout)}] = {bytes + dataOffset, dataBytes};
    }
  } catch (...) {
    ::munmap(mapping, mappingBytes);
    mapping = nullptr;
    throw;
  }
}

PackedWeightFile::~PackedWeightFile() {
  if (mapping)
    ::munmap(mapping, mappingBytes);
}

const void *PackedWeightFile::find(int64_t offset, const void *layout,
                                   std::size_t layoutBytes,
                                   std::size_t bytes) const {
  auto found = entries.find(
      {offset, std::string(static_cast<const char *>(layout), layoutBytes)});
  if (found == entries.end() || found->second.second != bytes)
    return nullptr;
  return found->second.first;
}

void PackedWeightFile::packed(int64_t, const void *, std::size_t, const void *,
                              std::size_t bytes) {
  repacked += static_cast<int64_t>(bytes);
}

void PackedWeightRecorder::packed(int64_t offset, const void *layout,
                                  std::size_t layoutBytes, const void *data,
                                  std::size_t bytes) {
  packings.try_emplace(
      {offset, std::string(static_cast<const char *>(layout), layoutBytes)},
      data, bytes);
}

void writePackedWeights(const std::string &path,
                        const PackedWeightRecorder &recorder) {
  const PackedWeightRecorder::Recorded &packings = recorder.recorded();
  uint64_t indexBytes = 16;
  for (const auto &[key, data] : packings)
    indexBytes += 32 + roundUp(key.second.size(), 8);
  std::string index(kMagic, sizeof(kMagic));
  auto word = [&](uint64_t value) {
    index.append(reinterpret_cast<const char *>(&value), 8);
  };
  word(packings.size());
  uint64_t dataAt = roundUp(indexBytes, kDataAlignment);
  for (const auto &[key, data] : packings) {
    word(static_cast<uint64_t>(key.first));
    word(key.second.size());
    word(dataAt);
    word(data.second);
    index += key.second;
    index.append(roundUp(key.second.size(), 8) - key.second.size(), '\0');
    dataAt = roundUp(dataAt + data.second, kDataAlignment);
  }
  DurableFile file(path);
  file.write(index.data(), index.size());
  uint64_t written = index.size();
  static const char zeros[kDataAlignment] = {};
  for (const auto &[key, data] : packings) {
    uint64_t padding = roundUp(written, kDataAlignment) - written;
    file.write(zeros, padding);
    file.write(data.first, data.second);
    written += padding + data.second;
  }
  file.commit();
}

namespace {
/// Replaces each (path, text): all are written beside their files first,
/// then renamed over them.
void replaceFiles(
    const std::vector<std::pair<std::string, std::string>> &files) {
  for (const auto &[path, text] : files) {
    const std::string temporary = path + ".tmp";
    ::unlink(temporary.c_str());
    DurableFile file(temporary);
    file.write(text.data(), text.size());
    file.commit();
  }
  for (const auto &[path, text] : files)
    if (::rename((path + ".tmp").c_str(), path.c_str()) != 0)
      throw Error(path + ": cannot replace: " + std::strerror(errno));
}

PackedBundle packWeights(const std::string &bundleDir) {
  const Manifest manifest = readManifest(bundleDir);
  PackedBundle result;
  if (manifest.deviceKind != "cpu" || manifest.training)
    return result;
  // Ranks that read one weight file (the data-parallel replicas of a
  // device) share its packed file, written once: by weight file, the
  // packed file, or empty where the rank that read it first packed
  // nothing.
  std::map<std::string, std::string> packedOf;
  std::map<int, std::string> written;
  // No packed file may stay behind unnamed when packing fails: the next
  // compile into this directory would refuse to replace a bundle that
  // holds a file it did not write.
  auto removeWritten = [&] {
    for (const auto &[weights, relative] : packedOf)
      if (!relative.empty())
        ::unlink(joinPath(bundleDir, relative).c_str());
  };
  try {
    SessionOptions options;
    options.recordPackedWeights = true;
    std::unique_ptr<SessionGroup> group = SessionGroup::open(bundleDir, options);
    std::map<std::string, Tensor> zeros;
    for (const TensorInfo &input : group->primary().inputs())
      zeros.emplace(input.name, Tensor(input.dtype, input.shape));
    group->run(zeros);
    for (int rank = 0; rank < group->size(); ++rank) {
      const std::string &weights = manifest.ranks[rank].weights;
      auto shared = packedOf.find(weights);
      if (shared != packedOf.end()) {
        if (!shared->second.empty())
          written[rank] = shared->second;
        continue;
      }
      const std::string relative = packedWeightPath(weights);
      const std::string path = joinPath(bundleDir, relative);
      // Named before it is written: a failure removes it with the rest.
      written[rank] = relative;
      packedOf[weights] = relative;
      if (!group->rank(rank).writePackedWeights(path)) {
        written.erase(rank);
        packedOf[weights].clear();
        continue;
      }
      result.files += 1;
      result.bytes += RegularFile(path).size();
    }
    if (written.empty())
      return result;

    const std::string manifestPath = joinPath(bundleDir, "manifest.json");
    nlohmann::json root = nlohmann::json::parse(readRegularFile(manifestPath));
    for (nlohmann::json &rank : root.at("ranks")) {
      auto found = written.find(rank.at("rank").get<int>());
      if (found == written.end())
        continue;
      rank["packed_weights"] = found->second;
      root.at("files")[found->second] =
          sha256File(joinPath(bundleDir, found->second));
    }
    const std::string text = root.dump(2) + "\n";
    replaceFiles(
        {{manifestPath, text},
         {joinPath(bundleDir, "manifest.sha256"),
          sha256Bytes(text.data(), text.size()) + "  manifest.json\n"}});
    return result;
  } catch (...) {
    removeWritten();
    throw;
  }
}
} // namespace

bool packBundleWeights(const std::string &bundleDir, PackedBundle &result,
                       std::string &error) {
  try {
    result = packWeights(bundleDir);
    return true;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
}

std::string packedWeightPath(const std::string &weights) {
  const std::string suffix = ".bin";
  std::string stem = weights;
  if (stem.size() > suffix.size() &&
      stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0)
    stem.resize(stem.size() - suffix.size());
  return stem + ".packed";
}

} // namespace cleave::rt
