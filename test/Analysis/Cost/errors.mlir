// Each way a target can be wrong, and what cleave-opt says about it.
// RUN: split-file %s %t
// RUN: not cleave-opt %t/input.mlir --cleave-print-op-cost 2>&1 | FileCheck %s --check-prefix=NO-TARGET
// RUN: not cleave-opt %t/input.mlir --cleave-print-op-cost=target=h100 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not cleave-opt %t/input.mlir --cleave-print-op-cost="target=h100-sxm targets-dir=%t/nowhere" 2>&1 | FileCheck %s --check-prefix=NO-DIR
// RUN: not cleave-opt %t/input.mlir --cleave-print-op-cost=target=%t/absent.json 2>&1 | FileCheck %s --check-prefix=ABSENT
// RUN: not cleave-opt %t/input.mlir --cleave-print-op-cost=target=%t/missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not cleave-opt %t/input.mlir --cleave-print-op-cost=target=%t/type.json 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not cleave-opt %t/input.mlir --cleave-print-op-cost=target=%t/zero.json 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not cleave-opt %t/input.mlir --cleave-print-op-cost=target=%t/dtype.json 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not cleave-opt %t/input.mlir --cleave-print-op-cost=target=%t/syntax.json 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not cleave-opt %t/dynamic.mlir --cleave-print-op-cost=target=h100-sxm 2>&1 | FileCheck %s --check-prefix=DYNAMIC

// NO-TARGET: error: cleave-print-op-cost: no target; pass target=NAME (a preset) or target=PATH
// UNKNOWN: error: unknown target 'h100': no h100.json in '{{.*}}share/cleave/targets' (presets: a100-80gb, cpu, h100-sxm, h200-sxm)
// NO-DIR: error: target 'h100-sxm': targets directory '{{.*}}nowhere' does not exist
// ABSENT: error: cannot read target file '{{.*}}absent.json': No such file or directory
// MISSING: error: {{.*}}missing.json: devices.memory_bytes: missing required field
// TYPE: error: {{.*}}type.json: nodes.devices_per_node: expected an integer, got a string
// ZERO: error: {{.*}}zero.json: devices.memory_bytes: expected a positive number, got 0
// DTYPE: error: {{.*}}dtype.json: devices.peak_flops_per_s.fp8: unknown dtype (expected f64, f32, tf32, f16, bf16)
// SYNTAX: error: {{.*}}syntax.json:5:3: invalid JSON: Expected , or } after object property
// DYNAMIC: dynamic.mlir:2:8: error: cost model needs statically shaped tensors; operand #0 has type 'tensor<?x4xf32>'

//--- input.mlir
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

//--- dynamic.mlir
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = cleave.relu %x : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

//--- missing.json
{
  "name": "missing",
  "devices": {"name": "d", "peak_flops_per_s": {"f32": 1e12},
              "memory_bandwidth_bytes_per_s": 1e12,
              "compute_efficiency": 1, "memory_efficiency": 1},
  "nodes": {"count": 1, "devices_per_node": 1},
  "links": {"intra_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0},
            "inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0}}
}

//--- type.json
{
  "name": "type",
  "devices": {"name": "d", "peak_flops_per_s": {"f32": 1e12},
              "memory_bytes": 1000, "memory_bandwidth_bytes_per_s": 1e12,
              "compute_efficiency": 1, "memory_efficiency": 1},
  "nodes": {"count": 1, "devices_per_node": "8"},
  "links": {"intra_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0},
            "inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0}}
}

//--- zero.json
{
  "name": "zero",
  "devices": {"name": "d", "peak_flops_per_s": {"f32": 1e12},
              "memory_bytes": 0, "memory_bandwidth_bytes_per_s": 1e12,
              "compute_efficiency": 1, "memory_efficiency": 1},
  "nodes": {"count": 1, "devices_per_node": 1},
  "links": {"intra_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0},
            "inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0}}
}

//--- dtype.json
{
  "name": "dtype",
  "devices": {"name": "d", "peak_flops_per_s": {"f32": 1e12, "fp8": 4e15},
              "memory_bytes": 1000, "memory_bandwidth_bytes_per_s": 1e12,
              "compute_efficiency": 1, "memory_efficiency": 1},
  "nodes": {"count": 1, "devices_per_node": 1},
  "links": {"intra_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0},
            "inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0}}
}

//--- syntax.json
{
  "name": "syntax",
  "devices": {"name": "d", "peak_flops_per_s": {"f32": 1e12},
              "memory_bytes": 1000, "memory_bandwidth_bytes_per_s": 1e12}
  "nodes": {"count": 1, "devices_per_node": 1}
}
