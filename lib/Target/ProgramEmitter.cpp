//===- ProgramEmitter.cpp - choose an emitter; translations ------*- C++
//-*-===//

#include "cleave/Target/ProgramEmitter.h"

#include "CPU/CppEmitter.h"
#include "CUDA/CudaEmitter.h"
#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"

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

void cleave::registerProgramEmitterTranslations() {
  registerEmitter("emit-cpp", "Lower to a device program and emit host C++",
                  ProgramLanguage::Cpp, "cpu");
  registerEmitter("emit-cuda", "Lower to a device program and emit CUDA C++",
                  ProgramLanguage::Cuda, "cuda");
}
