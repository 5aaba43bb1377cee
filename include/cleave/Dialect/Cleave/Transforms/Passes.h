//===- Passes.h - cleave dialect passes -------------------------*- C++ -*-===//
//
// Declares the cleave dialect passes and the pattern sets behind them.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PASSES_H
#define CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PASSES_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace cleave {

#define GEN_PASS_DECL
#include "cleave/Dialect/Cleave/Transforms/Passes.h.inc"

/// Adds the patterns of `cleave-fuse-patterns` (GELU and LayerNorm fusion)
/// to `patterns`, for pipelines that run them with other patterns.
void populateFusePatterns(mlir::RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "cleave/Dialect/Cleave/Transforms/Passes.h.inc"

} // namespace cleave

#endif // CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PASSES_H
