//===- Progress.cpp - progress of long steps on a terminal ------*- C++ -*-===//

#include "cleave/Support/Progress.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"

#include <algorithm>

using namespace cleave;

static double secondsBetween(std::chrono::steady_clock::time_point from,
                             std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

ProgressReporter::ProgressReporter(llvm::raw_ostream &os,
                                   ProgressOptions options)
    : os(os), options(options) {}

ProgressReporter::~ProgressReporter() { clearLine(); }

ProgressReporter ProgressReporter::forStandardError(Verbosity verbosity) {
  ProgressOptions options;
  options.verbosity = verbosity;
  options.interactive = llvm::sys::Process::StandardErrIsDisplayed();
  if (unsigned columns = llvm::sys::Process::StandardErrColumns())
    options.columns = columns;
  return ProgressReporter(llvm::errs(), options);
}

void ProgressReporter::clearLine() {
  if (!lineShown)
    return;
  // Carriage return, then erase the line (ECMA-48 EL).
  os << "\r\x1b[2K";
  os.flush();
  lineShown = false;
}

void ProgressReporter::remark(const llvm::Twine &message) {
  if (!isVerbose())
    return;
  clearLine();
  os << message << "\n";
  os.flush();
}

ProgressStep ProgressReporter::begin(llvm::StringRef title, int64_t total,
                                     llvm::StringRef unit) {
  return ProgressStep(this, title, total, unit);
}

void ProgressReporter::update(ProgressStep &step, bool force) {
  if (!options.interactive || options.verbosity == Verbosity::Quiet)
    return;
  Clock::time_point now = Clock::now();
  if (secondsBetween(step.start, now) < options.delaySeconds)
    return;
  if (!force && step.drawn &&
      secondsBetween(step.lastDraw, now) < options.redrawSeconds)
    return;
  step.lastDraw = now;
  step.drawn = true;

  std::string line = step.title + "  ";
  if (step.total > 0) {
    constexpr int kBarWidth = 24;
    double fraction = std::min(1.0, static_cast<double>(step.done) /
                                        static_cast<double>(step.total));
    int filled = static_cast<int>(fraction * kBarWidth);
    line += "[" + std::string(filled, '=') +
            std::string(kBarWidth - filled, ' ') + "] ";
    line += llvm::formatv("{0}/{1} {2} ({3:f0}%)", step.done, step.total,
                          step.unit, 100.0 * fraction)
                .str();
  } else {
    line += llvm::formatv("{0} {1}", step.done, step.unit).str();
  }
  if (line.size() >= options.columns && options.columns > 1)
    line.resize(options.columns - 1);
  os << "\r\x1b[2K" << line;
  os.flush();
  lineShown = true;
}

void ProgressReporter::end(ProgressStep &step) {
  clearLine();
  if (!isVerbose())
    return;
  double seconds = secondsBetween(step.start, Clock::now());
  os << step.title << ": ";
  if (step.total > 0 || step.done > 0)
    os << step.done << " " << step.unit << " ";
  os << llvm::formatv("in {0:f2} s", seconds) << "\n";
  os.flush();
}

ProgressStep::ProgressStep(ProgressReporter *reporter, llvm::StringRef title,
                           int64_t total, llvm::StringRef unit)
    : reporter(reporter), title(title.str()), unit(unit.str()), total(total),
      start(ProgressReporter::Clock::now()) {
  if (reporter)
    reporter->update(*this, /*force=*/true);
}

ProgressStep::ProgressStep(ProgressStep &&other)
    : reporter(other.reporter), title(std::move(other.title)),
      unit(std::move(other.unit)), total(other.total), done(other.done),
      start(other.start), lastDraw(other.lastDraw), drawn(other.drawn) {
  other.reporter = nullptr;
}

void ProgressStep::advance(int64_t units) {
  done += units;
  if (reporter)
    reporter->update(*this, /*force=*/false);
}

void ProgressStep::finish() {
  if (!reporter)
    return;
  ProgressReporter *owner = reporter;
  reporter = nullptr;
  owner->end(*this);
}

ProgressStep cleave::beginProgress(ProgressReporter *reporter,
                                   llvm::StringRef title, int64_t total,
                                   llvm::StringRef unit) {
  if (!reporter)
    return ProgressStep();
  return reporter->begin(title, total, unit);
}
