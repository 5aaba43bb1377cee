//===- Passes.h - planner passes --------------------------------*- C++ -*-===//
//
// Declares `cleave-plan`, which runs the planner and records its decision on
// the IR.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_PLAN_PASSES_H
#define CLEAVE_PLAN_PASSES_H

#include "mlir/Pass/Pass.h"

namespace cleave {

#define GEN_PASS_DECL
#include "cleave/Plan/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cleave/Plan/Passes.h.inc"

} // namespace cleave

#endif // CLEAVE_PLAN_PASSES_H
