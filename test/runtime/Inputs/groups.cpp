// A hand-written program for every stage of a pp x dp x tp mesh, for the
// runtime tests of groups: each device's weights hold its X, float32[2,4]
// (values differ per device), then, for the pp, dp and tp axes in turn, the
// sum of X over its group along the axis ([2,4]) and the group's X
// concatenated along dim 0 in the group's order ([2G,4]), as NumPy computed
// them (make_bundle.py groups). The program all-reduces and all-gathers X
// over each axis and fails, naming the axis, where a result differs.
#include "cleave/rt/Kernels.h"
#include "cleave/rt/Mesh.h"

#include <cstdio>

static int32_t forward(CleaveContext *ctx, int32_t microbatch, uint8_t *arena,
                       uint8_t *persistent, const uint8_t *weights,
                       const void *const *inputs, void *const *outputs);

static const CleaveEntryInfo entries[] = {
    {"forward", "forward", forward, 0, 0, CLEAVE_TEST_PORTS_forward}};
static const CleaveProgramInfo info = {
    CLEAVE_ABI_VERSION, 1, entries, 1024, CLEAVE_WEIGHT_BYTES, 0, 0, nullptr};

extern "C" const CleaveProgramInfo *cleave_program_info(void) { return &info; }

static CleaveTensor tensor(void *data, int32_t dtype, int64_t d0, int64_t d1) {
  CleaveTensor t = {data, dtype, 2, {d0, d1}};
  return t;
}

/// Fails the program unless `got` and `want` (`count` floats) are equal.
static int32_t same(CleaveContext *ctx, const char *what, const char *axis,
                    const float *got, const float *want, int count) {
  for (int i = 0; i < count; ++i)
    if (got[i] != want[i]) {
      char message[160];
      std::snprintf(message, sizeof message,
                    "%s over %s: element %d is %g, NumPy says %g", what, axis,
                    i, got[i], want[i]);
      return cleave_rt_fail(ctx, what, message);
    }
  return 0;
}

static int32_t forward(CleaveContext *ctx, int32_t, uint8_t *arena, uint8_t *,
                       const uint8_t *weights, const void *const *inputs,
                       void *const *outputs) {
  (void)inputs;
  (void)outputs;
  const int64_t sizes[] = {CLEAVE_PP, CLEAVE_DP, CLEAVE_TP};
  const float *expected = reinterpret_cast<const float *>(weights) + 8;
  CleaveTensor x = tensor(const_cast<uint8_t *>(weights), CLEAVE_F32, 2, 4);
  int32_t step = 0;
  for (cleave::rt::MeshAxis axis : cleave::rt::kMeshAxes) {
    int64_t code = static_cast<int64_t>(axis);
    int64_t g = sizes[code];
    const char *name = cleave::rt::meshAxisName(axis);

    cleave_rt_step(ctx, step++, name);
    float *sum = reinterpret_cast<float *>(arena);
    CleaveTensor reduced = tensor(sum, CLEAVE_F32, 2, 4);
    const int64_t reduce[] = {code, g, 0};
    if (cleave_cpu_all_reduce(ctx, &x, 1, &reduced, 1, reduce, nullptr) ||
        same(ctx, "all_reduce", name, sum, expected, 8))
      return 1;
    expected += 8;

    float *all = reinterpret_cast<float *>(arena + 64);
    CleaveTensor gathered = tensor(all, CLEAVE_F32, 2 * g, 4);
    const int64_t gather[] = {code, g, 0};
    if (cleave_cpu_all_gather(ctx, &x, 1, &gathered, 1, gather, nullptr) ||
        same(ctx, "all_gather", name, all, expected, 8 * g))
      return 1;
    expected += 8 * g;
  }
  return 0;
}
