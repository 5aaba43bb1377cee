//===- BlasCore.cpp - OpenBLAS's kernels for this CPU ---------------------===//

#include "BlasCore.h"

#include <cblas.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace cleave::rt {
namespace {

/// How wide the kernels of an OpenBLAS core are: 3 AVX-512, 2 AVX2, 1 AVX,
/// 0 the rest (SSE).
int getCoreWidth(const char *core) {
  if (!core)
    return 0;
  for (const char *name : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (std::strcmp(core, name) == 0)
      return 3;
  for (const char *name : {"Haswell", "Zen"})
    if (std::strcmp(core, name) == 0)
      return 2;
  return std::strcmp(core, "Sandybridge") == 0 ? 1 : 0;
}

} // namespace

const char *getWantedBlasCore() {
  __builtin_cpu_init();
  if (!__builtin_cpu_is("intel"))
    return nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
  if (__builtin_cpu_supports("avx"))
    return "Sandybridge";
  return nullptr;
}

const char *getBlasCoreOverride() {
  if (std::getenv("OPENBLAS_CORETYPE"))
    return nullptr;
  const char *wanted = getWantedBlasCore();
  if (!wanted ||
      getCoreWidth(openblas_get_corename()) >= getCoreWidth(wanted))
    return nullptr;
  return wanted;
}

void warnAboutBlasCore() {
  static std::atomic<bool> warned{false};
  const char *wanted = getBlasCoreOverride();
  if (!wanted || warned.exchange(true))
    return;
  std::fprintf(stderr,
               "cleave: warning: OpenBLAS runs its %s kernels on this CPU, "
               "which has the instructions of its %s kernels (OpenBLAS does "
               "not know this CPU model); set OPENBLAS_CORETYPE=%s before "
               "the process starts, or load cleave before anything that "
               "loads OpenBLAS\n",
               openblas_get_corename(), wanted, wanted);
}

} // namespace cleave::rt
