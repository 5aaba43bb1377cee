//===- DeviceProgram.h - the lowered program of one device -------*- C++
//-*-===//
//
// The form a cleave function takes just before code generation: entry
// points (one per phase: forward today; backward, update and decode steps
// later), each a sequence of steps (fused elementwise loops and
// library-kernel calls) over tensors whose bytes live at fixed offsets of one
// arena, of persistent memory that outlives a call, of the weight file, or
// in the caller's input and output buffers. Every entry shares one memory
// plan, which is static: every offset, the arena's peak size and the
// persistent bytes are known at compile time. The C++ and the CUDA emitters
// (lib/Target) both print this form.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_CONVERSION_DEVICEPROGRAM_H
#define CLEAVE_CONVERSION_DEVICEPROGRAM_H

#include "cleave/rt/Phases.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Error;
class SourceMgr;
} // namespace llvm

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace cleave {

/// Element types, numbered as the kernel ABI numbers them
/// (runtime/include/cleave/rt/DTypeList.def).
enum class DType : int32_t {
  Invalid = 0,
#define CLEAVE_DTYPE(suffix, name, code, bytes, numpy) name = code,
#include "cleave/rt/DTypeList.def"
};

/// The DType of an MLIR element type, or Invalid.
DType getDType(mlir::Type elementType);
/// Bytes per element.
int64_t getDTypeSize(DType type);
/// NumPy's name ("float32", "int64", "bool", ...).
llvm::StringRef getDTypeName(DType type);
/// The C enumerator of Kernels.h ("CLEAVE_F32", ...).
llvm::StringRef getDTypeEnumerator(DType type);

/// Where a tensor's bytes live. The arena is scratch that one call of an
/// entry may reuse freely, except for stash regions; persistent memory is
/// allocated (zeroed) once per session and kept across calls and entries:
/// writable weights, and later gradients, optimizer state and KV caches.
enum class MemorySpace { Arena, Weights, Input, Output, Persistent };

/// One tensor of the program. `offset` is a byte offset in the arena, the
/// weight file or persistent memory, or the index of the graph input or
/// output.
struct ProgramTensor {
  std::string name; ///< The SSA name it had in the IR (for comments).
  DType dtype = DType::Invalid;
  llvm::SmallVector<int64_t, 4> shape;
  MemorySpace space = MemorySpace::Arena;
  int64_t offset = 0;
  /// The stash region it lives in (an arena tensor), or -1: then `offset`
  /// is the region's slot 0 and slot `k` is `stride` bytes further.
  int stash = -1;

  int64_t getNumElements() const;
  int64_t getBytes() const { return getNumElements() * getDTypeSize(dtype); }
};

/// One node of a fused loop's scalar expression.
struct ScalarNode {
  enum class Kind { Load, Literal, Call, Cast };
  Kind kind = Kind::Literal;
  DType dtype = DType::Invalid; ///< The element type of its value.
  int loadIndex = -1;           ///< Load: index into FusedLoop::loads.
  double literal = 0;           ///< Literal.
  std::string function;         ///< Call: a function of rt/Scalar.h.
  llvm::SmallVector<int, 3> args;
};

/// Builds scalar expressions; the KernelInterface models call it.
class ScalarExprBuilder {
public:
  explicit ScalarExprBuilder(std::vector<ScalarNode> &nodes) : nodes(nodes) {}
  /// `function(args...)` with a result of `elementType`.
  int call(llvm::StringRef function, llvm::ArrayRef<int> args,
           mlir::Type elementType);
  int literal(double value, mlir::Type elementType);
  int cast(int arg, mlir::Type elementType);

private:
  std::vector<ScalarNode> &nodes;
};

/// A load of a tensor inside a fused loop, broadcast to the loop's shape.
struct FusedLoad {
  int tensor;
};

/// How a generated loop reduces: `combine` (a function of rt/Scalar.h, or
/// "add"/"mul") folds `root`'s values (squared first when `square`) into an
/// accumulator that starts at `init`, and the result is divided by the
/// number of reduced elements (`mean`) or square-rooted (`sqrt`).
struct ScalarReduction {
  std::string combine;
  double init = 0;
  bool square = false;
  bool mean = false;
  bool sqrt = false;
  /// The reduced dimensions of the input, sorted, non-negative.
  llvm::SmallVector<int64_t, 4> axes;
};

/// A generated loop that evaluates `root` at every element of its
/// iteration space: the output's shape, or for a reduction the shape of the
/// reduced input, whose values are folded per output element. Loads are
/// broadcast to the iteration space.
struct FusedLoop {
  int output;
  std::vector<FusedLoad> loads;
  std::vector<ScalarNode> nodes;
  int root = -1;
  llvm::SmallVector<int64_t, 4> iterationShape;
  std::optional<ScalarReduction> reduction;
  /// 0, or the channel block (8, 16) of a loop over a rank-4 output in
  /// nChw<block>c: the output and the loads of its shape lie blocked, and
  /// the other loads lie in their own row-major order, broadcast by
  /// position (a per-channel scale, a scalar).
  int64_t block = 0;

  /// The node that loads `tensor`, added with its load on first use;
  /// `loadOfTensor` maps each tensor loaded so far to its node.
  int getOrAddLoad(int tensor, DType dtype,
                   llvm::DenseMap<int, int> &loadOfTensor);
};

/// A call of a library kernel (KernelList.def) on program tensors. An
/// absent optional input is -1.
struct KernelCall {
  std::string kernel;
  /// Set by ops with optional operands: the operand index of each kernel
  /// input, -1 for an absent one. Empty means "every operand, in order".
  llvm::SmallVector<int, 7> operands;
  /// Set by ops with optional results: the result index of each kernel
  /// output. Empty means "every result, in order".
  llvm::SmallVector<int, 3> results;
  llvm::SmallVector<int, 4> inputs;
  llvm::SmallVector<int, 2> outputs;
  llvm::SmallVector<int64_t, 8> ints;
  llvm::SmallVector<double, 4> floats;
};

/// One step of the program, with the IR it came from.
struct ProgramStep {
  std::optional<FusedLoop> loop;
  std::optional<KernelCall> call;
  std::string node;    ///< The ONNX node name (from the location), or "".
  std::string summary; ///< The ops it implements, e.g. "add + gelu".
};

/// Bytes of the weight file: a slice of a model file, or constant data.
/// A window of a weight (`cleave.weight_slice`) reads the box of extent
/// `window` at `starts` of the row-major tensor `shape` stored at
/// `fileOffset`; when `splitDim` is set, device `t` of the tensor-parallel
/// group reads that box moved `t` extents along `splitDim`.
struct WeightEntry {
  std::string name;
  std::string file; ///< Empty for constant data.
  int64_t fileOffset = 0;
  int64_t bytes = 0;
  llvm::SmallVector<int64_t, 4> shape, starts, window;
  int64_t splitDim = -1;
  int64_t elementBytes = 0;
  std::vector<char> data; ///< Constant data, when `file` is empty.
  int64_t offset = 0;     ///< Offset in the weight file.
  /// A weight an entry may write (a trainable parameter): it lives in
  /// persistent memory at `persistentOffset`, which the runtime fills from
  /// the weight file's bytes at `offset` when a session starts.
  bool writable = false;
  int64_t persistentOffset = -1;
};

/// A named persistent state of a program and its tensor; `splitDim` is the
/// dimension along which each tensor-parallel device holds one block of
/// it, or -1 when every device holds it whole.
struct ProgramState {
  std::string name;
  int tensor = -1;
  int64_t splitDim = -1;
};

/// A region of the arena that outlives the call that writes it, so that a
/// later entry reads it (activations a backward phase needs, stashed by the
/// forward): one slot of `stride` bytes per microbatch in flight, slot
/// `microbatch % slots` for a call on that microbatch. No planner reuse
/// touches it.
struct StashRegion {
  int tensor = -1; ///< The tensor stashed (its slot 0).
  int64_t offset = 0;
  int64_t stride = 0;
  int64_t slots = 1;
};

/// One entry point of a program: the steps one phase runs, and the graph
/// inputs and outputs it reads and writes (tensors, in port order).
struct ProgramEntry {
  std::string name;  ///< A C identifier, unique in the program.
  std::string phase; ///< The schedule phase it runs ("forward", ...).
  /// The model chunk it runs (the interleaved schedule's; 0 otherwise). A
  /// training step's update runs every chunk's and is chunk 0's.
  int64_t chunk = 0;
  std::vector<ProgramStep> steps;
  std::vector<int> inputs;  ///< Tensor of each graph input, in order.
  std::vector<int> outputs; ///< Tensor of each graph output, in order.
  std::vector<std::string> inputNames, outputNames;
  int64_t inPlaceSteps = 0;
};

/// The graph inputs and outputs of a program, in port order, with their
/// names: every entry's ports are among them.
struct ProgramPorts {
  std::vector<int> inputs, outputs;
  std::vector<std::string> inputNames, outputNames;
};

struct DeviceProgram {
  std::vector<ProgramTensor> tensors;
  /// The entry points, in a fixed order; each runs a distinct (phase,
  /// chunk).
  std::vector<ProgramEntry> entries;
  std::vector<WeightEntry> weights;
  std::vector<StashRegion> stashes;
  /// The persistent states (`cleave.state`: optimizer state, a training
  /// step's gradient and loss sums) by name, each with its tensor. Known
  /// where the program was lowered; the text form does not carry it.
  std::vector<ProgramState> states;
  int64_t arenaBytes = 0;
  int64_t weightBytes = 0;
  int64_t persistentBytes = 0;
  /// The arena without reuse (every intermediate its own bytes), to report
  /// what the plan saves.
  int64_t unplannedArenaBytes = 0;

  /// The entry that runs `phase` on chunk `chunk`, or null.
  const ProgramEntry *getEntry(llvm::StringRef phase, int64_t chunk = 0) const;
  /// The forward entry, which every program has.
  const ProgramEntry &getForward() const {
    return *getEntry(rt::phaseName(rt::Phase::Forward));
  }
  int64_t getNumSteps() const;
  /// The union of the entries' ports, ordered by port index.
  ProgramPorts getPorts() const;
  /// Steps that overwrite an operand in place, over all entries.
  int64_t getInPlaceSteps() const;
};

/// Options of the lowering.
struct DeviceProgramOptions {
  /// Alignment of every buffer in the arena and the weight file.
  int64_t alignment = 64;
  /// Fuse elementwise chains into loops (off: one loop per op).
  bool fuseElementwise = true;
  /// Let an elementwise loop write over an operand that dies there.
  bool inPlace = true;
  /// Let a convolution's or a float32 matrix product's kernel apply the
  /// bias add (products), residual add and activation that are its
  /// result's only uses, on the outputs as it writes them, instead of a loop
  /// reading them again (the CPU and the CUDA kernels both can).
  bool fuseKernelEpilogues = false;
  /// Channels per block (8 or 16) of the layout nChw<block>c in which an
  /// inference program keeps the activations between the convolutions
  /// that run on oneDNN (CLEAVE_CONV_BLOCKED_MACS), and between them and
  /// the elementwise loops that connect them (residual adds, activations),
  /// so that no convolution reorders them in or out; 0 keeps every tensor
  /// in NCHW. The CPU programs take oneDNN's block for their instruction
  /// set: 16 on x86-64-v4 (AVX-512), 8 below.
  int64_t convBlock = 0;
  /// Microbatches in flight on the device: the slots of each stash region.
  int64_t stashSlots = 1;
  /// Per model chunk (the interleaved schedule's), the slots of the stash
  /// regions its forward writes; a chunk past the end takes `stashSlots`.
  std::vector<int64_t> chunkStashSlots;
};

/// Lowers `func` (one device's function, static shapes) to its program,
/// with the function as the forward entry.
/// Emits a diagnostic on the op at fault and fails for unsupported ops or
/// dynamic shapes.
mlir::FailureOr<DeviceProgram>
buildDeviceProgram(mlir::func::FuncOp func,
                   const DeviceProgramOptions &options = {});

/// The function a module's program comes from: `name` when given, else the
/// public function (the module must hold exactly one).
mlir::FailureOr<mlir::func::FuncOp> getProgramFunction(mlir::ModuleOp module,
                                                       llvm::StringRef name);

/// Prints the program as text: the memory plan (tensors, weights, stash
/// regions) and every entry's steps, one line each. The form is complete:
/// `parseDeviceProgram` reads it back to the same program, so lit tests can
/// check a lowering and hand-written programs can be emitted.
void printDeviceProgram(const DeviceProgram &program, llvm::raw_ostream &os);

/// Reads the text `printDeviceProgram` writes. Reports a malformed line,
/// and a program that `verifyDeviceProgram` refuses, through `sourceMgr`'s
/// diagnostics (file, line and column) and fails.
mlir::FailureOr<DeviceProgram> parseDeviceProgram(llvm::SourceMgr &sourceMgr,
                                                  mlir::MLIRContext *context);

/// Checks what the emitters rely on: every tensor, load, node and stash
/// index in range, every buffer inside its memory (arena, weight file,
/// persistent memory), loops over their output's shape, kernel calls that
/// fit their kernels' signatures (`kernels::checkCall`), known scalar
/// functions, distinct entry names and (phase, chunk) pairs, and a forward
/// entry of chunk 0.
/// Returns the first violation, or success.
llvm::Error verifyDeviceProgram(const DeviceProgram &program);

/// The value a reduction combining with `combine` starts from ("add" 0,
/// "mul" 1, "max" -inf, "min" inf), which the text form leaves out; none for
/// other functions.
std::optional<double> getReductionIdentity(llvm::StringRef combine);

/// "arena", "weights", "input", "output" or "persistent".
llvm::StringRef getMemorySpaceName(MemorySpace space);

/// A number of the text form: the shortest of 15 or 17 significant digits
/// that reads back exactly, or `inf`, `-inf`, `nan`.
void printProgramNumber(double value, llvm::raw_ostream &os);

/// Adds what lowering a module to a device program reads: the dialects of
/// partitioned cleave IR and the kernel and cost interfaces of cleave ops.
/// Translations that lower register this, not every cleave dialect.
void registerDeviceProgramDialects(mlir::DialectRegistry &registry);

/// Registers `--print-device-program` (lower a module and print its
/// program) and `--parse-device-program` (read the text form, verify it and
/// print it again) with cleave-translate.
void registerDeviceProgramTranslation();

} // namespace cleave

#endif // CLEAVE_CONVERSION_DEVICEPROGRAM_H
