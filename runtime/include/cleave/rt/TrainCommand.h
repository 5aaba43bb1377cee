//===- TrainCommand.h - `cleave train` ---------------------------*- C++
//-*-===//
//
// The training loop of the command line: a bundle compiled with --train,
// samples from one .npy per input, a data order that shuffles every epoch,
// progress, a JSON log and checkpoints (Checkpoint.h):
//
//   train BUNDLE --data DIR --steps N [--seed S] [--log FILE]
//         [--checkpoint-dir DIR [--checkpoint-every K] [--resume]]
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_TRAINCOMMAND_H
#define CLEAVE_RT_TRAINCOMMAND_H

#include <cstdint>
#include <vector>

namespace cleave::rt {

/// Trains a bundle as the command line asks. `argv[0]` is the program's
/// name; a `train` word right after it is skipped. Never throws: returns 0
/// on success and 2 after printing `cleave train: error: ...`.
int trainCommand(int argc, char **argv);

/// The order in which epoch `epoch` of a training run with seed `seed`
/// visits `samples` samples: a permutation of 0 .. samples-1, the same on
/// every machine (its own generator, not the standard library's
/// distributions, whose results differ between implementations).
std::vector<int64_t> sampleOrder(int64_t samples, uint64_t seed, int64_t epoch);

} // namespace cleave::rt

#endif // CLEAVE_RT_TRAINCOMMAND_H
