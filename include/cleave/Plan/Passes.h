//===- Passes.h - planner passes --------------------------------*- C++ -*-===//
//
// Declares `cleave-plan`, which runs the planner and records its decision on
// the IR.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_PLAN_PASSES_H
#define CLEAVE_PLAN_PASSES_H

#include "cleave/Plan/Plan.h"

#include "mlir/Pass/Pass.h"

#include <string>

namespace cleave {

#define GEN_PASS_DECL
#include "cleave/Plan/Passes.h.inc"

/// `cleave-plan` with `options` for its pass options and `plan` for its plan
/// options (the C++-only fields of `plan`, such as `progress`, included).
/// When `planJSON` is not null the pass also stores the plan's JSON there.
std::unique_ptr<mlir::Pass> createPlanPass(const PlanPassOptions &options,
                                           const PlanOptions &plan,
                                           std::string *planJSON = nullptr);

#define GEN_PASS_REGISTRATION
#include "cleave/Plan/Passes.h.inc"

} // namespace cleave

#endif // CLEAVE_PLAN_PASSES_H
