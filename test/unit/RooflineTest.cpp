//===- RooflineTest.cpp - roofline time of ops on a target ------*- C++ -*-===//

#include "TestContext.h"

#include "cleave/Analysis/Cost/CostModel.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace cleave;

namespace {

/// A device with round numbers: 100 TFLOP/s bf16 and 10 TFLOP/s f32 at 50%,
/// 1 TB/s at 80%.
TargetDescription roundTarget() {
  TargetDescription target;
  target.name = "round";
  target.device.setPeakFlops(Precision::F32, 10e12);
  target.device.setPeakFlops(Precision::BF16, 100e12);
  target.device.setPeakFlops(Precision::TF32, 50e12);
  target.device.memoryBandwidth = 1e12;
  target.device.computeEfficiency = 0.5;
  target.device.memoryEfficiency = 0.8;
  return target;
}

class RooflineTest : public ::testing::Test {
protected:
  RooflineTest() : context(test::makeContext()) {}

  /// The cost of the first op of `body` in `func.func @f(ARGUMENTS)`.
  FailureOr<OpCost> costOf(const std::string &arguments,
                           const std::string &body,
                           const CostOptions &options = {}) {
    module = test::parseModule(*context, "func.func @f(" + arguments + ") {\n" +
                                             body + "\n  return\n}\n");
    if (!module)
      return failure();
    Operation *op = &test::firstFunction(*module).getBody().front().front();
    return getOpCost(op, target, options);
  }

  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  TargetDescription target = roundTarget();
};

TEST_F(RooflineTest, LargeMatMulIsComputeBound) {
  // 1024³ bf16: 2·2^30 FLOPs; 3 matrices of 2 MiB.
  FailureOr<OpCost> cost =
      costOf("%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16>",
             "%y = cleave.matmul %x, %w : (tensor<1024x1024xbf16>, "
             "tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>");
  ASSERT_TRUE(succeeded(cost));
  EXPECT_EQ(cost->flops, 2147483648);
  EXPECT_EQ(cost->bytesMoved(), 3 * 2097152);
  EXPECT_EQ(cost->precision, Precision::BF16);
  EXPECT_DOUBLE_EQ(cost->roofline.computeTime, 2147483648.0 / (100e12 * 0.5));
  EXPECT_DOUBLE_EQ(cost->roofline.memoryTime, 6291456.0 / (1e12 * 0.8));
  EXPECT_TRUE(cost->roofline.isComputeBound());
  EXPECT_DOUBLE_EQ(cost->time(), 4.294967296e-5);
}

TEST_F(RooflineTest, ElementwiseIsMemoryBound) {
  // 2^20 f32 adds: 1 FLOP per 12 bytes.
  FailureOr<OpCost> cost =
      costOf("%x: tensor<1024x1024xf32>",
             "%y = cleave.add %x, %x : (tensor<1024x1024xf32>, "
             "tensor<1024x1024xf32>) -> tensor<1024x1024xf32>");
  ASSERT_TRUE(succeeded(cost));
  EXPECT_EQ(cost->flops, 1048576);
  EXPECT_EQ(cost->bytesMoved(), 8388608);
  EXPECT_FALSE(cost->roofline.isComputeBound());
  EXPECT_DOUBLE_EQ(cost->roofline.computeTime, 1048576.0 / (10e12 * 0.5));
  EXPECT_DOUBLE_EQ(cost->time(), 8388608.0 / (1e12 * 0.8));
}

TEST_F(RooflineTest, PrecisionFollowsElementTypeAndOptions) {
  const char *args = "%x: tensor<64x64xf32>";
  const char *matmul = "%y = cleave.matmul %x, %x : (tensor<64x64xf32>, "
                       "tensor<64x64xf32>) -> tensor<64x64xf32>";
  FailureOr<OpCost> f32 = costOf(args, matmul);
  ASSERT_TRUE(succeeded(f32));
  EXPECT_EQ(f32->precision, Precision::F32);
  EXPECT_DOUBLE_EQ(f32->roofline.computeTime, 2.0 * 64 * 64 * 64 / 5e12);

  CostOptions tf32;
  tf32.allowTF32 = true;
  FailureOr<OpCost> fast = costOf(args, matmul, tf32);
  ASSERT_TRUE(succeeded(fast));
  EXPECT_EQ(fast->precision, Precision::TF32);
  EXPECT_DOUBLE_EQ(fast->roofline.computeTime, 2.0 * 64 * 64 * 64 / 25e12);

  // Elementwise bf16 runs on vector units, at the f32 rate.
  FailureOr<OpCost> relu =
      costOf("%x: tensor<64xbf16>", "%y = cleave.relu %x : tensor<64xbf16>");
  ASSERT_TRUE(succeeded(relu));
  EXPECT_EQ(relu->precision, Precision::F32);

  // f16 on a target without an f16 figure falls back to the f32 peak.
  FailureOr<OpCost> half = costOf("%x: tensor<64x64xf16>",
                                  "%y = cleave.matmul %x, %x : "
                                  "(tensor<64x64xf16>, tensor<64x64xf16>) -> "
                                  "tensor<64x64xf16>");
  ASSERT_TRUE(succeeded(half));
  EXPECT_EQ(half->precision, Precision::F16);
  EXPECT_DOUBLE_EQ(half->roofline.computeTime, 2.0 * 64 * 64 * 64 / 5e12);
}

TEST_F(RooflineTest, GetRooflineDirectly) {
  Roofline roofline = getRoofline(1e12, 1e9, Precision::BF16, target.device);
  EXPECT_DOUBLE_EQ(roofline.computeTime, 0.02);
  EXPECT_DOUBLE_EQ(roofline.memoryTime, 1.25e-3);
  EXPECT_DOUBLE_EQ(roofline.time(), 0.02);
}

TEST_F(RooflineTest, DynamicShapeIsAnError) {
  std::string message;
  ScopedDiagnosticHandler handler(context.get(), [&](Diagnostic &diagnostic) {
    message = diagnostic.str();
    return success();
  });
  FailureOr<OpCost> cost =
      costOf("%x: tensor<?x4xf32>", "%y = cleave.relu %x : tensor<?x4xf32>");
  EXPECT_TRUE(failed(cost));
  EXPECT_EQ(message, "cost model needs statically shaped tensors; operand #0 "
                     "has type 'tensor<?x4xf32>'");
}

TEST(MatmulTileTest, OutputShape) {
  // x @ W folds the leading dimensions into the rows.
  MatmulOutputShape folded = getMatmulOutputShape({2, 2048, 2304}, false);
  EXPECT_EQ(folded.batch, 1);
  EXPECT_EQ(folded.rows, 4096);
  EXPECT_EQ(folded.columns, 2304);
  // A batched right-hand side keeps them as independent products.
  MatmulOutputShape batched = getMatmulOutputShape({2, 24, 2048, 96}, true);
  EXPECT_EQ(batched.batch, 48);
  EXPECT_EQ(batched.rows, 2048);
  EXPECT_EQ(batched.columns, 96);
}

TEST(MatmulTileTest, WaveQuantization) {
  DeviceDescription device;
  // Without tiles, every shape runs at the device's efficiency.
  EXPECT_EQ(getMatmulTileEfficiency({1, 2048, 2304}, device), 1.0);

  device.multiprocessors = 108;
  device.matmulTiles = {{256, 128}, {128, 256}, {128, 128}};
  // 2048 x 6912: 8 x 54 = 432 tiles of 256x128, 4 full waves.
  EXPECT_DOUBLE_EQ(getMatmulTileEfficiency({1, 2048, 6912}, device), 1.0);
  // 2048 x 2304: 144 large tiles take 2 waves (67%); 288 tiles of 128x128
  // take 3 (288 / 324 = 89%), the best.
  EXPECT_DOUBLE_EQ(getMatmulTileEfficiency({1, 2048, 2304}, device),
                   288.0 / 324.0);
  // Edge tiles count their padding: 100 x 100 is one 128x128 tile on one
  // of 108 SMs.
  EXPECT_DOUBLE_EQ(getMatmulTileEfficiency({1, 100, 100}, device),
                   100.0 * 100.0 / (108.0 * 128.0 * 128.0));
  // A batch of products shares the waves: 48 products of 2048 x 96 are
  // 48 x 16 = 768 tiles of 128x128, 8 waves (864 slots), each tile 96/128
  // full.
  EXPECT_DOUBLE_EQ(getMatmulTileEfficiency({48, 2048, 96}, device),
                   48.0 * 2048.0 * 96.0 / (8.0 * 108.0 * 128.0 * 128.0));
}

} // namespace
