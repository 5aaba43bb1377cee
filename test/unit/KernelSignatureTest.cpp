//===- KernelSignatureTest.cpp - the kernel contract, both sides -*- C++
//-*-===//
//
// Every signature of KernelList.def and CommList.def, filled through the
// compiler's builder (cleave::kernels), packed into a KernelCall, and read
// back through the runtime's view (cleave::rt::args) from the arrays an
// emitted program would pass: each field must come back as it went in.
// Then the errors of both sides: a builder that does not fit its op, and a
// call that does not fit its signature.
//
//===----------------------------------------------------------------------===//

#include "cleave/Conversion/KernelSignatures.h"
#include "cleave/rt/KernelArgs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <deque>
#include <string>
#include <vector>

using namespace mlir;
using namespace cleave;
namespace args = cleave::rt::args;

namespace {

/// Rank of every tensor the round trip makes, so rank lists have
/// 3 * factor entries; every count is 2.
constexpr int64_t kRank = 3;
constexpr int64_t kCount = 2;

/// Makes the operands, results and attribute values of one call, each
/// distinct, and the arrays a program would pass for the packed call.
class CallFixture {
public:
  explicit CallFixture(bool withOptionals) : withOptionals(withOptionals) {
    context.allowUnregisteredDialects();
    // An operand no field names, so operand indices differ from field
    // positions.
    operands.push_back(newValue());
  }

  ~CallFixture() {
    if (op)
      op->destroy();
  }

  Value input() {
    Value value = newValue();
    operands.push_back(value);
    return value;
  }
  Value optionalInput() { return withOptionals ? input() : Value(); }
  SmallVector<Value> variadicInput() { return {input(), input(), input()}; }
  void output(int count = 1) { numResults += count; }
  /// A result of the op once it is made, or none.
  void optionalOutput(Value &field) {
    if (!withOptionals)
      return;
    optionalResults.push_back({&field, numResults});
    output();
  }
  int64_t integer() { return nextInt++; }
  SmallVector<int64_t> intList(int64_t length) {
    SmallVector<int64_t> values;
    for (int64_t i = 0; i < length; ++i)
      values.push_back(integer());
    return values;
  }
  double floating() { return nextFloat += 0.25; }
  SmallVector<double> floatList(int64_t length) {
    SmallVector<double> values;
    for (int64_t i = 0; i < length; ++i)
      values.push_back(floating());
    return values;
  }

  /// The op the builder's fields refer to.
  Operation *makeOp() {
    OperationState state(UnknownLoc::get(&context), "test.kernel");
    state.addOperands(operands);
    state.addTypes(SmallVector<Type>(numResults, tensorType()));
    op = Operation::create(state);
    for (auto [field, index] : optionalResults)
      *field = op->getResult(index);
    return op;
  }

  /// The arrays an emitted program passes for `call`: input `i` is the op's
  /// operand `call.operands[i]`, marked by its data pointer.
  void lower(const KernelCall &call) {
    for (int index : call.operands) {
      CleaveTensor tensor = {nullptr, CLEAVE_F32, 0, {0}};
      if (index >= 0) {
        tensor.data = marker(index);
        tensor.rank = kRank;
      }
      in.push_back(tensor);
    }
    // Outputs have data, or an optional one would read as absent.
    for (unsigned i = 0; i < numResults; ++i)
      out.push_back({marker(63 - i), CLEAVE_F32, kRank, {0}});
    ints.assign(call.ints.begin(), call.ints.end());
    floats.assign(call.floats.begin(), call.floats.end());
    // Past the end, a value no field may read.
    ints.push_back(-777);
    floats.push_back(-777.0);
  }

  args::Binder binder() {
    return args::Binder(in.data(), static_cast<int32_t>(in.size()), out.data(),
                        static_cast<int32_t>(out.size()), ints.data(),
                        floats.data());
  }

  /// The data pointer the lowered call gives `value`'s operand.
  void *markerOf(Value value) {
    for (OpOperand &operand : op->getOpOperands())
      if (operand.get() == value)
        return marker(operand.getOperandNumber());
    return nullptr;
  }

  MLIRContext context;
  bool withOptionals;
  std::vector<CleaveTensor> in, out;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  /// The output the view's next output field must be.
  size_t nextOutput = 0;

private:
  Type tensorType() {
    return RankedTensorType::get({2, 3, 4}, Float32Type::get(&context));
  }
  Value newValue() {
    return block.addArgument(tensorType(), UnknownLoc::get(&context));
  }
  void *marker(unsigned index) { return &markers[index]; }

  Block block;
  SmallVector<Value> operands;
  unsigned numResults = 0;
  /// The builder fields of optional outputs and the results they name.
  SmallVector<std::pair<Value *, unsigned>> optionalResults;
  int64_t nextInt = 100;
  double nextFloat = 0.0;
  Operation *op = nullptr;
  char markers[64] = {};
};

//===----------------------------------------------------------------------===//
// fill(builder, fixture): every field of a builder
//===----------------------------------------------------------------------===//

#define CLEAVE_FILL_BEGIN(signature)                                           \
  [[maybe_unused]] void fill(kernels::signature &builder,                      \
                             CallFixture &fixture) {
#define CLEAVE_FILL_END(signature) }
#define CLEAVE_FILL_INPUT(name) builder.name = fixture.input();
#define CLEAVE_FILL_OPTIONAL_INPUT(name) builder.name = fixture.optionalInput();
#define CLEAVE_FILL_VARIADIC_INPUT(name) builder.name = fixture.variadicInput();
#define CLEAVE_FILL_OUTPUT(name) fixture.output();
#define CLEAVE_FILL_OPTIONAL_OUTPUT(name) fixture.optionalOutput(builder.name);
#define CLEAVE_FILL_VARIADIC_OUTPUT(name) fixture.output(3);
#define CLEAVE_FILL_INT(name) builder.name = fixture.integer();
#define CLEAVE_FILL_NONE(name)
#define CLEAVE_FILL_INT_LIST(name, count, factor)                              \
  builder.name = fixture.intList(kCount * factor);
#define CLEAVE_FILL_INT_RANK_LIST(name, tensor, factor)                        \
  builder.name = fixture.intList(kRank * factor);
#define CLEAVE_FILL_FLOAT(name) builder.name = fixture.floating();
#define CLEAVE_FILL_FLOAT_RANK_LIST(name, tensor, factor)                      \
  builder.name = fixture.floatList(kRank * factor);

#define CLEAVE_SIGNATURE_BEGIN CLEAVE_FILL_BEGIN
#define CLEAVE_SIGNATURE_END CLEAVE_FILL_END
#define CLEAVE_INPUT CLEAVE_FILL_INPUT
#define CLEAVE_OPTIONAL_INPUT CLEAVE_FILL_OPTIONAL_INPUT
#define CLEAVE_VARIADIC_INPUT CLEAVE_FILL_VARIADIC_INPUT
#define CLEAVE_OUTPUT CLEAVE_FILL_OUTPUT
#define CLEAVE_OPTIONAL_OUTPUT CLEAVE_FILL_OPTIONAL_OUTPUT
#define CLEAVE_VARIADIC_OUTPUT CLEAVE_FILL_VARIADIC_OUTPUT
#define CLEAVE_INT CLEAVE_FILL_INT
#define CLEAVE_INT_COUNT CLEAVE_FILL_NONE
#define CLEAVE_INT_LIST CLEAVE_FILL_INT_LIST
#define CLEAVE_INT_RANK_LIST CLEAVE_FILL_INT_RANK_LIST
#define CLEAVE_FLOAT CLEAVE_FILL_FLOAT
#define CLEAVE_FLOAT_RANK_LIST CLEAVE_FILL_FLOAT_RANK_LIST
#include "cleave/rt/KernelList.def"
#define CLEAVE_SIGNATURE_BEGIN CLEAVE_FILL_BEGIN
#define CLEAVE_SIGNATURE_END CLEAVE_FILL_END
#define CLEAVE_INPUT CLEAVE_FILL_INPUT
#define CLEAVE_OUTPUT CLEAVE_FILL_OUTPUT
#define CLEAVE_INT CLEAVE_FILL_INT
#include "cleave/rt/CommList.def"

//===----------------------------------------------------------------------===//
// check(builder, view, fixture): every field of the view is the builder's
//===----------------------------------------------------------------------===//

void checkList(ArrayRef<int64_t> expected, args::IntList actual,
               const char *field) {
  ASSERT_EQ(actual.size(), static_cast<int64_t>(expected.size())) << field;
  for (int64_t i = 0; i < actual.size(); ++i)
    EXPECT_EQ(actual[i], expected[i]) << field << "[" << i << "]";
}

void checkList(ArrayRef<double> expected, args::FloatList actual,
               const char *field) {
  ASSERT_EQ(actual.size(), static_cast<int64_t>(expected.size())) << field;
  for (int64_t i = 0; i < actual.size(); ++i)
    EXPECT_EQ(actual[i], expected[i]) << field << "[" << i << "]";
}

#define CLEAVE_CHECK_BEGIN(signature)                                          \
  [[maybe_unused]] void check(const kernels::signature &builder,               \
                              const args::signature &view,                     \
                              CallFixture &fixture) {
#define CLEAVE_CHECK_END(signature) }
#define CLEAVE_CHECK_INPUT(name)                                               \
  EXPECT_EQ(view.name().data, fixture.markerOf(builder.name)) << #name;
#define CLEAVE_CHECK_OPTIONAL_INPUT(name)                                      \
  if (builder.name) {                                                          \
    ASSERT_NE(view.name(), nullptr) << #name;                                  \
    EXPECT_EQ(view.name()->data, fixture.markerOf(builder.name)) << #name;     \
  } else {                                                                     \
    EXPECT_EQ(view.name(), nullptr) << #name;                                  \
  }
#define CLEAVE_CHECK_VARIADIC_INPUT(name)                                      \
  ASSERT_EQ(view.name().size(), static_cast<int64_t>(builder.name.size()));    \
  for (int64_t i = 0; i < view.name().size(); ++i)                             \
    EXPECT_EQ(view.name()[i].data, fixture.markerOf(builder.name[i])) << #name;
#define CLEAVE_CHECK_OUTPUT(name)                                              \
  EXPECT_EQ(&view.name(), &fixture.out[fixture.nextOutput++]) << #name;
#define CLEAVE_CHECK_OPTIONAL_OUTPUT(name)                                     \
  if (builder.name)                                                            \
    EXPECT_EQ(view.name(), &fixture.out[fixture.nextOutput++]) << #name;       \
  else                                                                         \
    EXPECT_EQ(view.name(), nullptr) << #name;
#define CLEAVE_CHECK_VARIADIC_OUTPUT(name)                                     \
  EXPECT_EQ(view.name().data(), &fixture.out[fixture.nextOutput]) << #name;    \
  EXPECT_EQ(view.name().size(),                                                \
            static_cast<int64_t>(fixture.out.size() - fixture.nextOutput));
#define CLEAVE_CHECK_INT(name) EXPECT_EQ(view.name(), *builder.name) << #name;
#define CLEAVE_CHECK_NONE(name)
#define CLEAVE_CHECK_INT_LIST(name, count, factor)                             \
  EXPECT_EQ(view.count() * factor, static_cast<int64_t>(builder.name.size()))  \
      << #count;                                                               \
  checkList(builder.name, view.name(), #name);
#define CLEAVE_CHECK_RANK_LIST(name, tensor, factor)                           \
  checkList(builder.name, view.name(), #name);
#define CLEAVE_CHECK_FLOAT(name) EXPECT_EQ(view.name(), *builder.name) << #name;

#define CLEAVE_SIGNATURE_BEGIN CLEAVE_CHECK_BEGIN
#define CLEAVE_SIGNATURE_END CLEAVE_CHECK_END
#define CLEAVE_INPUT CLEAVE_CHECK_INPUT
#define CLEAVE_OPTIONAL_INPUT CLEAVE_CHECK_OPTIONAL_INPUT
#define CLEAVE_VARIADIC_INPUT CLEAVE_CHECK_VARIADIC_INPUT
#define CLEAVE_OUTPUT CLEAVE_CHECK_OUTPUT
#define CLEAVE_OPTIONAL_OUTPUT CLEAVE_CHECK_OPTIONAL_OUTPUT
#define CLEAVE_VARIADIC_OUTPUT CLEAVE_CHECK_VARIADIC_OUTPUT
#define CLEAVE_INT CLEAVE_CHECK_INT
#define CLEAVE_INT_COUNT CLEAVE_CHECK_NONE
#define CLEAVE_INT_LIST CLEAVE_CHECK_INT_LIST
#define CLEAVE_INT_RANK_LIST CLEAVE_CHECK_RANK_LIST
#define CLEAVE_FLOAT CLEAVE_CHECK_FLOAT
#define CLEAVE_FLOAT_RANK_LIST CLEAVE_CHECK_RANK_LIST
#include "cleave/rt/KernelList.def"
#define CLEAVE_SIGNATURE_BEGIN CLEAVE_CHECK_BEGIN
#define CLEAVE_SIGNATURE_END CLEAVE_CHECK_END
#define CLEAVE_INPUT CLEAVE_CHECK_INPUT
#define CLEAVE_OUTPUT CLEAVE_CHECK_OUTPUT
#define CLEAVE_INT CLEAVE_CHECK_INT
#include "cleave/rt/CommList.def"

/// Builder -> KernelCall -> lowered arrays -> view, with and without the
/// optional inputs and outputs.
template <typename Signature, typename View>
void roundTrip(kernels::Kernel<Signature> kernel) {
  for (bool withOptionals : {true, false}) {
    SCOPED_TRACE(std::string(kernel.name) +
                 (withOptionals ? " with" : " without") + " optional fields");
    CallFixture fixture(withOptionals);
    Signature builder;
    fill(builder, fixture);
    KernelCall call;
    Operation *op = fixture.makeOp();
    ASSERT_TRUE(succeeded(kernels::buildCall(op, kernel, builder, call)));
    EXPECT_EQ(call.kernel, kernel.name);
    fixture.lower(call);
    args::Binder binder = fixture.binder();
    View view(binder);
    char message[160] = "";
    ASSERT_TRUE(binder.finish(message, sizeof(message))) << message;
    check(builder, view, fixture);
  }
}

// One test per kernel: each one's handle names the signature both sides use.
#define CLEAVE_KERNEL(name, signature)                                         \
  TEST(KernelSignatureTest, RoundTrip_##name) {                                \
    roundTrip<kernels::signature, args::signature>(kernels::name);             \
  }
#include "cleave/rt/KernelList.def"
#define CLEAVE_COMM(name, signature)                                           \
  TEST(KernelSignatureTest, RoundTrip_##name) {                                \
    roundTrip<kernels::signature, args::signature>(kernels::name);             \
  }
#include "cleave/rt/CommList.def"

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Binds `View` to `in` and `out` with `ints`, returning the refusal ("" if
/// it binds).
template <typename View>
std::string bindError(std::vector<CleaveTensor> in,
                      std::vector<CleaveTensor> out,
                      std::vector<int64_t> ints = std::vector<int64_t>(16, 0),
                      std::vector<double> floats = std::vector<double>(16, 0)) {
  args::Binder binder(in.data(), static_cast<int32_t>(in.size()), out.data(),
                      static_cast<int32_t>(out.size()), ints.data(),
                      floats.data());
  View view(binder);
  char message[160] = "";
  return binder.finish(message, sizeof(message)) ? "" : message;
}

CleaveTensor tensor(int32_t rank = 2) {
  static float data;
  return {&data, CLEAVE_F32, rank, {4, 4, 4, 4, 4, 4, 4, 4}};
}

TEST(KernelSignatureTest, ViewsCheckArity) {
  EXPECT_EQ(bindError<args::Gemm>({tensor()}, {tensor()}),
            "expected at least 2 inputs, got 1");
  EXPECT_EQ(bindError<args::Gemm>(
                {tensor(), tensor(), tensor(), tensor(), tensor()}, {tensor()}),
            "expected at most 4 inputs, got 5");
  EXPECT_EQ(bindError<args::Gemm>({tensor(), tensor()}, {}),
            "expected at least 1 outputs, got 0");
  EXPECT_EQ(bindError<args::Lstm>({tensor(), tensor(), tensor()},
                                  {tensor(), tensor()}),
            "expected at least 3 outputs, got 2");
  EXPECT_EQ(bindError<args::Concat>({}, {tensor()}),
            "expected at least 1 inputs, got 0");
  EXPECT_EQ(bindError<args::Split>({tensor()}, {}),
            "expected at least 1 outputs, got 0");
  EXPECT_EQ(bindError<args::Send>({tensor()}, {tensor()}),
            "expected at most 0 outputs, got 1");
  EXPECT_EQ(bindError<args::Recv>({tensor()}, {tensor()}),
            "expected at most 0 inputs, got 1");
}

TEST(KernelSignatureTest, ViewsReadAbsentOptionalInputs) {
  // Trailing optional inputs may be left out, or passed without data.
  CleaveTensor none = {nullptr, 0, 0, {0}};
  std::vector<CleaveTensor> in = {tensor(), tensor(), none};
  std::vector<CleaveTensor> out = {tensor()};
  std::vector<int64_t> ints = {1, 0};
  std::vector<double> floats = {2.0, 3.0};
  for (int32_t numIn : {2, 3}) {
    args::Binder binder(in.data(), numIn, out.data(), 1, ints.data(),
                        floats.data());
    args::Gemm view(binder);
    char message[160] = "";
    ASSERT_TRUE(binder.finish(message, sizeof(message))) << message;
    EXPECT_EQ(view.c(), nullptr);
    EXPECT_EQ(&view.a(), &in[0]);
    EXPECT_EQ(&view.y(), &out[0]);
    EXPECT_EQ(view.transA(), 1);
    EXPECT_EQ(view.beta(), 3.0);
  }
}

TEST(KernelSignatureTest, ViewsReadAbsentOptionalOutputs) {
  // A trailing optional output may be left out, or passed without data.
  CleaveTensor none = {nullptr, 0, 0, {0}};
  std::vector<CleaveTensor> in = {tensor(), tensor(0)};
  std::vector<CleaveTensor> out = {tensor(), tensor(0), none};
  std::vector<int64_t> ints(3, 0);
  std::vector<double> floats(5, 0.0);
  for (int32_t numOut : {2, 3}) {
    args::Binder binder(in.data(), 2, out.data(), numOut, ints.data(),
                        floats.data());
    args::SgdUpdate view(binder);
    char message[160] = "";
    ASSERT_TRUE(binder.finish(message, sizeof(message))) << message;
    EXPECT_EQ(view.momentumBuffer(), nullptr);
    EXPECT_EQ(&view.parameter(), &out[0]);
    EXPECT_EQ(&view.step(), &out[1]);
  }
  EXPECT_EQ(bindError<args::SgdUpdate>(
                {tensor(), tensor()}, {tensor(), tensor(), tensor(), tensor()},
                std::vector<int64_t>(3, 0), std::vector<double>(5, 0.0)),
            "expected at most 3 outputs, got 4");
}

TEST(KernelSignatureTest, ViewsCheckCounts) {
  // n = 9 spatial dimensions: past CLEAVE_MAX_RANK, so no list is read.
  EXPECT_EQ(
      bindError<args::Conv>({tensor(), tensor()}, {tensor()}, {9, 1, 0, 0, 0}),
      "n is 9, outside [0, 8]");
  EXPECT_EQ(bindError<args::Reduce>({tensor()}, {tensor()}, {-1}),
            "numAxes is -1, outside [0, 8]");
  EXPECT_EQ(bindError<args::Transpose>({tensor(12)}, {tensor()}),
            "a tensor's rank is 12, outside [0, 8]");
  // Rank lists follow the tensor: slice of a rank-2 tensor reads 6 ints.
  std::vector<CleaveTensor> in = {tensor(2)}, out = {tensor(2)};
  std::vector<int64_t> ints = {0, 1, 5, 6, 1, -1};
  args::Binder binder(in.data(), 1, out.data(), 1, ints.data(), nullptr);
  args::Slice view(binder);
  char message[160] = "";
  ASSERT_TRUE(binder.finish(message, sizeof(message))) << message;
  EXPECT_EQ(view.ends()[1], 6);
  EXPECT_EQ(view.steps().data(), ints.data() + 4);
}

/// Builds `kernel` from `builder` on an op of `numResults` results over
/// `operands`, returning the op's error ("" when it builds).
template <typename Signature>
std::string buildError(MLIRContext &context, ArrayRef<Value> operands,
                       unsigned numResults, kernels::Kernel<Signature> kernel,
                       const Signature &builder) {
  OperationState state(UnknownLoc::get(&context), "test.kernel");
  state.addOperands(operands);
  state.addTypes(SmallVector<Type>(
      numResults, RankedTensorType::get({4, 4}, Float32Type::get(&context))));
  Operation *op = Operation::create(state);
  std::string error;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    error = diagnostic.str();
    return success();
  });
  KernelCall call;
  LogicalResult result = kernels::buildCall(op, kernel, builder, call);
  op->destroy();
  EXPECT_EQ(succeeded(result), error.empty());
  return error;
}

/// An optional output names the op's result: the required outputs are the
/// other results in order, and it comes after them.
TEST(KernelSignatureTest, BuildersPlaceOptionalOutputs) {
  MLIRContext context;
  context.allowUnregisteredDialects();
  Block block;
  Type type = RankedTensorType::get({4, 4}, Float32Type::get(&context));
  Value g = block.addArgument(type, UnknownLoc::get(&context));
  Value scale = block.addArgument(type, UnknownLoc::get(&context));
  Value stranger = block.addArgument(type, UnknownLoc::get(&context));
  auto makeOp = [&](unsigned numResults) {
    OperationState state(UnknownLoc::get(&context), "test.kernel");
    state.addOperands({g, scale});
    state.addTypes(SmallVector<Type>(numResults, type));
    return Operation::create(state);
  };
  kernels::SgdUpdate sgd;
  sgd.gradient = g;
  sgd.gradientScale = scale;
  sgd.nesterov = 0;
  sgd.warmupSteps = 0;
  sgd.decaySteps = 0;
  sgd.learningRate = 0.1;
  sgd.momentum = 0.9;
  sgd.dampening = 0.0;
  sgd.weightDecay = 0.0;
  sgd.minLrRatio = 0.0;

  // Results (parameter, buffer, step): the kernel writes them as
  // (parameter, step, buffer).
  Operation *withBuffer = makeOp(3);
  sgd.momentumBuffer = withBuffer->getResult(1);
  KernelCall call;
  ASSERT_TRUE(succeeded(
      kernels::buildCall(withBuffer, kernels::sgd_update, sgd, call)));
  EXPECT_EQ(call.results, (SmallVector<int, 3>{0, 2, 1}));
  withBuffer->destroy();

  // Without the buffer every result in order.
  Operation *plain = makeOp(2);
  sgd.momentumBuffer = Value();
  ASSERT_TRUE(
      succeeded(kernels::buildCall(plain, kernels::sgd_update, sgd, call)));
  EXPECT_TRUE(call.results.empty());
  plain->destroy();

  EXPECT_EQ(buildError(context, {g, scale}, 3, kernels::sgd_update, sgd),
            "'test.kernel' op has a malformed call of kernel 'sgd_update': "
            "kernel 'sgd_update' writes 2 outputs, the op has 3 results");
  sgd.momentumBuffer = stranger;
  EXPECT_EQ(buildError(context, {g, scale}, 3, kernels::sgd_update, sgd),
            "'test.kernel' op has a malformed call of kernel 'sgd_update': "
            "kernel output is not a result of the op");
}

TEST(KernelSignatureTest, BuildersCheckTheirOp) {
  MLIRContext context;
  context.allowUnregisteredDialects();
  Block block;
  Type type = RankedTensorType::get({4, 4}, Float32Type::get(&context));
  Value a = block.addArgument(type, UnknownLoc::get(&context));
  Value b = block.addArgument(type, UnknownLoc::get(&context));
  Value stranger = block.addArgument(type, UnknownLoc::get(&context));

  kernels::Gemm gemm;
  gemm.a = a;
  gemm.b = b;
  gemm.transA = 0;
  gemm.epilogue = CLEAVE_EPILOGUE_NONE;
  gemm.alpha = 1.0;
  gemm.beta = 1.0;
  gemm.epilogueMin = 0.0;
  gemm.epilogueMax = 0.0;
  EXPECT_EQ(buildError(context, {a, b}, 1, kernels::gemm, gemm),
            "'test.kernel' op has a malformed call of kernel 'gemm': kernel "
            "attribute 'transB' is not set");
  gemm.transB = 1;
  EXPECT_EQ(buildError(context, {a, b}, 1, kernels::gemm, gemm), "");
  EXPECT_EQ(buildError(context, {a, b}, 2, kernels::gemm, gemm),
            "'test.kernel' op has a malformed call of kernel 'gemm': kernel "
            "'gemm' writes 1 outputs, the op has 2 results");
  gemm.b = stranger;
  EXPECT_EQ(buildError(context, {a, b}, 1, kernels::gemm, gemm),
            "'test.kernel' op has a malformed call of kernel 'gemm': kernel "
            "input 'b' is not an operand of the op");

  // Lists that name one count must agree with it.
  kernels::Conv conv;
  conv.x = a;
  conv.w = b;
  conv.group = 1;
  conv.strides = {1, 1};
  conv.pads = {0, 0, 0};
  conv.dilations = {1, 1};
  EXPECT_EQ(buildError(context, {a, b}, 1, kernels::conv, conv),
            "'test.kernel' op has a malformed call of kernel 'conv': kernel "
            "attribute 'pads' has 3 values, not a multiple of 2");
  conv.pads = {0, 0};
  EXPECT_EQ(buildError(context, {a, b}, 1, kernels::conv, conv),
            "'test.kernel' op has a malformed call of kernel 'conv': kernel "
            "attribute 'pads' has 2 values, expected 4");

  // A rank list has the rank of its tensor.
  kernels::Transpose transpose;
  transpose.x = a;
  transpose.perm = {1, 0, 2};
  EXPECT_EQ(buildError(context, {a}, 1, kernels::transpose, transpose),
            "'test.kernel' op has a malformed call of kernel 'transpose': "
            "kernel attribute 'perm' has 3 values, expected 2");

  kernels::Split split;
  split.x = a;
  split.axis = 0;
  EXPECT_EQ(buildError(context, {a}, 0, kernels::split, split),
            "'test.kernel' op has a malformed call of kernel 'split': kernel "
            "'split' writes at least 1 outputs, the op has 0 results");
}

TEST(KernelSignatureTest, BuildersPackCountsBeforeTheirLists) {
  MLIRContext context;
  context.allowUnregisteredDialects();
  Block block;
  Type type = RankedTensorType::get({1, 2, 5, 5}, Float32Type::get(&context));
  Value x = block.addArgument(type, UnknownLoc::get(&context));
  OperationState state(UnknownLoc::get(&context), "test.kernel");
  state.addOperands({x});
  state.addTypes({type});
  Operation *op = Operation::create(state);
  kernels::AveragePool pool;
  pool.x = x;
  pool.kernelShape = {3, 3};
  pool.strides = {1, 2};
  pool.pads = {0, 1, 0, 1};
  pool.dilations = {1, 1};
  pool.ceilMode = 0;
  pool.countIncludePad = 1;
  pool.block = 8;
  KernelCall call;
  ASSERT_TRUE(
      succeeded(kernels::buildCall(op, kernels::average_pool, pool, call)));
  op->destroy();
  EXPECT_EQ(call.kernel, "average_pool");
  EXPECT_EQ(call.operands, (SmallVector<int, 7>{0}));
  EXPECT_EQ(call.ints, (SmallVector<int64_t, 8>{2, 3, 3, 1, 2, 0, 1, 0, 1, 1, 1,
                                                0, 1, 8}));
  EXPECT_TRUE(call.floats.empty());
}

} // namespace
