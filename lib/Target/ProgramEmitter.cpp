//===- ProgramEmitter.cpp - choose an emitter; translations ------*- C++
//-*-===//

#include "cleave/Target/ProgramEmitter.h"

#include "CPU/CppEmitter.h"
#include "CUDA/CudaEmitter.h"
#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace cleave;

LogicalResult cleave::emitProgram(const DeviceProgram &program,
                                  ProgramLanguage language,
                                  const EmitOptions &options, raw_ostream &os,
                                  std::string &error) {
  if (language == ProgramLanguage::Cuda)
    return detail::emitCuda(program, options, os, error);
  return detail::emitCpp(program, options, os, error);
}

static void registerEmitter(StringRef flag, StringRef description,
                            ProgramLanguage language, StringRef target) {
  TranslateFromMLIRRegistration registration(
      flag, description,
      [language, target](ModuleOp module, raw_ostream &os) -> LogicalResult {
        FailureOr<func::FuncOp> func = getProgramFunction(module, "");
        if (failed(func))
          return failure();
        FailureOr<DeviceProgram> program = buildDeviceProgram(*func);
        if (failed(program))
          return failure();
        EmitOptions options;
        if (StringAttr model = getOnnxModel(module))
          options.modelName = model.str();
        else
          options.modelName = "module";
        options.targetName = target.str();
        std::string error;
        if (failed(emitProgram(*program, language, options, os, error)))
          return module.emitError(error), failure();
        return success();
      },
      registerDeviceProgramDialects);
}

/// The same emitters reading a device program's text form instead of
/// lowering a module, so that a hand-written or edited program can be
/// emitted.
static void registerTextEmitter(StringRef flag, StringRef description,
                                ProgramLanguage language, StringRef target) {
  TranslateRegistration registration(
      flag, description,
      [language, target](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                         raw_ostream &os,
                         MLIRContext *context) -> LogicalResult {
        FailureOr<DeviceProgram> program =
            parseDeviceProgram(*sourceMgr, context);
        if (failed(program))
          return failure();
        EmitOptions options;
        options.modelName =
            sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID())
                ->getBufferIdentifier()
                .str();
        options.targetName = target.str();
        std::string error;
        if (failed(emitProgram(*program, language, options, os, error)))
          return emitError(UnknownLoc::get(context), error), failure();
        return success();
      });
}

void cleave::registerProgramEmitterTranslations() {
  registerTextEmitter("device-program-to-cpp",
                      "Emit host C++ for a device program's text form",
                      ProgramLanguage::Cpp, "cpu");
  registerTextEmitter("device-program-to-cuda",
                      "Emit CUDA C++ for a device program's text form",
                      ProgramLanguage::Cuda, "cuda");
  registerEmitter("emit-cpp", "Lower to a device program and emit host C++",
                  ProgramLanguage::Cpp, "cpu");
  registerEmitter("emit-cuda", "Lower to a device program and emit CUDA C++",
                  ProgramLanguage::Cuda, "cuda");
}
