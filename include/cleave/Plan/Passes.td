//===- Passes.td - planner passes --------------------------*- tablegen -*-===//

#ifndef CLEAVE_PLAN_PASSES_TD
#define CLEAVE_PLAN_PASSES_TD

include "mlir/Pass/PassBase.td"

def PlanPass : Pass<"cleave-plan", "mlir::ModuleOp"> {
  let summary = "Choose the mesh, stages and tensor-parallel sharding of a "
                "model and record them on the IR";
  let description = [{
    Runs the auto-parallel planner (`cleave::planModel`) on the function
    `main` for a target and a device count, and writes the plan's contract
    for the partitioner onto the IR: module attributes `cleave.mesh`,
    `cleave.microbatches` and `cleave.schedule`, and on every op of the
    function `cleave.stage`
    plus, where the op splits one of its loops over the tensor-parallel
    group, `cleave.tp_loop` (the loop number of the op's
    `ShardingInterface`). With `plan-json` the whole plan is also written as
    JSON (docs/plan-format.md). Options left at 0 are searched.

    Before (`--cleave-plan="target=h100-sxm devices=2 pp=1 tp=2"`):

    ```mlir
    %y = cleave.matmul %x, %w1 : (tensor<1x16x64xf32>, tensor<64x256xf32>) -> tensor<1x16x256xf32>
    %z = cleave.matmul %y, %w2 : (tensor<1x16x256xf32>, tensor<256x64xf32>) -> tensor<1x16x64xf32>
    ```

    After:

    ```mlir
    module attributes {cleave.mesh = {dp = 1 : i64, pp = 1 : i64, tp = 2 : i64}, cleave.microbatches = 1 : i64, cleave.schedule = "gpipe"} {
      %y = cleave.matmul %x, %w1 {cleave.stage = 0 : i64, cleave.tp_loop = 2 : i64} : ...
      %z = cleave.matmul %y, %w2 {cleave.stage = 0 : i64, cleave.tp_loop = 3 : i64} : ...
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"",
           "Target preset name (targets/NAME.json) or path of a target file">,
    Option<"targetsDir", "targets-dir", "std::string", /*default=*/"",
           "Directory of the target presets (default: share/cleave/targets "
           "next to the executable's bin/)">,
    Option<"devices", "devices", "int64_t", /*default=*/"0",
           "Devices to plan for (0: the target file's count)">,
    Option<"devicesPerNode", "devices-per-node", "int64_t", /*default=*/"0",
           "Devices per node (0: the target file's)">,
    Option<"pipelineStages", "pp", "int64_t", /*default=*/"0",
           "Pipeline stages (0: search)">,
    Option<"tensorParallel", "tp", "int64_t", /*default=*/"0",
           "Tensor-parallel degree (0: search)">,
    Option<"dataParallel", "dp", "int64_t", /*default=*/"0",
           "Data-parallel replicas (0: search)">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"0",
           "Microbatches per step (0: search)">,
    Option<"batch", "batch", "int64_t", /*default=*/"0",
           "Global batch (0: the model's batch dimension)">,
    Option<"objective", "objective", "std::string", /*default=*/"\"throughput\"",
           "What to optimise: throughput or latency">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"gpipe\"",
           "Pipeline schedule: gpipe, 1f1b, interleaved or interleaved:V "
           "(V model chunks per device, 2 by default)">,
    Option<"sequenceParallel", "sequence-parallel", "bool", /*default=*/"false",
           "Allow reduce-scatter of partial sums into splits">,
    Option<"memoryFraction", "memory-fraction", "double", /*default=*/"0.9",
           "Share of device memory the plan may use">,
    Option<"allowTF32", "allow-tf32", "bool", /*default=*/"false",
           "Let f32 contractions run in TF32">,
    Option<"planJson", "plan-json", "std::string", /*default=*/"",
           "Also write the plan as JSON to this file">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

#endif // CLEAVE_PLAN_PASSES_TD
