// RUN: cleave-translate --emit-cpp %s | FileCheck %s
// RUN: cleave-translate --emit-cpp %s -o %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Werror -I %cleave_src/runtime/include %t.cpp

// Every collective names its group: the first two ints of its call are the
// mesh axis's code (rt/Mesh.h: 0 pp, 1 dp, 2 tp) and the group's size, then
// what the op adds (runtime/include/cleave/rt/CommList.def). A slice of the
// batch names no axis: its ints are the block count and the dimension.

// CHECK: cleave_rt_step(ctx, 0, "tp_sum");
// CHECK: static const int64_t ints[] = {2, 2, 0};
// CHECK-NEXT: static const double floats[] = {0};
// CHECK-NEXT: if (int32_t status = cleave_cpu_all_reduce(ctx, in, 1, out, 1, ints, floats)
// CHECK: cleave_rt_step(ctx, 1, "dp_mean");
// CHECK: static const int64_t ints[] = {1, 4, 4};
// CHECK-NEXT: static const double floats[] = {0};
// CHECK-NEXT: if (int32_t status = cleave_cpu_all_reduce(ctx, in, 1, out, 1, ints, floats)
// CHECK: cleave_rt_step(ctx, 2, "pp_gather");
// CHECK: static const int64_t ints[] = {0, 2, 0};
// CHECK-NEXT: static const double floats[] = {0};
// CHECK-NEXT: if (int32_t status = cleave_cpu_all_gather(ctx, in, 1, out, 1, ints, floats)
// CHECK: cleave_rt_step(ctx, 3, "tp_slice");
// CHECK: static const int64_t ints[] = {2, 2, 1};
// CHECK-NEXT: static const double floats[] = {0};
// CHECK-NEXT: if (int32_t status = cleave_cpu_all_slice(ctx, in, 1, out, 1, ints, floats)
// CHECK: cleave_rt_step(ctx, 4, "tp_scatter");
// CHECK: static const int64_t ints[] = {2, 2, 1, 2};
// CHECK-NEXT: static const double floats[] = {0};
// CHECK-NEXT: if (int32_t status = cleave_cpu_reduce_scatter(ctx, in, 1, out, 1, ints, floats)
// CHECK: cleave_rt_step(ctx, 5, "dp_exchange");
// CHECK: static const int64_t ints[] = {1, 4, 0, 1};
// CHECK-NEXT: static const double floats[] = {0};
// CHECK-NEXT: if (int32_t status = cleave_cpu_all_to_all(ctx, in, 1, out, 1, ints, floats)
// CHECK: cleave_rt_step(ctx, 6, "batch_block");
// CHECK: static const int64_t ints[] = {2, 0};
// CHECK-NEXT: static const double floats[] = {0};
// CHECK-NEXT: if (int32_t status = cleave_cpu_batch_slice(ctx, in, 1, out, 1, ints, floats)
func.func @main(%x: tensor<4x8xf32> {cleave.name = "x"}) -> (tensor<4x8xf32> {cleave.name = "y"}, tensor<8x8xf32> {cleave.name = "z"}, tensor<4x4xf32> {cleave.name = "s"}, tensor<4x4xf32> {cleave.name = "r"}, tensor<1x32xf32> {cleave.name = "e"}, tensor<2x8xf32> {cleave.name = "b"}) {
  %t = cleave.all_reduce %x {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<4x8xf32> loc("tp_sum")
  %d = cleave.all_reduce %t {axis = "dp", group_size = 4 : i64, reduction = "average"} : tensor<4x8xf32> loc("dp_mean")
  %p = cleave.all_gather %d {axis = "pp", group_size = 2 : i64, dim = 0 : i64} : tensor<4x8xf32> -> tensor<8x8xf32> loc("pp_gather")
  %s = cleave.all_slice %d {axis = "tp", group_size = 2 : i64, dim = 1 : i64} : tensor<4x8xf32> -> tensor<4x4xf32> loc("tp_slice")
  %r = cleave.reduce_scatter %d {axis = "tp", group_size = 2 : i64, dim = 1 : i64, reduction = "max"} : tensor<4x8xf32> -> tensor<4x4xf32> loc("tp_scatter")
  %e = cleave.all_to_all %d {axis = "dp", group_size = 4 : i64, split_dim = 0 : i64, concat_dim = 1 : i64} : tensor<4x8xf32> -> tensor<1x32xf32> loc("dp_exchange")
  %b = cleave.all_slice %x {axis = "batch", group_size = 2 : i64, dim = 0 : i64} : tensor<4x8xf32> -> tensor<2x8xf32> loc("batch_block")
  return %d, %p, %s, %r, %e, %b : tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<1x32xf32>, tensor<2x8xf32>
}
