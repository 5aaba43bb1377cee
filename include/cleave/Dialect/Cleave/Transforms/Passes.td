//===- Passes.td - cleave dialect passes -------------------*- tablegen -*-===//

#ifndef CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PASSES_TD
#define CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

#endif // CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PASSES_TD
