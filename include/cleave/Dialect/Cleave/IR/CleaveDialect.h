//===- CleaveDialect.h - cleave dialect -------------------------*- C++ -*-===//
//
// Declares the cleave dialect class.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVEDIALECT_H
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVEDIALECT_H

#include "mlir/IR/Dialect.h"

#include "cleave/Dialect/Cleave/IR/CleaveOpsDialect.h.inc"

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVEDIALECT_H
