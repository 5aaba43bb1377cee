// RUN: cleave-opt %s --cleave-print-op-cost=target=h100-sxm -o /dev/null 2>&1 | FileCheck %s

// SGD's update of a 64x256 parameter: with momentum 8 FLOPs per element
// and the buffer read and written (64 KiB each way) beside the gradient,
// the parameter, the scale and the step; without momentum 4 FLOPs and no
// buffer.
func.func @sgd(%g: tensor<64x256xf32>, %scale: tensor<f32>, %p: tensor<64x256xf32>) {
  %s = cleave.state "sgd.step:w" : tensor<f32>
  %b = cleave.state "sgd.momentum_buffer:w" : tensor<64x256xf32>
  // CHECK: update-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=131072 read=196616 written=131076 params=65540 f32
  %p2, %b2, %s2 = cleave.sgd_update %g, %scale, %p, %b, %s {learning_rate = 1.0e-01 : f64, momentum = 9.0e-01 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<64x256xf32>, tensor<f32>
  %t = cleave.state "sgd.step:v" : tensor<f32>
  // CHECK: update-cost.mlir:[[@LINE+1]]:{{[0-9]+}}: remark: flops=65536 read=131080 written=65540 params=4 f32
  %p3, %t2 = cleave.sgd_update %g, %scale, %p, %t {learning_rate = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false, warmup_steps = 0 : i64, decay_steps = 0 : i64, min_lr_ratio = 0.0 : f64} : tensor<64x256xf32>, tensor<f32>
  return
}
