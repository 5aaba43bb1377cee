// A calibrated target prices each op by the throughput measured for its
// kernel class at its size (docs/targets.md, `calibration`): the call
// overhead (1 us here) plus size / rate(size), the rate interpolated in
// log-log space between samples and clamped outside them. Classes without
// a table keep the roofline (1 TFLOP/s, 1 GB/s, efficiencies of 1), plus
// the overhead. Elementwise ops and activations, which programs fuse into
// loops of their own, call no kernel and take no overhead.
// RUN: split-file --leading-lines %s %t
// RUN: cleave-opt %t/ops.mlir --cleave-print-op-cost=target=%t/calibrated.json -o /dev/null 2>&1 | FileCheck %s
// RUN: cleave-opt %t/ops.mlir --cleave-print-op-cost=target=%t/plain.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAIN

//--- ops.mlir
func.func @f(%a: tensor<64x64xf32>, %b: tensor<100x100xf32>, %s: tensor<4x64xf32>, %w: tensor<64x256xf32>,
             %x: tensor<250xf32>, %z: tensor<250xf32>, %i: tensor<1x8x10x10xf32>, %k: tensor<8x1x3x3xf32>,
             %lx: tensor<2x1x3xf32>, %lw: tensor<2x16x3xf32>, %lr: tensor<2x16x4xf32>, %lb: tensor<2x32xf32>,
             %cx: tensor<1x4x2x2xf32>, %cw: tensor<4x4x3x3xf32>,
             %aq: tensor<1x4x3x8xf32>, %ak: tensor<1x2x5x8xf32>, %av: tensor<1x2x5x6xf32>)
    -> (tensor<64x64xf32>, tensor<100x100xf32>, tensor<4x256xf32>, tensor<250xf32>, tensor<250xf32>, tensor<1x8x10x10xf32>,
        tensor<100x100xf32>, tensor<2x2x1x4xf32>, tensor<1x4x2x2xf32>, tensor<1x4x3x6xf32>, tensor<1x8x5x5xf32>) {
  // 2*64^3 = 524288 FLOPs, below the first sample (1e6): 1e9 FLOP/s.
  // 524288 / 1e9 + 1e-6 = 5.25288e-4. Uncalibrated: 32768 bytes (a is
  // read once) at 1 GB/s.
  // CHECK: ops.mlir:[[@LINE+2]]:{{[0-9]+}}: remark: flops=524288 {{.*}} time=5.253e-04s compute-bound class=matmul
  // PLAIN: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=524288 {{.*}} time=3.277e-05s memory-bound{{$}}
  %0 = cleave.matmul %a, %a : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  // 2e6 FLOPs between the samples (1e6, 1e9) and (1e8, 1e10): the rate is
  // 1e9 * (2e6 / 1e6)^0.5 = 1.41421e9, so 2e6 / 1.41421e9 + 1e-6 = 1.41521e-3.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=2000000 {{.*}} time=1.415e-03s compute-bound class=matmul
  %1 = cleave.matmul %b, %b : (tensor<100x100xf32>, tensor<100x100xf32>) -> tensor<100x100xf32>
  // Four rows: matmul_skinny, which has no table: the roofline of
  // (256 + 16384 + 1024) * 4 = 70656 bytes at 1 GB/s, plus 1e-6.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=131072 {{.*}} time=7.166e-05s memory-bound class=matmul_skinny
  %2 = cleave.matmul %s, %w : (tensor<4x64xf32>, tensor<64x256xf32>) -> tensor<4x256xf32>
  // 3000 bytes between (1e3, 1e9) and (1e7, 1e11) of `elementwise`: the rate
  // is 1e9 * 3^0.5 = 1.73205e9, so 3000 / 1.73205e9 = 1.73205e-6.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=250 read=2000 written=1000 {{.*}} time=1.732e-06s memory-bound class=elementwise
  %3 = cleave.add %x, %z : (tensor<250xf32>, tensor<250xf32>) -> tensor<250xf32>
  // `activation` has no table: 2000 bytes at 1 GB/s.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=1250 {{.*}} time=2.000e-06s memory-bound class=activation
  %4 = cleave.gelu %x : tensor<250xf32>
  // Depthwise: 2 * 800 outputs * 9 = 14400 FLOPs at the one sample's
  // 1e8 FLOP/s: 1.44e-4 + 1e-6.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=14400 {{.*}} time=1.450e-04s compute-bound class=conv_depthwise
  %5 = cleave.conv %i, %k {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x8x10x10xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x10x10xf32>
  // A transpose is a `transpose`, not a `copy`: 80000 bytes read and
  // written at the one sample's 1e9 B/s: 8e-5 + 1e-6.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=0 read=40000 written=40000 {{.*}} time=8.100e-05s memory-bound class=transpose
  %6 = cleave.transpose %b {perm = array<i64: 1, 0>} : (tensor<100x100xf32>) -> tensor<100x100xf32>
  // An LSTM is `recurrent`: 2 directions x 2 steps x (2 * 16 * (3 + 4)
  // + (9 + 2 * 4) * 4) = 1168 FLOPs at the one sample's 1e8 FLOP/s:
  // 1.168e-5 + 1e-6.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=1168 {{.*}} time=1.268e-05s compute-bound class=recurrent
  %y, %h, %c = cleave.lstm %lx, %lw, %lr bias %lb {activations = ["Sigmoid", "Tanh", "Tanh", "Sigmoid", "Tanh", "Tanh"], direction = "bidirectional", hidden_size = 4 : i64} : (tensor<2x1x3xf32>, tensor<2x16x3xf32>, tensor<2x16x4xf32>, tensor<2x32xf32>) -> (tensor<2x2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>)
  // `conv` is by map size: 1152 FLOPs on a 2x2 map (4 outputs), halfway
  // in log(pixels) between the rows of 1 and 16 outputs (1e8 and 1e10
  // FLOP/s at that size): 1e9, so 1152 / 1e9 + 1e-6.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=1152 {{.*}} time=2.152e-06s compute-bound class=conv
  %8 = cleave.conv %cx, %cw {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x2x2xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x2x2xf32>
  // Fused attention is `attention`, not `matmul`: 12 query rows x 5 keys x
  // (2 * 8 + 5 + 2 * 6) = 1980 FLOPs at the one sample's 1e8 FLOP/s:
  // 1.98e-5 + 1e-6.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=1980 {{.*}} time=2.080e-05s compute-bound class=attention
  %9 = cleave.attention %aq, %ak, %av {kv_num_heads = 2 : i64, q_num_heads = 4 : i64, scale = 0.5 : f32} : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x6xf32>) -> tensor<1x4x3x6xf32>
  // A windowed pool is `pool`: 8 x 5 x 5 outputs x 9 comparisons = 1800
  // FLOPs at the one sample's 1e8 FLOP/s: 1.8e-5 + 1e-6.
  // CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=1800 {{.*}} time=1.900e-05s compute-bound class=pool
  %10 = cleave.max_pool %i {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x10x10xf32>) -> tensor<1x8x5x5xf32>
  return %0, %1, %2, %3, %4, %5, %6, %y, %8, %9, %10 : tensor<64x64xf32>, tensor<100x100xf32>, tensor<4x256xf32>, tensor<250xf32>, tensor<250xf32>, tensor<1x8x10x10xf32>, tensor<100x100xf32>, tensor<2x2x1x4xf32>, tensor<1x4x2x2xf32>, tensor<1x4x3x6xf32>, tensor<1x8x5x5xf32>
}

//--- calibrated.json
{
  "name": "calibrated",
  "devices": {"name": "d", "kind": "cpu", "peak_flops_per_s": {"f32": 1e12},
              "memory_bytes": 1000000000, "memory_bandwidth_bytes_per_s": 1e9,
              "compute_efficiency": 1, "memory_efficiency": 1},
  "nodes": {"count": 1, "devices_per_node": 1},
  "links": {"intra_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0},
            "inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0}},
  "calibration": {
    "threads": 1,
    "call_overhead_s": 1e-6,
    "compute": {
      "matmul": [{"flops": 1e6, "flops_per_s": 1e9}, {"flops": 1e8, "flops_per_s": 1e10}],
      "conv_depthwise": [{"flops": 1e4, "flops_per_s": 1e8}],
      "conv": [{"flops": 1e3, "flops_per_s": 1e8, "pixels": 1},
               {"flops": 1e3, "flops_per_s": 1e10, "pixels": 16}],
      "recurrent": [{"flops": 1e3, "flops_per_s": 1e8}],
      "attention": [{"flops": 1e3, "flops_per_s": 1e8}],
      "pool": [{"flops": 1e3, "flops_per_s": 1e8}]
    },
    "memory": {
      "elementwise": [{"bytes": 1e3, "bytes_per_s": 1e9}, {"bytes": 1e7, "bytes_per_s": 1e11}],
      "transpose": [{"bytes": 1e3, "bytes_per_s": 1e9}]
    }
  }
}

//--- plain.json
{
  "name": "plain",
  "devices": {"name": "d", "kind": "cpu", "peak_flops_per_s": {"f32": 1e12},
              "memory_bytes": 1000000000, "memory_bandwidth_bytes_per_s": 1e9,
              "compute_efficiency": 1, "memory_efficiency": 1},
  "nodes": {"count": 1, "devices_per_node": 1},
  "links": {"intra_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0},
            "inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0}}
}
