// A program that copies its one input to its one output, whatever their
// dtype: CLEAVE_TEST_BYTES is the tensor's size. It checks what the
// runtime reads from files, byte for byte.
#include "cleave/rt/Kernels.h"

#include <string.h>

#ifdef CLEAVE_TEST_NAME_BLOCKS
// Each run's step is named after the block of the batch it computes, so
// that a profile shows the order the runtime ran the microbatches in.
#include "cleave/rt/Context.h"
static const char *const kBlockNames[] = {"block_0", "block_1", "block_2",
                                          "block_3"};
#define CLEAVE_TEST_STEP_NAME kBlockNames[ctx->batchBlock % 4]
#else
#define CLEAVE_TEST_STEP_NAME "Identity_0"
#endif

static int32_t forward(CleaveContext *ctx, int32_t microbatch, uint8_t *arena,
                       uint8_t *persistent, const uint8_t *weights,
                       const void *const *inputs, void *const *outputs);

static const CleaveEntryInfo entries[] = {
    {"forward", "forward", forward, 1, 1, CLEAVE_TEST_PORTS_forward}};
static const CleaveProgramInfo info = {
    CLEAVE_ABI_VERSION, 1, entries, 0, 0, 0, 0, nullptr};

extern "C" const CleaveProgramInfo *cleave_program_info(void) { return &info; }

static int32_t forward(CleaveContext *ctx, int32_t, uint8_t *arena, uint8_t *,
                       const uint8_t *weights, const void *const *inputs,
                       void *const *outputs) {
  cleave_rt_step(ctx, 0, CLEAVE_TEST_STEP_NAME);
  memcpy(outputs[0], inputs[0], CLEAVE_TEST_BYTES);
  return 0;
}
