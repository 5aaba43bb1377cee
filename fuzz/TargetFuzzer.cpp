//===- TargetFuzzer.cpp - text as a cluster target file ----------*- C++
//-*-===//
//
// The input is a target file (targets/*.json, or one a user passes with
// --target); parseTarget is what loadTarget runs on the file's text.
//
//===----------------------------------------------------------------------===//

#include "cleave/Analysis/Cost/Target.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<cleave::TargetDescription> target =
      cleave::parseTarget(text, "target.json");
  if (!target) {
    llvm::consumeError(target.takeError());
    return 0;
  }
  // What the planner reads first of an accepted target.
  if (target->numDevices < 1 || target->devicesPerNode < 1)
    std::abort();
  return 0;
}
