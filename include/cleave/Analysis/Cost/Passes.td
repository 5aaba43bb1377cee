//===- Passes.td - cost model passes -----------------------*- tablegen -*-===//

#ifndef CLEAVE_ANALYSIS_COST_PASSES_TD
#define CLEAVE_ANALYSIS_COST_PASSES_TD

include "mlir/Pass/PassBase.td"

def PrintOpCost : Pass<"cleave-print-op-cost", "mlir::ModuleOp"> {
  let summary = "Report each op's FLOPs, bytes and roofline time on a target";
  let description = [{
    Loads a target (a preset name or the path of a target file) and emits a
    remark on every op that implements `cleave::CostInterface` with its
    FLOPs, the bytes it reads and writes, the parameter bytes among them, the
    precision it computes in and its roofline time on one device of the
    target, and which bound (compute or memory) sets that time. Each function
    then gets a remark with the totals, its parameter bytes and its peak live
    activation bytes. The IR is not changed. (`cleave-opt` attaches the op
    to every remark; `--mlir-print-op-on-diagnostic=false` leaves it out.)

    ```mlir
    // cleave-opt --cleave-print-op-cost=target=h100-sxm
    %y = cleave.matmul %x, %w : (tensor<4x64xf32>, tensor<64x256xf32>) -> tensor<4x256xf32>
    // remark: flops=131072 read=66560 written=4096 params=65536 f32 time=2.636e-08s memory-bound
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"",
           "Target preset name (targets/NAME.json) or path of a target file">,
    Option<"targetsDir", "targets-dir", "std::string", /*default=*/"",
           "Directory of the target presets (default: share/cleave/targets "
           "next to the executable's bin/)">,
    Option<"allowTF32", "allow-tf32", "bool", /*default=*/"false",
           "Let f32 contractions run in TF32">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

#endif // CLEAVE_ANALYSIS_COST_PASSES_TD
