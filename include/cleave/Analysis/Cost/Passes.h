//===- Passes.h - cost model passes -----------------------------*- C++ -*-===//
//
// Declares the passes that expose the cost model on IR (reports for people
// and tests).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_ANALYSIS_COST_PASSES_H
#define CLEAVE_ANALYSIS_COST_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace cleave {

#define GEN_PASS_DECL
#include "cleave/Analysis/Cost/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cleave/Analysis/Cost/Passes.h.inc"

} // namespace cleave

#endif // CLEAVE_ANALYSIS_COST_PASSES_H
