//===- phases.cpp - a hand-written program with two entry points ----------===//
//
// The forward (y = x + w) stashes x in the arena's slot for its microbatch,
// counts its calls in persistent memory and adds 1 to the writable weight w,
// which lives in persistent memory; the backward (z = 10 * stash + calls)
// reads what the forward left. Nothing but the runtime carries state from
// one entry, or one run, to the next.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Kernels.h"

#include <string.h>

static int32_t forward(CleaveContext *ctx, int32_t microbatch, uint8_t *arena,
                       uint8_t *persistent, const uint8_t *weights,
                       const void *const *inputs, void *const *outputs);
static int32_t backward(CleaveContext *ctx, int32_t microbatch, uint8_t *arena,
                        uint8_t *persistent, const uint8_t *weights,
                        const void *const *inputs, void *const *outputs);

static const CleaveEntryInfo entries[] = {
    {"forward", "forward", forward, 1, 1, CLEAVE_TEST_PORTS_forward},
    {"backward", "backward", backward, 0, 1, CLEAVE_TEST_PORTS_backward}};
static const CleaveWritableWeight writable[] = {{0, 0, 12}};
static const CleaveProgramInfo info = {
    CLEAVE_ABI_VERSION, 2, entries, 128, 64, 128, 1, writable};

extern "C" const CleaveProgramInfo *cleave_program_info(void) { return &info; }

static int32_t forward(CleaveContext *ctx, int32_t microbatch, uint8_t *arena,
                       uint8_t *persistent, const uint8_t *,
                       const void *const *inputs, void *const *outputs) {
  cleave_rt_step(ctx, 0, "Forward_0");
  const float *x = static_cast<const float *>(inputs[0]);
  float *w = reinterpret_cast<float *>(persistent);
  int32_t *calls = reinterpret_cast<int32_t *>(persistent + 64);
  float *stash = reinterpret_cast<float *>(arena + (microbatch % 2) * 64);
  float *y = static_cast<float *>(outputs[0]);
  for (int i = 0; i < 3; ++i) {
    y[i] = x[i] + w[i];
    stash[i] = x[i];
    w[i] += 1;
  }
  ++*calls;
  return 0;
}

static int32_t backward(CleaveContext *ctx, int32_t microbatch, uint8_t *arena,
                        uint8_t *persistent, const uint8_t *,
                        const void *const *, void *const *outputs) {
  cleave_rt_step(ctx, 0, "Backward_0");
  const int32_t *calls = reinterpret_cast<const int32_t *>(persistent + 64);
  const float *stash =
      reinterpret_cast<const float *>(arena + (microbatch % 2) * 64);
  float *z = static_cast<float *>(outputs[0]);
  for (int i = 0; i < 3; ++i)
    z[i] = 10 * stash[i] + static_cast<float>(*calls);
  return 0;
}
