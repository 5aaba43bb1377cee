//===- PlanTestModels.cpp - small models for the planner tests --*- C++ -*-===//

#include "PlanTestModels.h"

#include "cleave/InitAll.h"

#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <initializer_list>
#include <vector>

using namespace mlir;
using namespace cleave;
using cleave::test::ModelShape;

namespace {

/// Accumulates the text of one function; weights are laid out one after
/// the other in a file that is never read.
class IRWriter {
public:
  explicit IRWriter(const ModelShape &shape) : shape(shape), os(text) {}

  std::string type(std::initializer_list<int64_t> dims) const {
    std::string result = "tensor<";
    for (int64_t dim : dims)
      result += std::to_string(dim) + "x";
    return result + shape.dtype + ">";
  }

  void begin(const std::string &argType) {
    os << "func.func @main(%x: " << argType << ") -> " << argType << " {\n";
  }

  void end(const std::string &value, const std::string &resultType) {
    line("return " + value + " : " + resultType);
    os << "}\n";
  }

  void line(const std::string &op) { os << "  " << op << "\n"; }

  /// Defines `%name` as a weight of `dims`.
  std::string weight(const std::string &name,
                     std::initializer_list<int64_t> dims) {
    int64_t bytes = shape.dtype == "f32" ? 4 : 2;
    for (int64_t dim : dims)
      bytes *= dim;
    line("%" + name + " = cleave.weight \"" + shape.weightPrefix + name +
         "\" {file = \"model.bin\", offset = " + std::to_string(offset) +
         " : i64, length = " + std::to_string(bytes) +
         " : i64} : " + type(dims));
    offset += bytes;
    return "%" + name;
  }

  /// `%result = cleave.OP %a, %b : (A, B) -> R`.
  std::string binary(const std::string &result, const std::string &op,
                     const std::string &a, const std::string &aType,
                     const std::string &b, const std::string &bType,
                     const std::string &resultType) {
    line("%" + result + " = cleave." + op + " " + a + ", " + b + " : (" +
         aType + ", " + bType + ") -> " + resultType);
    return "%" + result;
  }

  std::string layerNorm(const std::string &result, const std::string &input,
                        const std::string &inputType, int64_t axis,
                        int64_t hidden) {
    std::string g = weight(result + "_g", {hidden});
    std::string b = weight(result + "_b", {hidden});
    line("%" + result + " = cleave.layer_norm " + input + ", " + g + ", " + b +
         " {axis = " + std::to_string(axis) + " : i64} : (" + inputType + ", " +
         type({hidden}) + ", " + type({hidden}) + ") -> " + inputType);
    return "%" + result;
  }

  std::string transpose(const std::string &result, const std::string &input,
                        const std::string &inputType, const std::string &perm,
                        const std::string &resultType) {
    line("%" + result + " = cleave.transpose " + input +
         " {perm = array<i64: " + perm + ">} : (" + inputType + ") -> " +
         resultType);
    return "%" + result;
  }

  std::string finish() { return text; }

private:
  const ModelShape &shape;
  std::string text;
  llvm::raw_string_ostream os;
  int64_t offset = 0;
};

} // namespace

std::string cleave::test::writeTransformer(const ModelShape &shape) {
  IRWriter w(shape);
  int64_t b = shape.batch, s = shape.seq, h = shape.hidden, a = shape.heads,
          d = h / a, f = 4 * h;
  std::string x = w.type({b, s, h}), wide = w.type({b, s, f});
  std::string split = w.type({b, s, a, d}), heads = w.type({b, a, s, d}),
              keys = w.type({b, a, d, s}), scores = w.type({b, a, s, s});
  std::string scalar = "tensor<" + shape.dtype + ">";
  w.begin(x);
  std::string residual = "%x";
  for (int64_t layer = 0; layer < shape.layers; ++layer) {
    std::string p = "l" + std::to_string(layer) + "_";
    std::string ln1 = w.layerNorm(p + "ln1", residual, x, 2, h);
    std::string qkv[3];
    const char *names[] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i) {
      std::string n = p + names[i];
      std::string weight = w.weight(n + "_w", {h, h});
      std::string bias = w.weight(n + "_b", {h});
      std::string y =
          w.binary(n + "0", "matmul", ln1, x, weight, w.type({h, h}), x);
      y = w.binary(n, "add", y, x, bias, w.type({h}), x);
      w.line("%" + n + "4 = cleave.reshape " + y + " : " + x + " -> " + split);
      qkv[i] = "%" + n + "4";
    }
    std::string qh = w.transpose(p + "qh", qkv[0], split, "0, 2, 1, 3", heads);
    std::string kh = w.transpose(p + "kh", qkv[1], split, "0, 2, 3, 1", keys);
    std::string vh = w.transpose(p + "vh", qkv[2], split, "0, 2, 1, 3", heads);
    std::string sc =
        w.binary(p + "scores", "matmul", qh, heads, kh, keys, scores);
    w.line("%" + p + "scale = cleave.constant dense<0.125> : " + scalar);
    sc = w.binary(p + "scaled", "mul", sc, scores, "%" + p + "scale", scalar,
                  scores);
    std::string mask = w.weight(p + "mask", {1, 1, s, s});
    sc = w.binary(p + "masked", "add", sc, scores, mask, w.type({1, 1, s, s}),
                  scores);
    w.line("%" + p + "probs = cleave.softmax " + sc +
           " {axis = 3 : i64} : " + scores);
    std::string ctx = w.binary(p + "ctx", "matmul", "%" + p + "probs", scores,
                               vh, heads, heads);
    ctx = w.transpose(p + "ctxt", ctx, heads, "0, 2, 1, 3", split);
    w.line("%" + p + "ctx3 = cleave.reshape " + ctx + " : " + split + " -> " +
           x);
    std::string wo = w.weight(p + "o_w", {h, h});
    std::string bo = w.weight(p + "o_b", {h});
    std::string o = w.binary(p + "o0", "matmul", "%" + p + "ctx3", x, wo,
                             w.type({h, h}), x);
    o = w.binary(p + "o", "add", o, x, bo, w.type({h}), x);
    residual = w.binary(p + "res1", "add", residual, x, o, x, x);

    std::string ln2 = w.layerNorm(p + "ln2", residual, x, 2, h);
    std::string w1 = w.weight(p + "fc1_w", {h, f});
    std::string b1 = w.weight(p + "fc1_b", {f});
    std::string y =
        w.binary(p + "fc1", "matmul", ln2, x, w1, w.type({h, f}), wide);
    y = w.binary(p + "fc1b", "add", y, wide, b1, w.type({f}), wide);
    w.line("%" + p + "act = cleave.gelu " + y + " : " + wide);
    std::string w2 = w.weight(p + "fc2_w", {f, h});
    std::string b2 = w.weight(p + "fc2_b", {h});
    y = w.binary(p + "fc2", "matmul", "%" + p + "act", wide, w2, w.type({f, h}),
                 x);
    y = w.binary(p + "fc2b", "add", y, x, b2, w.type({h}), x);
    residual = w.binary(p + "res2", "add", residual, x, y, x, x);
  }
  std::string out = w.layerNorm("ln_f", residual, x, 2, h);
  w.end(out, x);
  return w.finish();
}

std::string cleave::test::writeMLPStack(const ModelShape &shape) {
  IRWriter w(shape);
  int64_t b = shape.batch, s = shape.seq, h = shape.hidden, f = 4 * h;
  std::string x = w.type({b, s, h}), wide = w.type({b, s, f});
  w.begin(x);
  std::string residual = "%x";
  for (int64_t layer = 0; layer < shape.layers; ++layer) {
    std::string p = "l" + std::to_string(layer) + "_";
    std::string ln = w.layerNorm(p + "ln", residual, x, 2, h);
    std::string w1 = w.weight(p + "fc1_w", {h, f});
    std::string b1 = w.weight(p + "fc1_b", {f});
    std::string y =
        w.binary(p + "fc1", "matmul", ln, x, w1, w.type({h, f}), wide);
    y = w.binary(p + "fc1b", "add", y, wide, b1, w.type({f}), wide);
    w.line("%" + p + "act = cleave.gelu " + y + " : " + wide);
    std::string w2 = w.weight(p + "fc2_w", {f, h});
    std::string b2 = w.weight(p + "fc2_b", {h});
    y = w.binary(p + "fc2", "matmul", "%" + p + "act", wide, w2, w.type({f, h}),
                 x);
    y = w.binary(p + "fc2b", "add", y, x, b2, w.type({h}), x);
    residual = w.binary(p + "res", "add", residual, x, y, x, x);
  }
  w.end(residual, x);
  return w.finish();
}

std::string cleave::test::writeAttentionStack(const ModelShape &shape) {
  IRWriter w(shape);
  int64_t b = shape.batch, s = shape.seq, h = shape.hidden;
  std::string x = w.type({b, s, h}), keys = w.type({b, h, s}),
              scores = w.type({b, s, s});
  w.begin(x);
  std::string residual = "%x";
  for (int64_t layer = 0; layer < shape.layers; ++layer) {
    std::string p = "l" + std::to_string(layer) + "_";
    std::string proj[3];
    const char *names[] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i) {
      std::string weight = w.weight(p + names[i] + "_w", {h, h});
      proj[i] = w.binary(p + names[i], "matmul", residual, x, weight,
                         w.type({h, h}), x);
    }
    std::string kt = w.transpose(p + "kt", proj[1], x, "0, 2, 1", keys);
    std::string sc =
        w.binary(p + "scores", "matmul", proj[0], x, kt, keys, scores);
    w.line("%" + p + "probs = cleave.softmax " + sc +
           " {axis = 2 : i64} : " + scores);
    std::string ctx =
        w.binary(p + "ctx", "matmul", "%" + p + "probs", scores, proj[2], x, x);
    std::string wo = w.weight(p + "o_w", {h, h});
    std::string o = w.binary(p + "o", "matmul", ctx, x, wo, w.type({h, h}), x);
    residual = w.binary(p + "res", "add", residual, x, o, x, x);
  }
  w.end(residual, x);
  return w.finish();
}

std::unique_ptr<MLIRContext> cleave::test::makePlanContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

OwningOpRef<ModuleOp> cleave::test::parsePlanModule(MLIRContext &context,
                                                    const std::string &source) {
  return parseSourceString<ModuleOp>(source, &context);
}

TargetDescription cleave::test::loadTestTarget(int64_t devices,
                                               int64_t devicesPerNode,
                                               const std::string &name) {
  TargetLoadOptions options;
  options.targetsDirectory = CLEAVE_SOURCE_TARGETS_DIR;
  options.numDevices = devices;
  options.devicesPerNode = devicesPerNode;
  llvm::Expected<TargetDescription> target = loadTarget(name, options);
  if (!target) {
    llvm::errs() << llvm::toString(target.takeError()) << "\n";
    return TargetDescription();
  }
  return *target;
}
