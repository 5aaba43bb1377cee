//===- KernelSignatures.h - typed builders of library kernel calls -*- C++
//-*-===//
//
// The compiler side of the kernel contract of
// runtime/include/cleave/rt/{KernelList,CommList}.def. For every signature
// there is a builder, `cleave::kernels::<Signature>`, whose fields are the
// signature's: an input is the op's operand (`mlir::Value`, null for an
// absent optional input; a vector for a variadic one), an integer or float
// attribute a std::optional that must be set, a list a vector. Required
// outputs are the op's results in order, less those an optional output
// names (its field: the result, null when the op has none), and a count is
// the length of the lists that name it, so neither is a field. For every
// kernel there is a handle, `cleave::kernels::<name>`, that knows its
// signature, so that
//
//   kernels::Gemm args;
//   args.a = gemm.getA(); ...
//   return kernels::buildCall(op, kernels::gemm, args, call);
//
// fills a KernelCall in the order the runtime's views (rt/KernelArgs.h) read
// it back, and a builder of another signature does not compile.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_CONVERSION_KERNELSIGNATURES_H
#define CLEAVE_CONVERSION_KERNELSIGNATURES_H

#include "cleave/Conversion/DeviceProgram.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace cleave::kernels {

/// A library or communication kernel that takes `Signature`.
template <typename Signature> struct Kernel { const char *name; };

/// Appends a builder's fields to a KernelCall in signature order and checks
/// them against the op: every input an operand of it, its result count the
/// signature's outputs, every scalar set, every list of its length. A
/// mismatch is a fault of the op's kernel model, reported on the op.
class CallPacker {
public:
  CallPacker(mlir::Operation *op, KernelCall &call) : op(op), call(call) {}

  void input(mlir::Value value, const char *field);
  void optionalInput(mlir::Value value);
  void variadicInput(llvm::ArrayRef<mlir::Value> values, const char *field);
  void output();
  void optionalOutput(mlir::Value result);
  void variadicOutput();
  void integer(const std::optional<int64_t> &value, const char *field);
  /// Reserves the count's place; the first list naming it fills it in.
  size_t count();
  void intList(size_t countSlot, llvm::ArrayRef<int64_t> values, int64_t factor,
               const char *field);
  void intRankList(llvm::ArrayRef<int64_t> values, mlir::Value tensor,
                   int64_t factor, const char *field);
  void floating(const std::optional<double> &value, const char *field);
  void floatRankList(llvm::ArrayRef<double> values, mlir::Value tensor,
                     int64_t factor, const char *field);

  /// Fails, with the first mismatch as the op's error, unless every field
  /// fitted.
  mlir::LogicalResult finish();

private:
  void fail(const llvm::Twine &message);
  std::optional<int64_t> getRank(mlir::Value tensor, const char *field);

  mlir::Operation *op;
  KernelCall &call;
  unsigned outputs = 0;
  bool variadicOutputs = false;
  /// The results that optional outputs name, -1 for an absent one.
  llvm::SmallVector<int, 1> optionalResults;
  llvm::SmallVector<size_t, 2> filledCounts;
  std::string error;
};

#define CLEAVE_BUILDER_BEGIN(signature) struct signature {
#define CLEAVE_BUILDER_END(signature)                                          \
  }                                                                            \
  ;
#define CLEAVE_BUILDER_INPUT(name) mlir::Value name;
#define CLEAVE_BUILDER_VARIADIC_INPUT(name) llvm::SmallVector<mlir::Value> name;
#define CLEAVE_BUILDER_NONE(name)
#define CLEAVE_BUILDER_INT(name) std::optional<int64_t> name;
#define CLEAVE_BUILDER_INT_LIST(name, ...) llvm::SmallVector<int64_t> name;
#define CLEAVE_BUILDER_FLOAT(name) std::optional<double> name;
#define CLEAVE_BUILDER_FLOAT_LIST(name, ...) llvm::SmallVector<double> name;

#define CLEAVE_SIGNATURE_BEGIN CLEAVE_BUILDER_BEGIN
#define CLEAVE_SIGNATURE_END CLEAVE_BUILDER_END
#define CLEAVE_INPUT CLEAVE_BUILDER_INPUT
#define CLEAVE_OPTIONAL_INPUT CLEAVE_BUILDER_INPUT
#define CLEAVE_VARIADIC_INPUT CLEAVE_BUILDER_VARIADIC_INPUT
#define CLEAVE_OUTPUT CLEAVE_BUILDER_NONE
#define CLEAVE_OPTIONAL_OUTPUT CLEAVE_BUILDER_INPUT
#define CLEAVE_VARIADIC_OUTPUT CLEAVE_BUILDER_NONE
#define CLEAVE_INT CLEAVE_BUILDER_INT
#define CLEAVE_INT_COUNT CLEAVE_BUILDER_NONE
#define CLEAVE_INT_LIST CLEAVE_BUILDER_INT_LIST
#define CLEAVE_INT_RANK_LIST CLEAVE_BUILDER_INT_LIST
#define CLEAVE_FLOAT CLEAVE_BUILDER_FLOAT
#define CLEAVE_FLOAT_RANK_LIST CLEAVE_BUILDER_FLOAT_LIST
#define CLEAVE_KERNEL(name, signature)                                         \
  inline constexpr Kernel<signature> name{#name};
#include "cleave/rt/KernelList.def"
#define CLEAVE_SIGNATURE_BEGIN CLEAVE_BUILDER_BEGIN
#define CLEAVE_SIGNATURE_END CLEAVE_BUILDER_END
#define CLEAVE_INPUT CLEAVE_BUILDER_INPUT
#define CLEAVE_OUTPUT CLEAVE_BUILDER_NONE
#define CLEAVE_INT CLEAVE_BUILDER_INT
#define CLEAVE_COMM(name, signature)                                           \
  inline constexpr Kernel<signature> name{#name};
#include "cleave/rt/CommList.def"

// pack(op, builder, call): the fields in signature order.
#define CLEAVE_PACK_BEGIN(signature)                                           \
  inline void pack(const signature &args, CallPacker &packer) {
#define CLEAVE_PACK_END(signature) }
#define CLEAVE_PACK_INPUT(name) packer.input(args.name, #name);
#define CLEAVE_PACK_OPTIONAL_INPUT(name) packer.optionalInput(args.name);
#define CLEAVE_PACK_VARIADIC_INPUT(name) packer.variadicInput(args.name, #name);
#define CLEAVE_PACK_OUTPUT(name) packer.output();
#define CLEAVE_PACK_OPTIONAL_OUTPUT(name) packer.optionalOutput(args.name);
#define CLEAVE_PACK_VARIADIC_OUTPUT(name) packer.variadicOutput();
#define CLEAVE_PACK_INT(name) packer.integer(args.name, #name);
#define CLEAVE_PACK_INT_COUNT(name) size_t name##Slot = packer.count();
#define CLEAVE_PACK_INT_LIST(name, count, factor)                              \
  packer.intList(count##Slot, args.name, factor, #name);
#define CLEAVE_PACK_INT_RANK_LIST(name, tensor, factor)                        \
  packer.intRankList(args.name, args.tensor, factor, #name);
#define CLEAVE_PACK_FLOAT(name) packer.floating(args.name, #name);
#define CLEAVE_PACK_FLOAT_RANK_LIST(name, tensor, factor)                      \
  packer.floatRankList(args.name, args.tensor, factor, #name);

#define CLEAVE_SIGNATURE_BEGIN CLEAVE_PACK_BEGIN
#define CLEAVE_SIGNATURE_END CLEAVE_PACK_END
#define CLEAVE_INPUT CLEAVE_PACK_INPUT
#define CLEAVE_OPTIONAL_INPUT CLEAVE_PACK_OPTIONAL_INPUT
#define CLEAVE_VARIADIC_INPUT CLEAVE_PACK_VARIADIC_INPUT
#define CLEAVE_OUTPUT CLEAVE_PACK_OUTPUT
#define CLEAVE_OPTIONAL_OUTPUT CLEAVE_PACK_OPTIONAL_OUTPUT
#define CLEAVE_VARIADIC_OUTPUT CLEAVE_PACK_VARIADIC_OUTPUT
#define CLEAVE_INT CLEAVE_PACK_INT
#define CLEAVE_INT_COUNT CLEAVE_PACK_INT_COUNT
#define CLEAVE_INT_LIST CLEAVE_PACK_INT_LIST
#define CLEAVE_INT_RANK_LIST CLEAVE_PACK_INT_RANK_LIST
#define CLEAVE_FLOAT CLEAVE_PACK_FLOAT
#define CLEAVE_FLOAT_RANK_LIST CLEAVE_PACK_FLOAT_RANK_LIST
#include "cleave/rt/KernelList.def"
#define CLEAVE_SIGNATURE_BEGIN CLEAVE_PACK_BEGIN
#define CLEAVE_SIGNATURE_END CLEAVE_PACK_END
#define CLEAVE_INPUT CLEAVE_PACK_INPUT
#define CLEAVE_OUTPUT CLEAVE_PACK_OUTPUT
#define CLEAVE_INT CLEAVE_PACK_INT
#include "cleave/rt/CommList.def"

#undef CLEAVE_BUILDER_BEGIN
#undef CLEAVE_BUILDER_END
#undef CLEAVE_BUILDER_INPUT
#undef CLEAVE_BUILDER_VARIADIC_INPUT
#undef CLEAVE_BUILDER_NONE
#undef CLEAVE_BUILDER_INT
#undef CLEAVE_BUILDER_INT_LIST
#undef CLEAVE_BUILDER_FLOAT
#undef CLEAVE_BUILDER_FLOAT_LIST
#undef CLEAVE_PACK_BEGIN
#undef CLEAVE_PACK_END
#undef CLEAVE_PACK_INPUT
#undef CLEAVE_PACK_OPTIONAL_INPUT
#undef CLEAVE_PACK_VARIADIC_INPUT
#undef CLEAVE_PACK_OUTPUT
#undef CLEAVE_PACK_OPTIONAL_OUTPUT
#undef CLEAVE_PACK_VARIADIC_OUTPUT
#undef CLEAVE_PACK_INT
#undef CLEAVE_PACK_INT_COUNT
#undef CLEAVE_PACK_INT_LIST
#undef CLEAVE_PACK_INT_RANK_LIST
#undef CLEAVE_PACK_FLOAT
#undef CLEAVE_PACK_FLOAT_RANK_LIST

/// Why `call` (of a program, its inputs and outputs tensor numbers) does
/// not fit the signature of its kernel: an unknown kernel, a required input
/// absent, too few or too many tensors, ints or floats (count and rank
/// lists sized from the call's counts and from `rankOf` a tensor). Empty
/// when it fits.
std::string checkCall(const KernelCall &call,
                      llvm::function_ref<int64_t(int tensor)> rankOf);

/// Fills `call` with `kernel` applied to `args` on `op`'s results.
template <typename Signature>
mlir::LogicalResult buildCall(mlir::Operation *op, Kernel<Signature> kernel,
                              const Signature &args, KernelCall &call) {
  call.kernel = kernel.name;
  call.operands.clear();
  call.ints.clear();
  call.floats.clear();
  CallPacker packer(op, call);
  pack(args, packer);
  return packer.finish();
}

} // namespace cleave::kernels

#endif // CLEAVE_CONVERSION_KERNELSIGNATURES_H
