# Pipelined mixed-precision training steps (`--precision bf16|fp16 --pp 2`)
# on the cpu target. The plan may cut a stage boundary between the two
# casts that round a product's operand (the rounded value is half the
# bytes), so that a stage sends a bfloat16 or float16 activation, the next
# receives it, and the backward sends the rounded cotangent back alike. The
# host C++ program stores those values as their bits (cl::bfloat16,
# cl::float16 of Scalar.h; HalfStorageTest checks them against the fused
# loops' rounding), so the pipelined step computes what one device does.
#
# Checked over 8 steps for bf16, and for fp16 with dynamic loss scaling
# whose initial scale, 2^20, overflows (some steps are skipped and halve
# the scale, the others train), on data parallel's MLP and one-layer GPT:
#   - pp=2 x 4 microbatches (AdamW) against one device x 4: every stage
#     adds the same gradients in the same order, so losses and parameters
#     are bitwise equal;
#   - pp=2 x dp=2 x 2 microbatches (SGD with momentum) against dp=2 x 2 of
#     the whole step: bitwise equal (the stages' replicas all-reduce as the
#     whole step's do); against one device x 4, whose running sum adds in
#     another order, max |error| <= RTOL * max |reference| per loss and
#     parameter: 1e-2 for bf16, 1e-3 for fp16 (measured: 4.7e-3 and 9.5e-5
#     for the GPT, 0 and 7.7e-8 for the MLP);
#   - fp16: after every step each rank's scale, good-step and skipped-step
#     counts equal the reference's. In the 4-device MLP all parameters lie
#     on stage 0, and stage 1 takes part in the overflow flag's all-reduce
#     along pp with a constant 0: that all-reduce runs in its update entry,
#     once a step (not in the backward, once per microbatch, where its peer
#     would never meet it).
# The IR at the stage boundary, the C++ that holds the values, and the CUDA
# program of the same pipelined bf16 step (which nvcc builds where the CUDA
# runtime is built) are checked below.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# RUN: FileCheck %s --check-prefix=IR < %t/mlp_bf16_pp/model.mlir
# RUN: FileCheck %s --check-prefix=CPP0 < %t/mlp_bf16_pp/programs/stage_0.cpp
# RUN: FileCheck %s --check-prefix=CPP1 < %t/mlp_bf16_pp/programs/stage_1.cpp
# RUN: FileCheck %s --check-prefix=HALF-IR < %t/mlp_fp16_pp/model.mlir
# RUN: FileCheck %s --check-prefix=PHASE < %t/mlp_fp16_dp2_pp/programs/stage_1.cpp
# RUN: cleave compile %t/mlp.onnx -o %t/cuda --train --loss cross-entropy --logits logits --labels labels --ignore-index -1 --optimizer adamw --lr 0.01 --precision bf16 --devices 2 --pp 2 --microbatches 4 --target a100-80gb --emit-only --quiet
# RUN: FileCheck %s --check-prefix=IR < %t/cuda/model.mlir
# RUN: FileCheck %s --check-prefix=CUDA < %t/cuda/programs/stage_1.cu
# RUN: %if cuda %{ cleave compile %t/mlp.onnx -o %t/cuda-built --train --loss cross-entropy --logits logits --labels labels --ignore-index -1 --optimizer adamw --lr 0.01 --precision bf16 --devices 2 --pp 2 --microbatches 4 --target a100-80gb --quiet %}
# RUN: %if cuda %{ test -f %t/cuda-built/programs/stage_0.so && test -f %t/cuda-built/programs/stage_1.so %}

# CHECK-LABEL: == mlp_bf16: pp=2 x dp=1 x 4
# CHECK-NEXT: 1 x 4: losses bitwise equal: True
# CHECK-NEXT: 1 x 4: parameters bitwise equal: True
# CHECK-LABEL: == mlp_bf16_dp2: pp=2 x dp=2 x 2
# CHECK-NEXT: dp=2: losses bitwise equal: True
# CHECK-NEXT: dp=2: parameters bitwise equal: True
# CHECK-NEXT: 1 x 4: losses and parameters within 0.01: True
# CHECK-LABEL: == gpt_bf16: pp=2 x dp=1 x 4
# CHECK-NEXT: 1 x 4: losses bitwise equal: True
# CHECK-NEXT: 1 x 4: parameters bitwise equal: True
# CHECK-LABEL: == gpt_bf16_dp2: pp=2 x dp=2 x 2
# CHECK-NEXT: dp=2: losses bitwise equal: True
# CHECK-NEXT: dp=2: parameters bitwise equal: True
# CHECK-NEXT: 1 x 4: losses and parameters within 0.01: True
# CHECK-LABEL: == mlp_fp16: pp=2 x dp=1 x 4
# CHECK-NEXT: 1 x 4: losses bitwise equal: True
# CHECK-NEXT: 1 x 4: parameters bitwise equal: True
# CHECK-NEXT: 1 x 4: ranks decide alike: True
# CHECK-NEXT: steps skipped: True, trained after: True
# CHECK-LABEL: == mlp_fp16_dp2: pp=2 x dp=2 x 2
# CHECK-NEXT: dp=2: losses bitwise equal: True
# CHECK-NEXT: dp=2: parameters bitwise equal: True
# CHECK-NEXT: dp=2: ranks decide alike: True
# CHECK-NEXT: 1 x 4: losses and parameters within 0.001: True
# CHECK-NEXT: 1 x 4: ranks decide alike: True
# CHECK-NEXT: steps skipped: True, trained after: True
# CHECK-LABEL: == gpt_fp16: pp=2 x dp=1 x 4
# CHECK-NEXT: 1 x 4: losses bitwise equal: True
# CHECK-NEXT: 1 x 4: parameters bitwise equal: True
# CHECK-NEXT: 1 x 4: ranks decide alike: True
# CHECK-NEXT: steps skipped: True, trained after: True
# CHECK-LABEL: == gpt_fp16_dp2: pp=2 x dp=2 x 2
# CHECK-NEXT: dp=2: losses bitwise equal: True
# CHECK-NEXT: dp=2: parameters bitwise equal: True
# CHECK-NEXT: dp=2: ranks decide alike: True
# CHECK-NEXT: 1 x 4: losses and parameters within 0.001: True
# CHECK-NEXT: 1 x 4: ranks decide alike: True
# CHECK-NEXT: steps skipped: True, trained after: True

# The forward's boundary carries the rounded activation in bfloat16 (cast
# back to float32 where it is received), the backward's the rounded
# cotangent.
# IR-LABEL: func.func @stage_0
# IR: %[[BACK:.*]] = cleave.recv from 1 tag 1 : tensor<[[SHAPE:.*]]xbf16>
# IR: cleave.cast %[[BACK]] : tensor<[[SHAPE]]xbf16> to tensor<[[SHAPE]]xf32>
# IR: cleave.send %{{.*}} to 1 tag 0 : tensor<[[SHAPE]]xbf16>
# IR-LABEL: func.func @stage_1
# IR: %[[RECV:.*]] = cleave.recv from 0 tag 0 : tensor<[[SHAPE]]xbf16>
# IR: cleave.cast %[[RECV]] : tensor<[[SHAPE]]xbf16> to tensor<[[SHAPE]]xf32>
# IR: cleave.send %{{.*}} to 0 tag 1 : tensor<[[SHAPE]]xbf16>
# HALF-IR: cleave.send %{{.*}} to 1 tag 0 : tensor<{{.*}}xf16>
# HALF-IR: cleave.recv from 0 tag 0 : tensor<{{.*}}xf16>

# Stage 0's forward stores the rounded activation as bfloat16 bits and
# sends it; stage 1 receives and loads it.
# CPP0-LABEL: static int32_t cleave_entry_forward(
# CPP0: cl::bfloat16 *y = (cl::bfloat16 *)
# CPP0: y[{{.*}}] = static_cast<cl::bfloat16>({{v[0-9]+|row\[j\]}});
# CPP0: cleave_cpu_send(
# CPP1-LABEL: static int32_t cleave_entry_forward(
# CPP1: cleave_cpu_recv(
# CPP1: const cl::bfloat16 *x0 = (const cl::bfloat16 *)
# CPP1: const float v0 = static_cast<float>(x0[

# The flag's all-reduce along pp (axis 0) of the stage without parameters
# is its update's.
# PHASE-LABEL: static int32_t cleave_entry_backward(
# PHASE-NOT: cleave_cpu_all_reduce(
# PHASE-LABEL: static int32_t cleave_entry_update(
# PHASE: static const int64_t ints[] = {0, 2, 0};
# PHASE-NEXT: static const double floats[]
# PHASE-NEXT: cleave_cpu_all_reduce(

# The CUDA program of the same step (the a100-80gb plan cuts where the
# cpu plan does) receives the bfloat16 activation and loads it as
# __nv_bfloat16.
# CUDA-LABEL: static int32_t cleave_entry_forward(
# CUDA: cleave_cuda_recv(
# CUDA: cleave_forward_loop_{{[0-9]+}}<<<{{.*}}>>>((const __nv_bfloat16 *)
# CUDA-LABEL: static int32_t cleave_entry_backward(
# CUDA: (__nv_bfloat16 *)
# CUDA: cleave_cuda_send(

import sys

import numpy as np
import onnx

import cleave
from cleave.testing import load_sibling

dp_test = load_sibling(__file__, "data-parallel-train.py")
fp16_test = load_sibling(__file__, "fp16-parallel-train.py")

ADAMW = {"optimizer": "adamw", "lr": 0.01}
SGD = {"optimizer": "sgd", "lr": 0.5, "momentum": 0.9}
BF16 = {"precision": "bf16"}
FP16 = {"precision": "fp16", "loss-scale": 2.0**20}
STEPS = 8
# Replicas against one device: one rounding to the low precision that the
# order of a sum flips moves an operand by up to 2^-8 (bf16) or 2^-11
# (fp16) of itself, and the steps after carry it on.
RTOL = {"bf16": 1e-2, "fp16": 1e-3}


def train(work, bundle, batches, ranks, scaled):
    """Losses, parameters and (with loss scaling) each step's scale states
    per rank."""
    if scaled:
        return fp16_test.train(work, bundle, batches, ranks)
    losses, params, _ = dp_test.train(bundle, batches)
    return losses, params, None


def within(losses, ref_losses, params, ref_params, rtol):
    """Whether the losses and every parameter lie within `rtol` of their
    reference's largest magnitude, and the largest error relative to it."""
    pairs = [(np.asarray(losses), np.asarray(ref_losses))] + [
        (params[n], ref_params[n]) for n in ref_params]
    relative = max(dp_test.error(a, b)[0] / dp_test.error(a, b)[1]
                   for a, b in pairs)
    return sorted(params) == sorted(ref_params) and relative <= rtol, relative


def report(name, ref, got, rtol, scaled):
    """Prints how `got` (losses, parameters, scale states) matches `ref`:
    bitwise, or within `rtol`."""
    (ref_losses, ref_params, ref_states), (losses, params, states) = ref, got
    if rtol == 0:
        print(f"{name}: losses bitwise equal:",
              np.array_equal(losses, ref_losses))
        print(f"{name}: parameters bitwise equal:",
              sorted(params) == sorted(ref_params)
              and all(np.array_equal(params[n], ref_params[n])
                      for n in ref_params))
    else:
        ok, relative = within(losses, ref_losses, params, ref_params, rtol)
        print(f"{name}: losses and parameters within {rtol:g}: {ok} "
              f"(largest error {relative:.1e} of the scale)")
    if scaled:
        print(f"{name}: ranks decide alike:", all(
            rank == step_ref[0] for step, step_ref in zip(states, ref_states)
            for rank in step))


def compare(work, name, family, options, devices, microbatches):
    """pp=2 x (devices / 2) replicas against one device over the same
    global batch and, with replicas, against as many replicas of the whole
    step."""
    model, batch, loss = family(work)
    dp = devices // 2
    blocks = dp * microbatches
    scaled = "loss-scale" in options
    one = cleave.compile(model, f"{work}/{name}_one", **loss,
                         train={**options, "microbatches": blocks})
    piped = cleave.compile(model, f"{work}/{name}_pp", devices=devices,
                           **loss, train={**options, "pp": 2,
                                          "microbatches": microbatches})
    dp_test.STEPS = STEPS
    batches = dp_test.global_batches(batch, blocks)
    got = train(work, piped, batches, devices, scaled)
    print(f"== {name}: pp=2 x dp={dp} x {microbatches}")
    if dp > 1:
        replicas = cleave.compile(
            model, f"{work}/{name}_dp", devices=dp, **loss,
            train={**options, "microbatches": microbatches})
        report(f"dp={dp}", train(work, replicas, batches, dp, scaled), got,
               0, scaled)
    ref = train(work, one, batches, 1, scaled)
    rtol = 0 if dp == 1 else RTOL[options["precision"]]
    report(f"1 x {blocks}", ref, got, rtol, scaled)
    if scaled:
        skipped = [s[0]["loss_scale.skipped_steps"] for s in ref[2]]
        print(f"steps skipped: {skipped[-1] > 0}, trained after: "
              f"{skipped[-1] < STEPS}  (skipped so far, by step: {skipped})")


if __name__ == "__main__":
    work = sys.argv[1]
    onnx.save(dp_test.mlp(work)[0], f"{work}/mlp.onnx")
    for tag, precision in (("bf16", BF16), ("fp16", FP16)):
        for family in ("mlp", "gpt"):
            compare(work, f"{family}_{tag}", getattr(dp_test, family),
                    {**ADAMW, **precision}, 2, 4)
            compare(work, f"{family}_{tag}_dp2", getattr(dp_test, family),
                    {**SGD, **precision}, 4, 2)
