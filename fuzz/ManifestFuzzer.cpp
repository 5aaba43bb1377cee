//===- ManifestFuzzer.cpp - text as a bundle's manifest.json -----*- C++
//-*-===//
//
// The input is the manifest the runtime reads before it trusts anything
// else in a bundle (readManifest). A manifest it refuses is an Error; the
// mesh of one it accepts covers its ranks and stages.
//
//===----------------------------------------------------------------------===//

#include "Bundle.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  try {
    cleave::rt::Manifest manifest =
        cleave::rt::parseManifest(text, "manifest.json");
    if (manifest.devices != manifest.pp * manifest.tp * manifest.dp)
      std::abort();
  } catch (const cleave::rt::Error &) {
  }
  return 0;
}
