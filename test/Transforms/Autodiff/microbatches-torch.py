# Gradient accumulation (`cleave compile --train --microbatches M`) against
# PyTorch 1.13: the model is exported at the microbatch's size, the bundle
# takes the global batch (M microbatches along the first dimension of every
# input), runs forward and backward once per microbatch into persistent
# gradient sums, and updates once per step from their mean. torch runs the
# same steps as people accumulate gradients: for each microbatch
# `(loss / M).backward()`, then clipping and the optimizer's step. Compared:
# the loss of every step (the mean of the microbatches' losses) and every
# parameter after the last step, float32 against float64, within
# 1e-4 * max |reference| + 1e-6 (as train-torch.py).
#
# Also checked: the manifest (global input shapes with batch_dim 0, the
# three entries and the schedule's order: 1F1B by default, GPipe when
# asked).
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s

import json
import sys

import numpy as np
import torch

import cleave
from cleave.testing import load_sibling

torch.set_default_dtype(torch.float64)
STEPS = 8


base = load_sibling(__file__, "train-torch.py")


def describe(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    program = manifest["programs"][0]
    print("microbatches", manifest["microbatches"])
    for port in manifest["inputs"]:
        print("input", port["name"], port["shape"], "batch_dim",
              port.get("batch_dim"))
    for port in manifest["outputs"]:
        print("output", port["name"], port["shape"], "batch_dim",
              port.get("batch_dim"))
    print("entries", [(e["phase"], len(e["inputs"]), len(e["outputs"]))
                      for e in program["entries"]])
    order = program["steps"]
    print("order", " ".join(f"{s['phase'][0].upper()}{s['microbatch']}"
                            if s["microbatch"] >= 0 else s["phase"][0].upper()
                            for s in order))


def run(work, name, spec, options, microbatches):
    print(f"== {name}")
    bundle = cleave.compile(spec.model, f"{work}/{name}",
                            train={**options, "microbatches": microbatches},
                            **spec.loss)
    describe(bundle)
    trainer = cleave.Trainer(bundle)
    rng = np.random.default_rng(7)
    steps = [[spec.batch(rng) for _ in range(microbatches)]
             for _ in range(STEPS)]
    glued = [{k: np.concatenate([mb[k] for mb in step]) for k in step[0]}
             for step in steps]
    losses = [trainer.step(b) for b in glued]

    params = spec.params
    optimizer = base.torch_optimizer(list(params.values()), options)
    want = []
    for step in steps:
        optimizer.zero_grad()
        total = 0.0
        for mb in step:
            value = spec.reference(params, {k: torch.from_numpy(
                v.astype(np.float64) if v.dtype == np.float32 else v)
                for k, v in mb.items()}) / microbatches
            value.backward()
            total += value.item()
        if "clip-grad-norm" in options:
            torch.nn.utils.clip_grad_norm_(params.values(),
                                           options["clip-grad-norm"])
        optimizer.step()
        want.append(total)

    failed = False
    ok, line = base.check(f"losses[{STEPS}]", losses, want)
    failed |= not ok
    print(line)
    trained = trainer.parameters()
    for n, p in params.items():
        keep = spec.compared.get(n, slice(None))
        ok, line = base.check(n, trained[n][keep], p.detach().numpy()[keep])
        failed |= not ok
        print(line)
    return failed, bundle


if __name__ == "__main__":
    work = sys.argv[1]
    failed = False
    mlp_options = {"optimizer": "adamw", "lr": 0.02, "weight-decay": 0.1,
                   "clip-grad-norm": 0.5}
    result, _ = run(work, "mlp_4", base.mlp(), mlp_options, 4)
    failed |= result
    result, _ = run(work, "mlp_4_gpipe", base.mlp(),
                    {**mlp_options, "schedule": "gpipe"}, 4)
    failed |= result
    sgd = {"optimizer": "sgd", "lr": 0.5, "momentum": 0.9, "nesterov": True}
    result, _ = run(work, "mlp_3_sgd", base.mlp(), sgd, 3)
    failed |= result
    result, _ = run(work, "transformer_2", base.transformer(),
                    {"optimizer": "adamw", "lr": 0.01, "clip-grad-norm": 1.0},
                    2)
    failed |= result
    sys.exit(1 if failed else 0)

# CHECK-LABEL: == mlp_4
# CHECK-NEXT: microbatches 4
# CHECK-NEXT: input x [8, 3, 4] batch_dim 0
# CHECK-NEXT: input labels [8, 3] batch_dim 0
# CHECK-NEXT: output loss [] batch_dim None
# CHECK-NEXT: entries [('forward', 2, 0), ('backward', 1, 0), ('update', 0, 1)]
# CHECK-NEXT: order F0 B0 F1 B1 F2 B2 F3 B3 U
# CHECK-NEXT: losses[8]  ok
# CHECK-NOT: MISMATCH
# CHECK-LABEL: == mlp_4_gpipe
# CHECK: order F0 F1 F2 F3 B0 B1 B2 B3 U
# CHECK-NEXT: losses[8]  ok
# CHECK-NOT: MISMATCH
# CHECK-LABEL: == mlp_3_sgd
# CHECK: input x [6, 3, 4] batch_dim 0
# CHECK: order F0 B0 F1 B1 F2 B2 U
# CHECK-NEXT: losses[8]  ok
# CHECK-NOT: MISMATCH
# CHECK-LABEL: == transformer_2
# CHECK: microbatches 2
# CHECK: losses[8]  ok
# CHECK-NOT: MISMATCH
# CHECK: qkv.weight  ok
