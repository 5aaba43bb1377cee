//===- TensorProtoFuzzer.cpp - bytes as an ONNX TensorProto ------*- C++
//-*-===//
//
// The input is a .pb file as `cleave run` reads its inputs (readTensorProto,
// the format of the ONNX backend test data). A file the reader refuses is an
// Error.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  try {
    std::string name;
    (void)cleave::rt::parseTensorProto(bytes, "input.pb", &name);
  } catch (const cleave::rt::Error &) {
  }
  return 0;
}
