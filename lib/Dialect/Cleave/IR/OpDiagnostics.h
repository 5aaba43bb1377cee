//===- OpDiagnostics.h - shared verifier message helpers --------*- C++ -*-===//
//
// Helpers for the type-inference and verifier messages of the op families,
// private to the dialect library.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_DIALECT_CLEAVE_IR_OPDIAGNOSTICS_H
#define CLEAVE_LIB_DIALECT_CLEAVE_IR_OPDIAGNOSTICS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace cleave {
namespace detail {

/// Emits `'<op>' op <args...>` at `loc`, the form Operation::emitOpError
/// gives, for errors found where only a location is at hand.
template <typename OpT, typename... Args>
mlir::LogicalResult emitOpErrorAt(std::optional<mlir::Location> loc,
                                  Args &&...args) {
  return mlir::emitOptionalError(loc, "'", OpT::getOperationName(), "' op ",
                                 std::forward<Args>(args)...);
}

/// Formats one dimension, `?` when dynamic.
inline std::string formatDim(int64_t dim) {
  return mlir::ShapedType::isDynamic(dim) ? "?" : std::to_string(dim);
}

/// Formats a shape as `[2, ?, 4]`.
inline std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t dim) { os << formatDim(dim); });
  os << ']';
  return text;
}

} // namespace detail
} // namespace cleave

#endif // CLEAVE_LIB_DIALECT_CLEAVE_IR_OPDIAGNOSTICS_H
