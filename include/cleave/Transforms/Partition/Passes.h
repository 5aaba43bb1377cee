//===- Passes.h - applying a partition plan ---------------------*- C++ -*-===//
//
// Declares the passes of lib/Transforms/Partition and the pipeline that
// chains them.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSFORMS_PARTITION_PASSES_H
#define CLEAVE_TRANSFORMS_PARTITION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace cleave {

#define GEN_PASS_DECL
#include "cleave/Transforms/Partition/Passes.h.inc"

/// Splits every fused projection under `root` into one per piece, as
/// `cleave-split-projections` does.
void splitProjections(mlir::Operation *root);

/// Adds the passes of `cleave-partition` to `pm` (a module pass manager).
void buildPartitionPipeline(mlir::OpPassManager &pm,
                            const PartitionPassOptions &options);

#define GEN_PASS_REGISTRATION
#include "cleave/Transforms/Partition/Passes.h.inc"

} // namespace cleave

#endif // CLEAVE_TRANSFORMS_PARTITION_PASSES_H
