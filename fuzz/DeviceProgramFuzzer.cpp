//===- DeviceProgramFuzzer.cpp - text as a device program --------*- C++
//-*-===//
//
// The input is what `cleave-translate --parse-device-program` reads. A
// program the parser accepts must print as text that reads back to the
// same text, and the C++ emitter must either emit it or refuse it with an
// error.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"

#include "cleave/Conversion/DeviceProgram.h"
#include "cleave/Target/ProgramEmitter.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

FailureOr<cleave::DeviceProgram> parse(llvm::StringRef text,
                                       MLIRContext &context) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "program.txt"), llvm::SMLoc());
  return cleave::parseDeviceProgram(sourceMgr, &context);
}

std::string print(const cleave::DeviceProgram &program) {
  std::string text;
  llvm::raw_string_ostream os(text);
  cleave::printDeviceProgram(program, os);
  return text;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static cleave::fuzz::FuzzContext<> contexts;
  MLIRContext &context = contexts.next();

  FailureOr<cleave::DeviceProgram> program = parse(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), context);
  if (failed(program))
    return 0;

  std::string printed = print(*program);
  FailureOr<cleave::DeviceProgram> again = parse(printed, context);
  if (failed(again) || print(*again) != printed) {
    llvm::errs() << "the printed program does not read back:\n" << printed;
    std::abort();
  }

  std::string source, error;
  llvm::raw_string_ostream os(source);
  (void)cleave::emitProgram(*program, cleave::ProgramLanguage::Cpp,
                            cleave::EmitOptions(), os, error);
  return 0;
}
