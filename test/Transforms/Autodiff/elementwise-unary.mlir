// RUN: cleave-opt %s -split-input-file --cleave-autodiff=loss=loss | FileCheck %s

// The rules of elementwise ops. Each function's loss is sum(f(w) * dy), so
// the cotangent reaching f is the argument %dy (the ones of the sum's
// cotangent fold away) and the weight's gradient is f's rule applied to it.
// The gradient result, named and marked with its weight, follows the loss.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK-SAME: -> (tensor<f32> {cleave.name = "loss"}, tensor<2x3xf32> {cleave.gradient_of = "w", cleave.name = "grad:w"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[D:.*]] = cleave.neg %[[DY]] : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.neg %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[Y:.*]] = cleave.exp %[[W]]
// CHECK: %[[D:.*]] = cleave.mul %[[DY]], %[[Y]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.exp %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[D:.*]] = cleave.div %[[DY]], %[[W]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.log %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[Y:.*]] = cleave.sqrt %[[W]]
// CHECK: %[[TWO:.*]] = cleave.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[TWICE:.*]] = cleave.mul %[[Y]], %[[TWO]]
// CHECK-NEXT: %[[D:.*]] = cleave.div %[[DY]], %[[TWICE]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.sqrt %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[Y:.*]] = cleave.reciprocal %[[W]]
// CHECK: %[[SQ:.*]] = cleave.mul %[[Y]], %[[Y]]
// CHECK-NEXT: %[[P:.*]] = cleave.mul %[[DY]], %[[SQ]]
// CHECK-NEXT: %[[D:.*]] = cleave.neg %[[P]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.reciprocal %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[Y:.*]] = cleave.tanh %[[W]]
// CHECK: %[[SQ:.*]] = cleave.mul %[[Y]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = cleave.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DT:.*]] = cleave.sub %[[ONE]], %[[SQ]]
// CHECK-NEXT: %[[D:.*]] = cleave.mul %[[DY]], %[[DT]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.tanh %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[Y:.*]] = cleave.sigmoid %[[W]]
// CHECK: %[[ONE:.*]] = cleave.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[C:.*]] = cleave.sub %[[ONE]], %[[Y]]
// CHECK-NEXT: %[[DS:.*]] = cleave.mul %[[Y]], %[[C]]
// CHECK-NEXT: %[[D:.*]] = cleave.mul %[[DY]], %[[DS]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.sigmoid %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// relu passes the cotangent where x > 0 (0 at 0, as PyTorch).
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[Z:.*]] = cleave.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[POS:.*]] = cleave.greater %[[W]], %[[Z]]
// CHECK: %[[D:.*]] = cleave.where %[[POS]], %[[DY]], %{{.*}} : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.relu %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// 2 / sqrt(pi) exp(-x^2).
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[SQ:.*]] = cleave.mul %[[W]], %[[W]]
// CHECK-NEXT: %[[N:.*]] = cleave.neg %[[SQ]]
// CHECK-NEXT: %[[E:.*]] = cleave.exp %[[N]]
// CHECK-NEXT: %[[K:.*]] = cleave.constant dense<1.12837923> : tensor<f32>
// CHECK-NEXT: %[[DE:.*]] = cleave.mul %[[E]], %[[K]]
// CHECK-NEXT: %[[D:.*]] = cleave.mul %[[DY]], %[[DE]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.erf %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[C:.*]] = cleave.cos %[[W]]
// CHECK-NEXT: %[[D:.*]] = cleave.mul %[[DY]], %[[C]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.sin %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[S:.*]] = cleave.sin %[[W]]
// CHECK-NEXT: %[[P:.*]] = cleave.mul %[[DY]], %[[S]]
// CHECK-NEXT: %[[D:.*]] = cleave.neg %[[P]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.cos %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[S:.*]] = cleave.sigmoid %[[W]]
// CHECK-NEXT: %[[D:.*]] = cleave.mul %[[DY]], %[[S]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.softplus %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// floor is flat wherever it is differentiable.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[D:.*]] = cleave.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.floor %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// abs: sign(x), 0 at 0.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[N:.*]] = cleave.neg %[[DY]]
// CHECK: %[[NEG:.*]] = cleave.less %[[W]]
// CHECK: %[[A:.*]] = cleave.where %[[NEG]], %[[N]], %{{.*}}
// CHECK: %[[POS:.*]] = cleave.greater %[[W]]
// CHECK-NEXT: %[[D:.*]] = cleave.where %[[POS]], %[[DY]], %[[A]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.abs %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[A:.*]] = cleave.constant dense<1.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[S:.*]] = cleave.mul %[[DY]], %[[A]]
// CHECK: %[[POS:.*]] = cleave.greater %[[W]]
// CHECK-NEXT: %[[D:.*]] = cleave.where %[[POS]], %[[DY]], %[[S]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.leaky_relu %w {alpha = 1.000000e-01 : f32} : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// elu below 0: alpha exp(x) = y + alpha.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[Y:.*]] = cleave.elu %[[W]]
// CHECK: %[[A:.*]] = cleave.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[YA:.*]] = cleave.add %[[Y]], %[[A]]
// CHECK-NEXT: %[[S:.*]] = cleave.mul %[[DY]], %[[YA]]
// CHECK: %[[POS:.*]] = cleave.greater %[[W]]
// CHECK-NEXT: %[[D:.*]] = cleave.where %[[POS]], %[[DY]], %[[S]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.elu %w {alpha = 2.000000e+00 : f32} : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Exact gelu: Phi(x) + x phi(x).
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[HALF:.*]] = cleave.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[ERF:.*]] = cleave.erf
// CHECK: %[[CDF:.*]] = cleave.mul %[[HALF]], %{{.*}}
// CHECK: %[[E:.*]] = cleave.exp
// CHECK: cleave.constant dense<0.398942292> : tensor<f32>
// CHECK: %[[XPDF:.*]] = cleave.mul %[[W]], %{{.*}}
// CHECK-NEXT: %[[DG:.*]] = cleave.add %[[CDF]], %[[XPDF]]
// CHECK-NEXT: %[[D:.*]] = cleave.mul %[[DY]], %[[DG]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.gelu %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tanh gelu: 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2 / pi) (1 + 3 c x^2).
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[T:.*]] = cleave.tanh
// CHECK: cleave.constant dense<1.341450e-01> : tensor<f32>
// CHECK: %[[T2:.*]] = cleave.mul %[[T]], %[[T]]
// CHECK: %[[ONET:.*]] = cleave.add %{{.*}}, %[[T]] : (tensor<f32>, tensor<2x3xf32>)
// CHECK-NEXT: %[[OUTER:.*]] = cleave.mul %{{.*}}, %[[ONET]]
// CHECK-NEXT: %[[DG:.*]] = cleave.add %[[OUTER]], %{{.*}}
// CHECK-NEXT: %[[D:.*]] = cleave.mul %[[DY]], %[[DG]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.gelu %w {approximate = "tanh"} : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// clip passes the cotangent inside its bounds, bounds included.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[LO:.*]] = cleave.greater_equal %[[W]]
// CHECK: %[[HI:.*]] = cleave.less_equal %[[W]]
// CHECK-NEXT: %[[IN:.*]] = cleave.and %[[LO]], %[[HI]]
// CHECK: %[[D:.*]] = cleave.where %[[IN]], %[[DY]], %{{.*}}
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.clip %w {min = -1.000000e+00 : f64, max = 1.000000e+00 : f64} : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[BELOW:.*]] = cleave.less %[[W]]
// CHECK: %[[INSIDE:.*]] = cleave.less_equal %[[W]]
// CHECK: %[[SLOPE:.*]] = cleave.add
// CHECK-NEXT: %[[S:.*]] = cleave.mul %[[DY]], %[[SLOPE]]
// CHECK-NEXT: %[[U:.*]] = cleave.where %[[INSIDE]], %[[S]], %[[DY]]
// CHECK: %[[D:.*]] = cleave.where %[[BELOW]], %{{.*}}, %[[U]]
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.hard_swish %w : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<2x3xf32> {cleave.name = "dy"})
// CHECK: %[[W:.*]] = cleave.weight "w"
// CHECK: %[[A:.*]] = cleave.and
// CHECK: %[[S:.*]] = cleave.mul %[[DY]], %{{.*}}
// CHECK: %[[D:.*]] = cleave.where %[[A]], %[[S]], %{{.*}}
// CHECK: return %{{.*}}, %[[D]]
func.func @main(%dy: tensor<2x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %w = cleave.weight "w" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<2x3xf32>
  %y = cleave.hard_sigmoid %w {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} : tensor<2x3xf32>
  %p = cleave.mul %y, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
