# Tensor-parallel training steps with sequence parallelism (`cleave compile
# --train --tp 2 --sequence-parallel`): the plan holds the residual stream
# split along the sequence between layers, and the compiled step computes
# the same losses and weights as one device.
#
# Checked against the one-device bundle of the same global batch, 5 steps,
# every loss and every trained parameter within 1e-5 of the reference's
# largest magnitude, on the one-layer GPT with SGD and momentum:
#   - tp=2: the plan says sequence parallel, and the step gathers or
#     scatters activations along the sequence (dimension 1);
#   - pp=2 x tp=2 over 2 microbatches: the stream crosses the stage boundary
#     as each device's half of the sequence (a send of batch x seq/2 x
#     hidden), so that the next stage starts from what the last one left.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s

import json
import re
import sys

import cleave
from cleave.testing import load_sibling

tp_test = load_sibling(__file__, "tensor-parallel-train.py")
dp_test = tp_test.dp_test
OPTIONS = {**tp_test.SGD, "sequence-parallel": True}
# dp_test.gpt: batch 2, 8 tokens, hidden 16.
SEQ, HIDDEN = 8, 16


def collectives_along_sequence(bundle):
    """The tensor-parallel collectives of the step that gather or scatter
    dimension 1 of a batch x seq x hidden tensor."""
    text = (bundle / "model.mlir").read_text()
    return len(re.findall(
        r"cleave\.(?:all_gather|reduce_scatter) [^\n]*\bdim = 1\b"
        r"[^\n]*tensor<\d+x\d+x" + str(HIDDEN) + r"xf32>", text))


def sent_shapes(bundle):
    text = (bundle / "model.mlir").read_text()
    return sorted(set(re.findall(r"cleave\.send [^\n]*: tensor<([0-9x]+)xf32>",
                                 text)))


def run(work, name, devices, pp=1, microbatches=1):
    one, split, batches = tp_test.compile_pair(
        work, name, dp_test.gpt, OPTIONS, devices, 2, pp, microbatches)
    ref_losses, ref_params, _ = dp_test.train(one, batches)
    losses, params, _ = dp_test.train(split, batches)
    manifest = json.loads((split / "manifest.json").read_text())
    plan = json.loads((split / "plan.json").read_text())
    print(f"== {name}: mesh {manifest['mesh']}, sequence parallel "
          f"{plan['sequence_parallel']}")
    print("collectives along the sequence:",
          collectives_along_sequence(split) > 0)
    ok, relative = tp_test.within(losses, ref_losses, params, ref_params)
    print(f"losses and parameters within tolerance: {ok}")
    print(f"largest error {relative:.1e} of the scale", file=sys.stderr)
    return split


if __name__ == "__main__":
    work = sys.argv[1]
    run(work, "gpt_sp_tp2", 2)
    bundle = run(work, "gpt_sp_pp2_tp2", 4, pp=2, microbatches=2)
    half = [s for s in sent_shapes(bundle)
            if s.split("x")[1:] == [str(SEQ // 2), str(HIDDEN)]]
    print("a stage sends half the sequence:", len(half) > 0)

# CHECK: == gpt_sp_tp2: mesh {'dp': 1, 'pp': 1, 'tp': 2}, sequence parallel True
# CHECK-NEXT: collectives along the sequence: True
# CHECK-NEXT: losses and parameters within tolerance: True
# CHECK: == gpt_sp_pp2_tp2: mesh {'dp': 1, 'pp': 2, 'tp': 2}, sequence parallel True
# CHECK-NEXT: collectives along the sequence: True
# CHECK-NEXT: losses and parameters within tolerance: True
# CHECK-NEXT: a stage sends half the sequence: True
