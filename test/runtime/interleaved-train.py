# Training steps under the interleaved 1F1B schedule (`--schedule
# interleaved`, Megatron-LM's virtual stages): the plan cuts the forward
# into pp x V model chunks, chunk c of device d being virtual stage
# c x pp + d; each device's program has a forward and a backward entry per
# chunk (one arena, one weight file) and one update for all of them, and
# runs them in the order the schedule records per device. Activations go
# from device to device V times per microbatch, and each chunk's stash
# holds the microbatches that chunk keeps in flight.
#
# Checked against the 1F1B bundle of the same pipeline and the one-device
# bundle of the same global batch:
#   - a two-layer GPT, pp=2 x 2 chunks over 4 microbatches, AdamW: each
#     chunk computes what 1F1B's stages compute and adds the same gradients
#     in the same order, so every loss and parameter is bitwise 1F1B's;
#   - the ReLU MLP on 2 chunks of 2 devices (SGD with Nesterov momentum),
#     whose four pieces include one without parameters or loss (its
#     forward reads the labels, the second graph input): bitwise 1F1B's,
#     and within 1e-5 of the largest magnitude of one device's (per loss
#     and parameter);
#   - pp=2 x dp=2 (4 devices, 2 chunks each, 4 microbatches) against one
#     device x 8, with the replicas' reductions in the update, overlapped
#     with the backward (each chunk's reductions start in that chunk's last
#     backward), and under ZeRO-1: bitwise 1F1B's, and within the
#     tolerance of one device;
#   - clipping by the global norm (a norm of 0.05, which every step's
#     gradients pass, so that every step is clipped), on pp=2 and on
#     pp=2 x dp=2 under ZeRO-1: each chunk adds the squares of its
#     gradients, and a device all-reduces the sum of its chunks' once along
#     pp (the IR below). The squares add up in another order than 1F1B's,
#     so the steps are within the tolerance of 1F1B's and of one device's,
#     and differ from the unclipped run's;
#   - fp16 with dynamic loss scaling from 2^20 over 8 steps (the first
#     steps overflow, are skipped and halve the scale): each chunk's
#     overflow flag is summed per device and all-reduced once, and the last
#     chunk alone updates the device's scale, so every rank's scale,
#     good-step and skipped-step counts equal 1F1B's after every step, and
#     the losses and parameters are bitwise 1F1B's.
# The GPT's scale and mask initializers are frozen: every layer reads them,
# and the gradient of a parameter that two chunks of one device read adds
# up in another order than 1F1B's (shared-parameter-train.py trains one).
# The frozen mask, read by both chunks of device 0, is stored once in its
# weight file.
# Also: the manifest's per-device steps (phase, microbatch, chunk) and
# entries; a checkpoint of the interleaved bundle resumed by the 1F1B one
# (the same tensors by name) equal to training straight on; and the errors:
# microbatches that are not a multiple of pp, one pipeline stage, and
# inference.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# RUN: FileCheck %s --check-prefix=CLIP-IR < %t/gpt_clip_interleaved/model.mlir

import json
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

import cleave
from cleave.generators.gpt import GPTConfig, build_gpt
from cleave.testing import load_sibling

dp_test = load_sibling(__file__, "data-parallel-train.py")
fp16_test = load_sibling(__file__, "fp16-parallel-train.py")
RTOL = 1e-5


def gpt2(work):
    """The GPT of data-parallel-train.py with two layers: four pieces to
    cut."""
    cfg = GPTConfig(layers=2, hidden=16, heads=2, seq=8, vocab=32, batch=2)
    path = f"{work}/gpt2.onnx"
    build_gpt(cfg, path, seed=5)

    def batch(rng):
        ids = rng.integers(0, cfg.vocab, (cfg.batch, cfg.seq))
        return {"input_ids": ids.astype(np.int64),
                "labels": ((ids + 1) % cfg.vocab).astype(np.int64)}

    loss = {"loss": "cross-entropy", "logits": "logits", "labels": "labels",
            "freeze": "attn_scale|causal_mask"}
    return path, batch, loss


def describe(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    print("mesh", manifest["mesh"], "schedule", manifest["schedule"],
          "microbatches", manifest["microbatches"])
    for program in manifest["programs"]:
        order = " ".join(
            f"{s['phase'][0].upper()}{s['microbatch']}.{s.get('chunk', 0)}"
            if s["microbatch"] >= 0 else s["phase"][0].upper()
            for s in program["steps"])
        print(f"stage {program['stage']}: {order}")
        print(f"stage {program['stage']} entries:",
              " ".join(f"{e['name']}({e['phase']},{e.get('chunk', 0)})"
                       for e in program["entries"]))


def same(losses, ref_losses, params, ref_params):
    return (np.array_equal(losses, ref_losses)
            and sorted(params) == sorted(ref_params)
            and all(np.array_equal(params[n], ref_params[n])
                    for n in ref_params))


def within(losses, ref_losses, params, ref_params):
    worst, scale = dp_test.error(np.asarray(losses), np.asarray(ref_losses))
    ok = worst <= RTOL * scale and sorted(params) == sorted(ref_params)
    for n in ref_params:
        worst, scale = dp_test.error(params[n], ref_params[n])
        ok = ok and worst <= RTOL * scale
    return ok


def compare(work, name, family, options, devices, microbatches,
            against_one=True, bitwise=True):
    model, batch, loss = family(work)
    pp = 2
    blocks = devices // pp * microbatches
    piped = {"pp": pp, "microbatches": microbatches}
    interleaved = cleave.compile(
        model, f"{work}/{name}_interleaved", devices=devices, **loss,
        train={**options, **piped, "schedule": "interleaved"})
    onef = cleave.compile(model, f"{work}/{name}_1f1b", devices=devices,
                          **loss,
                          train={**options, **piped, "schedule": "1f1b"})
    batches = dp_test.global_batches(batch, blocks)
    losses, params, trainer = dp_test.train(interleaved, batches)
    onef_losses, onef_params, _ = dp_test.train(onef, batches)
    print(f"== {name}: pp={pp} x dp={devices // pp} x {microbatches}, "
          f"2 chunks, against 1 x {blocks}")
    describe(interleaved)
    if bitwise:
        print("bitwise 1f1b:", same(losses, onef_losses, params, onef_params))
    else:
        print("within tolerance of 1f1b:",
              within(losses, onef_losses, params, onef_params))
    if against_one:
        one = cleave.compile(model, f"{work}/{name}_one", **loss,
                             train={k: v for k, v in options.items()
                                    if k not in ("zero", "grad-reduction")}
                             | {"microbatches": blocks})
        ref_losses, ref_params, _ = dp_test.train(one, batches)
        print("within tolerance of one device:",
              within(losses, ref_losses, params, ref_params))
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}, falls:",
          losses[-1] < losses[0])
    return interleaved, onef, trainer, batches


def clipped(work, name, options, devices):
    """Interleaved with clipping against 1F1B and one device (compare),
    and whether clipping changed the step: the unclipped 1F1B run's
    parameters differ."""
    clip = {**options, "clip-grad-norm": 0.05}
    interleaved, _, _, batches = compare(work, name, gpt2, clip, devices, 4,
                                         bitwise=False)
    model, _, loss = gpt2(work)
    free = cleave.compile(model, f"{work}/{name}_unclipped", devices=devices,
                          **loss, train={**options, "pp": 2,
                                         "microbatches": 4,
                                         "schedule": "1f1b"})
    _, params, _ = dp_test.train(interleaved, batches)
    _, free_params, _ = dp_test.train(free, batches)
    print("clipping changes the step:", not all(
        np.array_equal(params[n], free_params[n]) for n in free_params))


def loss_scaled(work):
    """fp16 with dynamic loss scaling, interleaved against 1F1B: losses,
    parameters and every rank's scale states after every step."""
    model, batch, loss = gpt2(work)
    options = {"optimizer": "sgd", "lr": 0.5, "momentum": 0.9,
               "precision": "fp16", "loss-scale": 2.0**20, "pp": 2,
               "microbatches": 4}
    interleaved = cleave.compile(
        model, f"{work}/fp16_interleaved", devices=2, **loss,
        train={**options, "schedule": "interleaved"})
    onef = cleave.compile(model, f"{work}/fp16_1f1b", devices=2, **loss,
                          train={**options, "schedule": "1f1b"})
    steps, dp_test.STEPS = dp_test.STEPS, 8
    batches = dp_test.global_batches(batch, 4)
    dp_test.STEPS = steps
    losses, params, states = fp16_test.train(work, interleaved, batches, 2)
    ref_losses, ref_params, ref_states = fp16_test.train(work, onef,
                                                         batches, 2)
    print("== fp16: pp=2 x dp=1 x 4, 2 chunks, loss scaling")
    print("bitwise 1f1b:", same(losses, ref_losses, params, ref_params))
    print("scale states of every rank equal 1f1b's:", states == ref_states)
    skipped = [s[0]["loss_scale.skipped_steps"] for s in ref_states]
    print(f"steps skipped: {skipped[-1] > 0}, trained after: "
          f"{skipped[-1] < len(batches)}  (skipped so far, by step: "
          f"{skipped})")


def resume_in_1f1b(work, interleaved, onef, batches):
    """3 steps interleaved, saved, 2 more in the 1F1B bundle: the run of 5
    straight steps."""
    straight = cleave.Trainer(interleaved)
    straight_losses = [straight.step(b) for b in batches]
    first = cleave.Trainer(interleaved)
    for b in batches[:3]:
        first.step(b)
    where = f"{work}/interleaved_ckpt"
    first.save(where)
    second = cleave.Trainer(onef)
    second.load(where)
    resumed = [second.step(b) for b in batches[3:]]
    print("== checkpoint: interleaved -> 1f1b")
    print("resumed at step", second.steps)
    print("bitwise straight:", resumed == straight_losses[3:] and all(
        np.array_equal(second.parameters()[n], v)
        for n, v in straight.parameters().items()))


def refused(work, name, args):
    model = f"{work}/gpt2.onnx"
    result = subprocess.run(
        ["cleave", "compile", model, "-o", f"{work}/{name}", "--emit-only",
         "--quiet", *args], capture_output=True, text=True)
    print(f"{name}: exit {result.returncode}:",
          result.stderr.strip().splitlines()[-1])


def frozen_once(work, bundle):
    """Device 0 runs chunks of both layers, which each read the frozen
    causal mask: its weight file holds the mask once."""
    ir = (bundle / "model.mlir").read_text()
    # Device 0 runs stages 0 and 2 (its chunks 0 and 1).
    readers = [line for line in ir.splitlines()
               if 'cleave.weight "causal_mask"' in line and
               ("cleave.stage = 0 " in line or "cleave.stage = 2 " in line)]
    onnx_model = onnx.load(f"{work}/gpt2.onnx", load_external_data=True)
    mask = next(numpy_helper.to_array(t) for t in onnx_model.graph.initializer
                if t.name == "causal_mask")
    weights = (bundle / "weights" / "rank_0.bin").read_bytes()
    print("== frozen weights of two chunks")
    print("chunks of device 0 reading the mask:", len(readers))
    print("copies in its weight file:",
          weights.count(mask.astype(np.float32).tobytes()))


if __name__ == "__main__":
    work = sys.argv[1]
    adamw = {"optimizer": "adamw", "lr": 0.01}
    sgd = {"optimizer": "sgd", "lr": 0.1, "momentum": 0.9, "nesterov": True}
    # AdamW turns the rounding noise of gradients that are 0 in exact
    # arithmetic into steps of lr, so its runs are compared bit for bit
    # with 1F1B only (whose cuts differ from one device's as much).
    interleaved, onef, _, batches = compare(work, "gpt_adamw", gpt2, adamw,
                                            2, 4, against_one=False)
    resume_in_1f1b(work, interleaved, onef, batches)
    frozen_once(work, interleaved)
    compare(work, "mlp_sgd", dp_test.mlp, sgd, 2, 2)
    plain = {"optimizer": "sgd", "lr": 0.5, "momentum": 0.9}
    compare(work, "gpt_dp2", gpt2, plain, 4, 4)
    compare(work, "gpt_dp2_overlap", gpt2,
            {**plain, "grad-reduction": "overlap"}, 4, 4)
    compare(work, "gpt_dp2_zero1", gpt2, {**plain, "zero": 1}, 4, 4)
    clipped(work, "gpt_clip", plain, 2)
    clipped(work, "gpt_clip_dp2_zero1", {**plain, "zero": 1}, 4)
    loss_scaled(work)

    train = ["--train", "--loss", "cross-entropy", "--logits", "logits",
             "--labels", "labels", "--devices", "2", "--pp", "2"]
    refused(work, "odd_microbatches",
            train + ["--microbatches", "3", "--schedule", "interleaved"])
    refused(work, "one_stage",
            train[:-4] + ["--devices", "2", "--microbatches", "2",
                          "--schedule", "interleaved"])
    refused(work, "inference", ["--devices", "2", "--pp", "2",
                                "--microbatches", "2", "--schedule",
                                "interleaved"])

# CHECK-LABEL: == gpt_adamw: pp=2 x dp=1 x 4, 2 chunks, against 1 x 4
# CHECK-NEXT: mesh {'dp': 1, 'pp': 2, 'tp': 1} schedule interleaved:2 microbatches 4
# CHECK-NEXT: stage 0: F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0 U
# CHECK-NEXT: stage 0 entries: forward(forward,0) backward(backward,0) forward_chunk1(forward,1) backward_chunk1(backward,1) update(update,0)
# CHECK-NEXT: stage 1: F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 F3.1 B3.1 B2.0 B3.0 U
# CHECK-NEXT: stage 1 entries: forward(forward,0) backward(backward,0) forward_chunk1(forward,1) backward_chunk1(backward,1) update(update,0)
# CHECK-NEXT: bitwise 1f1b: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-LABEL: == checkpoint: interleaved -> 1f1b
# CHECK-NEXT: resumed at step 5
# CHECK-NEXT: bitwise straight: True
# CHECK-LABEL: == frozen weights of two chunks
# CHECK-NEXT: chunks of device 0 reading the mask: 2
# CHECK-NEXT: copies in its weight file: 1
# CHECK-LABEL: == mlp_sgd: pp=2 x dp=1 x 2, 2 chunks, against 1 x 2
# CHECK-NEXT: mesh {'dp': 1, 'pp': 2, 'tp': 1} schedule interleaved:2 microbatches 2
# CHECK-NEXT: stage 0: F0.0 F1.0 F0.1 F1.1 B0.1 B1.1 B0.0 B1.0 U
# CHECK: bitwise 1f1b: True
# CHECK-NEXT: within tolerance of one device: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-LABEL: == gpt_dp2: pp=2 x dp=2 x 4, 2 chunks, against 1 x 8
# CHECK-NEXT: mesh {'dp': 2, 'pp': 2, 'tp': 1} schedule interleaved:2 microbatches 4
# CHECK: bitwise 1f1b: True
# CHECK-NEXT: within tolerance of one device: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-LABEL: == gpt_dp2_overlap: pp=2 x dp=2 x 4, 2 chunks, against 1 x 8
# CHECK: bitwise 1f1b: True
# CHECK-NEXT: within tolerance of one device: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-LABEL: == gpt_dp2_zero1: pp=2 x dp=2 x 4, 2 chunks, against 1 x 8
# CHECK: bitwise 1f1b: True
# CHECK-NEXT: within tolerance of one device: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-LABEL: == gpt_clip: pp=2 x dp=1 x 4, 2 chunks, against 1 x 4
# CHECK: within tolerance of 1f1b: True
# CHECK-NEXT: within tolerance of one device: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-NEXT: clipping changes the step: True
# CHECK-LABEL: == gpt_clip_dp2_zero1: pp=2 x dp=2 x 4, 2 chunks, against 1 x 8
# CHECK: within tolerance of 1f1b: True
# CHECK-NEXT: within tolerance of one device: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-NEXT: clipping changes the step: True
# CHECK-LABEL: == fp16: pp=2 x dp=1 x 4, 2 chunks, loss scaling
# CHECK-NEXT: bitwise 1f1b: True
# CHECK-NEXT: scale states of every rank equal 1f1b's: True
# CHECK-NEXT: steps skipped: True, trained after: True
# CHECK-NEXT: odd_microbatches: exit 1: {{.*}}microbatches{{.*}}3{{.*}}
# CHECK-NEXT: one_stage: exit 1: cleave compile: error: --schedule=interleaved:2: the interleaved schedule runs model chunks on pipeline stages; give --pp 2 or more
# CHECK-NEXT: inference: exit 1: cleave compile: error: --schedule=interleaved:2: the interleaved schedule is compiled for training steps (--train); an inference bundle takes gpipe or 1f1b, and `cleave plan` predicts the interleaved one

# Each device's update all-reduces the sum of its two chunks' squares once
# along pp, on its last chunk (group-chunks.mlir checks the sum).
# CLIP-IR-LABEL: func.func @stage_0
# CLIP-IR-NOT:     axis = "pp"
# CLIP-IR:         cleave.all_reduce %{{[0-9]+}} {axis = "pp", cleave.chunk = 1 : i64, cleave.stage = 2 : i64, group_size = 2 : i64, reduction = "sum"} : tensor<f32>
# CLIP-IR-NOT:     axis = "pp"
# CLIP-IR-LABEL: func.func @stage_1
# CLIP-IR-NOT:     axis = "pp"
# CLIP-IR:         cleave.all_reduce %{{[0-9]+}} {axis = "pp", cleave.chunk = 1 : i64, cleave.stage = 3 : i64, group_size = 2 : i64, reduction = "sum"} : tensor<f32>
# CLIP-IR-NOT:     axis = "pp"
