//===- MeshOptions.h - the mesh pins of plan and compile ---------*- C++
//-*-===//
//
// `--pp`, `--tp`, `--dp` and `--microbatches` pin the planner's choices the
// same way on `cleave plan` and `cleave compile`; `--schedule` chooses the
// pipeline schedule on both.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TOOLS_CLEAVE_MESHOPTIONS_H
#define CLEAVE_TOOLS_CLEAVE_MESHOPTIONS_H

#include "cleave/Plan/Plan.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <optional>
#include <string>

namespace cleave {

/// An integer option the user gave, or none.
std::optional<int64_t> getGiven(const llvm::cl::opt<int64_t> &option);

/// The options; constructing it registers them on `command`.
struct MeshOptions {
  explicit MeshOptions(llvm::cl::SubCommand &command);

  llvm::cl::opt<int64_t> pipelineStages;
  llvm::cl::opt<int64_t> tensorParallel;
  llvm::cl::opt<int64_t> dataParallel;
  llvm::cl::opt<int64_t> microbatches;
  llvm::cl::opt<std::string> schedule;

  /// Copies the pins and the schedule the user gave into `options`; prints
  /// an error naming the option (prefixed by `tool`) and returns false for a
  /// pin that is not a positive integer or a schedule it does not know.
  bool apply(PlanOptions &options, llvm::StringRef tool) const;
};

} // namespace cleave

#endif // CLEAVE_TOOLS_CLEAVE_MESHOPTIONS_H
