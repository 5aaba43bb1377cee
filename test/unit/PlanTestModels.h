//===- PlanTestModels.h - small models for the planner tests ----*- C++ -*-===//
//
// Writers of cleave IR for the models the planner tests plan (a pre-norm
// transformer, a stack of MLP blocks, a single-head attention stack), a
// context with every interface the planner needs, and targets sized for
// the tests.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TEST_UNIT_PLANTESTMODELS_H
#define CLEAVE_TEST_UNIT_PLANTESTMODELS_H

#include "cleave/Analysis/Cost/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <memory>
#include <string>

namespace cleave::test {

/// The shape of a test model.
struct ModelShape {
  int64_t layers = 2;
  int64_t batch = 1;
  int64_t seq = 16;
  int64_t hidden = 64;
  int64_t heads = 4;
  /// Element type of activations and weights ("f32", "f16", "bf16").
  std::string dtype = "f32";
  /// Prefix of every weight name, so that two models can differ only there.
  std::string weightPrefix = "";
};

/// A pre-norm GPT decoder stack on hidden states `%x : B x S x H`: per layer
/// layer_norm, separate Q/K/V projections (the form
/// `cleave-split-projections` gives a fused QKV), attention split into
/// heads with a causal mask, the output projection, a residual add, then a
/// layer_norm, a GELU MLP of width 4H and a residual add; a final layer_norm.
std::string writeTransformer(const ModelShape &shape);

/// Per layer: `x + W2 gelu(W1 layer_norm(x) + b1) + b2`, width 4H.
std::string writeMLPStack(const ModelShape &shape);

/// Per layer: single-head attention without normalisation:
/// `x + softmax((x Wq)(x Wk)^T) (x Wv) Wo`.
std::string writeAttentionStack(const ModelShape &shape);

/// A context with the cleave dialect and every external model planning uses
/// (cost, sharding).
std::unique_ptr<mlir::MLIRContext> makePlanContext();

/// Parses `source`; null (with the diagnostics on stderr) when it does not
/// parse or verify.
mlir::OwningOpRef<mlir::ModuleOp> parsePlanModule(mlir::MLIRContext &context,
                                                  const std::string &source);

/// The `h100-sxm` preset from the source tree, resized to `devices` devices
/// of `devicesPerNode` to a node.
TargetDescription loadTestTarget(int64_t devices, int64_t devicesPerNode = 8,
                                 const std::string &name = "h100-sxm");

} // namespace cleave::test

#endif // CLEAVE_TEST_UNIT_PLANTESTMODELS_H
