//===- Bundle.h - write a compiled bundle ------------------------*- C++
//-*-===//
//
// A bundle is the directory `cleave compile` writes and the runtime runs
// (docs/bundle-format.md): the manifest, the plan, the emitted sources, the
// compiled programs and the weight files.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TARGET_BUNDLE_H
#define CLEAVE_TARGET_BUNDLE_H

#include "cleave/Plan/PipelineSchedule.h"
#include "cleave/Target/ProgramEmitter.h"
#include "cleave/rt/Mesh.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace cleave {

class ProgressReporter;

/// A graph input or output of the bundle.
struct BundlePort {
  std::string name;
  DType dtype = DType::Invalid;
  std::vector<int64_t> shape;
  /// The dimension that holds the batch when the programs compute blocks of
  /// it (dp x microbatches > 1); -1 otherwise.
  int64_t batchDim = -1;
};

/// The program of one pipeline stage. Every device of the stage runs it;
/// `graphInputs` and `graphOutputs` are the graph ports its program's
/// inputs and outputs are, in order.
struct StageProgram {
  int64_t stage = 0;
  DeviceProgram program;
  std::vector<int64_t> graphInputs, graphOutputs;
};

/// What a bundle holds: the mesh and one program per stage.
struct BundleContents {
  int64_t pp = 1, tp = 1, dp = 1;
  int64_t microbatches = 1;
  /// The order each stage runs the microbatches in (over `pp` stages and
  /// `microbatches`), recorded in the manifest for the runtime.
  PipelineSchedule schedule;
  std::vector<BundlePort> inputs, outputs;
  std::vector<StageProgram> stages;
  /// A training step's ZeRO stage (the plan's choice, or the one asked for).
  int64_t zero = 0;

  rt::MeshShape getMesh() const { return rt::MeshShape{pp, dp, tp}; }
  int64_t getNumDevices() const { return getMesh().size(); }
};

/// The contents of a one-device bundle: `program` is stage 0 and reads and
/// writes every graph port.
BundleContents makeSingleDeviceContents(DeviceProgram program);

/// The learning-rate schedule of a training bundle's update, recorded in the
/// manifest (`training`) so that the runtime can report the learning rate
/// of a step; the program computes it itself.
struct TrainingSchedule {
  std::string optimizer;
  double learningRate = 0;
  int64_t warmupSteps = 0;
  int64_t decaySteps = 0;
  double minLrRatio = 0;
  /// The ZeRO stage: above 0, each replica's state holds blocks of the
  /// parameters', which only the same plan reads back.
  int64_t zero = 0;
};

struct BundleOptions {
  std::string directory;
  /// The ONNX model (recorded in the manifest) and the target's name.
  std::string modelPath;
  std::string targetName;
  ProgramLanguage language = ProgramLanguage::Cpp;
  /// The plan as JSON (plan.json); the memory plan of each program is added.
  std::string planJSON;
  /// The IR the programs were lowered from (model.mlir).
  std::string moduleText;

  /// Set for a bundle compiled with --train.
  std::optional<TrainingSchedule> training;

  /// Where the runtime's headers and libraries are (to build the programs).
  std::string runtimeIncludeDir;
  std::string runtimeLibraryDir;
  /// Compilers and their flags.
  std::string cxx = "c++";
  /// -fno-math-errno: the programs never read errno, and GCC vectorises a
  /// loop calling exp or erf (rt/VectorMath.h) only without it.
  std::vector<std::string> cxxFlags = {"-std=c++17", "-O3",   "-fno-math-errno",
                                       "-fopenmp",   "-fPIC", "-shared"};

  /// The instruction set of cpu programs (`-march`), recorded in the
  /// manifest as `cpu_isa` so that the runtime refuses a CPU without it.
  std::string cpuIsa = "native";
  std::string nvcc = "/usr/local/cuda/bin/nvcc";
  std::vector<std::string> cudaArchitectures = {"80", "90"};
  /// Write the sources only (no compiled programs).
  bool emitOnly = false;
  /// Where to show the progress of writing weights and building programs;
  /// null shows nothing.
  ProgressReporter *progress = nullptr;
};

/// Writes the bundle: one program per stage, one weight file per device
/// (its tensor-parallel block of every split weight), plan.json, the IR and
/// the manifest. Errors name the file (the bundle's or a weight's source) or
/// the compiler command at fault.
llvm::Error writeBundle(const BundleContents &contents,
                        const BundleOptions &options);

} // namespace cleave

#endif // CLEAVE_TARGET_BUNDLE_H
