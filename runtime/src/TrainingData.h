//===- TrainingData.h - the samples `cleave train` reads ---------*- C++
//-*-===//
//
// A data directory holds one NAME.npy per graph input of a training bundle:
// its first dimension counts the samples, the rest is one sample of the
// input (the input's shape without its batch dimension). The files are
// memory-mapped, so a data set larger than memory trains as well; a batch
// copies the samples it takes.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_TRAININGDATA_H
#define CLEAVE_RT_SRC_TRAININGDATA_H

#include "cleave/rt/Runtime.h"

#include <map>
#include <string>
#include <vector>

namespace cleave::rt {

class TrainingData {
public:
  /// Maps DIR/NAME.npy for each of `inputs` and checks that they agree
  /// with the inputs and with each other; throws Error naming the file or
  /// the directory at fault.
  TrainingData(const std::string &dir, const std::vector<TensorInfo> &inputs);
  ~TrainingData();
  TrainingData(const TrainingData &) = delete;
  TrainingData &operator=(const TrainingData &) = delete;

  /// The samples every file holds.
  int64_t samples() const { return count; }
  /// The samples one step takes: the batch of the bundle's inputs.
  int64_t batch() const { return batchSize; }
  /// The feeds of one step: sample `indices[i]` becomes row i of each input.
  std::map<std::string, Tensor>
  gather(const std::vector<int64_t> &indices) const;

private:
  /// One mapped file.
  struct Column {
    TensorInfo info;
    std::string path;
    void *mapping = nullptr;
    std::size_t mappingBytes = 0;
    const uint8_t *data = nullptr;
    std::size_t sampleBytes = 0;
  };
  void map(Column &column, const std::string &dirOption);

  std::vector<Column> columns;
  int64_t count = -1;
  int64_t batchSize = 0;
};

} // namespace cleave::rt

#endif // CLEAVE_RT_SRC_TRAININGDATA_H
