//===- Passes.h - cleave dialect passes -------------------------*- C++ -*-===//

#ifndef CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PASSES_H
#define CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace cleave {

#define GEN_PASS_DECL
#include "cleave/Dialect/Cleave/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cleave/Dialect/Cleave/Transforms/Passes.h.inc"

} // namespace cleave

#endif // CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PASSES_H
