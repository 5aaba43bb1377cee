//===- PlanFuzzer.cpp - text as a bundle's plan.json -------------*- C++
//-*-===//
//
// The input is the plan.json `cleave run --profile` reads the planner's
// predictions from (readPrediction). The file is advisory: whatever it
// holds, the reader returns predictions for the stages asked for.
//
//===----------------------------------------------------------------------===//

#include "Profile.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  constexpr int stages = 4;
  cleave::rt::Prediction prediction = cleave::rt::parsePrediction(text, stages);
  if (prediction.stageSeconds.size() != stages)
    std::abort();
  return 0;
}
