// A hand-written two-stage program in the shape cleave emits for pp=2, for
// the runtime tests. Built once per stage with CLEAVE_STAGE 0 or 1.
//   stage 0: reads x float32[2,3], sends x * w to stage 1 (w: float32[3],
//            rank 0's weights); x[0] < -1000 fails the Mul step, and
//            x[0] == 1000 returns without sending.
//   stage 1: reads mode int32[1], receives, writes y = received + b (b:
//            float32[3], rank 1's weights). Before the receive, mode 1
//            kills the process, mode 2 never returns, mode 3 fails.
#include "cleave/rt/Kernels.h"

#include <signal.h>
#include <unistd.h>

static int32_t forward(CleaveContext *ctx, int32_t microbatch, uint8_t *arena,
                       uint8_t *persistent, const uint8_t *weights,
                       const void *const *inputs, void *const *outputs);

static const CleaveEntryInfo entries[] = {{"forward", "forward", forward, 1,
                                           CLEAVE_STAGE == 0 ? 0 : 1,
                                           CLEAVE_TEST_PORTS_forward}};
static const CleaveProgramInfo info = {
    CLEAVE_ABI_VERSION, 1, entries, 64, 64, 0, 0, nullptr};

extern "C" const CleaveProgramInfo *cleave_program_info(void) { return &info; }

static int32_t forward(CleaveContext *ctx, int32_t, uint8_t *arena, uint8_t *,
                       const uint8_t *weights, const void *const *inputs,
                       void *const *outputs) {
  float *buffer = reinterpret_cast<float *>(arena);
  CleaveTensor tensor = {buffer, CLEAVE_F32, 2, {2, 3}};
#if CLEAVE_STAGE == 0
  const float *x = static_cast<const float *>(inputs[0]);
  const float *w = reinterpret_cast<const float *>(weights);
  cleave_rt_step(ctx, 0, "Mul_0");
  if (x[0] < -1000)
    return cleave_rt_fail(ctx, "mul", "x[0] is below -1000");
  for (int i = 0; i < 6; ++i)
    buffer[i] = x[i] * w[i % 3];
  cleave_rt_step(ctx, 1, "Send_1");
  if (x[0] == 1000)
    return 0;
  const int64_t ints[] = {1, 7};
  return cleave_cpu_send(ctx, &tensor, 1, nullptr, 0, ints, nullptr);
#else
  int32_t mode = *static_cast<const int32_t *>(inputs[0]);
  const float *b = reinterpret_cast<const float *>(weights);
  cleave_rt_step(ctx, 0, "Recv_0");
  if (mode == 1)
    raise(SIGKILL);
  while (mode == 2)
    pause();
  if (mode == 3)
    return cleave_rt_fail(ctx, "recv", "mode 3 asks this step to fail");
  const int64_t ints[] = {0, 7};
  if (cleave_cpu_recv(ctx, nullptr, 0, &tensor, 1, ints, nullptr))
    return 1;
  cleave_rt_step(ctx, 1, "Add_1");
  float *y = static_cast<float *>(outputs[0]);
  for (int i = 0; i < 6; ++i)
    y[i] = buffer[i] + b[i % 3];
  return 0;
#endif
}
