//===- Runtime.h - load a bundle and run it ------------------------*- C++
//-*-===//
//
// The runtime's public C++ API. A Session opens a bundle written by
// `cleave compile` (docs/bundle-format.md), verifies it, and runs it:
//
//   auto session = cleave::rt::Session::open("model.cleave", {});
//   cleave::rt::Tensor ids(CLEAVE_I64, {1, 16});
//   std::vector<cleave::rt::Tensor> outputs = session->run({{"input_ids",
//   ids}});
//
// Every failure is a cleave::rt::Error whose message names what is at fault:
// the bundle file, the input, or the program step.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_RUNTIME_H
#define CLEAVE_RT_RUNTIME_H

#include "cleave/rt/Kernels.h"
#include "cleave/rt/Mesh.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cleave::rt {

/// The one exception type the runtime throws.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// NumPy's name of a dtype ("float32", "int64", "bool", ...).
const char *dtypeName(CleaveDType dtype);
/// The dtype of a NumPy name; CLEAVE_DTYPE_INVALID for an unknown one.
CleaveDType dtypeFromName(const std::string &name);
/// "float32[1,16]": how messages print a tensor type.
std::string typeString(CleaveDType dtype, const std::vector<int64_t> &shape);

/// A dense, row-major tensor that owns its bytes (64-byte aligned), or
/// borrows another's (borrowed()).
class Tensor {
public:
  Tensor() = default;
  /// Zero-filled.
  Tensor(CleaveDType dtype, std::vector<int64_t> shape);
  /// A copy of `byteSize()` bytes at `data`.
  Tensor(CleaveDType dtype, std::vector<int64_t> shape, const void *data);
  /// Of unspecified contents, for a caller that writes every byte (a
  /// session's outputs, which the program writes whole).
  static Tensor uninitialized(CleaveDType dtype, std::vector<int64_t> shape);
  /// The bytes at `data`, not copied and not freed: they must outlive the
  /// tensor (a session's feeds, read during the run). They need the
  /// alignment of the dtype only. A copy of it owns a copy of the bytes.
  static Tensor borrowed(CleaveDType dtype, std::vector<int64_t> shape,
                         void *data);
  Tensor(const Tensor &other);
  Tensor &operator=(const Tensor &other);
  Tensor(Tensor &&other) noexcept = default;
  Tensor &operator=(Tensor &&other) noexcept = default;

  CleaveDType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t numElements() const;
  std::size_t byteSize() const;
  void *data() { return bytes_.get(); }
  const void *data() const { return bytes_.get(); }
  template <typename T> T *data() { return static_cast<T *>(data()); }
  template <typename T> const T *data() const {
    return static_cast<const T *>(data());
  }

private:
  struct Uninitialized {};
  Tensor(CleaveDType dtype, std::vector<int64_t> shape, Uninitialized);
  /// Checks the dtype and shape and sets them.
  void describe(CleaveDType dtype, std::vector<int64_t> shape);

  struct Free {
    /// Set for borrowed bytes (value-initialised false: owned).
    bool borrowed;
    /// The bytes allocated, for owned ones (Tensor.cpp's block cache;
    /// value-initialised 0).
    std::size_t bytes;
    void operator()(void *pointer) const;
  };
  CleaveDType dtype_ = CLEAVE_DTYPE_INVALID;
  std::vector<int64_t> shape_;
  std::unique_ptr<uint8_t, Free> bytes_;
};

/// The tensors `blocks` (of one dtype and shape but along `dim`) joined
/// along `dim`, in order: the whole of a tensor that tensor-parallel
/// devices hold in blocks.
Tensor concatenate(const std::vector<Tensor> &blocks, int dim);
/// Block `index` of `parts` equal blocks of `whole` along `dim` (which
/// `parts` divides).
Tensor blockOf(const Tensor &whole, int dim, int index, int parts);

/// A graph input or output as the bundle's manifest declares it.
struct TensorInfo {
  std::string name;
  CleaveDType dtype = CLEAVE_DTYPE_INVALID;
  std::vector<int64_t> shape;
  /// The dimension that holds the batch when the bundle's programs compute
  /// blocks of it (data-parallel replicas, microbatches); -1 otherwise.
  int batchDim = -1;
  /// For a tensor a program keeps in persistent memory (a trained
  /// parameter, optimizer state): the dimension along which each
  /// tensor-parallel device holds one of the mesh's tp equal blocks; -1
  /// when every device holds it whole.
  int splitDim = -1;
  std::string typeString() const { return rt::typeString(dtype, shape); }
};

/// A device's place in a bundle's mesh (docs/bundle-format.md): its rank,
/// pipeline stage, tensor-parallel index and data-parallel replica.
struct DevicePlace {
  int rank = 0;
  int stage = 0;
  int tp = 0;
  int dp = 0;

  /// Rank `rank`'s place in `mesh` (Mesh.h numbers the ranks).
  static DevicePlace of(const MeshShape &mesh, int rank) {
    MeshCoords coords = mesh.coordsOf(rank);
    return {rank, static_cast<int>(coords.stage), static_cast<int>(coords.tp),
            static_cast<int>(coords.dp)};
  }
  MeshCoords coords() const { return {stage, dp, tp}; }
};

class Communicator;

/// A named tensor in a device's persistent memory (a trained parameter).
struct PersistentRegion {
  std::string name;
  CleaveDType dtype = CLEAVE_DTYPE_INVALID;
  std::vector<int64_t> shape;
  int64_t offset = 0;
  int64_t bytes = 0;
  /// The dimension along which each of the mesh's tp devices holds one
  /// equal block of the tensor (`shape` is the block's); -1: held whole.
  int splitDim = -1;
};

/// What a device's persistent memory holds, as the bundle's manifest says:
/// its size and the regions it names. The bytes outside them are the
/// program's own state (optimizer moments, step counters, ...), laid out as
/// the program was compiled; `digest` identifies the whole layout (the
/// regions, the size and the program that owns the rest), so that state
/// saved from one layout is never read into another.
struct PersistentLayout {
  int64_t bytes = 0;
  std::vector<PersistentRegion> regions;
  std::string digest;
  /// The program's named states (optimizer state, step counters, sums,
  /// running statistics), as the manifest names them: with the regions,
  /// everything a step carries to the next, by which a checkpoint is
  /// restored into another plan's bundle. Not part of the digest.
  std::vector<PersistentRegion> states;
  /// The bundle's ZeRO stage: above 0 the states are blocks of the
  /// parameters', read back only by the same plan.
  int64_t zero = 0;
  /// The tensor-parallel devices of the bundle's mesh, over which a region
  /// with a `splitDim` is split, and this device's index among them.
  int tpSize = 1;
  int tpIndex = 0;
};

struct SessionOptions {
  /// Kernel threads on the CPU; 0 uses every core.
  int numThreads = 0;
  /// "cpu" or "cuda:N"; empty runs on the bundle's device kind (cuda:0 for
  /// a CUDA bundle).
  std::string device;
  /// Time every program step (Session::profile()).
  bool profile = false;
  /// Needed for a bundle of several devices: joins this process to the
  /// others; the session runs the device of the communicator's rank.
  Communicator *communicator = nullptr;
  /// With a communicator: a step or communication call that runs longer
  /// ends the whole job, naming the rank, the call and the node (0: never).
  double timeoutSeconds = 0;
  /// The command a timed-out rank's message names ("cleave run: error:
  /// ...").
  std::string command = "cleave run";
  /// Keep a copy of every constant weight the CPU kernels pack, for
  /// Session::writePackedWeights (what `cleave compile` stores in a
  /// bundle), and leave the bundle's packed-weight file unread.
  bool recordPackedWeights = false;
};

/// The memory a session holds for its program, in bytes, as it allocated
/// or mapped it: to check against what the compiler planned (the manifest's
/// `arena_bytes`, `persistent_bytes` and `weight_bytes`).
struct SessionMemory {
  /// Working memory, stash regions included (allocated on the device).
  int64_t arena = 0;
  /// Trained parameters, gradient sums and optimizer state (allocated on
  /// the device).
  int64_t persistent = 0;
  /// The weight file: mapped on the host, copied to a GPU's memory.
  int64_t weights = 0;
  /// A GPU's buffers for the ports of one batch block (0 on the host).
  int64_t ports = 0;
  /// The bundle's packed-weight file: constant weights already in the CPU
  /// kernels' layouts, mapped on the host (0 when the bundle has none).
  int64_t packed = 0;
  /// Constant weights the CPU kernels packed themselves so far, into
  /// memory of their own (0 when the bundle stored every packing they
  /// needed).
  int64_t repacked = 0;
};

/// One step of the last run: from the program's cleave_rt_step call for it
/// to the next one (or the program's end), device work included. `start`
/// counts seconds from the beginning of Session::run.
struct StepTime {
  int32_t step;
  std::string node;
  double seconds;
  double start = 0;
};

/// One call of a program entry in the last run (a phase of a training
/// step on a microbatch, or the update: microbatch -1): from the call to
/// its device work done, `start` counting seconds from the beginning of
/// Session::run.
struct PhaseTime {
  std::string phase;
  int32_t microbatch = 0;
  double start = 0;
  double seconds = 0;
};

/// A verified bundle, loaded onto one device. Its working memory (the arena)
/// is allocated once, so runs of one Session are serialised.
class Session {
public:
  /// Verifies the bundle (format, ABI, the sha256 of every file) and loads
  /// its program and weights.
  static std::unique_ptr<Session> open(const std::string &bundleDir,
                                       const SessionOptions &options = {});
  ~Session();

  const std::vector<TensorInfo> &inputs() const;
  const std::vector<TensorInfo> &outputs() const;
  /// The device the session runs on ("cpu", "cuda:0").
  std::string deviceName() const;
  /// The instruction set the CPU kernels run with ("x86-64", "x86-64-v3",
  /// "x86-64-v4"; the baseline stands for v2 too), empty on a GPU.
  std::string kernelIsa() const;
  /// The number of devices of the bundle, and this session's place.
  int devices() const;
  DevicePlace place() const;
  /// Whether this device's program reads graph input `index`, and whether
  /// this device writes graph output `index` (the tp-0 device of the stage
  /// computing it, so that each output is written once).
  bool readsInput(std::size_t index) const;
  bool writesOutput(std::size_t index) const;

  /// Runs the model on one value of every input this device reads (others
  /// may be given, and are ignored); returns the outputs in the manifest's
  /// order, those this device does not compute left empty.
  std::vector<Tensor> run(const std::map<std::string, Tensor> &feeds);

  /// The parameters a training step updates (a bundle compiled with
  /// `--train`), as they are now in this device's memory, by name; empty
  /// for a bundle that trains nothing.
  std::map<std::string, Tensor> trainedParameters() const;
  /// The named state `name` of this device's program (its manifest's
  /// `states`: optimizer state, sums, loss scaling) as it is now; none when
  /// the program has no state of that name.
  std::optional<Tensor> state(const std::string &name) const;

  /// The bundle's directory and its identity: the SHA-256 of its manifest
  /// (which holds the SHA-256 of every other file of the bundle).
  const std::string &bundleDirectory() const;
  std::string bundleDigest() const;
  /// The ONNX model the bundle was compiled from, as its manifest names it
  /// (the file name).
  std::string modelName() const;
  /// This device's persistent memory: its layout, a host copy of its bytes,
  /// and their replacement by bytes of the same layout (`bytes` long).
  PersistentLayout persistentLayout() const;
  std::vector<uint8_t> readPersistent() const;
  void writePersistent(const std::vector<uint8_t> &bytes);
  /// The learning rate of training step `step` (from 0) by the schedule the
  /// bundle records (`training` in its manifest); negative when it records
  /// none.
  double learningRate(int64_t step) const;

  /// The steps of the last run with their times (empty unless profiling).
  std::vector<StepTime> profile() const;
  /// The entry calls of the last run in order, with their times (empty
  /// unless profiling).
  std::vector<PhaseTime> phaseTimes() const;

  /// What this session allocated and mapped for its program.
  SessionMemory memory() const;

  /// Writes what the kernels packed while the session recorded it
  /// (SessionOptions::recordPackedWeights) to a new packed-weight file at
  /// `path`; false, writing nothing, when they packed nothing.
  bool writePackedWeights(const std::string &path) const;

private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// Every device of a bundle, each a Session on a thread of this process,
/// joined by an in-process job (runtime/comm/local), kept open from one run
/// to the next: how a program drives a bundle for several devices without
/// MPI (cleave.Session and cleave.Trainer in Python, `cleave train`). For a
/// one-device bundle it is that device's Session, run on the caller's
/// thread.
class SessionGroup {
public:
  /// Opens every rank's Session. `options.numThreads` is per rank (0: the
  /// cores divided among the ranks); `options.communicator` must be unset.
  static std::unique_ptr<SessionGroup> open(const std::string &bundleDir,
                                            const SessionOptions &options = {});
  ~SessionGroup();

  int size() const;
  /// Rank `rank`'s session. Run it only through run().
  Session &rank(int rank);
  const Session &rank(int rank) const;
  /// Rank 0's session: the bundle's ports, name and device kind.
  const Session &primary() const { return rank(0); }

  /// Runs every rank on `feeds` (each takes its share); returns every
  /// graph output, each from the device that writes it. A rank's failure
  /// fails the run, naming the rank; the group cannot run again after it.
  std::vector<Tensor> run(const std::map<std::string, Tensor> &feeds);

  /// The trained parameters, by name, from the devices that hold them
  /// (one of each data-parallel group, which all hold the same values);
  /// a parameter split over tensor-parallel devices is gathered whole.
  std::map<std::string, Tensor> trainedParameters() const;

  /// The ranks whose persistent memory is the training state: the first
  /// data-parallel replica's (the others hold copies of it).
  std::vector<int> stateRanks() const;

private:
  struct Impl;
  explicit SessionGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// What packBundleWeights() stored.
struct PackedBundle {
  /// The packed-weight files written (one per weight file that has
  /// packings; data-parallel replicas share their device's), and their
  /// bytes in all.
  int files = 0;
  int64_t bytes = 0;
};

/// Runs every rank of the CPU inference bundle at `bundleDir` once, on
/// zeros, and stores the constant weights its kernels packed in a
/// packed-weight file per weight file (`weights/rank_N.packed` beside
/// `weights/rank_N.bin`), which the manifest's ranks then name and hashes, so
/// that sessions on a CPU of the same instructions map them instead of packing
/// again (docs/bundle-format.md). Returns false with `error` set when the
/// bundle does not open or run here (built for instructions this CPU lacks,
/// say); callers compiled without exceptions can call it.
bool packBundleWeights(const std::string &bundleDir, PackedBundle &result,
                       std::string &error);

} // namespace cleave::rt

#endif // CLEAVE_RT_RUNTIME_H
