// RUN: cleave-translate --emit-cpp %s | FileCheck %s
// RUN: cleave-translate --emit-cpp %s -o %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Werror -I %cleave_src/runtime/include %t.cpp

// A library call, then a fused loop that broadcasts a bias over the rows,
// runs a splat constant as a literal and writes over the matmul's result
// (which dies there); the loop's result is the graph output.

// CHECK: // The forward phase.
// CHECK-NEXT: static int32_t cleave_entry_forward(CleaveContext *ctx, int32_t microbatch, uint8_t *arena,
// CHECK: // 0: matmul (mm)
// CHECK-NEXT: cleave_rt_step(ctx, 0, "mm");
// CHECK: const CleaveTensor in[] = {{[{][{]}}((uint8_t *)inputs[0]), CLEAVE_F32, 2, {2, 8}},
// CHECK-NEXT: {((uint8_t *)weights + 0), CLEAVE_F32, 2, {8, 4}},
// An optional input not given (the bias, the residual) has no data.
// CHECK-NEXT: {nullptr, 0, 0, {0}},
// CHECK-NEXT: {nullptr, 0, 0, {0}}};
// CHECK-NEXT: CleaveTensor out[] = {{[{][{]}}(arena + 0), CLEAVE_F32, 2, {2, 4}}};
// CHECK: if (int32_t status = cleave_cpu_matmul(ctx, in, 4, out, 1, ints, floats))
// CHECK: // 1: add + max (relu6)
// CHECK: const float *x0 = (const float *)(arena + 0);
// CHECK: const float *x1 = (const float *)((uint8_t *)weights + 128);
// CHECK: float *y = (float *)((uint8_t *)outputs[0]);
// The loop runs by rows, so that the inner loop has no index arithmetic:
// the matmul result walks each row, the bias repeats over the rows.
// CHECK: for (int64_t o = 0; o < 2; ++o) {
// CHECK-NEXT: const int64_t b0 = o * 4;
// CHECK-NEXT: const int64_t b1 = 0;
// CHECK-NEXT: float row[4];
// CHECK-NEXT: for (int64_t j = 0; j < 4; ++j) {
// CHECK-NEXT: const float v0 = static_cast<float>(x0[b0 + j]);
// CHECK-NEXT: const float v1 = static_cast<float>(x1[b1 + j]);
// CHECK-NEXT: const float v2 = v0 + v1;
// CHECK-NEXT: const float v3 = 0.0f;
// CHECK-NEXT: const float v4 = cl::max(v2, v3);
// CHECK-NEXT: row[j] = v4;
// CHECK-NEXT: }
// CHECK-NEXT: for (int64_t j = 0; j < 4; ++j)
// CHECK-NEXT: y[o * 4 + j] = static_cast<float>(row[j]);
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = cleave.weight "w" {file = "/dev/null", offset = 0 : i64, length = 128 : i64} : tensor<8x4xf32>
  %b = cleave.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %zero = cleave.constant dense<0.0> : tensor<f32>
  %m = cleave.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32> loc("mm")
  %a = cleave.add %m, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %r = cleave.max %a, %zero : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32> loc("relu6")
  return %r : tensor<2x4xf32>
}

// The entry table, with each entry's port signatures (names, element types,
// shapes) that the runtime checks the manifest against, and the program info
// close the file.
// CHECK: static const CleavePortInfo kInputs_forward[] = {
// CHECK-NEXT: {"input_0", CLEAVE_F32, 2, {2, 8}},
// CHECK-NEXT: };
// CHECK: static const CleavePortInfo kOutputs_forward[] = {
// CHECK-NEXT: {"output_0", CLEAVE_F32, 2, {2, 4}},
// CHECK-NEXT: };
// CHECK: static const CleaveEntryInfo kEntries[] = {
// CHECK-NEXT: {"forward", "forward", cleave_entry_forward, 1, 1, kInputs_forward, kOutputs_forward},
// CHECK-NEXT: };
// CHECK: static const CleaveProgramInfo kProgramInfo = {
// CHECK-NEXT: CLEAVE_ABI_VERSION, 1, kEntries, 64, 192, 0, 0, kWritableWeights};
// CHECK: extern "C" const CleaveProgramInfo *cleave_program_info(void) {
