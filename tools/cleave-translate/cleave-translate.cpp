//===- cleave-translate.cpp - cleave's mlir-translate -----------*- C++ -*-===//

#include "cleave/InitAll.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  cleave::registerAllTranslations();
  return mlir::failed(
             mlir::mlirTranslateMain(argc, argv, "cleave translation driver\n"))
             ? 1
             : 0;
}
