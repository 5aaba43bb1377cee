//===- CompileCommand.h - the `cleave compile` subcommand --------*- C++
//-*-===//
//
// `cleave compile MODEL.onnx -o BUNDLE --target T --devices N`: imports the
// model, runs the compile pipeline on it (`cleave-compile-pipeline`:
// simplify, plan, partition; CompilePipeline.h), lowers each device's
// function to a device program (fused loops and library kernels over a
// static arena), emits C++ or CUDA C++, builds it and writes the bundle
// (docs/bundle-format.md).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TOOLS_CLEAVE_COMPILECOMMAND_H
#define CLEAVE_TOOLS_CLEAVE_COMPILECOMMAND_H

#include "CommonOptions.h"

#include "cleave/Plan/Plan.h"
#include "cleave/Support/OptionBinder.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace cleave {

/// The options of `cleave compile`; constructing it registers them.
struct CompileCommand {
  llvm::cl::SubCommand command{
      "compile", "Compile a model into a bundle of per-device programs"};
  llvm::cl::opt<std::string> model{llvm::cl::Positional, llvm::cl::Required,
                                   llvm::cl::desc("<model.onnx>"),
                                   llvm::cl::sub(command)};
  llvm::cl::opt<std::string> output{
      "o", llvm::cl::Required, llvm::cl::desc("The bundle directory to write"),
      llvm::cl::value_desc("dir"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> target{
      "target",
      llvm::cl::desc("Target preset (targets/NAME.json) or target file "
                     "(default: cpu)"),
      llvm::cl::init("cpu"), llvm::cl::value_desc("name|path"),
      llvm::cl::sub(command)};
  llvm::cl::opt<std::string> targetsDir{
      "targets-dir",
      llvm::cl::desc("Directory of the target presets (default: "
                     "share/cleave/targets next to bin/)"),
      llvm::cl::value_desc("dir"), llvm::cl::sub(command)};
  llvm::cl::opt<int64_t> devices{
      "devices", llvm::cl::desc("Devices to compile for"), llvm::cl::init(1),
      llvm::cl::value_desc("N"), llvm::cl::sub(command)};
  /// --pp, --tp, --dp, --microbatches, --objective, ... as for `cleave plan`
  /// but --batch (a bundle computes the model's batch).
  BoundOptions<PlanOptions, CommandLineOptionGroup> plan{
      command, PlanOptionSet::Compiling};
  llvm::cl::opt<bool> gradients{
      "gradients",
      llvm::cl::desc("Compute the gradient of the loss with respect to every "
                     "trainable parameter (every float initializer): the "
                     "bundle's outputs are the loss and grad:<weight> per "
                     "parameter"),
      llvm::cl::sub(command)};
  llvm::cl::opt<std::string> loss{
      "loss",
      llvm::cl::desc("With --gradients: the graph output to differentiate, a "
                     "float scalar; with --logits, the loss to attach: "
                     "cross-entropy or mse"),
      llvm::cl::value_desc("name"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> logits{
      "logits",
      llvm::cl::desc("With --gradients: attach the loss --loss names to this "
                     "graph output (cross-entropy: logits [..., classes]; "
                     "mse: any float output)"),
      llvm::cl::value_desc("name"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> labels{
      "labels",
      llvm::cl::desc("With --logits: the bundle input the attached loss adds "
                     "for the targets (cross-entropy: int64 class indices of "
                     "the logits' shape without the last dimension; mse: the "
                     "output's type)"),
      llvm::cl::value_desc("name"), llvm::cl::sub(command)};
  llvm::cl::opt<int64_t> ignoreIndex{
      "ignore-index",
      llvm::cl::desc("With --loss cross-entropy: targets of this label do not "
                     "count (default: -100)"),
      llvm::cl::init(-100), llvm::cl::value_desc("N"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> freeze{
      "freeze",
      llvm::cl::desc("With --gradients: the weights whose names this regular "
                     "expression matches are not trained"),
      llvm::cl::value_desc("regex"), llvm::cl::sub(command)};
  llvm::cl::opt<bool> train{
      "train",
      llvm::cl::desc("Compile a whole training step: forward, backward and "
                     "the optimizer's update of every trainable parameter, "
                     "which stays in the device's memory with the "
                     "optimizer state from one run to the next; the output "
                     "is the loss (--loss, --logits, --labels as with "
                     "--gradients)"),
      llvm::cl::sub(command)};
  llvm::cl::opt<std::string> optimizer{
      "optimizer",
      llvm::cl::desc("With --train: sgd, adam or adamw (default), as "
                     "PyTorch's"),
      llvm::cl::value_desc("name"), llvm::cl::sub(command)};
  llvm::cl::opt<double> learningRate{
      "lr", llvm::cl::desc("With --train: the learning rate (default 1e-3)"),
      llvm::cl::value_desc("x"), llvm::cl::sub(command)};
  llvm::cl::opt<double> momentum{
      "momentum", llvm::cl::desc("With --optimizer sgd: the momentum"),
      llvm::cl::value_desc("x"), llvm::cl::sub(command)};
  llvm::cl::opt<bool> nesterov{
      "nesterov", llvm::cl::desc("With --optimizer sgd: Nesterov momentum"),
      llvm::cl::sub(command)};
  llvm::cl::opt<double> weightDecay{
      "weight-decay",
      llvm::cl::desc("With --train: the weight decay (default 0.01 for adamw, "
                     "decoupled; 0 for sgd and adam)"),
      llvm::cl::value_desc("x"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> betas{
      "betas",
      llvm::cl::desc("With --optimizer adam|adamw: beta1,beta2 (default "
                     "0.9,0.999)"),
      llvm::cl::value_desc("b1,b2"), llvm::cl::sub(command)};
  llvm::cl::opt<double> epsilon{
      "eps",
      llvm::cl::desc("With --optimizer adam|adamw: epsilon (default "
                     "1e-8)"),
      llvm::cl::value_desc("x"), llvm::cl::sub(command)};
  llvm::cl::opt<double> clipGradNorm{
      "clip-grad-norm",
      llvm::cl::desc("With --train: scale the gradients down so that their "
                     "global 2-norm is at most this (clip_grad_norm_)"),
      llvm::cl::value_desc("x"), llvm::cl::sub(command)};
  llvm::cl::opt<int64_t> warmupSteps{
      "warmup-steps",
      llvm::cl::desc("With --train: warm the learning rate up linearly over "
                     "this many steps"),
      llvm::cl::value_desc("N"), llvm::cl::sub(command)};
  llvm::cl::opt<int64_t> decaySteps{
      "decay-steps",
      llvm::cl::desc("With --train: decay the learning rate by a cosine "
                     "from the end of the warm-up to this step"),
      llvm::cl::value_desc("N"), llvm::cl::sub(command)};
  llvm::cl::opt<double> minLrRatio{
      "min-lr-ratio",
      llvm::cl::desc("With --decay-steps: the learning rate at the end of "
                     "the decay, as a share of --lr (default 0)"),
      llvm::cl::value_desc("x"), llvm::cl::sub(command)};
  llvm::cl::opt<bool> recompute{
      "recompute",
      llvm::cl::desc("With --train: stash only the forward's segment "
                     "boundaries for the backward and recompute the rest "
                     "there (activation checkpointing)"),
      llvm::cl::sub(command)};
  llvm::cl::opt<bool> recomputeLayers{
      "recompute-layers",
      llvm::cl::desc("With --train: recompute every segment, keeping one "
                     "stash per transformer layer (its input) rather than "
                     "one per segment, as Megatron-LM's full recomputation "
                     "does (the plan's --recompute layers)"),
      llvm::cl::sub(command)};
  llvm::cl::opt<bool> syncBatchNorm{
      "sync-batch-norm",
      llvm::cl::desc("With --train on several devices: batch normalisation "
                     "over every data-parallel replica's batch "
                     "(SyncBatchNorm; default: each replica's own)"),
      llvm::cl::sub(command)};
  llvm::cl::opt<std::string> gradReduction{
      "grad-reduction",
      llvm::cl::desc("With --train on several devices: when the replicas "
                     "reduce their gradient sums: overlap (each as soon as "
                     "the last microbatch's backward has made it, "
                     "overlapping the rest of the backward; the default on "
                     "GPUs) or update (all in the update; the default on "
                     "CPUs)"),
      llvm::cl::value_desc("overlap|update"), llvm::cl::sub(command)};
  llvm::cl::opt<double> gradBucketMb{
      "grad-bucket-mb",
      llvm::cl::desc("With --grad-reduction overlap: the gradient sums go "
                     "into buckets of about this many MiB, in the order the "
                     "backward makes them, each reduced as one message "
                     "(default 25, the first bucket at most 1; 0: every "
                     "gradient its own)"),
      llvm::cl::value_desc("MiB"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> precision{
      "precision",
      llvm::cl::desc("With --train: the precision of the matrix products, "
                     "convolutions and attention, fp32 (default), bf16 or "
                     "fp16 (with dynamic loss scaling); the parameters, the "
                     "optimizer state and every other op stay float32 "
                     "(mixed precision)"),
      llvm::cl::value_desc("fp32|bf16|fp16"), llvm::cl::sub(command)};
  llvm::cl::opt<double> lossScale{
      "loss-scale",
      llvm::cl::desc("With --precision fp16: the initial loss scale of "
                     "dynamic loss scaling (default 65536)"),
      llvm::cl::value_desc("S"), llvm::cl::sub(command)};
  llvm::cl::opt<int64_t> lossScaleGrowthInterval{
      "loss-scale-growth-interval",
      llvm::cl::desc("With --precision fp16: the loss scale doubles after "
                     "this many steps in a row without an inf or NaN "
                     "gradient (default 2000)"),
      llvm::cl::value_desc("N"), llvm::cl::sub(command)};
  llvm::cl::opt<int64_t> zero{
      "zero",
      llvm::cl::desc("With --train on several devices: the ZeRO stage; 1 "
                     "shards the optimizer state over the data-parallel "
                     "replicas, 2 the gradient sums too (default 0)"),
      llvm::cl::value_desc("stage"), llvm::cl::sub(command)};
  llvm::cl::list<std::string> inputShapes{
      "input-shape",
      llvm::cl::desc("Bind the shape of graph input NAME, e.g. "
                     "input_ids=1x128 (repeatable)"),
      llvm::cl::value_desc("NAME=DIMS"), llvm::cl::sub(command)};
  llvm::cl::opt<bool> emitOnly{
      "emit-only",
      llvm::cl::desc("Write the sources and weights but do not build the "
                     "programs (the bundle cannot run)"),
      llvm::cl::sub(command)};
  llvm::cl::opt<bool> noPrepack{
      "no-prepack",
      llvm::cl::desc("Store no packed weights: a cpu bundle's sessions pack "
                     "their constant weights on their first run instead"),
      llvm::cl::sub(command)};
  llvm::cl::opt<bool> noFuse{
      "no-fuse",
      llvm::cl::desc("One loop per elementwise op, and none applied in a "
                     "convolution's kernel (to compare with fusion)"),
      llvm::cl::sub(command)};
  llvm::cl::opt<std::string> cxx{
      "cxx",
      llvm::cl::desc("C++ compiler for cpu programs (default: c++; a "
                     "sanitized build's own compiler)"),
      llvm::cl::init(CLEAVE_PROGRAM_CXX), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> march{
      "march",
      llvm::cl::desc("Instruction set of cpu programs: x86-64, x86-64-v2, "
                     "x86-64-v3, x86-64-v4 or native (default: the target's "
                     "\"isa\", else native)"),
      llvm::cl::value_desc("isa"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> nvcc{
      "nvcc", llvm::cl::desc("CUDA compiler for GPU programs"),
      llvm::cl::init("/usr/local/cuda/bin/nvcc"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> runtimeInclude{
      "runtime-include",
      llvm::cl::desc("Directory of the runtime's headers (default: the "
                     "build's)"),
      llvm::cl::value_desc("dir"), llvm::cl::sub(command)};
  llvm::cl::opt<std::string> runtimeLib{
      "runtime-lib",
      llvm::cl::desc("Directory of libcleave_rt (default: the build's)"),
      llvm::cl::value_desc("dir"), llvm::cl::sub(command)};
  /// --quiet, --verbose, --dump-ir.
  CommonOptions common{command};
};

int runCompileCommand(CompileCommand &command);

} // namespace cleave

#endif // CLEAVE_TOOLS_CLEAVE_COMPILECOMMAND_H
