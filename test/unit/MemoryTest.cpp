//===- MemoryTest.cpp - liveness-based device memory ------------*- C++ -*-===//

#include "TestContext.h"

#include "cleave/Analysis/Cost/CostModel.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace cleave;

namespace {

class MemoryTest : public ::testing::Test {
protected:
  MemoryTest() : context(test::makeContext()) {}

  func::FuncOp parse(const std::string &source) {
    module = test::parseModule(*context, source);
    return module ? test::firstFunction(*module) : func::FuncOp();
  }

  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
};

// Two-layer MLP, batch 1, 64 → 1024 → 64, f32. Steps and live buffers:
//   0 weight w1                         x (256)                 =  256
//   1 a = matmul x, w1                  x, a (4096)             = 4352
//   2 b = relu a                        a, b (4096)             = 8192
//   3 weight w2                         b                       = 4096
//   4 c = matmul b, w2                  b, c (256)              = 4352
//   5 return c                          c                       =  256
TEST_F(MemoryTest, MLPPeakIsTheWidestPair) {
  func::FuncOp func = parse(R"(
func.func @mlp(%x: tensor<1x64xf32>) -> tensor<1x64xf32> {
  %w1 = cleave.weight "w1" {file = "w.bin", offset = 0 : i64, length = 262144 : i64} : tensor<64x1024xf32>
  %a = cleave.matmul %x, %w1 : (tensor<1x64xf32>, tensor<64x1024xf32>) -> tensor<1x1024xf32>
  %b = cleave.relu %a : tensor<1x1024xf32>
  %w2 = cleave.weight "w2" {file = "w.bin", offset = 262144 : i64, length = 262144 : i64} : tensor<1024x64xf32>
  %c = cleave.matmul %b, %w2 : (tensor<1x1024xf32>, tensor<1024x64xf32>) -> tensor<1x64xf32>
  return %c : tensor<1x64xf32>
}
)");
  ASSERT_TRUE(func);
  FailureOr<int64_t> peak = peakActivationBytes(func);
  ASSERT_TRUE(succeeded(peak));
  EXPECT_EQ(*peak, 8192);

  FailureOr<DeviceMemory> memory = estimateDeviceMemory(func, 1000);
  ASSERT_TRUE(succeeded(memory));
  EXPECT_EQ(memory->weights, 524288);
  EXPECT_EQ(memory->activations, 8192);
  EXPECT_EQ(memory->communication, 1000);
  EXPECT_EQ(memory->total(), 524288 + 8192 + 1000);
}

// A view allocates nothing but keeps its operand's buffer alive: x (1 KiB)
// stays live to the last add through its reshape.
//   0 r = reshape x (view)          x                       = 1024
//   1 a = relu x                    x, a (1024)             = 2048
//   2 b = exp a                     x, a, b (1024)          = 3072
//   3 c = reshape b (view)          x, b                    = 2048
//   4 d = add c, r                  x, b, d (1024)          = 3072
//   5 return d                      d                       = 1024
// Without the view's extension x would die at step 1 and the peak would be
// 2048.
TEST_F(MemoryTest, ViewsExtendTheirOperandsLifetime) {
  func::FuncOp func = parse(R"(
func.func @views(%x: tensor<16x16xf32>) -> tensor<256xf32> {
  %r = cleave.reshape %x : tensor<16x16xf32> -> tensor<256xf32>
  %a = cleave.relu %x : tensor<16x16xf32>
  %b = cleave.exp %a : tensor<16x16xf32>
  %c = cleave.reshape %b : tensor<16x16xf32> -> tensor<256xf32>
  %d = cleave.add %c, %r : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  return %d : tensor<256xf32>
}
)");
  ASSERT_TRUE(func);
  FailureOr<int64_t> peak = peakActivationBytes(func);
  ASSERT_TRUE(succeeded(peak));
  EXPECT_EQ(*peak, 3072);
}

// Results nobody uses still exist while their op runs; a split's results
// are separate buffers.
//   0 q, k, v = split x             x (768), q, k, v (256 each) = 1536
//   1 s = add q, q                  q, s (256)                  = 512
//   2 return s                      s                           = 256
TEST_F(MemoryTest, UnusedResultsLiveDuringTheirOp) {
  func::FuncOp func = parse(R"(
func.func @split(%x: tensor<1x192xf32>) -> tensor<1x64xf32> {
  %q, %k, %v = cleave.split %x {axis = 1 : i64, sizes = array<i64: 64, 64, 64>} : (tensor<1x192xf32>) -> (tensor<1x64xf32>, tensor<1x64xf32>, tensor<1x64xf32>)
  %s = cleave.add %q, %q : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
  return %s : tensor<1x64xf32>
}
)");
  ASSERT_TRUE(func);
  FailureOr<int64_t> peak = peakActivationBytes(func);
  ASSERT_TRUE(succeeded(peak));
  EXPECT_EQ(*peak, 1536);
}

TEST_F(MemoryTest, DynamicActivationIsAnError) {
  std::string message;
  ScopedDiagnosticHandler handler(context.get(), [&](Diagnostic &diagnostic) {
    message = diagnostic.str();
    return success();
  });
  func::FuncOp func = parse(R"(
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}
)");
  ASSERT_TRUE(func);
  EXPECT_TRUE(failed(peakActivationBytes(func)));
  EXPECT_EQ(message, "memory estimate needs statically shaped tensors; a "
                     "value has type 'tensor<?x4xf32>'");
}

} // namespace
