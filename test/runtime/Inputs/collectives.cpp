// A hand-written program for one stage of CLEAVE_TP tensor-parallel devices,
// for the runtime tests: each device's weights hold its X, float32[2,4]
// (values differ per device), and the program writes every collective of
// X over the group:
//   sum, product, max, min, average   all_reduce             [2,4]
//   gather1, gather0                  all_gather dim 1, 0    [2,4G], [2G,4]
//   scattered                         reduce_scatter (sum) dim 1, then
//                                     all_gather dim 1       [2,4]
//   sliced                            all_slice dim 1, then all_gather dim 1
//   exchanged                         all_to_all split 1 concat 0, then
//                                     all_gather dim 1       [2G,4]
//   isum                              all_reduce sum of int64 X   [2,4]
//   hsum, bsum                        all_reduce sum of X as float16 and
//                                     as bfloat16 (weights at 32 and 48)
#include "cleave/rt/Kernels.h"
#include "cleave/rt/Mesh.h"

#define G CLEAVE_TP
// Every collective runs over the tensor-parallel axis.
static constexpr int64_t TP =
    static_cast<int64_t>(cleave::rt::MeshAxis::Tensor);

static int32_t forward(CleaveContext *ctx, int32_t microbatch, uint8_t *arena,
                       uint8_t *persistent, const uint8_t *weights,
                       const void *const *inputs, void *const *outputs);

static const CleaveEntryInfo entries[] = {
    {"forward", "forward", forward, 0, 13, CLEAVE_TEST_PORTS_forward}};
static const CleaveProgramInfo info = {
    CLEAVE_ABI_VERSION, 1, entries, 1024, 64, 0, 0, nullptr};

extern "C" const CleaveProgramInfo *cleave_program_info(void) { return &info; }

static CleaveTensor tensor(void *data, int32_t dtype, int64_t d0, int64_t d1) {
  CleaveTensor t = {data, dtype, 2, {d0, d1}};
  return t;
}

static int32_t forward(CleaveContext *ctx, int32_t, uint8_t *arena, uint8_t *,
                       const uint8_t *weights, const void *const *inputs,
                       void *const *outputs) {
  CleaveTensor x = tensor(const_cast<uint8_t *>(weights), CLEAVE_F32, 2, 4);
  int32_t step = 0;
  for (int reduction = 0; reduction < 5; ++reduction) {
    cleave_rt_step(ctx, step++, "AllReduce");
    CleaveTensor out = tensor(outputs[reduction], CLEAVE_F32, 2, 4);
    const int64_t ints[] = {TP, G, reduction};
    if (cleave_cpu_all_reduce(ctx, &x, 1, &out, 1, ints, nullptr))
      return 1;
  }
  cleave_rt_step(ctx, step++, "AllGather1");
  CleaveTensor gather1 = tensor(outputs[5], CLEAVE_F32, 2, 4 * G);
  const int64_t gatherDim1[] = {TP, G, 1};
  if (cleave_cpu_all_gather(ctx, &x, 1, &gather1, 1, gatherDim1, nullptr))
    return 1;
  cleave_rt_step(ctx, step++, "AllGather0");
  CleaveTensor gather0 = tensor(outputs[6], CLEAVE_F32, 2 * G, 4);
  const int64_t gatherDim0[] = {TP, G, 0};
  if (cleave_cpu_all_gather(ctx, &x, 1, &gather0, 1, gatherDim0, nullptr))
    return 1;

  cleave_rt_step(ctx, step++, "ReduceScatter");
  CleaveTensor block = tensor(arena, CLEAVE_F32, 2, 4 / G);
  const int64_t scatter[] = {TP, G, 1, 0};
  if (cleave_cpu_reduce_scatter(ctx, &x, 1, &block, 1, scatter, nullptr))
    return 1;
  CleaveTensor scattered = tensor(outputs[7], CLEAVE_F32, 2, 4);
  if (cleave_cpu_all_gather(ctx, &block, 1, &scattered, 1, gatherDim1, nullptr))
    return 1;

  cleave_rt_step(ctx, step++, "AllSlice");
  if (cleave_cpu_all_slice(ctx, &x, 1, &block, 1, gatherDim1, nullptr))
    return 1;
  CleaveTensor sliced = tensor(outputs[8], CLEAVE_F32, 2, 4);
  if (cleave_cpu_all_gather(ctx, &block, 1, &sliced, 1, gatherDim1, nullptr))
    return 1;

  cleave_rt_step(ctx, step++, "AllToAll");
  CleaveTensor swapped = tensor(arena + 256, CLEAVE_F32, 2 * G, 4 / G);
  const int64_t toAll[] = {TP, G, 1, 0};
  if (cleave_cpu_all_to_all(ctx, &x, 1, &swapped, 1, toAll, nullptr))
    return 1;
  CleaveTensor exchanged = tensor(outputs[9], CLEAVE_F32, 2 * G, 4);
  if (cleave_cpu_all_gather(ctx, &swapped, 1, &exchanged, 1, gatherDim1,
                            nullptr))
    return 1;

  cleave_rt_step(ctx, step++, "AllReduceInt");
  int64_t *wide = reinterpret_cast<int64_t *>(arena + 512);
  for (int i = 0; i < 8; ++i)
    wide[i] = static_cast<int64_t>(static_cast<const float *>(x.data)[i]);
  CleaveTensor xi = tensor(wide, CLEAVE_I64, 2, 4);
  CleaveTensor isum = tensor(outputs[10], CLEAVE_I64, 2, 4);
  const int64_t sum[] = {TP, G, 0};
  if (cleave_cpu_all_reduce(ctx, &xi, 1, &isum, 1, sum, nullptr))
    return 1;

  cleave_rt_step(ctx, step++, "AllReduceHalf");
  CleaveTensor xh =
      tensor(const_cast<uint8_t *>(weights + 32), CLEAVE_F16, 2, 4);
  CleaveTensor hsum = tensor(outputs[11], CLEAVE_F16, 2, 4);
  if (cleave_cpu_all_reduce(ctx, &xh, 1, &hsum, 1, sum, nullptr))
    return 1;
  CleaveTensor xb =
      tensor(const_cast<uint8_t *>(weights + 48), CLEAVE_BF16, 2, 4);
  CleaveTensor bsum = tensor(outputs[12], CLEAVE_BF16, 2, 4);
  return cleave_cpu_all_reduce(ctx, &xb, 1, &bsum, 1, sum, nullptr);
}
