//===- IRDump.cpp - the IR after each pipeline step, in files ---*- C++ -*-===//

#include "cleave/Support/IRDump.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace cleave;

llvm::Expected<std::unique_ptr<IRDumpDirectory>>
IRDumpDirectory::create(llvm::StringRef path) {
  if (path.empty())
    return llvm::createStringError("--dump-ir needs a directory");
  if (llvm::sys::fs::exists(path) && !llvm::sys::fs::is_directory(path))
    return llvm::createStringError("--dump-ir '" + path +
                                   "': exists and is not a directory");
  if (std::error_code error = llvm::sys::fs::create_directories(path))
    return llvm::createStringError(
        "--dump-ir '" + path +
        "': cannot create the directory: " + error.message());
  return std::unique_ptr<IRDumpDirectory>(new IRDumpDirectory(path.str()));
}

/// `step` as a file name: letters, digits, '.', '_' and '-' only.
static std::string sanitize(llvm::StringRef step) {
  std::string name;
  for (char c : step)
    name += llvm::isAlnum(c) || c == '.' || c == '_' || c == '-' ? c : '-';
  return name.empty() ? std::string("step") : name;
}

LogicalResult IRDumpDirectory::dump(Operation *op, llvm::StringRef step) {
  std::lock_guard<std::mutex> lock(mutex);
  llvm::SmallString<256> file(path);
  llvm::sys::path::append(
      file, llvm::formatv("{0:2}-{1}.mlir", next++, sanitize(step)).str());
  std::error_code error;
  llvm::raw_fd_ostream os(file, error, llvm::sys::fs::OF_Text);
  if (!error) {
    op->print(os, OpPrintingFlags().elideLargeElementsAttrs(64));
    os << "\n";
    os.close();
    error = os.error();
  }
  if (error) {
    // The location names the file at fault; the op's would print the IR.
    emitError(FileLineColLoc::get(op->getContext(), file, 0, 0))
        << "--dump-ir: cannot write the IR after '" << step
        << "': " << error.message();
    failed = true;
    return failure();
  }
  return success();
}

namespace {
/// Dumps the top-level operation after each pass.
class IRDumpInstrumentation : public PassInstrumentation {
public:
  explicit IRDumpInstrumentation(IRDumpDirectory &directory)
      : directory(directory) {}

  void runAfterPass(Pass *pass, Operation *op) override {
    if (isAdaptor(pass))
      return;
    (void)directory.dump(getTopLevel(op), getStepName(pass));
  }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    if (isAdaptor(pass))
      return;
    (void)directory.dump(getTopLevel(op),
                         (getStepName(pass) + "-failed").str());
  }

private:
  /// The pass managers' own wrappers around nested pipelines report as
  /// passes too; their nested passes are dumped already.
  static bool isAdaptor(Pass *pass) {
    return pass->getName().contains("OpToOpPassAdaptor");
  }
  static llvm::StringRef getStepName(Pass *pass) {
    return pass->getArgument().empty() ? pass->getName() : pass->getArgument();
  }
  static Operation *getTopLevel(Operation *op) {
    while (Operation *parent = op->getParentOp())
      op = parent;
    return op;
  }

  IRDumpDirectory &directory;
};
} // namespace

void IRDumpDirectory::attach(PassManager &passManager) {
  passManager.getContext()->disableMultithreading();
  passManager.addInstrumentation(
      std::make_unique<IRDumpInstrumentation>(*this));
}
