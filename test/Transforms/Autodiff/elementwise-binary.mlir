// RUN: cleave-opt %s -split-input-file --cleave-autodiff=loss=loss | FileCheck %s

// The rules of broadcasting binary ops, where and cast. Each loss is
// sum(f(...) * dy), so the cotangent reaching f is the argument %dy.

// Broadcast operands get the cotangent summed over the dimensions they were
// broadcast along: the leading one reduced away, the stretched one kept.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.*}}: tensor<4x3xf32> {cleave.name = "x"}, %[[DY:[a-z0-9]+]]: tensor<4x3xf32> {cleave.name = "dy"})
// CHECK-SAME: -> (tensor<f32> {cleave.name = "loss"}, tensor<3xf32> {cleave.gradient_of = "a", cleave.name = "grad:a"}, tensor<4x1xf32> {cleave.gradient_of = "b", cleave.name = "grad:b"})
// CHECK: %[[N:.*]] = cleave.neg %[[DY]]
// CHECK-NEXT: %[[DB:.*]] = cleave.reduce_sum %[[N]] {axes = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[DA:.*]] = cleave.reduce_sum %[[DY]] {axes = array<i64: 0>, keepdims = false} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DA]], %[[DB]]
func.func @main(%x: tensor<4x3xf32> {cleave.name = "x"}, %dy: tensor<4x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %a = cleave.weight "a" {file = "/m.bin", offset = 0 : i64, length = 12 : i64} : tensor<3xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 12 : i64, length = 16 : i64} : tensor<4x1xf32>
  %s = cleave.add %x, %a : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %y = cleave.sub %s, %b : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  %p = cleave.mul %y, %dy : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// mul and div; a weight read by two ops gets the sum of their cotangents.

// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[DY:[a-z0-9]+]]: tensor<4x3xf32> {cleave.name = "dy"}
// CHECK: %[[A:.*]] = cleave.weight "a"
// CHECK: %[[B:.*]] = cleave.weight "b"
// CHECK: %[[M:.*]] = cleave.mul %[[A]], %[[B]]
// CHECK: %[[Y:.*]] = cleave.div %[[M]], %[[A]]
// CHECK: %[[DM:.*]] = cleave.div %[[DY]], %[[A]]
// CHECK-NEXT: %[[T:.*]] = cleave.mul %[[DY]], %[[Y]]
// CHECK-NEXT: %[[T2:.*]] = cleave.div %[[T]], %[[A]]
// CHECK-NEXT: %[[DIVRHS:.*]] = cleave.neg %[[T2]]
// CHECK-NEXT: %[[MULLHS:.*]] = cleave.mul %[[DM]], %[[B]]
// CHECK-NEXT: %[[P:.*]] = cleave.mul %[[DM]], %[[A]]
// CHECK-NEXT: %[[DB:.*]] = cleave.reduce_sum %[[P]] {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
// CHECK-NEXT: %[[DA:.*]] = cleave.add %[[DIVRHS]], %[[MULLHS]]
// CHECK-NEXT: return %{{.*}}, %[[DA]], %[[DB]]
func.func @main(%x: tensor<4x3xf32> {cleave.name = "x"}, %dy: tensor<4x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %a = cleave.weight "a" {file = "/m.bin", offset = 0 : i64, length = 48 : i64} : tensor<4x3xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 48 : i64, length = 4 : i64} : tensor<f32>
  %m = cleave.mul %a, %b : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %y = cleave.div %m, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = cleave.mul %y, %dy : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// pow: b a^(b - 1) for the base; a^b log(a) for an exponent that is a
// parameter, none for a constant one.

// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[DY:[a-z0-9]+]]: tensor<4x3xf32> {cleave.name = "dy"}
// CHECK: %[[A:.*]] = cleave.weight "a"
// CHECK: %[[E:.*]] = cleave.weight "e"
// CHECK: %[[TWO:.*]] = cleave.constant dense<2.000000e+00>
// CHECK: %[[SQ:.*]] = cleave.pow %[[A]], %[[TWO]]
// CHECK: %[[Y:.*]] = cleave.pow %[[SQ]], %[[E]]
// CHECK: %[[ONE:.*]] = cleave.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[EM1:.*]] = cleave.sub %[[E]], %[[ONE]]
// CHECK-NEXT: %[[LOW:.*]] = cleave.pow %[[SQ]], %[[EM1]]
// CHECK-NEXT: %[[DP:.*]] = cleave.mul %[[E]], %[[LOW]]
// CHECK-NEXT: %[[DSQ:.*]] = cleave.mul %[[DY]], %[[DP]]
// CHECK-NEXT: %[[LOG:.*]] = cleave.log %[[SQ]]
// CHECK-NEXT: %[[YLOG:.*]] = cleave.mul %[[Y]], %[[LOG]]
// CHECK-NEXT: %[[T:.*]] = cleave.mul %[[DY]], %[[YLOG]]
// CHECK-NEXT: %[[DE:.*]] = cleave.reduce_sum %[[T]] {axes = array<i64: 0, 1>, keepdims = false}
// CHECK-NEXT: %[[TWOA:.*]] = cleave.mul %[[TWO]], %[[A]]
// CHECK-NEXT: %[[DA:.*]] = cleave.mul %[[DSQ]], %[[TWOA]]
// CHECK-NEXT: return %{{.*}}, %[[DA]], %[[DE]]
func.func @main(%x: tensor<4x3xf32> {cleave.name = "x"}, %dy: tensor<4x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %a = cleave.weight "a" {file = "/m.bin", offset = 0 : i64, length = 48 : i64} : tensor<4x3xf32>
  %e = cleave.weight "e" {file = "/m.bin", offset = 48 : i64, length = 4 : i64} : tensor<f32>
  %two = cleave.constant dense<2.0> : tensor<f32>
  %sq = cleave.pow %a, %two : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %y = cleave.pow %sq, %e : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %p = cleave.mul %y, %dy : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// max passes the cotangent to the larger operand and half of it to each on
// a tie.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x3xf32> {cleave.name = "x"}, %[[DY:[a-z0-9]+]]: tensor<4x3xf32> {cleave.name = "dy"})
// CHECK: %[[A:.*]] = cleave.weight "a"
// CHECK: %[[TIE:.*]] = cleave.equal %[[A]], %[[X]]
// CHECK-NEXT: %[[HALF:.*]] = cleave.constant dense<5.000000e-01>
// CHECK-NEXT: %[[H:.*]] = cleave.mul %[[DY]], %[[HALF]]
// CHECK-NEXT: %[[Z:.*]] = cleave.constant dense<0.000000e+00>
// CHECK-NEXT: %[[SPLIT:.*]] = cleave.where %[[TIE]], %[[H]], %[[Z]]
// CHECK-NEXT: %[[WIN:.*]] = cleave.greater %[[A]], %[[X]]
// CHECK-NEXT: %[[DA:.*]] = cleave.where %[[WIN]], %[[DY]], %[[SPLIT]]
// CHECK-NEXT: return %{{.*}}, %[[DA]]
func.func @main(%x: tensor<4x3xf32> {cleave.name = "x"}, %dy: tensor<4x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %a = cleave.weight "a" {file = "/m.bin", offset = 0 : i64, length = 48 : i64} : tensor<4x3xf32>
  %y = cleave.max %a, %x : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = cleave.mul %y, %dy : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// where: the cotangent goes to the operand each element came from; the
// condition has none.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[C:[a-z0-9]+]]: tensor<4x3xi1> {cleave.name = "c"}, %[[DY:[a-z0-9]+]]: tensor<4x3xf32> {cleave.name = "dy"})
// CHECK: %[[Z:.*]] = cleave.constant dense<0.000000e+00>
// CHECK-NEXT: %[[DA:.*]] = cleave.where %[[C]], %[[DY]], %[[Z]]
// CHECK: %[[F:.*]] = cleave.where %[[C]], %{{.*}}, %[[DY]]
// CHECK-NEXT: %[[DB:.*]] = cleave.reduce_sum %[[F]] {axes = array<i64: 0>, keepdims = false} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DA]], %[[DB]]
func.func @main(%c: tensor<4x3xi1> {cleave.name = "c"}, %dy: tensor<4x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %a = cleave.weight "a" {file = "/m.bin", offset = 0 : i64, length = 48 : i64} : tensor<4x3xf32>
  %b = cleave.weight "b" {file = "/m.bin", offset = 48 : i64, length = 12 : i64} : tensor<3xf32>
  %y = cleave.where %c, %a, %b : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %p = cleave.mul %y, %dy : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A conversion between float types converts the cotangent back: an f16
// weight gets an f16 gradient.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[DY:[a-z0-9]+]]: tensor<4x3xf32> {cleave.name = "dy"})
// CHECK-SAME: tensor<4x3xf16> {cleave.gradient_of = "a", cleave.name = "grad:a"}
// CHECK: %[[DA:.*]] = cleave.cast %[[DY]] : tensor<4x3xf32> to tensor<4x3xf16>
// CHECK-NEXT: return %{{.*}}, %[[DA]]
func.func @main(%dy: tensor<4x3xf32> {cleave.name = "dy"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %a = cleave.weight "a" {file = "/m.bin", offset = 0 : i64, length = 24 : i64} : tensor<4x3xf16>
  %y = cleave.cast %a : tensor<4x3xf16> to tensor<4x3xf32>
  %p = cleave.mul %y, %dy : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = cleave.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
