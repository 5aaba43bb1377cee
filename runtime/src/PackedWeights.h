//===- PackedWeights.h - constant weights packed ahead of time --*- C++ -*-===//
//
// `cleave compile` runs each rank of a CPU bundle once on zeros, with a
// PackedWeightRecorder as its context's PackedWeights: the kernels pack
// their constant weights as they would on a first run, and the recorder
// keeps a copy of each. writePackedWeights() stores them in the rank's
// packed-weight file (docs/bundle-format.md); a session maps that file as
// a PackedWeightFile, and the kernels take their packed weights from it
// instead of packing them again, wherever the layout they want is the one
// stored (the same kernel library, on a CPU of the same instructions).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_PACKEDWEIGHTS_H
#define CLEAVE_RT_SRC_PACKEDWEIGHTS_H

#include "cleave/rt/Context.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace cleave::rt {

/// A packed-weight file, mapped read-only for the life of the object.
class PackedWeightFile final : public PackedWeights {
public:
  /// Maps and checks `path`; throws Error naming it when it is not a
  /// packed-weight file, or one of its entries lies outside it or outside
  /// the `weightBytes` of the rank's weight file.
  PackedWeightFile(const std::string &path, int64_t weightBytes);
  ~PackedWeightFile() override;
  PackedWeightFile(const PackedWeightFile &) = delete;
  PackedWeightFile &operator=(const PackedWeightFile &) = delete;

  const void *find(int64_t offset, const void *layout, std::size_t layoutBytes,
                   std::size_t bytes) const override;
  /// Counts the bytes the kernels packed anyway (layouts not stored).
  void packed(int64_t offset, const void *layout, std::size_t layoutBytes,
              const void *data, std::size_t bytes) override;

  /// The size of the file.
  int64_t fileBytes() const { return static_cast<int64_t>(mappingBytes); }
  /// What the kernels packed themselves since the file was mapped.
  int64_t repackedBytes() const { return repacked; }

private:
  void *mapping = nullptr;
  std::size_t mappingBytes = 0;
  /// By (weight offset, layout bytes): the packed bytes and their size.
  std::map<std::pair<int64_t, std::string>,
           std::pair<const void *, std::size_t>>
      entries;
  int64_t repacked = 0;
};

/// What the kernels pack while a bundle is packed, once per (weight offset,
/// layout): where it is, not a copy (the kernels keep their packed weights
/// for as long as their context lives, cleave_rt_packed_weights), so that
/// packing a bundle holds its packed weights in memory once.
class PackedWeightRecorder final : public PackedWeights {
public:
  const void *find(int64_t, const void *, std::size_t,
                   std::size_t) const override {
    return nullptr;
  }
  void packed(int64_t offset, const void *layout, std::size_t layoutBytes,
              const void *data, std::size_t bytes) override;

  /// By (weight offset, layout bytes): the packed bytes and their size,
  /// valid while the recording context lives.
  using Recorded = std::map<std::pair<int64_t, std::string>,
                            std::pair<const void *, std::size_t>>;
  const Recorded &recorded() const { return packings; }

private:
  Recorded packings;
};

/// Writes what `recorder` holds to a new packed-weight file at `path`,
/// while the context it recorded lives.
void writePackedWeights(const std::string &path,
                        const PackedWeightRecorder &recorder);

/// Where packBundleWeights() writes the packed-weight file of the weight
/// file `weights` (both relative to the bundle): `weights/rank_N.bin`
/// gives `weights/rank_N.packed`.
std::string packedWeightPath(const std::string &weights);

/// A session that counts what the kernels pack when the bundle stores no
/// packed weights.
class RepackCounter final : public PackedWeights {
public:
  const void *find(int64_t, const void *, std::size_t,
                   std::size_t) const override {
    return nullptr;
  }
  void packed(int64_t, const void *, std::size_t, const void *,
              std::size_t bytes) override {
    repacked += static_cast<int64_t>(bytes);
  }
  int64_t repackedBytes() const { return repacked; }

private:
  int64_t repacked = 0;
};

} // namespace cleave::rt

#endif // CLEAVE_RT_SRC_PACKEDWEIGHTS_H
