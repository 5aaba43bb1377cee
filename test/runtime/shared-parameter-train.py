# Training steps of a GPT with tied embeddings (GPT-2's: the output
# projection is the token embedding transposed), whose one parameter the
# first and the last pipeline stage read. Each stage that reads it holds a
# copy, and the copies' gradients add up by an all-reduce along pp in which
# every stage takes part: a stage without a copy adds zeros, which take
# zeroed persistent memory rather than bytes of the weight file (checked in
# the programs below).
#
# Checked over 5 steps of SGD with momentum, against the one-device bundle
# of the same global batch (max |error| <= 1e-5 of the largest magnitude,
# per loss and parameter; the stages add the gradients in another order):
#   - 1F1B on pp=4 x 4 microbatches, where stages 1 and 2 hold no copy;
#   - interleaved 1F1B, pp=2 x 2 chunks x 4 microbatches: the embedding is
#     on virtual stages 0 and 3, chunk 0 of device 0 and chunk 1 of device
#     1, each device adding its chunks' parts (the other chunk's zeros)
#     before the one all-reduce; bitwise the 1F1B bundle of pp=2, whose two
#     stages both hold copies;
#   - interleaved 1F1B on pp=4 x 2 chunks x 4 microbatches, where devices 1
#     and 2 hold no copy in either chunk: the sum of their chunks' zeros
#     joins the all-reduce once a step, in the update, as their peers'
#     parts do (run once per microbatch, it would wait forever); bitwise
#     the 1F1B bundle of pp=4.
# A parameter read by several chunks of one device is one tensor of the
# device's program, updated once: the later chunks add their gradients into
# the first chunk's sum, and take part in its reductions along pp with
# zeros. With attn_scale trained (every chunk of both devices reads it) and
# the embedding tied, interleaved pp=2 x 2 chunks x 4 microbatches is
# within the tolerance of 1F1B's and of one device's: with SGD and momentum
# (device 0's program holds attn_scale once), on pp=2 x dp=2 with the
# replicas' reductions overlapped with the backward and clipping by the
# global norm, and under ZeRO-2 (each microbatch's gradient
# reduce-scattered into the first chunk's block).
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# RUN: FileCheck %s --check-prefix=ZEROS < %t/tied_pp4/programs/stage_1.cpp
# RUN: FileCheck %s --check-prefix=ZEROS < %t/tied_pp4/programs/stage_2.cpp
# RUN: cleave-translate --print-device-program --program-function=stage_1 %t/tied_pp4/model.mlir -o %t/stage_1.txt
# RUN: cleave-translate --parse-device-program %t/stage_1.txt | diff %t/stage_1.txt -
# RUN: FileCheck %s --check-prefix=TEXT < %t/stage_1.txt

import re
import subprocess
import sys

import numpy as np

import cleave
from cleave.generators.gpt import GPTConfig, build_gpt
from cleave.testing import load_sibling

dp_test = load_sibling(__file__, "data-parallel-train.py")
il_test = load_sibling(__file__, "interleaved-train.py")
SGD = {"optimizer": "sgd", "lr": 0.5, "momentum": 0.9}
LOSS = {"loss": "cross-entropy", "logits": "logits", "labels": "labels",
        "freeze": "attn_scale|causal_mask"}


def tied_gpt(work):
    """interleaved-train.py's GPT, its embedding tied; its batches."""
    cfg = GPTConfig(layers=2, hidden=16, heads=2, seq=8, vocab=32, batch=2,
                    tie_embeddings=True)
    path = f"{work}/tied.onnx"
    build_gpt(cfg, path, seed=5)
    return path, il_test.gpt2(work)[1]


def scale_trained(work):
    """tied_gpt with attn_scale trained too (the mask stays frozen), as
    interleaved-train.py's compare takes a model."""
    model, batch = tied_gpt(work)
    return model, batch, {**LOSS, "freeze": "causal_mask"}


def shown(work, name):
    """How many writable weights of device 0's program hold attn_scale and
    wte."""
    bundle = f"{work}/{name}"
    text = subprocess.run(
        ["cleave-translate", "--print-device-program",
         "--program-function=stage_0", f"{bundle}/model.mlir"],
        capture_output=True, text=True, check=True).stdout
    weights = [line for line in text.splitlines()
               if line.startswith("writable weight ")]
    print("device 0 holds attn_scale", sum('"attn_scale"' in w
                                           for w in weights),
          "time(s), wte", sum('"wte"' in w for w in weights), "time(s)")


def interleaved_against(shape, bundle, run, onef, one):
    """Where the interleaved bundle holds wte, and its (losses, parameters)
    against the 1F1B bundle's (bitwise) and one device's."""
    print(f"== interleaved: {shape} against 1 x 4")
    print("wte held by devices:", holders(bundle, "wte"))
    (losses, params), (onef_losses, onef_params) = run, onef
    print("bitwise 1f1b:",
          il_test.same(losses, onef_losses, params, onef_params))
    print("within tolerance of one device:",
          il_test.within(losses, one[0], params, one[1]))


def holders(bundle, name):
    """The stage functions of the bundle's IR that read weight `name`."""
    text = (bundle / "model.mlir").read_text()
    stages = re.split(r"func\.func @stage_", text)[1:]
    return [int(s.split("(", 1)[0]) for s in stages
            if f'cleave.weight "{name}"' in s]


def train(model, name, work, batches, devices=1, **options):
    bundle = cleave.compile(model, f"{work}/{name}", devices=devices,
                            **LOSS, train={**SGD, **options})
    losses, params, _ = dp_test.train(bundle, batches)
    return bundle, losses, params


if __name__ == "__main__":
    work = sys.argv[1]
    model, batch = tied_gpt(work)
    batches = dp_test.global_batches(batch, 4)
    _, one_losses, one_params = train(model, "tied_one", work, batches,
                                      microbatches=4)
    print("parameters:", sorted(one_params))

    bundle, losses, params = train(model, "tied_pp4", work, batches, 4,
                                   pp=4, microbatches=4, schedule="1f1b")
    print("== 1f1b: pp=4 x 4 against 1 x 4")
    print("wte held by stages:", holders(bundle, "wte"))
    print("within tolerance of one device:",
          il_test.within(losses, one_losses, params, one_params))
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}, falls:",
          losses[-1] < losses[0])
    pp4_losses, pp4_params = losses, params

    bundle, losses, params = train(model, "tied_interleaved", work, batches,
                                   2, pp=2, microbatches=4,
                                   schedule="interleaved")
    _, onef_losses, onef_params = train(model, "tied_1f1b", work, batches,
                                        2, pp=2, microbatches=4,
                                        schedule="1f1b")
    interleaved_against("pp=2 x 2 chunks x 4", bundle, (losses, params),
                        (onef_losses, onef_params), (one_losses, one_params))

    bundle, il4_losses, il4_params = train(
        model, "tied_interleaved_pp4", work, batches, 4, pp=4,
        microbatches=4, schedule="interleaved")
    interleaved_against("pp=4 x 2 chunks x 4", bundle,
                        (il4_losses, il4_params), (pp4_losses, pp4_params),
                        (one_losses, one_params))

    # attn_scale trained: every chunk of both devices reads it.
    interleaved, _, trainer, _ = il_test.compare(
        work, "scale", scale_trained, SGD, 2, 4, bitwise=False)
    start = cleave.Trainer(interleaved).parameters()["attn_scale"]
    print("attn_scale moves:",
          not np.array_equal(trainer.parameters()["attn_scale"], start))
    shown(work, "scale_interleaved")
    clip = {**SGD, "clip-grad-norm": 0.05, "grad-reduction": "overlap"}
    il_test.compare(work, "scale_dp2_clip", scale_trained, clip, 4, 4,
                    bitwise=False)
    il_test.compare(work, "scale_dp2_zero2", scale_trained,
                    {**SGD, "zero": 2}, 4, 4, bitwise=False)

# CHECK: parameters: {{.*}}'wte'
# CHECK-NOT: lm_head.weight
# CHECK-LABEL: == 1f1b: pp=4 x 4 against 1 x 4
# CHECK-NEXT: wte held by stages: [0, 3]
# CHECK-NEXT: within tolerance of one device: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-LABEL: == interleaved: pp=2 x 2 chunks x 4 against 1 x 4
# CHECK-NEXT: wte held by devices: [0, 1]
# CHECK-NEXT: bitwise 1f1b: True
# CHECK-NEXT: within tolerance of one device: True
# CHECK-LABEL: == interleaved: pp=4 x 2 chunks x 4 against 1 x 4
# CHECK-NEXT: wte held by devices: [0, 3]
# CHECK-NEXT: bitwise 1f1b: True
# CHECK-NEXT: within tolerance of one device: True
# CHECK-LABEL: == scale: pp=2 x dp=1 x 4, 2 chunks, against 1 x 4
# CHECK:      within tolerance of 1f1b: True
# CHECK-NEXT: within tolerance of one device: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-NEXT: attn_scale moves: True
# CHECK-NEXT: device 0 holds attn_scale 1 time(s), wte 1 time(s)
# CHECK-LABEL: == scale_dp2_clip: pp=2 x dp=2 x 4, 2 chunks, against 1 x 8
# CHECK:      within tolerance of 1f1b: True
# CHECK-NEXT: within tolerance of one device: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-LABEL: == scale_dp2_zero2: pp=2 x dp=2 x 4, 2 chunks, against 1 x 8
# CHECK:      within tolerance of 1f1b: True
# CHECK-NEXT: within tolerance of one device: True
# CHECK-NEXT: loss {{.*}}, falls: True

# A stage without a copy (holding no tensor of the embedding's [32, 16]: no
# copy, no gradient sum) adds zeros from persistent memory, and the
# all-reduce is the first step of its update.
# ZEROS:      cleave_entry_update(
# ZEROS:      // 0: all_reduce (sgd)
# ZEROS:      in[] = {{[{][{]}}(persistent + {{[0-9]+}}), CLEAVE_F32, 2, {32, 16}}};
# ZEROS-NEXT: out[] = {{[{][{]}}(arena + {{[0-9]+}}), CLEAVE_F32, 2, {32, 16}}};
# ZEROS-NEXT: static const
# ZEROS-NEXT: static const
# ZEROS-NEXT: cleave_cpu_all_reduce(
# Its text form (which reads back) has the zeros in persistent memory, and
# no weight of their 2,048 bytes.
# TEXT:      tensor t{{[0-9]+}} float32[32, 16] persistent {{[0-9]+}}
# TEXT-NOT:  2048 bytes
