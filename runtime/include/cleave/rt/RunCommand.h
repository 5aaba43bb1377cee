//===- RunCommand.h - `cleave run` and cleave-worker -------------*- C++
//-*-===//
//
// The command-line face of the runtime, shared by `cleave run` and
// `cleave-worker` so that both take the same options and print the same
// messages:
//
//   run BUNDLE [--input NAME=FILE]... [--output-dir DIR] [--test-data DIR]
//       [--rtol R] [--atol A] [--threads N] [--device cpu|cuda:N] [--profile]
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_RUNCOMMAND_H
#define CLEAVE_RT_RUNCOMMAND_H

#include <memory>
#include <string>

namespace cleave::rt {

class Communicator;

/// Runs a bundle as the command line asks. `argv[0]` is the program's name;
/// a `run` word right after it is skipped. Never throws: returns 0 on
/// success, 1 when an output differs from `--test-data` beyond tolerance,
/// and 2 after printing `cleave run: error: ...` for any other failure.
int runCommand(int argc, char **argv);

/// Runs this process again with the OpenMP waits chosen for a rank of
/// `threads` kernel threads (0: its share of the machine's cores) unless
/// the user chose how OpenMP threads wait: short spinning waits where this
/// machine's ranks and their threads fit its CPUs, else sleeping ones
/// (OMP_WAIT_POLICY=PASSIVE); and with OPENBLAS_CORETYPE naming the kernels
/// of this CPU's instructions where OpenBLAS chose narrower ones and the
/// user set none. Returns only when it does not (nothing to set, or the
/// exec failed). `run`, `train` and `calibrate` call it first.
void execWithRuntimeSettings(int threads);

/// A rank of an MPI job that runs a CUDA bundle: replaces `comm`, the MPI
/// communicator, with NCCL's (bootstrapped over it) and sets `device` to
/// the GPU chosen: the one `device` names ("cuda:N"), else the rank's
/// local rank modulo the host's GPUs. On failure throws, leaving `comm`
/// to end the job with.
void joinGpuRanks(std::unique_ptr<Communicator> &comm, std::string &device);

} // namespace cleave::rt

#endif // CLEAVE_RT_RUNCOMMAND_H
