//===- TrainingData.cpp - the samples `cleave train` reads ----------------===//

#include "TrainingData.h"

#include "Bundle.h"
#include "Files.h"
#include "Npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sys/mman.h>
#include <unistd.h>

namespace cleave::rt {

namespace {

namespace fs = std::filesystem;

/// NumPy pads a header to a multiple of 64 bytes; this many hold any a
/// tensor's shape needs.
constexpr std::size_t maxHeaderBytes = 1 << 16;

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

} // namespace

TrainingData::TrainingData(const std::string &dir,
                           const std::vector<TensorInfo> &inputs) {
  std::error_code error;
  if (!fs::is_directory(dir, error))
    throw Error("--data " + dir + ": not a directory");
  for (const TensorInfo &info : inputs) {
    if (info.shape.empty())
      throw Error("input '" + info.name + "' is a scalar (" +
                  info.typeString() +
                  "); cleave train takes samples along the first dimension "
                  "of every input");
    if (info.batchDim > 0)
      throw Error("input '" + info.name + "' holds its batch in dimension " +
                  std::to_string(info.batchDim) +
                  "; cleave train takes samples along the first dimension");
    if (batchSize == 0)
      batchSize = info.shape[0];
    else if (info.shape[0] != batchSize)
      throw Error("input '" + info.name + "' (" + info.typeString() +
                  ") has a first dimension other than the batch of " +
                  std::to_string(batchSize) +
                  " of the other inputs; cleave train takes samples along "
                  "the first dimension of every input");
    Column column;
    column.info = info;
    column.path = joinPath(dir, info.name + ".npy");
    columns.push_back(std::move(column));
  }
  for (Column &column : columns)
    map(column, dir);

  // Files beside the inputs' are most likely misnamed ones.
  for (const fs::directory_entry &entry : fs::directory_iterator(dir, error)) {
    if (entry.path().extension() != ".npy")
      continue;
    std::string stem = entry.path().stem().string();
    bool known = false;
    for (const TensorInfo &info : inputs)
      known |= info.name == stem;
    if (!known)
      std::fprintf(stderr,
                   "cleave train: warning: %s is not an input of the bundle "
                   "and is not read\n",
                   entry.path().string().c_str());
  }
}

void TrainingData::map(Column &column, const std::string &dir) {
  const TensorInfo &info = column.info;
  std::error_code error;
  if (!fs::exists(column.path, error))
    throw Error("--data " + dir + ": no " + info.name + ".npy for input '" +
                info.name + "' (" + info.typeString() +
                "); the directory holds one NAME.npy per input of the "
                "bundle, its first dimension the samples");
  RegularFile file(column.path);
  std::string prefix(static_cast<std::size_t>(std::min<int64_t>(
                         file.size(), static_cast<int64_t>(maxHeaderBytes))),
                     '\0');
  std::size_t done = 0;
  while (done < prefix.size()) {
    ssize_t got = ::pread(file.descriptor(), prefix.data() + done,
                          prefix.size() - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      throw Error(column.path + ": cannot read: " +
                  (got < 0 ? std::strerror(errno) : "shorter than its size"));
    done += static_cast<std::size_t>(got);
  }
  NpyHeader header = parseNpyHeader(prefix, column.path);
  std::vector<int64_t> sample(info.shape.begin() + 1, info.shape.end());
  if (header.dtype != info.dtype)
    throw Error(column.path + ": holds " + dtypeName(header.dtype) +
                " samples, but input '" + info.name + "' is " +
                info.typeString() + "; save them as " + dtypeName(info.dtype));
  std::vector<int64_t> fileSample;
  if (!header.shape.empty())
    fileSample.assign(header.shape.begin() + 1, header.shape.end());
  if (header.shape.empty() || fileSample != sample)
    throw Error(column.path + ": " + typeString(header.dtype, header.shape) +
                " is not a list of samples of shape " + shapeString(sample) +
                ", as input '" + info.name + "' " + info.typeString() +
                " takes (first dimension: the samples)");
  if (file.size() - static_cast<int64_t>(header.dataOffset) < header.dataBytes)
    throw Error(
        column.path + ": truncated: " + typeString(header.dtype, header.shape) +
        " needs " + std::to_string(header.dataBytes) + " bytes of data");
  int64_t samples = header.shape[0];
  if (samples == 0)
    throw Error(column.path + ": holds no samples");
  if (count < 0) {
    count = samples;
  } else if (samples != count) {
    throw Error("--data " + dir +
                ": the files hold different numbers of "
                "samples: " +
                columns.front().path + " " + std::to_string(count) + ", " +
                column.path + " " + std::to_string(samples));
  }

  column.mappingBytes = static_cast<std::size_t>(file.size());
  void *mapping = ::mmap(nullptr, column.mappingBytes, PROT_READ, MAP_PRIVATE,
                         file.descriptor(), 0);
  if (mapping == MAP_FAILED)
    throw Error(column.path + ": cannot map: " + std::strerror(errno));
  column.mapping = mapping;
  column.data = static_cast<const uint8_t *>(mapping) + header.dataOffset;
  column.sampleBytes =
      static_cast<std::size_t>(header.dataBytes / header.shape[0]);
}

TrainingData::~TrainingData() {
  for (Column &column : columns)
    if (column.mapping)
      ::munmap(column.mapping, column.mappingBytes);
}

std::map<std::string, Tensor>
TrainingData::gather(const std::vector<int64_t> &indices) const {
  std::map<std::string, Tensor> feeds;
  for (const Column &column : columns) {
    Tensor tensor(column.info.dtype, column.info.shape);
    auto *rows = static_cast<uint8_t *>(tensor.data());
    for (std::size_t i = 0; i < indices.size(); ++i)
      std::memcpy(rows + i * column.sampleBytes,
                  column.data +
                      static_cast<std::size_t>(indices[i]) * column.sampleBytes,
                  column.sampleBytes);
    feeds.emplace(column.info.name, std::move(tensor));
  }
  return feeds;
}

} // namespace cleave::rt
