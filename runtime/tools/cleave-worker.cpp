//===- cleave-worker.cpp - run a bundle without the compiler
//---------------===//
//
// What `mpirun`/`srun` launch on a cluster: the runtime's `run` command in
// a binary that links neither MLIR nor LLVM.
//
//   cleave-worker [run] BUNDLE [--input NAME=FILE]... [--output-dir DIR] ...
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/RunCommand.h"

int main(int argc, char **argv) { return cleave::rt::runCommand(argc, argv); }
