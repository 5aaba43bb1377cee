// A calibration that measured each kernel with its data in the caches and
// streamed from beyond them (docs/targets.md, `cache_bytes` and the
// `streamed_` rates) prices an op at the resident rate and reports its
// miss time: what the call takes longer with its data out of the caches.
// A function runs as one stage: the share of its footprint (weights and
// peak activations) beyond the caches, 1 - cache_bytes / footprint, takes
// the miss times on top (`miss-fraction`).
// RUN: split-file --leading-lines %s %t
// RUN: cleave-opt %t/ops.mlir --cleave-print-op-cost=target=%t/streamed.json -o /dev/null 2>&1 | FileCheck %s

//--- ops.mlir
// 2*64^3 = 524288 FLOPs, below the first sample: 1e9 FLOP/s resident, so
// 5.24288e-4 + 1e-6; 5e8 streamed, 5.24288e-4 longer.
// CHECK: ops.mlir:[[@LINE+4]]:{{[0-9]+}}: remark: flops=524288 {{.*}} time=5.253e-04s compute-bound class=matmul miss=5.243e-04s
// 32768 bytes of activations fit in the 100000 of the caches: no miss.
// CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: total on streamed: {{.*}} time=5.253e-04s params=0 peak-activations=32768 miss-fraction=0.000
func.func @fits(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = cleave.matmul %a, %a : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
// 1.6e7 FLOPs, 0.60206 of the way in log(size) from 1e6 to 1e8: resident
// 1e9 * 10^0.60206 = 4e9 FLOP/s (4e-3 s + 1e-6), streamed 5e8 * 5^0.60206
// = 1.3176e9 (1.2143e-2 s): 8.143e-3 longer. The transpose has no streamed
// rate: 320000 bytes at 1e9 B/s + 1e-6, no miss time.
// 320000 bytes of activations: 1 - 100000 / 320000 = 0.6875 of the miss
// time counts, 4.001e-3 + 3.21e-4 + 0.6875 * 8.143e-3 = 9.920e-3.
// CHECK: ops.mlir:[[@LINE+4]]:{{[0-9]+}}: remark: flops=16000000 {{.*}} time=4.001e-03s compute-bound class=matmul miss=8.143e-03s
// CHECK: ops.mlir:[[@LINE+4]]:{{[0-9]+}}: remark: flops=0 {{.*}} time=3.210e-04s memory-bound class=transpose{{$}}
// CHECK: ops.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: total on streamed: {{.*}} time=9.920e-03s params=0 peak-activations=320000 miss-fraction=0.688
func.func @spills(%b: tensor<200x200xf32>) -> tensor<200x200xf32> {
  %0 = cleave.matmul %b, %b : (tensor<200x200xf32>, tensor<200x200xf32>) -> tensor<200x200xf32>
  %1 = cleave.transpose %0 {perm = array<i64: 1, 0>} : (tensor<200x200xf32>) -> tensor<200x200xf32>
  return %1 : tensor<200x200xf32>
}

//--- streamed.json
{
  "name": "streamed",
  "devices": {"name": "d", "kind": "cpu", "peak_flops_per_s": {"f32": 1e12},
              "memory_bytes": 1000000000, "memory_bandwidth_bytes_per_s": 1e9,
              "compute_efficiency": 1, "memory_efficiency": 1},
  "nodes": {"count": 1, "devices_per_node": 1},
  "links": {"intra_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0},
            "inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 0}},
  "calibration": {
    "threads": 1,
    "call_overhead_s": 1e-6,
    "cache_bytes": 100000,
    "compute": {
      "matmul": [{"flops": 1e6, "flops_per_s": 1e9, "streamed_flops_per_s": 5e8},
                 {"flops": 1e8, "flops_per_s": 1e10, "streamed_flops_per_s": 2.5e9}]
    },
    "memory": {
      "transpose": [{"bytes": 1e3, "bytes_per_s": 1e9}]
    }
  }
}
