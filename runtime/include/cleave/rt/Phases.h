//===- Phases.h - the phases of a step ---------------------------*- C++ -*-===//
//
// What a pipeline stage runs for a microbatch, named as the bundle manifest
// (a program's entries and each stage's steps), a program's entry table and
// the compiler's pipeline schedule name it. Written once here, without MLIR
// or LLVM, for the compiler and the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_PHASES_H
#define CLEAVE_RT_PHASES_H

#include <cstdint>

namespace cleave::rt {

/// The enumerators are in the order a microbatch goes through them on one
/// stage.
enum class Phase : uint8_t {
  /// The stage's part of the model; needs the previous virtual stage's
  /// forward of the microbatch.
  Forward,
  /// Recomputes the activations the forward dropped, just before the
  /// backward; needs the stage's own forward.
  Recompute,
  /// The gradients; needs the next virtual stage's backward of the
  /// microbatch (the last one: its own forward).
  Backward,
  /// The optimizer update: once per step and device, after its last
  /// backward. Its step has no microbatch (-1).
  Update,
};

inline constexpr int kNumPhases = 4;

/// "forward", "recompute", "backward", "update".
inline const char *phaseName(Phase phase) {
  switch (phase) {
  case Phase::Forward:
    return "forward";
  case Phase::Recompute:
    return "recompute";
  case Phase::Backward:
    return "backward";
  case Phase::Update:
    return "update";
  }
  return "";
}

} // namespace cleave::rt

#endif // CLEAVE_RT_PHASES_H
