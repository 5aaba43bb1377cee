//===- ProgressTest.cpp - the progress reporter ---------------------------===//

#include "cleave/Support/Progress.h"

#include "gtest/gtest.h"

using namespace cleave;

namespace {

/// Options that draw on every update, as a terminal would.
ProgressOptions terminal(Verbosity verbosity = Verbosity::Normal) {
  ProgressOptions options;
  options.verbosity = verbosity;
  options.interactive = true;
  options.delaySeconds = 0;
  options.redrawSeconds = 0;
  options.columns = 200;
  return options;
}

TEST(ProgressTest, TerminalRedrawsOneLineAndClearsIt) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ProgressReporter reporter(os, terminal());
  {
    ProgressStep step = reporter.begin("importing m.onnx", 4, "nodes");
    step.advance();
    step.advance(3);
  }
  EXPECT_NE(text.find("\r\x1b[2Kimporting m.onnx  [      "), std::string::npos)
      << text;
  EXPECT_NE(text.find("] 1/4 nodes (25%)"), std::string::npos) << text;
  EXPECT_NE(text.find("[========================] 4/4 nodes (100%)"),
            std::string::npos)
      << text;
  // The line is gone when the step ends; nothing else is printed.
  EXPECT_TRUE(llvm::StringRef(text).ends_with("\r\x1b[2K")) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
}

TEST(ProgressTest, UnknownTotalCounts) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ProgressReporter reporter(os, terminal());
  ProgressStep step = reporter.begin("reading", 0, "tensors");
  step.advance(7);
  EXPECT_NE(text.find("reading  7 tensors"), std::string::npos) << text;
}

TEST(ProgressTest, PipedPrintsNothing) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ProgressOptions options = terminal();
  options.interactive = false;
  ProgressReporter reporter(os, options);
  ProgressStep step = reporter.begin("planning", 10, "meshes");
  step.advance(10);
  step.finish();
  reporter.remark("not shown without --verbose");
  EXPECT_EQ(text, "");
}

TEST(ProgressTest, QuietPrintsNothingOnATerminal) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ProgressReporter reporter(os, terminal(Verbosity::Quiet));
  ProgressStep step = reporter.begin("planning", 10, "meshes");
  step.advance(10);
  step.finish();
  reporter.remark("quiet");
  EXPECT_EQ(text, "");
}

TEST(ProgressTest, VerboseReportsFinishedStepsWhenPiped) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ProgressOptions options;
  options.verbosity = Verbosity::Verbose;
  ProgressReporter reporter(os, options);
  reporter.remark("imported m.onnx");
  ProgressStep step = reporter.begin("planning for 8 devices", 3, "meshes");
  step.advance(3);
  step.finish();
  step.finish();
  llvm::StringRef lines(text);
  EXPECT_TRUE(lines.starts_with("imported m.onnx\nplanning for 8 devices: 3 "
                                "meshes in "))
      << text;
  EXPECT_TRUE(lines.ends_with(" s\n")) << text;
  EXPECT_EQ(lines.count('\n'), 2u) << text;
}

TEST(ProgressTest, ShortStepsDoNotFlash) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ProgressOptions options = terminal();
  options.delaySeconds = 3600;
  ProgressReporter reporter(os, options);
  ProgressStep step = reporter.begin("quick", 2, "items");
  step.advance(2);
  step.finish();
  EXPECT_EQ(text, "");
}

TEST(ProgressTest, NullReporterStepsAreInert) {
  ProgressStep step = beginProgress(nullptr, "nothing", 5, "items");
  step.advance(5);
  EXPECT_EQ(step.getDone(), 5);
  step.finish();
}

} // namespace
