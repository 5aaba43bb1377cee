//===- CompilePipeline.h - the compile flow as a pass pipeline --*- C++ -*-===//
//
// `cleave compile` is this pipeline followed by lowering and bundle writing:
//
//   cleave-simplify                 fold, fuse, CSE the imported function
//   with gradients (or train):
//     cleave-attach-loss            with logits: the loss of an output
//     cleave-autodiff               the loss and its gradients (Autodiff)
//     cleave-simplify               fold and CSE the backward ops
//   one device:
//     cleave-plan{annotate=false}   report the plan; the IR stays as it is
//     with train:
//       cleave-optimizer-update     update the parameters in place
//   several devices:
//     cleave-split-projections      one projection per piece of a fused one
//     cleave-plan                   plan, and write the plan onto the IR
//     cleave-partition              one SPMD function per pipeline stage
//
// `cleave-opt --cleave-compile-pipeline="target=cpu devices=4 pp=2 tp=2"`
// runs the same passes. `lowerCompiledModule` then lowers the result into
// the programs of a bundle (a C++ step until device programs are IR).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_COMPILE_COMPILEPIPELINE_H
#define CLEAVE_COMPILE_COMPILEPIPELINE_H

#include "cleave/Conversion/DeviceProgram.h"
#include "cleave/Plan/Plan.h"
#include "cleave/Support/OptionBinder.h"
#include "cleave/Target/Bundle.h"
#include "cleave/Transforms/Autodiff/TrainingOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <cstdint>
#include <string>

namespace cleave {

/// The options of the compile pipeline.
struct CompileOptions : public mlir::PassPipelineOptions<CompileOptions> {
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("Target preset (targets/NAME.json) or target file"),
      llvm::cl::init("cpu")};
  Option<std::string> targetsDir{
      *this, "targets-dir",
      llvm::cl::desc("Directory of the target presets (default: "
                     "share/cleave/targets next to bin/)")};
  Option<int64_t> devices{*this, "devices",
                          llvm::cl::desc("Devices to compile for"),
                          llvm::cl::init(1)};
  Option<std::string> entry{*this, "entry",
                            llvm::cl::desc("The function that holds the model"),
                            llvm::cl::init("main")};
  Option<std::string> planJsonFile{
      *this, "plan-json",
      llvm::cl::desc("Also write the plan as JSON to this file")};
  Option<bool> gradients{
      *this, "gradients",
      llvm::cl::desc("Compute the gradient of the loss with respect to every "
                     "trainable parameter (cleave-autodiff): the outputs are "
                     "the loss and one gradient per parameter"),
      llvm::cl::init(false)};
  Option<std::string> loss{
      *this, "loss",
      llvm::cl::desc("With gradients: the graph output to differentiate; with "
                     "logits, the loss to attach (cross-entropy or mse)")};
  Option<std::string> logits{
      *this, "logits",
      llvm::cl::desc("With gradients: attach the loss to this graph output "
                     "(cleave-attach-loss)")};
  Option<std::string> labels{
      *this, "labels",
      llvm::cl::desc("With logits: the name of the labels input the attached "
                     "loss adds")};
  Option<int64_t> ignoreIndex{
      *this, "ignore-index",
      llvm::cl::desc("With loss=cross-entropy: the label whose targets do not "
                     "count"),
      llvm::cl::init(-100)};
  Option<std::string> freeze{
      *this, "freeze",
      llvm::cl::desc("With gradients: regular expression of the weights that "
                     "are not trained")};
  Option<bool> train{
      *this, "train",
      llvm::cl::desc("Compile a training step: the loss's gradients update "
                     "the parameters in place (cleave-optimizer-update); the "
                     "output is the loss"),
      llvm::cl::init(false)};
  Option<std::string> optimizer{
      *this, "optimizer",
      llvm::cl::desc("With train: sgd, adam or adamw (default adamw)")};
  Option<double> learningRate{*this, "lr",
                              llvm::cl::desc("With train: the learning rate "
                                             "(default 1e-3)")};
  Option<double> momentum{*this, "momentum",
                          llvm::cl::desc("With optimizer=sgd: the momentum")};
  Option<bool> nesterov{
      *this, "nesterov",
      llvm::cl::desc("With optimizer=sgd: Nesterov momentum")};
  Option<double> weightDecay{
      *this, "weight-decay",
      llvm::cl::desc("With train: the weight decay (default 0.01 for adamw, "
                     "else 0)")};
  Option<std::string> betas{
      *this, "betas",
      llvm::cl::desc("With adam, adamw: beta1,beta2 (default 0.9,0.999)")};
  Option<double> epsilon{
      *this, "eps", llvm::cl::desc("With adam, adamw: epsilon (default 1e-8)")};
  Option<double> clipGradNorm{
      *this, "clip-grad-norm",
      llvm::cl::desc("With train: scale the gradients down to this global "
                     "2-norm")};
  Option<int64_t> warmupSteps{
      *this, "warmup-steps",
      llvm::cl::desc("With train: steps of linear learning-rate warm-up")};
  Option<int64_t> decaySteps{
      *this, "decay-steps",
      llvm::cl::desc("With train: the step at which a cosine decay of the "
                     "learning rate ends")};
  Option<double> minLrRatio{
      *this, "min-lr-ratio",
      llvm::cl::desc("With decay-steps: the final learning rate as a share "
                     "of lr (default 0)")};
  Option<bool> recompute{
      *this, "recompute",
      llvm::cl::desc("With train: the backward recomputes the forward's "
                     "activations from its segment boundaries "
                     "(cleave-recompute)")};
  Option<bool> recomputeLayers{
      *this, "recompute-layers",
      llvm::cl::desc("With train: recompute every segment, a transformer "
                     "layer from its input alone (the plan's recompute "
                     "layers)")};
  Option<bool> syncBatchNorm{
      *this, "sync-batch-norm",
      llvm::cl::desc("With train on several devices: batch normalisation's "
                     "statistics over every data-parallel replica's batch "
                     "(SyncBatchNorm)")};
  Option<std::string> gradReduction{
      *this, "grad-reduction",
      llvm::cl::desc("With train on several devices: reduce each gradient "
                     "sum over the replicas as soon as the last "
                     "microbatch's backward has made it, overlapping the "
                     "rest of the backward (overlap), or all in the update "
                     "(update, the default)")};
  Option<double> gradBucketMb{
      *this, "grad-bucket-mb",
      llvm::cl::desc("With grad-reduction=overlap: the gradient sums go "
                     "into buckets of about this many MiB, in the order "
                     "the backward makes them, each bucket reduced as one "
                     "message (default 25; the first bucket at most 1; 0: "
                     "every gradient its own)")};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("With train: the precision of the matrix products, "
                     "convolutions and attention, fp32 (default), bf16 or "
                     "fp16 (cleave-mixed-precision; fp16 with dynamic loss "
                     "scaling)")};
  Option<double> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("With precision=fp16: the initial loss scale (default "
                     "65536)")};
  Option<int64_t> lossScaleGrowthInterval{
      *this, "loss-scale-growth-interval",
      llvm::cl::desc("With precision=fp16: the good steps in a row after "
                     "which the loss scale doubles (default 2000)")};
  Option<int64_t> zero{
      *this, "zero",
      llvm::cl::desc("With train on several devices: the ZeRO stage, 1 "
                     "shards the optimizer state over the data-parallel "
                     "replicas, 2 the gradient sums too (default 0)")};
  /// pp=, tp=, dp=, microbatches=, objective=, ... (PlanOptions::bindOptions;
  /// no batch=: a bundle computes the model's batch).
  BoundOptions<PlanOptions, PassOptionGroup> plan{*this,
                                                  PlanOptionSet::Compiling};

  /// C++ only: where the pipeline stores the plan's JSON (plan.json).
  std::string *planJSON = nullptr;

  /// The training options as given.
  TrainingOptions getTraining() const;

  /// Checks the options; the error names the option as the pipeline spells
  /// it (`devices`, `pp`, ...).
  llvm::Error validate() const;
};

/// Fails, naming the option (`<prefix>schedule`, or the training option it
/// cannot be combined with), when `options` ask for a pipeline schedule
/// that `cleave compile` cannot build programs for: several model chunks
/// per device (the interleaved schedule) outside a training step, or on
/// one pipeline stage.
llvm::Error checkCompilableSchedule(const PlanOptions &options,
                                    const TrainingOptions &training,
                                    llvm::StringRef prefix);

/// Adds the compile pipeline for `options` to `pm` (a module pass manager).
/// Fails, naming the option, when `options` do not validate.
llvm::Error buildCompilePipeline(mlir::OpPassManager &pm,
                                 const CompileOptions &options);

/// Registers `cleave-compile-pipeline` with the global pass registry.
void registerCompilePipeline();

/// The graph inputs and outputs of `entry`, named as the model names them.
/// Read them before the pipeline runs: with several devices it replaces the
/// entry by stage functions.
mlir::FailureOr<BundleContents> describeGraphPorts(mlir::ModuleOp module,
                                                   llvm::StringRef entry);

/// Lowers `module`, as the compile pipeline for `options` left it, into the
/// programs of a bundle whose ports `contents` describes
/// (`describeGraphPorts`): one program for one device, else one per stage
/// function, with the mesh and the ports' batch dimensions the plan wrote.
mlir::LogicalResult lowerCompiledModule(mlir::ModuleOp module,
                                        const CompileOptions &options,
                                        const DeviceProgramOptions &lowering,
                                        BundleContents &contents);

} // namespace cleave

#endif // CLEAVE_COMPILE_COMPILEPIPELINE_H
