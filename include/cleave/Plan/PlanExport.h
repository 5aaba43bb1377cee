//===- PlanExport.h - plans for people and tools ----------------*- C++ -*-===//
//
// A plan leaves the planner in three forms: plan.json (the schema is
// docs/plan-format.md), an aligned text summary for terminals, and a Chrome
// trace (the JSON Trace Event Format that Perfetto and chrome://tracing
// load) of the predicted schedule of one step.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_PLAN_PLANEXPORT_H
#define CLEAVE_PLAN_PLANEXPORT_H

#include "cleave/Plan/Plan.h"

#include "llvm/Support/raw_ostream.h"

namespace cleave {

/// The version of the plan.json schema `writePlanJSON` writes.
inline constexpr int kPlanFormatVersion = 1;

/// Writes `plan` as plan.json.
void writePlanJSON(const Plan &plan, llvm::raw_ostream &os);

/// Writes the plan.json of a function that computes nothing (its results
/// are inputs or parameters): one device, no stages, and a note that says
/// why.
void writeTrivialPlanJSON(llvm::StringRef functionName,
                          llvm::StringRef targetName, llvm::raw_ostream &os);

/// Writes a summary of `plan` for terminals: the mesh and predictions, a
/// table of stages, the communication per microbatch, the layout of the
/// weights of each distinct segment, and the alternatives.
void printPlanTable(const Plan &plan, llvm::raw_ostream &os);

/// Writes the predicted schedule of one step as a Chrome trace: a process
/// per device of replica 0 (the other replicas run the same schedule), with
/// one track for compute and one for communication.
void writePlanTrace(const Plan &plan, llvm::raw_ostream &os);

} // namespace cleave

#endif // CLEAVE_PLAN_PLANEXPORT_H
