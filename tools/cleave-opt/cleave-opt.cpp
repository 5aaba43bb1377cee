//===- cleave-opt.cpp - cleave's mlir-opt -----------------------*- C++ -*-===//

#include "cleave/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  cleave::registerAllDialects(registry);
  cleave::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "cleave optimizer driver\n", registry));
}
