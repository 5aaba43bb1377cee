//===- Kernels.h - the ABI between emitted programs and kernels ---*- C++
//-*-===//
//
// A program emitted by cleave is plain C++ (or CUDA C++) that calls library
// kernels through this ABI. It is C-compatible and versioned: a bundle
// records CLEAVE_ABI_VERSION and the runtime refuses another.
//
// A kernel takes its inputs and outputs as tensor descriptors over memory
// the program owns (arena, persistent memory, weights, graph inputs and
// outputs), plus integer and float attributes whose order KernelList.def
// and CommList.def give, as typed signatures (KernelArgs.h is the typed
// view kernels read them through). It returns 0, or non-zero after calling
// cleave_rt_fail with a message.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_KERNELS_H
#define CLEAVE_RT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLEAVE_ABI_VERSION 18
#define CLEAVE_MAX_RANK 8

/// Element types (DTypeList.def); the values are part of the ABI.
typedef enum CleaveDType {
  CLEAVE_DTYPE_INVALID = 0,
#define CLEAVE_DTYPE(suffix, name, code, bytes, numpy) CLEAVE_##suffix = code,
#include "cleave/rt/DTypeList.def"
} CleaveDType;

/// The codes of kernels' enumerated attributes (KernelEnums.def).
#define CLEAVE_ENUM_BEGIN(type) typedef enum type {
#define CLEAVE_ENUM_VALUE(type, enumerator, code, name) enumerator = code,
#define CLEAVE_ENUM_END(type)                                                  \
  }                                                                            \
  type;
#include "cleave/rt/KernelEnums.def"

/// A dense, row-major tensor. `data` is null for an absent optional input.
typedef struct CleaveTensor {
  void *data;
  int32_t dtype;
  int32_t rank;
  int64_t shape[CLEAVE_MAX_RANK];
} CleaveTensor;

/// A dense or grouped 2-D convolution (conv, not depthwise) of constant
/// weights with at least this many multiply-adds runs on oneDNN's blocked
/// kernels on the CPU; smaller ones run as im2col + sgemm, whose calls cost
/// less than oneDNN's at that size. Programs keep the activations between
/// the former in oneDNN's channel-blocked layout (conv's xBlock and
/// yBlock); any convolution takes either layout.
#define CLEAVE_CONV_BLOCKED_MACS (INT64_C(1) << 18)

/// Per-run state owned by the runtime: threads and scratch memory on the
/// CPU; the stream and library handles on CUDA.
typedef struct CleaveContext CleaveContext;

typedef int32_t (*CleaveKernelFn)(CleaveContext *ctx, const CleaveTensor *in,
                                  int32_t numIn, CleaveTensor *out,
                                  int32_t numOut, const int64_t *ints,
                                  const double *floats);

/// An entry point of a program: the steps of one phase (forward; later
/// backward, update, a decode step). `microbatch` picks the slot of each
/// stash region. `inputs` and `outputs` follow the entry's ports in the
/// bundle manifest. `arena` holds `arenaBytes`, shared by every entry and
/// kept between calls (its stash regions carry data from one entry to
/// another); `persistent` holds `persistentBytes`, zeroed when a session
/// starts except for writable weights; `weights` is the program's weight
/// file. All three are aligned to 64.
typedef int32_t (*CleaveEntryFn)(CleaveContext *ctx, int32_t microbatch,
                                 uint8_t *arena, uint8_t *persistent,
                                 const uint8_t *weights,
                                 const void *const *inputs,
                                 void *const *outputs);

/// A port of an entry point as the program was compiled for it: the graph
/// tensor's name and the type of the block one call reads or writes. The
/// runtime checks the manifest's ports against these.
typedef struct CleavePortInfo {
  const char *name;
  int32_t dtype;
  int32_t rank;
  int64_t shape[CLEAVE_MAX_RANK];
} CleavePortInfo;

/// One row of a program's entry table.
typedef struct CleaveEntryInfo {
  const char *name;  ///< Unique in the program.
  const char *phase; ///< The schedule phase it runs ("forward", ...).
  CleaveEntryFn fn;
  int32_t numInputs;
  int32_t numOutputs;
  const CleavePortInfo *inputs;  ///< numInputs ports (null when none).
  const CleavePortInfo *outputs; ///< numOutputs ports (null when none).
} CleaveEntryInfo;

/// A writable weight: `bytes` of the weight file at `weightOffset` copied
/// to `persistentOffset` when a session starts.
typedef struct CleaveWritableWeight {
  int64_t weightOffset;
  int64_t persistentOffset;
  int64_t bytes;
} CleaveWritableWeight;

/// What the program says of itself (`cleave_program_info`), checked
/// against the manifest.
typedef struct CleaveProgramInfo {
  int32_t abiVersion;
  int32_t numEntries;
  const CleaveEntryInfo *entries;
  int64_t arenaBytes;
  int64_t weightBytes;
  int64_t persistentBytes;
  int32_t numWritableWeights;
  const CleaveWritableWeight *writableWeights;
} CleaveProgramInfo;

//===----------------------------------------------------------------------===//
// Services the runtime provides to kernels and programs
//===----------------------------------------------------------------------===//

/// Records `message` as the reason the run failed (the first one wins) and
/// returns a non-zero status for the caller to return.
int32_t cleave_rt_fail(CleaveContext *ctx, const char *kernel,
                       const char *message);

/// Returns a failed call's status unchanged. Programs return failures
/// through it: being cold, it tells the compiler that no failure branch is
/// taken. Without it GCC guesses each `if (status)` branch may be, and the
/// guesses compound along a long program until the later steps' loops are
/// built for size (unvectorised, calling scalar libm).
static inline __attribute__((cold, noinline)) int32_t
cleave_rt_failed(int32_t status) {
  return status;
}

/// Scratch memory of at least `bytes`, valid until the next call; device
/// memory on CUDA. Returns null (after cleave_rt_fail) when it cannot.
void *cleave_rt_scratch(CleaveContext *ctx, size_t bytes);
/// The number of threads CPU kernels may use.
int32_t cleave_rt_num_threads(CleaveContext *ctx);
/// The x86-64 level (1 to 4: baseline, v2, v3 = AVX2 and FMA, v4 =
/// AVX-512) whose variant of the CPU kernels runs: the highest the CPU has,
/// but no higher than the one the bundle's programs were built for.
int32_t cleave_rt_cpu_level(CleaveContext *ctx);
/// 1 when the `bytes` at `data` lie in the program's constant weights: the
/// read-only mapping of its weight file, whose bytes stay the same for as
/// long as the context lives; 0 otherwise (writable weights, which training
/// updates in place, the arena, inputs). Kernels may keep what they derive
/// from constant weights (a repacked copy), keyed by the address.
int32_t cleave_rt_constant_weights(CleaveContext *ctx, const void *data,
                                   size_t bytes);
/// Constant weights that the bundle stores already packed (`cleave compile`
/// packs them; docs/bundle-format.md): the packed form of the weights at
/// `weights` in the layout `layout` describes (`layoutBytes` bytes the
/// kernel library defines and compares as bytes), `bytes` long, read-only
/// for as long as the context lives; null when the bundle stores none such.
const void *cleave_rt_find_packed_weights(CleaveContext *ctx,
                                          const void *weights,
                                          const void *layout,
                                          size_t layoutBytes, size_t bytes);
/// Tells the runtime that the kernels packed the constant weights at
/// `weights` themselves, into `data` (`bytes` long, in the layout `layout`
/// describes), which stays as it is for as long as the context lives:
/// while `cleave compile` packs a bundle the runtime writes it into the
/// bundle; otherwise it only counts the bytes (SessionMemory::repacked).
void cleave_rt_packed_weights(CleaveContext *ctx, const void *weights,
                              const void *layout, size_t layoutBytes,
                              const void *data, size_t bytes);
/// The CPU kernels' cache of the context: `create()` makes it on the first
/// call, and `destroy` frees it with the context. Null (after
/// cleave_rt_fail) when `create` returns null.
void *cleave_rt_kernel_cache(CleaveContext *ctx, void *(*create)(void),
                             void (*destroy)(void *));
/// CUDA only: the stream and the cuBLAS / cuBLASLt / cuDNN handles, as
/// opaque pointers (cudaStream_t, cublasHandle_t, cublasLtHandle_t,
/// cudnnHandle_t).
void *cleave_rt_cuda_stream(CleaveContext *ctx);
void *cleave_rt_cublas(CleaveContext *ctx);
void *cleave_rt_cublaslt(CleaveContext *ctx);
void *cleave_rt_cudnn(CleaveContext *ctx);
/// Called by the program around each step, so a run can be profiled and a
/// failure names the node. `step` counts from 0.
void cleave_rt_step(CleaveContext *ctx, int32_t step, const char *node);

/// Element size in bytes of a dtype (0 for an unknown one).
static inline size_t cleave_dtype_size(int32_t dtype) {
  switch (dtype) {
#define CLEAVE_DTYPE(suffix, name, code, bytes, numpy)                         \
  case CLEAVE_##suffix:                                                        \
    return bytes;
#include "cleave/rt/DTypeList.def"
  default:
    return 0;
  }
}

//===----------------------------------------------------------------------===//
// The kernel libraries
//===----------------------------------------------------------------------===//

#define CLEAVE_KERNEL(name, signature)                                         \
  int32_t cleave_cpu_##name(CleaveContext *ctx, const CleaveTensor *in,        \
                            int32_t numIn, CleaveTensor *out, int32_t numOut,  \
                            const int64_t *ints, const double *floats);
#include "cleave/rt/KernelList.def"
#define CLEAVE_COMM(name, signature)                                           \
  int32_t cleave_cpu_##name(CleaveContext *ctx, const CleaveTensor *in,        \
                            int32_t numIn, CleaveTensor *out, int32_t numOut,  \
                            const int64_t *ints, const double *floats);
#include "cleave/rt/CommList.def"

#define CLEAVE_KERNEL(name, signature)                                         \
  int32_t cleave_cuda_##name(CleaveContext *ctx, const CleaveTensor *in,       \
                             int32_t numIn, CleaveTensor *out, int32_t numOut, \
                             const int64_t *ints, const double *floats);
#include "cleave/rt/KernelList.def"
#define CLEAVE_COMM(name, signature)                                           \
  int32_t cleave_cuda_##name(CleaveContext *ctx, const CleaveTensor *in,       \
                             int32_t numIn, CleaveTensor *out, int32_t numOut, \
                             const int64_t *ints, const double *floats);
#include "cleave/rt/CommList.def"

#ifdef __cplusplus
} // extern "C"
#endif

#endif // CLEAVE_RT_KERNELS_H
