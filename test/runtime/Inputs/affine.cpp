// A hand-written program in the shape cleave emits, for the runtime tests.
//   inputs:  x float32[2,3]
//   outputs: y float32[2,3] = x * w + b (w, b: float32[3] at weight offsets
//            0 and 64), "stats/sum" float64[] = sum(y), threads int32[1]
// Steps go through the arena and the scratch memory; x[0] < -1000 makes
// the Mul step fail the way a kernel does.
#include "cleave/rt/Kernels.h"

#include <string.h>

static int32_t forward(CleaveContext *ctx, int32_t microbatch, uint8_t *arena,
                       uint8_t *persistent, const uint8_t *weights,
                       const void *const *inputs, void *const *outputs);

static const CleaveEntryInfo entries[] = {
    {"forward", "forward", forward, 1, 3, CLEAVE_TEST_PORTS_forward}};
static const CleaveProgramInfo info = {
    CLEAVE_ABI_VERSION, 1, entries, 256, 128, 0, 0, nullptr};

extern "C" const CleaveProgramInfo *cleave_program_info(void) { return &info; }

static int32_t forward(CleaveContext *ctx, int32_t, uint8_t *arena, uint8_t *,
                       const uint8_t *weights, const void *const *inputs,
                       void *const *outputs) {
  const float *x = static_cast<const float *>(inputs[0]);
  const float *w = reinterpret_cast<const float *>(weights);
  const float *b = reinterpret_cast<const float *>(weights + 64);
  float *product = reinterpret_cast<float *>(arena);

  cleave_rt_step(ctx, 0, "Mul_0");
  if (x[0] < -1000)
    return cleave_rt_fail(ctx, "mul", "x[0] is below -1000");
  for (int i = 0; i < 6; ++i)
    product[i] = x[i] * w[i % 3];

  cleave_rt_step(ctx, 1, "Add_1");
  float *sum = static_cast<float *>(cleave_rt_scratch(ctx, 6 * sizeof(float)));
  if (!sum)
    return 1;
  for (int i = 0; i < 6; ++i)
    sum[i] = product[i] + b[i % 3];
  memcpy(outputs[0], sum, 6 * sizeof(float));

  cleave_rt_step(ctx, 2, "ReduceSum_2");
  double total = 0;
  for (int i = 0; i < 6; ++i)
    total += sum[i];
  *static_cast<double *>(outputs[1]) = total;
  *static_cast<int32_t *>(outputs[2]) = cleave_rt_num_threads(ctx);
  return 0;
}
