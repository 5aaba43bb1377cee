//===- NpyFuzzer.cpp - bytes as a .npy tensor file ---------------*- C++
//-*-===//
//
// The input is a .npy file as `cleave run` reads its inputs (readNpy). A
// file the reader refuses is an Error; an accepted one holds exactly the
// bytes its header declares.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  try {
    cleave::rt::Tensor tensor = cleave::rt::parseNpy(bytes, "input.npy");
    if (tensor.byteSize() > size)
      std::abort();
  } catch (const cleave::rt::Error &) {
  }
  return 0;
}
