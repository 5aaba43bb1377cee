//===- GPTLayerTest.cpp - FLOPs of a transformer layer ----------*- C++ -*-===//
//
// Builds one GPT (pre-norm) transformer layer from cleave ops and checks its
// forward FLOPs against the Megatron-LM count: the matmuls do exactly
// 24·B·s·h² + 4·B·s²·h (QKV 6Bsh², scores 2Bs²h, context 2Bs²h, output
// projection 2Bsh², MLP 16Bsh²).
//
//===----------------------------------------------------------------------===//

#include "TestContext.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Analysis/Cost/CostModel.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <initializer_list>
#include <string>

using namespace mlir;
using namespace cleave;

namespace {

struct GPTShape {
  int64_t batch, seq, hidden, heads;
};

/// Writes the IR of one layer; weights are laid out one after the other in
/// a file that is never read.
class GPTLayerWriter {
public:
  explicit GPTLayerWriter(GPTShape shape) : shape(shape), os(text) {}

  std::string write() {
    int64_t b = shape.batch, s = shape.seq, h = shape.hidden, a = shape.heads,
            d = h / a, f = 4 * h;
    std::string x = type({b, s, h});
    os << "func.func @gpt_layer(%x: " << x << ") -> " << x << " {\n";

    // Attention block.
    weight("ln1_g", {h});
    weight("ln1_b", {h});
    line("%ln1 = cleave.layer_norm %x, %ln1_g, %ln1_b {axis = 2 : i64} : (" +
         x + ", " + type({h}) + ", " + type({h}) + ") -> " + x);
    weight("w_qkv", {h, 3 * h});
    weight("b_qkv", {3 * h});
    std::string qkv = type({b, s, 3 * h});
    line("%qkv0 = cleave.matmul %ln1, %w_qkv : (" + x + ", " +
         type({h, 3 * h}) + ") -> " + qkv);
    line("%qkv = cleave.add %qkv0, %b_qkv : (" + qkv + ", " + type({3 * h}) +
         ") -> " + qkv);
    line("%q, %k, %v = cleave.split %qkv {axis = 2 : i64, sizes = "
         "array<i64: " +
         std::to_string(h) + ", " + std::to_string(h) + ", " +
         std::to_string(h) + ">} : (" + qkv + ") -> (" + x + ", " + x + ", " +
         x + ")");
    std::string split = type({b, s, a, d});
    std::string heads = type({b, a, s, d});
    for (const char *name : {"q", "k", "v"})
      line(std::string("%") + name + "4 = cleave.reshape %" + name + " : " + x +
           " -> " + split);
    line("%qh = cleave.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (" +
         split + ") -> " + heads);
    line("%kh = cleave.transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : (" +
         split + ") -> " + type({b, a, d, s}));
    line("%vh = cleave.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : (" +
         split + ") -> " + heads);
    std::string scores = type({b, a, s, s});
    line("%scores = cleave.matmul %qh, %kh : (" + heads + ", " +
         type({b, a, d, s}) + ") -> " + scores);
    line("%scale = cleave.constant dense<0.125> : tensor<f32>");
    line("%scaled = cleave.mul %scores, %scale : (" + scores +
         ", tensor<f32>) -> " + scores);
    line("%probs = cleave.softmax %scaled {axis = 3 : i64} : " + scores);
    line("%ctx = cleave.matmul %probs, %vh : (" + scores + ", " + heads +
         ") -> " + heads);
    line("%ctx_t = cleave.transpose %ctx {perm = array<i64: 0, 2, 1, 3>} : (" +
         heads + ") -> " + split);
    line("%ctx3 = cleave.reshape %ctx_t : " + split + " -> " + x);
    weight("w_o", {h, h});
    weight("b_o", {h});
    line("%attn0 = cleave.matmul %ctx3, %w_o : (" + x + ", " + type({h, h}) +
         ") -> " + x);
    line("%attn = cleave.add %attn0, %b_o : (" + x + ", " + type({h}) +
         ") -> " + x);
    line("%res1 = cleave.add %x, %attn : (" + x + ", " + x + ") -> " + x);

    // MLP block.
    weight("ln2_g", {h});
    weight("ln2_b", {h});
    line("%ln2 = cleave.layer_norm %res1, %ln2_g, %ln2_b {axis = 2 : i64} : (" +
         x + ", " + type({h}) + ", " + type({h}) + ") -> " + x);
    weight("w_1", {h, f});
    weight("b_1", {f});
    std::string wide = type({b, s, f});
    line("%fc1 = cleave.matmul %ln2, %w_1 : (" + x + ", " + type({h, f}) +
         ") -> " + wide);
    line("%fc1b = cleave.add %fc1, %b_1 : (" + wide + ", " + type({f}) +
         ") -> " + wide);
    line("%act = cleave.gelu %fc1b : " + wide);
    weight("w_2", {f, h});
    weight("b_2", {h});
    line("%fc2 = cleave.matmul %act, %w_2 : (" + wide + ", " + type({f, h}) +
         ") -> " + x);
    line("%fc2b = cleave.add %fc2, %b_2 : (" + x + ", " + type({h}) + ") -> " +
         x);
    line("%out = cleave.add %res1, %fc2b : (" + x + ", " + x + ") -> " + x);
    line("return %out : " + x);
    os << "}\n";
    return text;
  }

private:
  static std::string type(std::initializer_list<int64_t> dims) {
    std::string result = "tensor<";
    for (int64_t dim : dims)
      result += std::to_string(dim) + "x";
    return result + "f32>";
  }

  void line(const std::string &op) { os << "  " << op << "\n"; }

  void weight(const std::string &name, std::initializer_list<int64_t> dims) {
    int64_t bytes = 4;
    for (int64_t dim : dims)
      bytes *= dim;
    line("%" + name + " = cleave.weight \"" + name +
         "\" {file = \"gpt.bin\", offset = " + std::to_string(offset) +
         " : i64, length = " + std::to_string(bytes) +
         " : i64} : " + type(dims));
    offset += bytes;
  }

  GPTShape shape;
  std::string text;
  llvm::raw_string_ostream os;
  int64_t offset = 0;
};

class GPTLayerTest : public ::testing::TestWithParam<GPTShape> {};

TEST_P(GPTLayerTest, ForwardFlops) {
  GPTShape shape = GetParam();
  std::unique_ptr<MLIRContext> context = test::makeContext();
  OwningOpRef<ModuleOp> module =
      test::parseModule(*context, GPTLayerWriter(shape).write());
  ASSERT_TRUE(module) << "the layer IR does not parse";

  int64_t matmulFlops = 0, otherFlops = 0;
  module->walk([&](CostInterface op) {
    (isa<MatMulOp>(op) ? matmulFlops : otherFlops) += op.getFlops();
  });

  int64_t b = shape.batch, s = shape.seq, h = shape.hidden, a = shape.heads;
  EXPECT_EQ(matmulFlops, 24 * b * s * h * h + 4 * b * s * s * h);
  // Everything else, per element of B·s·h: two layer norms with bias (8
  // each), the four bias adds (3 + 1 + 4 + 1), the two residual adds, GELU
  // on the 4h-wide activation (5 · 4); per score (B·a·s²): the scale and
  // softmax (1 + 5). Splits, reshapes and transposes do no arithmetic.
  EXPECT_EQ(otherFlops, (16 + 9 + 2 + 20) * b * s * h + 6 * b * a * s * s);

  // Parameters: 12h² of matrices, 13h of biases and norm scales, and the
  // 4-byte scale constant.
  func::FuncOp func = test::firstFunction(*module);
  FailureOr<int64_t> parameters = getParameterBytes(func);
  ASSERT_TRUE(succeeded(parameters));
  EXPECT_EQ(*parameters, 4 * (12 * h * h + 13 * h) + 4);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GPTLayerTest,
                         ::testing::Values(GPTShape{2, 16, 64, 4},
                                           GPTShape{1, 128, 256, 8},
                                           GPTShape{4, 32, 96, 3}));

} // namespace
