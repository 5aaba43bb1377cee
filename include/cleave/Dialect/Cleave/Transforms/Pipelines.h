//===- Pipelines.h - registered cleave pass pipelines -----------*- C++ -*-===//
//
// Pass pipelines built in C++ and registered once, so that the `cleave` CLI,
// cleave-opt, lit tests and the Python package run exactly the same passes.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PIPELINES_H
#define CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace cleave {

/// `cleave-simplify`: what runs on freshly imported IR before analysis —
/// canonicalization (which finishes folding shape computations), fusion of
/// the GELU, LayerNorm and RMSNorm decompositions that exporters write, and
/// CSE.
void buildSimplifyPipeline(mlir::OpPassManager &pm);

/// Registers the pipelines above with the global pass registry.
void registerCleavePipelines();

} // namespace cleave

#endif // CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PIPELINES_H
