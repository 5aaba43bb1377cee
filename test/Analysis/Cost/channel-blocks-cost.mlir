// A calibration whose convolution tables ran in the kernels' channel
// blocks (`conv_block`, docs/targets.md) prices a convolution on oneDNN
// (2^18 multiply-adds or more) whose channels the block does not divide
// as the kernels run it: its work over channels padded to whole blocks
// (`blocks`, the share that is real), and its NCHW input or output
// reordered into the blocks and back (`reorder`, at the transpose table's
// rate). A calibration without `conv_block` timed NCHW and adds neither.
// RUN: split-file --leading-lines %s %t
// RUN: cleave-opt %t/ops.mlir --cleave-print-op-cost=target=%t/blocked.json -o /dev/null 2>&1 | FileCheck %s
// RUN: cleave-opt %t/ops.mlir --cleave-print-op-cost=target=%t/nchw.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=NCHW

//--- ops.mlir
func.func @convs(%x32: tensor<1x32x32x32xf32>, %x24: tensor<1x24x32x32xf32>,
                 %x64: tensor<1x64x32x32xf32>, %small: tensor<1x24x4x4xf32>,
                 %image: tensor<1x3x32x32xf32>)
    -> (tensor<1x64x32x32xf32>, tensor<1x64x32x32xf32>, tensor<1x24x32x32xf32>,
        tensor<1x24x4x4xf32>, tensor<1x64x32x32xf32>) {
  %w32 = cleave.constant dense<1.0> : tensor<64x32x1x1xf32>
  %w24 = cleave.constant dense<1.0> : tensor<64x24x1x1xf32>
  %w64 = cleave.constant dense<1.0> : tensor<24x64x1x1xf32>
  %wsmall = cleave.constant dense<1.0> : tensor<24x24x1x1xf32>
  %wimage = cleave.constant dense<1.0> : tensor<64x3x3x3xf32>
  // 32 -> 64: whole blocks. 2 * 65536 * 32 FLOPs at 1e10 FLOP/s.
  // CHECK: ops.mlir:[[@LINE+2]]:{{[0-9]+}}: remark: flops=4194304 {{.*}} time=4.194e-04s compute-bound class=conv_pointwise{{$}}
  // NCHW: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=4194304 {{.*}} time=4.194e-04s compute-bound class=conv_pointwise{{$}}
  %a = cleave.conv %x32, %w32 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x32x32xf32>, tensor<64x32x1x1xf32>) -> tensor<1x64x32x32xf32>
  // 24 -> 64: 24 of 32 input channels real, so the work of 32 (4.194e-4
  // s), and X's 98304 bytes read and written at 1e9 B/s (1.966e-4 s).
  // CHECK: ops.mlir:[[@LINE+2]]:{{[0-9]+}}: remark: flops=3145728 {{.*}} time=6.160e-04s compute-bound class=conv_pointwise blocks=0.750 reorder=1.966e-04s
  // NCHW: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=3145728 {{.*}} time=3.146e-04s compute-bound class=conv_pointwise{{$}}
  %b = cleave.conv %x24, %w24 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x24x32x32xf32>, tensor<64x24x1x1xf32>) -> tensor<1x64x32x32xf32>
  // 64 -> 24: the same on the output side.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=3145728 {{.*}} time=6.160e-04s compute-bound class=conv_pointwise blocks=0.750 reorder=1.966e-04s
  %c = cleave.conv %x64, %w64 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x64x32x32xf32>, tensor<24x64x1x1xf32>) -> tensor<1x24x32x32xf32>
  // 9216 multiply-adds: the runtime's own NCHW kernels, no blocks.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=18432 {{.*}} class=conv_pointwise{{$}}
  %d = cleave.conv %small, %wsmall {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x24x4x4xf32>, tensor<24x24x1x1xf32>) -> tensor<1x24x4x4xf32>
  // 3 input channels, fewer than a block: nothing padded, X reordered
  // (24576 bytes, 2.458e-5 s) after 3538944 FLOPs at 1e10 FLOP/s.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=3538944 {{.*}} time=3.785e-04s compute-bound class=conv reorder=2.458e-05s
  %e = cleave.conv %image, %wimage {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<1x64x32x32xf32>
  return %a, %b, %c, %d, %e : tensor<1x64x32x32xf32>, tensor<1x64x32x32xf32>, tensor<1x24x32x32xf32>, tensor<1x24x4x4xf32>, tensor<1x64x32x32xf32>
}

//--- blocked.json
{
  "name": "blocked",
  "devices": {"name": "d", "kind": "cpu", "isa": "x86-64-v4",
              "peak_flops_per_s": {"f32": 1e12},
              "memory_bytes": 1000000000, "memory_bandwidth_bytes_per_s": 1e9,
              "compute_efficiency": 1, "memory_efficiency": 1},
  "nodes": {"count": 1, "devices_per_node": 1},
  "links": {"intra_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0},
            "inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0}},
  "calibration": {
    "threads": 1,
    "call_overhead_s": 0,
    "conv_block": 16,
    "compute": {
      "conv": [{"flops": 1e6, "flops_per_s": 1e10}],
      "conv_pointwise": [{"flops": 1e6, "flops_per_s": 1e10}]
    },
    "memory": {
      "transpose": [{"bytes": 1e3, "bytes_per_s": 1e9}]
    }
  }
}

//--- nchw.json
{
  "name": "nchw",
  "devices": {"name": "d", "kind": "cpu", "isa": "x86-64-v4",
              "peak_flops_per_s": {"f32": 1e12},
              "memory_bytes": 1000000000, "memory_bandwidth_bytes_per_s": 1e9,
              "compute_efficiency": 1, "memory_efficiency": 1},
  "nodes": {"count": 1, "devices_per_node": 1},
  "links": {"intra_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0},
            "inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0}},
  "calibration": {
    "threads": 1,
    "call_overhead_s": 0,
    "compute": {
      "conv": [{"flops": 1e6, "flops_per_s": 1e10}],
      "conv_pointwise": [{"flops": 1e6, "flops_per_s": 1e10}]
    },
    "memory": {
      "transpose": [{"bytes": 1e3, "bytes_per_s": 1e9}]
    }
  }
}
