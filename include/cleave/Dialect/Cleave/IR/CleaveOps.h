//===- CleaveOps.h - cleave operations --------------------------*- C++ -*-===//
//
// Declares the cleave ops and the shape rules they share with the importer.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVEOPS_H
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVEOPS_H

#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "cleave/Dialect/Cleave/IR/CleaveOps.h.inc"

namespace cleave {

/// Returns the ONNX (numpy) multidirectional broadcast of `lhs` and `rhs`, or
/// failure when they do not broadcast. Dynamic dimensions (ShapedType::kDynamic)
/// broadcast with anything and stay dynamic unless the other side is static
/// and larger than 1.
llvm::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// Resolves an ONNX Reshape target (`0` copies the input dimension unless
/// `allowZero`, one `-1` is inferred) against a static input shape. Fails
/// with a message in `error` when the target is malformed or the element
/// counts disagree.
llvm::FailureOr<llvm::SmallVector<int64_t>>
resolveReshape(llvm::ArrayRef<int64_t> inputShape,
               llvm::ArrayRef<int64_t> target, bool allowZero,
               std::string &error);

} // namespace cleave

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVEOPS_H
