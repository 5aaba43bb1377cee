//===- PlanReport.h - a plan as a self-contained HTML page ------*- C++ -*-===//
//
// The fourth form of a plan, for people deciding what to run where: one HTML
// file with its stylesheet, script and data inline (it opens from disk and
// fetches nothing) that shows the headline predictions, the model coloured
// by stage, the device mesh, memory per device, the predicted pipeline
// timeline, the communication and the alternatives the search weighed.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_PLAN_PLANREPORT_H
#define CLEAVE_PLAN_PLANREPORT_H

#include "cleave/Plan/Plan.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace cleave {

/// Writes `plan` as an HTML report. The page embeds the plan's plan.json
/// (in `<script type="application/json" id="plan-data">`) and draws every
/// figure from it; `modelName` titles the page.
void writePlanReport(const Plan &plan, llvm::StringRef modelName,
                     llvm::raw_ostream &os);

} // namespace cleave

#endif // CLEAVE_PLAN_PLANREPORT_H
