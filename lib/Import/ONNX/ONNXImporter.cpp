//===- ONNXImporter.cpp -----------------------------------------*- C++ -*-===//
#include "cleave/Import/ONNX/ONNXImporter.h"
void cleave::registerONNXImportTranslation() {}
