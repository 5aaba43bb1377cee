//===- cleave-worker.cpp - run or train a bundle without the compiler -----===//
//
// What `mpirun`/`srun` launch on a cluster: the runtime's `run` and `train`
// commands in a binary that links neither MLIR nor LLVM.
//
//   cleave-worker [run] BUNDLE [--input NAME=FILE]... [--output-dir DIR] ...
//   cleave-worker train BUNDLE --data DIR --steps N ...
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/RunCommand.h"
#include "cleave/rt/TrainCommand.h"

#include <cstring>

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "train") == 0)
    return cleave::rt::trainCommand(argc, argv);
  return cleave::rt::runCommand(argc, argv);
}
