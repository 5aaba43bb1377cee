//===- BlasCore.h - OpenBLAS's kernels for this CPU -------------*- C++ -*-===//
//
// OpenBLAS (a DYNAMIC_ARCH build, as Debian's) chooses its kernels when it
// loads, by the CPU's model number, and runs its generic SSE3 kernels
// (Prescott) on an Intel model newer than its table: 0.3.21 does not know
// Sapphire or Emerald Rapids, and a GEMM then runs at a quarter of the
// machine's width. The instruction sets name the right kernels as well; the
// OPENBLAS_CORETYPE environment variable, read when OpenBLAS loads, tells
// it which.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_BLASCORE_H
#define CLEAVE_RT_SRC_BLASCORE_H

namespace cleave::rt {

/// The OpenBLAS core whose kernels this CPU's instructions call for on an
/// Intel CPU ("SkylakeX" with AVX-512, "Haswell" with AVX2 and FMA,
/// "Sandybridge" with AVX); null on other CPUs or without AVX.
const char *getWantedBlasCore();

/// The core this process should tell OpenBLAS to use: the wanted one, when
/// OpenBLAS chose kernels of fewer instructions and OPENBLAS_CORETYPE is
/// unset; else null.
const char *getBlasCoreOverride();

/// Once per process, when OpenBLAS runs kernels of fewer instructions than
/// the CPU has and the process cannot change it any more (OpenBLAS loaded
/// before it could set OPENBLAS_CORETYPE), a warning on stderr naming the
/// variable to set.
void warnAboutBlasCore();

} // namespace cleave::rt

#endif // CLEAVE_RT_SRC_BLASCORE_H
