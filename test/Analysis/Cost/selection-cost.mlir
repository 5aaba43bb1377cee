// RUN: cleave-opt %s --cleave-print-op-cost=target=h100-sxm -o /dev/null 2>&1 | FileCheck %s

// Top-k compares each of the 512 input elements about log2(k) = 2 times;
// arg max compares each once; a cumulative sum adds each once. All read
// their input and write their results (top-k: 128 values and 128 int64
// indices).
func.func @selection(%x: tensor<4x16x8xf32>, %n: tensor<4x16xi64>) {
  // CHECK: selection-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=1024 read=2048 written=1536 params=0
  %v, %i = cleave.topk %x {axis = 1 : i64, k = 4 : i64} : (tensor<4x16x8xf32>) -> (tensor<4x4x8xf32>, tensor<4x4x8xi64>)
  // CHECK: selection-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=512 read=2048 written=256 params=0
  %a = cleave.arg_max %x {axis = 1 : i64} : (tensor<4x16x8xf32>) -> tensor<4x1x8xi64>
  // CHECK: selection-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=64 read=512 written=512 params=0
  %c = cleave.cumsum %n {axis = 1 : i64} : tensor<4x16xi64>
  return
}
