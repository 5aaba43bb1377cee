//===- KernelTable.cpp - the C symbols of the CPU kernels -----------------===//
//
// cleave_cpu_<name> for every KernelList.def entry: binds the view of the
// entry's signature (rt/KernelArgs.h) and calls kernels::<name> of the
// x86-64 level the context runs at (cleave_rt_cpu_level). An entry whose
// function is missing does not link; one whose function takes another
// signature's view does not compile.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

namespace cleave::cpu {

// The variants built for higher levels (CLEAVE_CPU_VARIANTS, set where the
// compiler can target them); without them every level runs the baseline.
#ifdef CLEAVE_CPU_VARIANTS
#define CLEAVE_KERNEL(name, signature)                                         \
  int32_t name(CleaveContext *ctx, const args::signature &args);
namespace x86_64_v3::kernels {
#include "cleave/rt/KernelList.def"
} // namespace x86_64_v3::kernels
#define CLEAVE_KERNEL(name, signature)                                         \
  int32_t name(CleaveContext *ctx, const args::signature &args);
namespace x86_64_v4::kernels {
#include "cleave/rt/KernelList.def"
} // namespace x86_64_v4::kernels
#define CLEAVE_CPU_VARIANT(level, name) &level::kernels::name
#else
#define CLEAVE_CPU_VARIANT(level, name) &x86_64::kernels::name
#endif

namespace {

template <typename Signature>
using KernelFunction = int32_t (*)(CleaveContext *, const Signature &);

/// The variant of a kernel for the context's level: AVX-512 (x86-64-v4),
/// AVX2 and FMA (x86-64-v3), or the baseline for anything below.
template <typename Signature>
KernelFunction<Signature>
select(CleaveContext *ctx, KernelFunction<Signature> baseline,
       KernelFunction<Signature> v3, KernelFunction<Signature> v4) {
  int32_t level = cleave_rt_cpu_level(ctx);
  return level >= 4 ? v4 : level >= 3 ? v3 : baseline;
}

} // namespace
} // namespace cleave::cpu

extern "C" {

#define CLEAVE_KERNEL(name, signature)                                         \
  int32_t cleave_cpu_##name(CleaveContext *ctx, const CleaveTensor *in,        \
                            int32_t numIn, CleaveTensor *out, int32_t numOut,  \
                            const int64_t *ints, const double *floats) {       \
    using namespace cleave::cpu;                                               \
    return cleave::rt::args::runKernel<args::signature>(                       \
        select<args::signature>(ctx, &x86_64::kernels::name,                   \
                                CLEAVE_CPU_VARIANT(x86_64_v3, name),           \
                                CLEAVE_CPU_VARIANT(x86_64_v4, name)),          \
        #name, ctx, in, numIn, out, numOut, ints, floats);                     \
  }
#include "cleave/rt/KernelList.def"

} // extern "C"
