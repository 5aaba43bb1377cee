//===- EmitterBase.h - what the C++ and CUDA emitters share ------*- C++
//-*-===//

#ifndef CLEAVE_LIB_TARGET_EMITTERBASE_H
#define CLEAVE_LIB_TARGET_EMITTERBASE_H

#include "cleave/Target/ProgramEmitter.h"

#include "llvm/Support/raw_ostream.h"

namespace cleave::detail {

/// Prints a program; subclasses say how a fused loop runs and which kernel
/// library is called.
class EmitterBase {
public:
  EmitterBase(const DeviceProgram &program, const EmitOptions &options,
              llvm::raw_ostream &os)
      : program(program), options(options), os(os) {}
  virtual ~EmitterBase() = default;

  mlir::LogicalResult emit(std::string &error);

protected:
  /// Includes and definitions before any step (e.g. CUDA loop kernels).
  virtual void emitPrelude() = 0;
  /// The statements of one fused loop, step `step` of `entry`.
  virtual void emitLoop(const ProgramEntry &entry, int step,
                        const FusedLoop &loop) = 0;
  /// "cpu" or "cuda".
  virtual llvm::StringRef getKernelLibrary() const = 0;
  virtual llvm::StringRef getLanguageName() const = 0;
  /// Whether the language's library kernels take tensors of this element
  /// type. Every type can be stored: fused loops compute in float (or
  /// wider) and send/recv move bytes.
  virtual bool supports(DType type) const = 0;
  /// The C type the language stores a float16 or bfloat16 element as.
  virtual llvm::StringRef getHalfStorageType(DType type) const = 0;

  /// `(uint8_t *)` expression of a tensor's first byte, in the entry being
  /// emitted: a graph input or output is an element of that entry's
  /// pointer arrays, which hold its own ports in its order.
  std::string getPointer(int tensor) const;
  /// The position among `ports` (an entry's inputs or outputs) of graph
  /// port `portIndex`.
  size_t getPortPosition(llvm::ArrayRef<int> ports, int64_t portIndex) const;
  /// The C type a tensor's elements are stored as, and computed in.
  llvm::StringRef getStorageType(DType type) const;
  static llvm::StringRef getComputeType(DType type);
  /// The space an elementwise loop walks, in its output's memory order:
  /// the iteration shape, or (N, C/b, H, W, b) for a loop blocked by b.
  llvm::SmallVector<int64_t> getLoopSpace(const FusedLoop &loop) const;
  /// The strides of `load`'s tensor along each dimension of
  /// getLoopSpace(loop) (0 where it broadcasts).
  llvm::SmallVector<int64_t> getLoadStrides(const FusedLoop &loop,
                                            const FusedLoad &load) const;
  /// The index of the element of load `load`'s tensor that element `i` of
  /// the loop's output reads (broadcasting), as a C expression.
  std::string getLoadIndex(const FusedLoop &loop, const FusedLoad &load,
                           llvm::StringRef i) const;
  /// The scalar statements of an elementwise loop's body: one
  /// `const T vN = ...;` per node, loads through pointers named `x0`, `x1`,
  /// ... at index `i`, and then `y[i] = ...;`.
  void emitLoopBody(const FusedLoop &loop, llvm::StringRef indent);
  /// The body of a reduction loop for output element `o`: the input
  /// elements of `o` folded in an inner loop, then `y[o] = ...;`.
  void emitReductionBody(const FusedLoop &loop, llvm::StringRef o,
                         llvm::StringRef indent);
  /// `var` (an index over the row-major `sizes`) as the linear index of
  /// the element with per-dimension `strides` (0: broadcast).
  static std::string getLinearIndex(llvm::StringRef var,
                                    llvm::ArrayRef<int64_t> sizes,
                                    llvm::ArrayRef<int64_t> strides);
  static std::string getLiteral(double value, DType type);

  const DeviceProgram &program;
  /// The entry whose steps are being emitted.
  const ProgramEntry *currentEntry = nullptr;
  const EmitOptions &options;
  llvm::raw_ostream &os;

  /// An elementwise loop as rows: `outer` rows of `inner` elements, where
  /// every load walks a row contiguously or reads one element for all of
  /// it, so the inner loop has no index arithmetic and vectorises.
  struct RowNest {
    int64_t outer = 1, inner = 1;
    /// Per load: its row's first element as a function of the row `o`, and
    /// whether it walks the row (else it repeats one element).
    std::vector<std::string> rowStart;
    std::vector<bool> walksRow;
  };
  RowNest getRowNest(const FusedLoop &loop) const;
  /// The body of row `o` of `nest`: row starts, then the inner loop over
  /// `j` with the nodes and `y[o * inner + j] = ...;`.
  void emitRowBody(const FusedLoop &loop, const RowNest &nest,
                   llvm::StringRef indent);

private:
  /// The C type both languages store `type` as (not float16 or bfloat16).
  static llvm::StringRef getScalarType(DType type);
  /// Fails, saying which step, where a library kernel would take a tensor
  /// of a type the language's kernels do not compute in.
  mlir::LogicalResult checkKernelTypes(std::string &error) const;
  /// One `const T vN = ...;` per node; `loadAt(k)` is the subscript of
  /// load k.
  void emitNodes(const FusedLoop &loop, llvm::StringRef indent,
                 llvm::function_ref<std::string(int)> loadAt);
  /// `cleave_entry_<name>`, which runs the entry's steps.
  void emitEntry(const ProgramEntry &entry);
  /// The entry table, with each entry's port signatures, and
  /// `cleave_program_info`.
  void emitInfo();
  /// `static const CleavePortInfo <array>[]` for the ports, when any.
  void emitPorts(llvm::StringRef array, llvm::ArrayRef<int> tensors,
                 llvm::ArrayRef<std::string> names);
  void emitCall(const KernelCall &call);
  void emitTensor(int tensor);
};

} // namespace cleave::detail

#endif // CLEAVE_LIB_TARGET_EMITTERBASE_H
