//===- CostInterfaceTest.cpp - per-op work against hand counts --*- C++ -*-===//

#include "TestContext.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace mlir;
using namespace cleave;

namespace {

/// Work of one op, as the interface reports it.
struct Work {
  int64_t flops, bytesRead, bytesWritten, parameterBytes;
};

class CostInterfaceTest : public ::testing::Test {
protected:
  CostInterfaceTest() : context(test::makeContext()) {}

  /// Parses `body` as the body of `func.func @f(ARGUMENTS)` and returns the
  /// work of each op that implements the cost interface, in order.
  std::vector<Work> workOf(const std::string &arguments,
                           const std::string &body) {
    module = test::parseModule(*context, "func.func @f(" + arguments + ") {\n" +
                                             body + "\n  return\n}\n");
    std::vector<Work> works;
    if (!module) {
      ADD_FAILURE() << "the test IR does not parse";
      return works;
    }
    module->walk([&](CostInterface op) {
      works.push_back({op.getFlops(), op.getBytesRead(), op.getBytesWritten(),
                       op.getParameterBytes()});
    });
    return works;
  }

  /// The work of the last costed op in `body`.
  Work lastWork(const std::string &arguments, const std::string &body) {
    std::vector<Work> works = workOf(arguments, body);
    if (works.empty())
      return {-1, -1, -1, -1};
    return works.back();
  }

  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(CostInterfaceTest, EveryCleaveOpHasACostModel) {
  int64_t numOps = 0;
  for (RegisteredOperationName name : context->getRegisteredOperations()) {
    if (name.getDialectNamespace() != "cleave")
      continue;
    ++numOps;
    EXPECT_TRUE(name.hasInterface<CostInterface>())
        << name.getStringRef().str() << " has no cost model";
  }
  EXPECT_GE(numOps, 80);
}

TEST_F(CostInterfaceTest, Elementwise) {
  // 4x8 = 32 elements of f32 (128 bytes).
  Work add = lastWork("%x: tensor<4x8xf32>, %y: tensor<8xf32>", R"(
    %z = cleave.add %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>)");
  EXPECT_EQ(add.flops, 32);
  EXPECT_EQ(add.bytesRead, 128 + 32);
  EXPECT_EQ(add.bytesWritten, 128);
  EXPECT_EQ(add.parameterBytes, 0);

  // A value read twice is loaded once.
  Work square = lastWork("%x: tensor<4x8xf32>", R"(
    %z = cleave.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>)");
  EXPECT_EQ(square.bytesRead, 128);

  EXPECT_EQ(lastWork("%x: tensor<4x8xf32>",
                     "%y = cleave.sigmoid %x : tensor<4x8xf32>")
                .flops,
            4 * 32);
  EXPECT_EQ(
      lastWork("%x: tensor<4x8xf32>", "%y = cleave.gelu %x : tensor<4x8xf32>")
          .flops,
      5 * 32);
  EXPECT_EQ(lastWork("%x: tensor<4x8xf32>",
                     "%y = cleave.gelu %x {approximate = \"tanh\"} : "
                     "tensor<4x8xf32>")
                .flops,
            9 * 32);
  EXPECT_EQ(lastWork("%x: tensor<4x8xf32>",
                     "%y = cleave.clip %x {max = 6.0 : f64} : tensor<4x8xf32>")
                .flops,
            32);
  Work cast =
      lastWork("%x: tensor<4x8xf32>",
               "%y = cleave.cast %x : tensor<4x8xf32> to tensor<4x8xf16>");
  EXPECT_EQ(cast.flops, 0);
  EXPECT_EQ(cast.bytesRead, 128);
  EXPECT_EQ(cast.bytesWritten, 64);
  // i1 results take a byte per element.
  Work less = lastWork("%x: tensor<4x8xf32>", R"(
    %z = cleave.less %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>)");
  EXPECT_EQ(less.bytesWritten, 32);
}

TEST_F(CostInterfaceTest, MatMulAndGemm) {
  // Batched: 2 x (16x64 · 64x32): 2·(2·16·32)·64.
  Work matmul = lastWork("%x: tensor<2x16x64xf32>, %w: tensor<64x32xf32>", R"(
    %y = cleave.matmul %x, %w : (tensor<2x16x64xf32>, tensor<64x32xf32>) -> tensor<2x16x32xf32>)");
  EXPECT_EQ(matmul.flops, 2 * (2 * 16 * 32) * 64);
  EXPECT_EQ(matmul.bytesRead, (2 * 16 * 64 + 64 * 32) * 4);
  EXPECT_EQ(matmul.bytesWritten, 2 * 16 * 32 * 4);

  // Vector times matrix: 64 · 64x32 → 32 outputs of 64 multiply-adds.
  EXPECT_EQ(lastWork("%x: tensor<64xf32>, %w: tensor<64x32xf32>", R"(
    %y = cleave.matmul %x, %w : (tensor<64xf32>, tensor<64x32xf32>) -> tensor<32xf32>)")
                .flops,
            2 * 32 * 64);

  // Gemm, B transposed (10x128), with bias: 2·4·10·128 + 4·10.
  Work gemm = lastWork(
      "%x: tensor<4x128xf32>, %w: tensor<10x128xf32>, %b: tensor<10xf32>", R"(
    %y = cleave.gemm %x, %w, %b {trans_b = true} : (tensor<4x128xf32>, tensor<10x128xf32>, tensor<10xf32>) -> tensor<4x10xf32>)");
  EXPECT_EQ(gemm.flops, 2 * 4 * 10 * 128 + 4 * 10);
  // A transposed (128x4), alpha and beta not 1: + M·N for alpha, 2·M·N for
  // beta·C.
  EXPECT_EQ(lastWork("%x: tensor<128x4xf32>, %w: tensor<128x10xf32>, %c: "
                     "tensor<4x10xf32>",
                     R"(
    %y = cleave.gemm %x, %w, %c {trans_a = true, alpha = 2.0 : f32, beta = 0.5 : f32} : (tensor<128x4xf32>, tensor<128x10xf32>, tensor<4x10xf32>) -> tensor<4x10xf32>)")
                .flops,
            2 * 4 * 10 * 128 + 40 + 2 * 40);
}

TEST_F(CostInterfaceTest, Convolution) {
  // 3x3 conv, 3 → 16 channels, stride 2, pad 1 on 32x32: 16x16 outputs per
  // channel; each output is 3·3·3 = 27 multiply-adds, plus the bias.
  Work conv = lastWork(
      "%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>",
      R"(
    %y = cleave.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>)");
  EXPECT_EQ(conv.flops, 2 * (16 * 16 * 16) * 27 + 16 * 16 * 16);
  EXPECT_EQ(conv.flops, 225280);
  EXPECT_EQ(conv.bytesRead, (3 * 32 * 32 + 16 * 27 + 16) * 4);

  // Grouped: 8 → 8 channels in 4 groups of 2, 3x3, same padding, batch 2:
  // 2·8·10·10 outputs of 2·3·3 multiply-adds each.
  EXPECT_EQ(lastWork("%x: tensor<2x8x10x10xf32>, %w: tensor<8x2x3x3xf32>", R"(
    %y = cleave.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<2x8x10x10xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x10x10xf32>)")
                .flops,
            2 * (2 * 8 * 10 * 10) * 18);

  // Transposed: each of the 8·10 inputs scatters into 4·2 outputs.
  EXPECT_EQ(lastWork("%x: tensor<1x8x10xf32>, %w: tensor<8x4x2xf32>", R"(
    %y = cleave.conv_transpose %x, %w {strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>, group = 1 : i64} : (tensor<1x8x10xf32>, tensor<8x4x2xf32>) -> tensor<1x4x20xf32>)")
                .flops,
            2 * 80 * 8);
}

TEST_F(CostInterfaceTest, PoolingNormsSoftmaxReductions) {
  // 3x3 max pool, stride 2, pad 1: 16·16·16 outputs of 9 comparisons.
  EXPECT_EQ(lastWork("%x: tensor<1x16x32x32xf32>", R"(
    %y = cleave.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>)")
                .flops,
            4096 * 9);
  // 2x2 average: 4 adds and a division per output.
  EXPECT_EQ(lastWork("%x: tensor<1x16x32x32xf32>", R"(
    %y = cleave.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>)")
                .flops,
            4096 * 5);
  EXPECT_EQ(lastWork("%x: tensor<1x64x7x7xf32>", R"(
    %y = cleave.global_average_pool %x : (tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32>)")
                .flops,
            64 * 49 + 64);

  // Layer norm over 2x16x64 with bias: 8 per element; without: 7.
  EXPECT_EQ(lastWork("%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %b: "
                     "tensor<64xf32>",
                     R"(
    %y = cleave.layer_norm %x, %g, %b {axis = 2 : i64} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>)")
                .flops,
            8 * 2048);
  EXPECT_EQ(lastWork("%x: tensor<2x16x64xf32>, %g: tensor<64xf32>", R"(
    %y = cleave.layer_norm %x, %g {axis = 2 : i64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>)")
                .flops,
            7 * 2048);
  EXPECT_EQ(lastWork("%x: tensor<1x16x8x8xf32>, %s: tensor<16xf32>", R"(
    %y = cleave.batch_norm %x, %s, %s, %s, %s : (tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>)")
                .flops,
            4 * 1024);

  EXPECT_EQ(lastWork("%x: tensor<2x4x16x16xf32>",
                     "%y = cleave.softmax %x {axis = 3 : i64} : "
                     "tensor<2x4x16x16xf32>")
                .flops,
            5 * 2048);

  // Mean over the last axis: an add per input, a division per output.
  EXPECT_EQ(lastWork("%x: tensor<2x16x64xf32>", R"(
    %y = cleave.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>)")
                .flops,
            2048 + 32);
  EXPECT_EQ(lastWork("%x: tensor<2x16x64xf32>", R"(
    %y = cleave.reduce_l2 %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x16x64xf32>) -> tensor<2x16xf32>)")
                .flops,
            2 * 2048 + 32);
}

TEST_F(CostInterfaceTest, Recurrent) {
  // LSTM, seq 5, batch 1, input 4, hidden 8, with bias: per step the
  // products 2·1·32·(4 + 8), 9 elementwise operations and 2·4 bias adds per
  // hidden unit.
  Work lstm = lastWork(
      "%x: tensor<5x1x4xf32>, %w: tensor<1x32x4xf32>, %r: tensor<1x32x8xf32>, "
      "%b: tensor<1x64xf32>",
      R"(
    %y, %h, %c = cleave.lstm %x, %w, %r bias %b {hidden_size = 8 : i64, activations = ["Sigmoid", "Tanh", "Tanh"]} : (tensor<5x1x4xf32>, tensor<1x32x4xf32>, tensor<1x32x8xf32>, tensor<1x64xf32>) -> (tensor<5x1x1x8xf32>, tensor<1x1x8xf32>, tensor<1x1x8xf32>))");
  EXPECT_EQ(lstm.flops, 5 * (2 * 32 * 12 + (9 + 8) * 8));

  // Bidirectional RNN without bias: two directions of 10 steps, batch 2,
  // products 2·2·32·(16 + 32), one activation per hidden unit.
  Work rnn = lastWork("%x: tensor<10x2x16xf32>, %w: tensor<2x32x16xf32>, %r: "
                      "tensor<2x32x32xf32>",
                      R"(
    %y, %h = cleave.rnn %x, %w, %r {hidden_size = 32 : i64, direction = "bidirectional", activations = ["Relu", "Relu"]} : (tensor<10x2x16xf32>, tensor<2x32x16xf32>, tensor<2x32x32xf32>) -> (tensor<10x2x2x32xf32>, tensor<2x2x32xf32>))");
  EXPECT_EQ(rnn.flops, 2 * 10 * (2 * 2 * 32 * 48 + 1 * 2 * 32));
}

TEST_F(CostInterfaceTest, DataMovementViewsAndParameters) {
  // A weight feeding a reshape (a view) feeding a transpose (a copy).
  std::vector<Work> works = workOf("", R"(
    %w = cleave.weight "w" {file = "w.bin", offset = 0 : i64, length = 512 : i64} : tensor<8x16xf32>
    %r = cleave.reshape %w : tensor<8x16xf32> -> tensor<2x4x16xf32>
    %t = cleave.transpose %r {perm = array<i64: 0, 2, 1>} : (tensor<2x4x16xf32>) -> tensor<2x16x4xf32>)");
  ASSERT_EQ(works.size(), 3u);
  // The weight and the view cost nothing.
  EXPECT_EQ(works[0].bytesWritten, 0);
  EXPECT_EQ(works[1].bytesRead + works[1].bytesWritten, 0);
  // The transpose copies 512 bytes, all of them a parameter seen through
  // the view.
  EXPECT_EQ(works[2].flops, 0);
  EXPECT_EQ(works[2].bytesRead, 512);
  EXPECT_EQ(works[2].bytesWritten, 512);
  EXPECT_EQ(works[2].parameterBytes, 512);

  // An embedding lookup reads the ids and 2·16 rows of 64 floats, not the
  // table; the table still counts whole as parameter bytes.
  Work gather = lastWork("%ids: tensor<2x16xi64>", R"(
    %table = cleave.weight "emb" {file = "w.bin", offset = 0 : i64, length = 256000 : i64} : tensor<1000x64xf32>
    %y = cleave.gather %table, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>)");
  EXPECT_EQ(gather.bytesRead, 2 * 16 * 8 + 2 * 16 * 64 * 4);
  EXPECT_EQ(gather.parameterBytes, 256000);

  // A slice reads what it selects.
  Work slice = lastWork("%x: tensor<2x64xf32>", R"(
    %y = cleave.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 32>, steps = array<i64: 1, 2>} : (tensor<2x64xf32>) -> tensor<2x16xf32>)");
  EXPECT_EQ(slice.bytesRead, 128);
  EXPECT_EQ(slice.bytesWritten, 128);

  // Bilinear resize of the last two dimensions: 3 lerps of 3 operations
  // per output element.
  EXPECT_EQ(lastWork("%x: tensor<1x8x4x4xf32>", R"(
    %y = cleave.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear"} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>)")
                .flops,
            512 * 9);
  EXPECT_EQ(lastWork("%x: tensor<1x8x4x4xf32>", R"(
    %y = cleave.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "nearest"} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>)")
                .flops,
            0);
}

} // namespace
