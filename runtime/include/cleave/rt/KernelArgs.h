//===- KernelArgs.h - typed views of a kernel call's arguments ---*- C++
//-*-===//
//
// The runtime side of the kernel contract of KernelList.def and
// CommList.def. For every signature there is a view,
// `cleave::rt::args::<Signature>`, bound from the (in, numIn, out, numOut,
// ints, floats) of a CleaveKernelFn call: a tensor field is an accessor
// returning the tensor (a pointer, null when absent, for an optional
// input; a span for a variadic one), an integer or float field its value,
// a list field a span over the call's attributes. Binding checks the number
// of inputs and outputs against the signature and every count against
// CLEAVE_MAX_RANK; it costs a few loads per field and nothing per element.
//
// A kernel library implements each kernel as a typed function
// `int32_t <name>(CleaveContext *, const args::<Signature> &)` and defines
// its C symbols with `runKernel`, one thunk per entry generated from the
// .def files, so that a kernel listed but not implemented, or implemented
// with another signature's view, does not build.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_KERNELARGS_H
#define CLEAVE_RT_KERNELARGS_H

#include "cleave/rt/Kernels.h"

#include <cstdint>
#include <cstdio>

namespace cleave::rt::args {

/// `size` consecutive values of the call's arguments.
template <typename T> class Span {
public:
  Span() = default;
  Span(T *data, int64_t size) : data_(data), size_(size) {}
  T *data() const { return data_; }
  int64_t size() const { return size_; }
  T &operator[](int64_t index) const { return data_[index]; }
  T *begin() const { return data_; }
  T *end() const { return data_ + size_; }

private:
  T *data_ = nullptr;
  int64_t size_ = 0;
};

using InputList = Span<const CleaveTensor>;
using OutputList = Span<CleaveTensor>;
using IntList = Span<const int64_t>;
using FloatList = Span<const double>;

/// Walks a call's arguments field by field as a view is constructed, and
/// records what does not fit the signature. Reading never goes past
/// `numIn`/`numOut`; a missing tensor reads as an empty rank-0 tensor so
/// that the fields after it can still be bound (the view is then refused).
class Binder {
public:
  Binder(const CleaveTensor *in, int32_t numIn, CleaveTensor *out,
         int32_t numOut, const int64_t *ints, const double *floats)
      : in_(in), out_(out), ints_(ints), floats_(floats), numIn_(numIn),
        numOut_(numOut) {}

  const CleaveTensor *input() {
    ++minIn_;
    ++maxIn_;
    return nextIn_ < numIn_ ? &in_[nextIn_++] : &absent();
  }
  /// Null when the call passes no tensor (data == nullptr) or too few.
  const CleaveTensor *optionalInput() {
    ++maxIn_;
    if (nextIn_ >= numIn_)
      return nullptr;
    const CleaveTensor *tensor = &in_[nextIn_++];
    return tensor->data ? tensor : nullptr;
  }
  InputList variadicInput() {
    ++minIn_;
    variadicIn_ = true;
    int32_t first = nextIn_ < numIn_ ? nextIn_ : numIn_;
    nextIn_ = numIn_;
    return InputList(in_ + first, numIn_ - first);
  }
  CleaveTensor *output() {
    ++minOut_;
    ++maxOut_;
    return nextOut_ < numOut_ ? &out_[nextOut_++] : &absentOutput_;
  }
  /// Null when the call passes no tensor (data == nullptr) or too few.
  CleaveTensor *optionalOutput() {
    ++maxOut_;
    if (nextOut_ >= numOut_)
      return nullptr;
    CleaveTensor *tensor = &out_[nextOut_++];
    return tensor->data ? tensor : nullptr;
  }
  OutputList variadicOutput() {
    ++minOut_;
    variadicOut_ = true;
    int32_t first = nextOut_ < numOut_ ? nextOut_ : numOut_;
    nextOut_ = numOut_;
    return OutputList(out_ + first, numOut_ - first);
  }

  int64_t integer() { return ints_[nextInt_++]; }
  /// A list length: refused (and read as 0) outside [0, CLEAVE_MAX_RANK].
  int64_t count(const char *name) {
    int64_t value = ints_[nextInt_++];
    if (value >= 0 && value <= CLEAVE_MAX_RANK)
      return value;
    if (!badField_) {
      badField_ = name;
      badValue_ = value;
    }
    return 0;
  }
  IntList intList(int64_t count, int64_t factor) {
    IntList list(ints_ + nextInt_, count * factor);
    nextInt_ += count * factor;
    return list;
  }
  IntList intRankList(const CleaveTensor *tensor, int64_t factor) {
    return intList(rankOf(tensor), factor);
  }

  double floating() { return floats_[nextFloat_++]; }
  FloatList floatRankList(const CleaveTensor *tensor, int64_t factor) {
    FloatList list(floats_ + nextFloat_, rankOf(tensor) * factor);
    nextFloat_ += list.size();
    return list;
  }

  /// True when the arguments fit; otherwise writes why into `message`.
  bool finish(char *message, std::size_t size) const {
    if (!checkArity("input", numIn_, minIn_, maxIn_, variadicIn_, message,
                    size) ||
        !checkArity("output", numOut_, minOut_, maxOut_, variadicOut_, message,
                    size))
      return false;
    if (badField_) {
      std::snprintf(message, size, "%s is %lld, outside [0, %d]", badField_,
                    static_cast<long long>(badValue_), CLEAVE_MAX_RANK);
      return false;
    }
    return true;
  }

private:
  static const CleaveTensor &absent() {
    static const CleaveTensor tensor = {nullptr, 0, 0, {0}};
    return tensor;
  }

  /// A tensor's rank as a list length (0 outside [0, CLEAVE_MAX_RANK]).
  int64_t rankOf(const CleaveTensor *tensor) {
    int32_t rank = tensor ? tensor->rank : 0;
    if (rank >= 0 && rank <= CLEAVE_MAX_RANK)
      return rank;
    if (!badField_) {
      badField_ = "a tensor's rank";
      badValue_ = rank;
    }
    return 0;
  }

  static bool checkArity(const char *what, int32_t count, int32_t min,
                         int32_t max, bool variadic, char *message,
                         std::size_t size) {
    if (count < min) {
      std::snprintf(message, size, "expected at least %d %ss, got %d", min,
                    what, count);
      return false;
    }
    if (!variadic && count > max) {
      std::snprintf(message, size, "expected at most %d %ss, got %d", max, what,
                    count);
      return false;
    }
    return true;
  }

  const CleaveTensor *in_;
  CleaveTensor *out_;
  const int64_t *ints_;
  const double *floats_;
  int32_t numIn_, numOut_;
  int32_t nextIn_ = 0, nextOut_ = 0;
  int64_t nextInt_ = 0, nextFloat_ = 0;
  int32_t minIn_ = 0, maxIn_ = 0, minOut_ = 0, maxOut_ = 0;
  bool variadicIn_ = false, variadicOut_ = false;
  const char *badField_ = nullptr;
  int64_t badValue_ = 0;
  CleaveTensor absentOutput_ = {nullptr, 0, 0, {0}};
};

// One view per signature. The fields are bound in declaration order by
// their default member initialisers, from the Binder the view is built
// with; the view keeps no pointer to it once built.
#define CLEAVE_ARGS_BEGIN(signature)                                           \
  class signature {                                                            \
  public:                                                                      \
    explicit signature(Binder &binder) : binder_(&binder) {                    \
      binder_ = nullptr;                                                       \
    }                                                                          \
                                                                               \
  private:                                                                     \
    Binder *binder_;                                                           \
                                                                               \
  public:
#define CLEAVE_ARGS_END(signature)                                             \
  }                                                                            \
  ;
#define CLEAVE_ARGS_FIELD(type, name, init)                                    \
private:                                                                       \
  type name##_ = init;                                                         \
                                                                               \
public:                                                                        \
  type name() const { return name##_; }
#define CLEAVE_ARGS_INPUT(name)                                                \
private:                                                                       \
  const CleaveTensor *name##_ = binder_->input();                              \
                                                                               \
public:                                                                        \
  const CleaveTensor &name() const { return *name##_; }
#define CLEAVE_ARGS_OPTIONAL_INPUT(name)                                       \
  CLEAVE_ARGS_FIELD(const CleaveTensor *, name, binder_->optionalInput())
#define CLEAVE_ARGS_VARIADIC_INPUT(name)                                       \
  CLEAVE_ARGS_FIELD(InputList, name, binder_->variadicInput())
#define CLEAVE_ARGS_OUTPUT(name)                                               \
private:                                                                       \
  CleaveTensor *name##_ = binder_->output();                                   \
                                                                               \
public:                                                                        \
  CleaveTensor &name() const { return *name##_; }
#define CLEAVE_ARGS_OPTIONAL_OUTPUT(name)                                      \
  CLEAVE_ARGS_FIELD(CleaveTensor *, name, binder_->optionalOutput())
#define CLEAVE_ARGS_VARIADIC_OUTPUT(name)                                      \
  CLEAVE_ARGS_FIELD(OutputList, name, binder_->variadicOutput())
#define CLEAVE_ARGS_INT(name)                                                  \
  CLEAVE_ARGS_FIELD(int64_t, name, binder_->integer())
#define CLEAVE_ARGS_INT_COUNT(name)                                            \
  CLEAVE_ARGS_FIELD(int64_t, name, binder_->count(#name))
#define CLEAVE_ARGS_INT_LIST(name, count, factor)                              \
  CLEAVE_ARGS_FIELD(IntList, name, binder_->intList(count##_, factor))
#define CLEAVE_ARGS_INT_RANK_LIST(name, tensor, factor)                        \
  CLEAVE_ARGS_FIELD(IntList, name, binder_->intRankList(tensor##_, factor))
#define CLEAVE_ARGS_FLOAT(name)                                                \
  CLEAVE_ARGS_FIELD(double, name, binder_->floating())
#define CLEAVE_ARGS_FLOAT_RANK_LIST(name, tensor, factor)                      \
  CLEAVE_ARGS_FIELD(FloatList, name, binder_->floatRankList(tensor##_, factor))

#define CLEAVE_SIGNATURE_BEGIN CLEAVE_ARGS_BEGIN
#define CLEAVE_SIGNATURE_END CLEAVE_ARGS_END
#define CLEAVE_INPUT CLEAVE_ARGS_INPUT
#define CLEAVE_OPTIONAL_INPUT CLEAVE_ARGS_OPTIONAL_INPUT
#define CLEAVE_VARIADIC_INPUT CLEAVE_ARGS_VARIADIC_INPUT
#define CLEAVE_OUTPUT CLEAVE_ARGS_OUTPUT
#define CLEAVE_OPTIONAL_OUTPUT CLEAVE_ARGS_OPTIONAL_OUTPUT
#define CLEAVE_VARIADIC_OUTPUT CLEAVE_ARGS_VARIADIC_OUTPUT
#define CLEAVE_INT CLEAVE_ARGS_INT
#define CLEAVE_INT_COUNT CLEAVE_ARGS_INT_COUNT
#define CLEAVE_INT_LIST CLEAVE_ARGS_INT_LIST
#define CLEAVE_INT_RANK_LIST CLEAVE_ARGS_INT_RANK_LIST
#define CLEAVE_FLOAT CLEAVE_ARGS_FLOAT
#define CLEAVE_FLOAT_RANK_LIST CLEAVE_ARGS_FLOAT_RANK_LIST
#include "cleave/rt/KernelList.def"
#define CLEAVE_SIGNATURE_BEGIN CLEAVE_ARGS_BEGIN
#define CLEAVE_SIGNATURE_END CLEAVE_ARGS_END
#define CLEAVE_INPUT CLEAVE_ARGS_INPUT
#define CLEAVE_OUTPUT CLEAVE_ARGS_OUTPUT
#define CLEAVE_INT CLEAVE_ARGS_INT
#include "cleave/rt/CommList.def"
#undef CLEAVE_ARGS_BEGIN
#undef CLEAVE_ARGS_END
#undef CLEAVE_ARGS_FIELD
#undef CLEAVE_ARGS_INPUT
#undef CLEAVE_ARGS_OPTIONAL_INPUT
#undef CLEAVE_ARGS_VARIADIC_INPUT
#undef CLEAVE_ARGS_OUTPUT
#undef CLEAVE_ARGS_OPTIONAL_OUTPUT
#undef CLEAVE_ARGS_VARIADIC_OUTPUT
#undef CLEAVE_ARGS_INT
#undef CLEAVE_ARGS_INT_COUNT
#undef CLEAVE_ARGS_INT_LIST
#undef CLEAVE_ARGS_INT_RANK_LIST
#undef CLEAVE_ARGS_FLOAT
#undef CLEAVE_ARGS_FLOAT_RANK_LIST

/// Binds the view `Args` of a call and runs `kernel` on it; a call that
/// does not fit fails through cleave_rt_fail, naming `name`.
template <typename Args>
inline int32_t runKernel(int32_t (*kernel)(CleaveContext *, const Args &),
                         const char *name, CleaveContext *ctx,
                         const CleaveTensor *in, int32_t numIn,
                         CleaveTensor *out, int32_t numOut, const int64_t *ints,
                         const double *floats) {
  Binder binder(in, numIn, out, numOut, ints, floats);
  Args args(binder);
  char message[160];
  if (!binder.finish(message, sizeof(message)))
    return cleave_rt_fail(ctx, name, message);
  return kernel(ctx, args);
}

/// Checks the epilogue arguments of a conv, matmul or gemm call on every
/// backend: `kind` a CleaveEpilogue code, and a clamp's bounds ordered (as
/// the float32s the kernels apply). Returns non-zero after cleave_rt_fail.
inline int32_t checkEpilogue(CleaveContext *ctx, const char *kernel,
                             int64_t kind, double min, double max) {
  char message[160];
  if (kind < CLEAVE_EPILOGUE_NONE || kind > CLEAVE_EPILOGUE_GELU_TANH)
    std::snprintf(message, sizeof message, "unknown epilogue %lld",
                  static_cast<long long>(kind));
  else if (kind == CLEAVE_EPILOGUE_CLIP &&
           !(static_cast<float>(min) <= static_cast<float>(max)))
    std::snprintf(message, sizeof message,
                  "the clamp's bounds [%g, %g] are not ordered", min, max);
  else
    return 0;
  return cleave_rt_fail(ctx, kernel, message);
}

} // namespace cleave::rt::args

#endif // CLEAVE_RT_KERNELARGS_H
