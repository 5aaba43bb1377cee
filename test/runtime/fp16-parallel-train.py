# Float16 training steps with dynamic loss scaling on several devices: every
# rank must take the same decision (skip the step and halve the scale, or
# update) from the gradients of the whole global batch. The initial scale,
# 2^24, overflows: the first steps are skipped, later ones train.
#
# - dp=2 x 1 microbatch against one device x 2 (data-parallel-train.py's
#   MLP and one-layer GPT): the update reads the all-reduced sums, so the
#   losses and parameters are bitwise equal, and after every step both
#   replicas hold the one device's scale, good-step and skipped-step
#   counts (at least one step skipped);
# - ZeRO-1 on dp=2: each replica sees its block of the gradients; the
#   overflow flag is summed over the replicas, so both skip alike: losses
#   and parameters bitwise the one device's (AdamW without clipping: the
#   update is elementwise), and both replicas' scale states equal its.
#
# Pipelined float16 steps: mixed-precision-pipeline-train.py (the flag is
# summed over the stages, Transforms/Autodiff/loss-scaling-pipeline.mlir).
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# CHECK-LABEL: == mlp: dp=2
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: True
# CHECK-NEXT: ranks decide alike: True
# CHECK-NEXT: steps skipped: True, trained after: True
# CHECK-LABEL: == gpt: dp=2
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: True
# CHECK-NEXT: ranks decide alike: True
# CHECK-NEXT: steps skipped: True, trained after: True
# CHECK-LABEL: == mlp: zero=1 dp=2
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: True
# CHECK-NEXT: ranks decide alike: True
# CHECK-NEXT: steps skipped: True, trained after: True

import json
import os
import sys

import numpy as np

import cleave
from cleave.testing import load_sibling

dp_test = load_sibling(__file__, "data-parallel-train.py")

OPTIONS = {"optimizer": "adamw", "lr": 0.01, "precision": "fp16",
           "loss-scale": 2.0**24}
SCALE_STATES = ("loss_scale", "loss_scale.good_steps",
                "loss_scale.skipped_steps")
STEPS = 8


def scale_states(checkpoint, rank):
    """The loss scaling states of one rank file of a checkpoint."""
    with open(os.path.join(checkpoint, f"rank_{rank}.bin"), "rb") as f:
        data = f.read()
    length = int.from_bytes(data[8:16], "little")
    header = json.loads(data[16:16 + length])
    memory = data[header["data_offset"]:]
    found = {}
    for entry in header["states"]:
        if entry["name"] in SCALE_STATES:
            raw = memory[entry["offset"]:entry["offset"] + entry["bytes"]]
            found[entry["name"]] = float(np.frombuffer(raw, np.float32)[0])
    return found


def train(work, bundle, batches, ranks):
    """Losses, final parameters, and each step's scale states per rank."""
    trainer = cleave.Trainer(bundle)
    losses, states = [], []
    for step, b in enumerate(batches):
        losses.append(trainer.step(b))
        where = f"{work}/{bundle.name}_{step}"
        trainer.save(where)
        states.append([scale_states(where, rank) for rank in range(ranks)])
    return np.array(losses), trainer.parameters(), states


def compare(work, name, family, devices, options, microbatches=1):
    """`devices` replicas against one device whose microbatches are
    theirs, in order."""
    model, batch, loss = family(work)
    blocks = devices * microbatches
    one = cleave.compile(model, f"{work}/{name}_one", **loss,
                         train={**OPTIONS, "microbatches": blocks})
    several = cleave.compile(model, f"{work}/{name}_several", devices=devices,
                             **loss, train={**OPTIONS, **options,
                                            "microbatches": microbatches})
    dp_test.STEPS = STEPS
    batches = dp_test.global_batches(batch, blocks)
    ref_losses, ref_params, ref_states = train(work, one, batches, 1)
    losses, params, states = train(work, several, batches, devices)
    print(f"== {name}")
    print("losses bitwise equal:", np.array_equal(losses, ref_losses))
    print("parameters bitwise equal:", sorted(params) == sorted(ref_params)
          and all(np.array_equal(params[n], ref_params[n])
                  for n in ref_params))
    print("ranks decide alike:", all(
        rank == ref[0] for step, ref in zip(states, ref_states)
        for rank in step))
    skipped = [s[0]["loss_scale.skipped_steps"] for s in ref_states]
    print(f"steps skipped: {skipped[-1] > 0}, trained after: "
          f"{skipped[-1] < STEPS}  (skipped so far, by step: {skipped})")


if __name__ == "__main__":
    work = sys.argv[1]
    compare(work, "mlp: dp=2", dp_test.mlp, 2, {})
    compare(work, "gpt: dp=2", dp_test.gpt, 2, {})
    compare(work, "mlp: zero=1 dp=2", dp_test.mlp, 2, {"zero": 1})
