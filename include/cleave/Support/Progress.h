//===- Progress.h - progress of long steps on a terminal --------*- C++ -*-===//
//
// Importing a model with thousands of nodes, searching a thousand-device
// cluster or writing hundreds of gigabytes of weight shards takes long
// enough that a person at a terminal wants to see it move. A
// `ProgressReporter` redraws one status line while a step runs, when its
// stream is a terminal, and prints nothing when the stream is a pipe or a
// file (logs and tests stay clean). `--verbose` adds a line per finished
// step with its size and time; `--quiet` silences everything.
//
// Library code takes a `ProgressReporter *` through its options struct
// (null: report nothing) and never decides on its own where output goes.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_SUPPORT_PROGRESS_H
#define CLEAVE_SUPPORT_PROGRESS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace cleave {

/// How much a tool says about its own work on stderr.
enum class Verbosity {
  /// Errors only.
  Quiet,
  /// Errors, and progress lines on a terminal.
  Normal,
  /// Also a line per finished step, with its size and time.
  Verbose,
};

struct ProgressOptions {
  Verbosity verbosity = Verbosity::Normal;
  /// Whether the stream is a terminal, on which a line can be redrawn.
  bool interactive = false;
  /// A step's line appears only once the step has run this long, so that
  /// quick steps do not flash.
  double delaySeconds = 0.25;
  /// Least time between two redraws.
  double redrawSeconds = 0.1;
  /// Columns of the terminal.
  unsigned columns = 80;
};

class ProgressStep;

/// Draws the progress of one step at a time on a stream (stderr).
class ProgressReporter {
public:
  ProgressReporter(llvm::raw_ostream &os, ProgressOptions options);
  ~ProgressReporter();

  /// A reporter on stderr that draws when stderr is a terminal.
  static ProgressReporter forStandardError(Verbosity verbosity);

  Verbosity getVerbosity() const { return options.verbosity; }
  bool isVerbose() const { return options.verbosity == Verbosity::Verbose; }

  /// Prints `message` as a line of its own under `--verbose`.
  void remark(const llvm::Twine &message);

  /// Starts a step of `total` units (0 when unknown) called `unit` ("nodes",
  /// "meshes"); it ends when the returned step is finished or destroyed.
  ProgressStep begin(llvm::StringRef title, int64_t total,
                     llvm::StringRef unit);

private:
  friend class ProgressStep;
  using Clock = std::chrono::steady_clock;

  void update(ProgressStep &step, bool force);
  void end(ProgressStep &step);
  void clearLine();

  llvm::raw_ostream &os;
  ProgressOptions options;
  /// Whether a progress line is on screen (and must be cleared before any
  /// other output).
  bool lineShown = false;
};

/// One running step. Inert when made without a reporter, so library code
/// can report unconditionally.
class ProgressStep {
public:
  ProgressStep() = default;
  ProgressStep(ProgressStep &&other);
  ProgressStep &operator=(ProgressStep &&other) = delete;
  ProgressStep(const ProgressStep &) = delete;
  ~ProgressStep() { finish(); }

  /// Records `units` more units done.
  void advance(int64_t units = 1);
  /// Ends the step: clears its line and, under `--verbose`, reports its size
  /// and time. Later calls do nothing.
  void finish();

  int64_t getDone() const { return done; }

private:
  friend class ProgressReporter;
  ProgressStep(ProgressReporter *reporter, llvm::StringRef title, int64_t total,
               llvm::StringRef unit);

  ProgressReporter *reporter = nullptr;
  std::string title;
  std::string unit;
  int64_t total = 0;
  int64_t done = 0;
  ProgressReporter::Clock::time_point start;
  ProgressReporter::Clock::time_point lastDraw;
  bool drawn = false;
};

/// `reporter->begin(...)`, or an inert step when `reporter` is null.
ProgressStep beginProgress(ProgressReporter *reporter, llvm::StringRef title,
                           int64_t total, llvm::StringRef unit);

} // namespace cleave

#endif // CLEAVE_SUPPORT_PROGRESS_H
