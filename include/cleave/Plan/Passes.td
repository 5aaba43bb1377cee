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
    JSON (docs/plan-format.md).

    The pass also takes every plan option, declared once in
    `cleave::PlanOptions::bindOptions` and spelled as on the command line of
    `cleave plan` without the dashes: `pp`, `tp`, `dp`, `microbatches`,
    `batch` (left at 0: searched), `objective` (throughput or latency),
    `sequence-parallel`, `weigh-sequence-parallel`, `uniform-stages`,
    `memory-fraction`, `allow-tf32`,
    `fuse-pointwise`.

    With `annotate=false` the IR is left as it is (but for a training
    plan's `cleave.zero`, the ZeRO stage the update takes) and the plan is
    only reported: it is made on a copy whose fused projections are split as
    `cleave plan` splits them, and a function that computes nothing (its
    ops are all parameters and views) gets the trivial plan. A one-device
    compile plans so, since its program runs the function as simplified.

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
    Option<"annotate", "annotate", "bool", /*default=*/"true",
           "Write the plan onto the IR (false: only report it)">,
    Option<"planJson", "plan-json", "std::string", /*default=*/"",
           "Also write the plan as JSON to this file">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

#endif // CLEAVE_PLAN_PASSES_TD
