//===- CleaveDialect.h - cleave dialect -------------------------*- C++ -*-===//
//
// Declares the cleave dialect class.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVEDIALECT_H
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVEDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
// The helpers of the dialect's discardable attributes read and write them
// on operations.
#include "mlir/IR/Operation.h"

#include "cleave/Dialect/Cleave/IR/CleaveOpsDialect.h.inc"

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVEDIALECT_H
