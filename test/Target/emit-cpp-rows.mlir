// RUN: cleave-translate --emit-cpp %s --split-input-file | FileCheck %s

// A row-wise broadcast (a [2, 3, 1] operand over [2, 3, 5]) repeats one
// element per row; a [3, 5] operand walks the rows modulo its size. A row
// this short is computed into a local array, then stored: no store in the
// computing loop may alias its loads, so the C++ compiler vectorises it.
// CHECK-LABEL: // 0: sub + add
// CHECK: for (int64_t o = 0; o < 6; ++o) {
// CHECK-NEXT: const int64_t b0 = o * 5;
// CHECK-NEXT: const int64_t b1 = o;
// CHECK-NEXT: const int64_t b2 = (o % 3) * 5;
// CHECK-NEXT: float row[5];
// CHECK-NEXT: for (int64_t j = 0; j < 5; ++j) {
// CHECK-NEXT: const float v0 = static_cast<float>(x0[b0 + j]);
// CHECK-NEXT: const float v1 = static_cast<float>(x1[b1]);
// CHECK: row[j] = v4;
// CHECK-NEXT: }
// CHECK-NEXT: for (int64_t j = 0; j < 5; ++j)
// CHECK-NEXT: y[o * 5 + j] = static_cast<float>(row[j]);
func.func @rows(%x: tensor<2x3x5xf32>, %m: tensor<2x3x1xf32>, %b: tensor<3x5xf32>) -> tensor<2x3x5xf32> {
  %d = cleave.sub %x, %m : (tensor<2x3x5xf32>, tensor<2x3x1xf32>) -> tensor<2x3x5xf32>
  %y = cleave.add %d, %b : (tensor<2x3x5xf32>, tensor<3x5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// A row of more than 64 elements is stored as it is computed: the C++
// compiler checks the pointers once per row and vectorises the long loop.
// CHECK-LABEL: // 0: add
// CHECK: for (int64_t o = 0; o < 2; ++o) {
// CHECK-NEXT: const int64_t b0 = o * 100;
// CHECK-NEXT: const int64_t b1 = 0;
// CHECK-NEXT: for (int64_t j = 0; j < 100; ++j) {
// CHECK-NOT: row
// CHECK: y[o * 100 + j] = static_cast<float>(v2);
// CHECK-NEXT: }
func.func @long_rows(%x: tensor<2x100xf32>, %b: tensor<100xf32>) -> tensor<2x100xf32> {
  %y = cleave.add %x, %b : (tensor<2x100xf32>, tensor<100xf32>) -> tensor<2x100xf32>
  return %y : tensor<2x100xf32>
}
