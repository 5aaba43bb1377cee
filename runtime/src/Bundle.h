//===- Bundle.h - a verified bundle on disk ----------------------*- C++
//-*-===//
//
// Reads a bundle's manifest (docs/bundle-format.md), checks it and every
// file it lists, maps one rank's weights and loads its program. Private to
// the runtime; Session is the public face.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_BUNDLE_H
#define CLEAVE_RT_SRC_BUNDLE_H

#include "PackedWeights.h"
#include "cleave/rt/Runtime.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cleave::rt {

/// One step of a stage's recorded schedule: an entry point of the program
/// (the one of the step's phase and model chunk) run on one microbatch.
struct ScheduleStep {
  int entry = 0;
  int microbatch = 0;
};

/// One entry point of a program (`entries`): the phase it runs and the
/// ports it takes, as positions in the program's `inputs` and `outputs`,
/// in the order of its pointer arrays.
struct EntryPoint {
  std::string name;
  std::string phase;
  /// The model chunk it runs (`chunk`, under the interleaved schedule; 0
  /// otherwise).
  int chunk = 0;
  std::vector<int> inputs;
  std::vector<int> outputs;
};

/// One entry of the manifest's `programs`: the program every device of a
/// pipeline stage runs.
struct ProgramEntry {
  int stage = 0;
  std::string source;
  std::string library;
  std::string info;
  int64_t arenaBytes = 0;
  int64_t weightBytes = 0;
  int64_t persistentBytes = 0;
  /// The graph inputs its entries read and the graph outputs they write,
  /// by index.
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::vector<EntryPoint> entries;
  /// The writable weights a training step updates (`trained_parameters`),
  /// each with its byte offset in persistent memory.
  std::vector<TensorInfo> trainedParameters;
  std::vector<int64_t> trainedOffsets;
  /// The named persistent states (optimizer state, sums, statistics).
  std::vector<TensorInfo> states;
  std::vector<int64_t> stateOffsets;
  /// What a device of the stage runs in a step, in order (`steps`): each
  /// chunk's forward of each microbatch once, other entries at most once
  /// per microbatch, and the update at most once.
  std::vector<ScheduleStep> steps;
};

/// One entry of the manifest's `ranks`: a device, its place in the mesh and
/// its weight file.
struct RankEntry {
  int rank = 0;
  int stage = 0;
  int tp = 0;
  int dp = 0;
  std::string weights;
  /// The rank's packed-weight file (`packed_weights`), or empty.
  std::string packedWeights;
};

/// The learning-rate schedule of a training bundle (`training`).
struct TrainingSchedule {
  std::string optimizer;
  double learningRate = 0;
  int64_t warmupSteps = 0;
  int64_t decaySteps = 0;
  double minLrRatio = 0;
  /// The ZeRO stage: above 0 the replicas' states are blocks.
  int64_t zero = 0;
};

struct Manifest {
  /// The SHA-256 of manifest.json (as manifest.sha256 records it): the
  /// bundle's identity.
  std::string digest;
  std::string model;
  std::string target;
  std::string deviceKind;
  /// The x86-64 level cpu programs were built for (`-march`), "native", or
  /// empty when the manifest does not say.
  std::string cpuIsa;
  int devices = 1;
  /// The mesh: pipeline stages x tensor-parallel devices x replicas.
  int pp = 1;
  int tp = 1;
  int dp = 1;
  int microbatches = 1;
  MeshShape mesh() const { return MeshShape{pp, dp, tp}; }
  /// The pipeline schedule the compiler ordered the steps by (`gpipe`,
  /// `1f1b`); the runtime runs `ProgramEntry::steps` and only reports it.
  std::string schedule;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  /// Indexed by stage.
  std::vector<ProgramEntry> programs;
  /// Indexed by rank.
  std::vector<RankEntry> ranks;
  /// Path relative to the bundle -> lowercase hex SHA-256.
  std::map<std::string, std::string> files;
  /// Set for a bundle compiled with --train that records its schedule.
  std::optional<TrainingSchedule> training;
};

/// The x86-64 level (1 to 4) whose CPU kernels run programs built for
/// `cpuIsa` (a manifest's `cpu_isa`) on this CPU: the highest it has, no
/// higher than `cpuIsa`'s, so that a bundle runs the same instructions on
/// every node it was built for; "native" and "" take the CPU's own.
int kernelCpuLevel(const std::string &cpuIsa);

/// Reads `manifest.json` and checks its format, version and ABI.
Manifest readManifest(const std::string &bundleDir);
/// Reads and checks the text of a manifest; `path` names it in errors.
Manifest parseManifest(const std::string &text, const std::string &path);

/// The lowercase hex SHA-256 of a file's bytes.
std::string sha256File(const std::string &path);
/// The lowercase hex SHA-256 of `bytes` bytes at `data`.
std::string sha256Bytes(const void *data, std::size_t bytes);

/// `relative` inside directory `dir`.
std::string joinPath(const std::string &dir, const std::string &relative);

/// Checks the SHA-256 of every file the manifest lists, except the weight
/// files of ranks other than `rank` (-1: every file), in path order; throws
/// naming the first file that is missing or differs.
void verifyFiles(const std::string &bundleDir, const Manifest &manifest,
                 int rank = -1);

/// A bundle whose files matched their hashes, with one rank's weights
/// mapped and its stage's program loaded.
class Bundle {
public:
  static std::unique_ptr<Bundle> load(const std::string &bundleDir,
                                      int rank = 0);
  ~Bundle();
  Bundle(const Bundle &) = delete;
  Bundle &operator=(const Bundle &) = delete;

  const std::string &directory() const { return dir; }
  const Manifest &manifest() const { return manifest_; }
  const ProgramEntry &program() const { return *entry; }
  const RankEntry &place() const { return *rankEntry; }
  /// The rank's weights, 64-byte aligned, `program().weightBytes` long.
  const uint8_t *weights() const { return weightData; }
  /// The rank's packed-weight file, mapped (null when it has none).
  PackedWeightFile *packedWeights() const { return packed.get(); }
  /// The function of `program().entries[index]`.
  CleaveEntryFn entryFunction(int index) const { return entryFns[index]; }
  /// What the program says of itself (its writable weights, ...).
  const CleaveProgramInfo &programInfo() const { return *info; }

private:
  Bundle() = default;
  void mapWeights();
  void loadProgram();
  /// Checks an entry point's ports in the manifest against those the
  /// program was compiled for: names, element types and block shapes.
  void checkPorts(const std::string &path, const EntryPoint &point,
                  const char *kind, const std::vector<int> &positions,
                  const std::vector<int> &graphIndices,
                  const std::vector<TensorInfo> &graphTensors,
                  const CleavePortInfo *ports) const;
  /// Registers the program's path as loaded with this bundle's hash;
  /// refuses a path whose earlier version is still loaded.
  void claimProgramPath(const std::string &path);

  std::string dir;
  Manifest manifest_;
  const ProgramEntry *entry = nullptr;
  const RankEntry *rankEntry = nullptr;
  void *mapping = nullptr;
  std::size_t mappingBytes = 0;
  const uint8_t *weightData = nullptr;
  std::unique_ptr<PackedWeightFile> packed;
  std::string claimedPath;
  void *library = nullptr;
  const CleaveProgramInfo *info = nullptr;
  std::vector<CleaveEntryFn> entryFns;
};

} // namespace cleave::rt

#endif // CLEAVE_RT_SRC_BUNDLE_H
