// RUN: cleave-opt %s --cleave-print-op-cost=target=h100-sxm -o /dev/null 2>&1 | FileCheck %s
// RUN: cleave-opt %s --cleave-print-op-cost="target=h100-sxm allow-tf32=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TF32
// RUN: cleave-opt %s --cleave-print-op-cost="target=a100-80gb targets-dir=%cleave_src/targets" -o /dev/null 2>&1 | FileCheck %s --check-prefix=A100
// RUN: cleave-opt %s --cleave-print-op-cost="target=%cleave_src/targets/cpu.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU

// A two-layer MLP, batch 4, 64 -> 256 -> 16, in f32. On one H100 (f32 at
// 67 TFLOP/s * 0.7, HBM at 3.35 TB/s * 0.8) every op is memory-bound; the
// weights and the view cost nothing and get no remark.
func.func @mlp(%x: tensor<4x64xf32>) -> tensor<1x4x16xf32> {
  %w1 = cleave.weight "fc1.weight" {file = "/models/mlp.bin", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %b1 = cleave.weight "fc1.bias" {file = "/models/mlp.bin", offset = 65536 : i64, length = 1024 : i64} : tensor<256xf32>
  // 2*4*256*64 FLOPs; reads x (1 KiB) and w1 (64 KiB), writes 4 KiB.
  // CHECK: print-op-cost.mlir:[[@LINE+3]]:{{[0-9]+}}: remark: flops=131072 read=66560 written=4096 params=65536 f32 time=2.636e-08s memory-bound
  // A100: print-op-cost.mlir:[[@LINE+2]]:{{[0-9]+}}: remark: flops=131072 read=66560 written=4096 params=65536 f32 time=4.416e-08s memory-bound
  // CPU: print-op-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=131072 read=66560 written=4096 params=65536 f32 time=1.009e-05s memory-bound
  %h = cleave.matmul %x, %w1 : (tensor<4x64xf32>, tensor<64x256xf32>) -> tensor<4x256xf32>
  // CHECK: print-op-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=1024 read=5120 written=4096 params=1024 f32 time=3.439e-09s memory-bound
  %hb = cleave.add %h, %b1 : (tensor<4x256xf32>, tensor<256xf32>) -> tensor<4x256xf32>
  // CHECK: print-op-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=1024 read=4096 written=4096 params=0 f32 time=3.057e-09s memory-bound
  %r = cleave.relu %hb : tensor<4x256xf32>
  %w2 = cleave.weight "fc2.weight" {file = "/models/mlp.bin", offset = 66560 : i64, length = 16384 : i64} : tensor<256x16xf32>
  %rv = cleave.reshape %r : tensor<4x256xf32> -> tensor<1x4x256xf32>
  // CHECK: print-op-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=32768 read=20480 written=256 params=16384 f32 time=7.737e-09s memory-bound
  %y = cleave.matmul %rv, %w2 : (tensor<1x4x256xf32>, tensor<256x16xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}
// The function's remark comes after its ops'. Peak activations: h and hb
// (or hb and r) live together, 8 KiB; parameters: 65536 + 1024 + 16384.
// CHECK: print-op-cost.mlir:{{[0-9]+}}:1: remark: total on h100-sxm: flops=165888 read=96256 written=12544 time=4.060e-08s params=82944 peak-activations=8192
// A100: remark: total on a100-80gb: flops=165888
// CPU: remark: total on cpu: flops=165888

// Indexing: a gather reads its indices and the slices it copies, not the
// whole table; a scatter copies data and counts one operation per update
// under a reduction; one-hot and trilu compare and select per element.
func.func @indexing(%d: tensor<2x5x8xf32>, %i: tensor<2x3x1xi64>, %x: tensor<4x6xf32>, %ti: tensor<3x1xi64>, %tu: tensor<3x6xf32>,
                    %e: tensor<4x2xi64>, %es: tensor<4x6xi64>, %ids: tensor<2x3xi64>, %v: tensor<2xf32>, %m: tensor<2x4x4xf32>)
    -> (tensor<2x3x8xf32>, tensor<4x6xf32>, tensor<4x2xf32>, tensor<4x6xf32>, tensor<2x10x3xf32>, tensor<2x4x4xf32>) {
  // CHECK: print-op-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=0 read=240 written=192 params=0
  %0 = cleave.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x3x1xi64>) -> tensor<2x3x8xf32>
  // CHECK: print-op-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=18 read=192 written=96 params=0
  %1 = cleave.scatter_nd %x, %ti, %tu {reduction = "add"} : (tensor<4x6xf32>, tensor<3x1xi64>, tensor<3x6xf32>) -> tensor<4x6xf32>
  // CHECK: print-op-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=0 read=96 written=32 params=0
  %2 = cleave.gather_elements %x, %e {axis = 1 : i64} : (tensor<4x6xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  // CHECK: print-op-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=0 read=288 written=96 params=0
  %3 = cleave.scatter_elements %x, %es, %x {axis = 0 : i64} : (tensor<4x6xf32>, tensor<4x6xi64>, tensor<4x6xf32>) -> tensor<4x6xf32>
  // CHECK: print-op-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=120 read=56 written=240 params=0
  %4 = cleave.one_hot %ids, %v {depth = 10 : i64, axis = 1 : i64} : (tensor<2x3xi64>, tensor<2xf32>) -> tensor<2x10x3xf32>
  // CHECK: print-op-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=64 read=128 written=128 params=0
  %5 = cleave.trilu %m {k = 1 : i64} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3x8xf32>, tensor<4x6xf32>, tensor<4x2xf32>, tensor<4x6xf32>, tensor<2x10x3xf32>, tensor<2x4x4xf32>
}
// CHECK: remark: total on h100-sxm: flops=202

// A 256^3 f32 matmul (2^25 FLOPs, 768 KiB) is compute-bound on an H100 in
// f32 but memory-bound once it may run in TF32 (494.7 TFLOP/s).
func.func @square(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // CHECK: print-op-cost.mlir:[[@LINE+4]]:{{[0-9]+}}: remark: flops=33554432 read=524288 written=262144 params=0 f32 time=7.154e-07s compute-bound
  // TF32: print-op-cost.mlir:[[@LINE+3]]:{{[0-9]+}}: remark: flops=33554432 read=524288 written=262144 params=0 tf32 time=2.934e-07s memory-bound
  // A100: print-op-cost.mlir:[[@LINE+2]]:{{[0-9]+}}: remark: flops=33554432 read=524288 written=262144 params=0 f32 time=2.458e-06s compute-bound
  // CPU: print-op-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=33554432 read=524288 written=262144 params=0 f32 time=6.991e-04s compute-bound
  %c = cleave.matmul %a, %b : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %c : tensor<256x256xf32>
}
// CHECK: remark: total on h100-sxm: flops=33554432 read=524288 written=262144 time=7.154e-07s params=0 peak-activations=786432
// CHECK-NOT: remark
