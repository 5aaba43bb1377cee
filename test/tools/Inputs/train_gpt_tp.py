"""Inputs and checks of cleave-train-tp.test: a one-layer GPT
(cleave.generators.gpt) trained by `cleave train` on two tensor-parallel
devices and on one device.

  build OUT                          the model and its data (OUT/data)
  build-deep OUT                     a four-layer GPT of longer sequences
                                     whose blocks' activations outweigh
                                     its logits, and its data
  build-wide OUT                     the one-layer GPT with a vocabulary of
                                     4096, whose embedding outweighs the
                                     rest, and its data
  compare LOG_A LOG_B                the two runs' losses agree
  exported OUT BUNDLE CKPT ONNX      the exported model holds the checkpoint's
                                     parameters, gathered whole
  profiled DIR STEPS MICROBATCHES RANKS
                                     what `cleave train --profile DIR` wrote
"""

import json
import os
import sys

import numpy as np

SAMPLES, SEQ, VOCAB = 32, 8, 32
RTOL = 1e-5


def build(out, layers=1, hidden=16, seq=SEQ, vocab=VOCAB):
    from cleave.generators.gpt import GPTConfig, build_gpt

    cfg = GPTConfig(layers=layers, hidden=hidden, heads=2, seq=seq,
                    vocab=vocab, batch=2)
    build_gpt(cfg, os.path.join(out, "model.onnx"), seed=5)
    rng = np.random.default_rng(11)
    ids = rng.integers(0, vocab, (SAMPLES, seq)).astype(np.int64)
    data = os.path.join(out, "data")
    os.makedirs(data, exist_ok=True)
    np.save(os.path.join(data, "input_ids.npy"), ids)
    np.save(os.path.join(data, "labels.npy"), (ids + 1) % vocab)


def losses(path):
    with open(path) as f:
        return np.array([json.loads(line)["loss"] for line in f
                         if line.strip()])


def compare(first, second):
    a, b = losses(first), losses(second)
    ok = a.shape == b.shape and np.max(np.abs(a - b)) <= RTOL * np.max(
        np.abs(b))
    print("the losses agree within 1e-5:", bool(ok), "steps:", len(a))


def exported(out, bundle, checkpoint, path):
    import onnx
    from onnx import numpy_helper

    import cleave

    model = onnx.load(path)
    initializers = {t.name: numpy_helper.to_array(t)
                    for t in model.graph.initializer}
    trainer = cleave.Trainer(bundle)
    trainer.load(checkpoint)
    parameters = trainer.parameters()
    manifest = json.loads(open(os.path.join(bundle, "manifest.json")).read())
    split = sorted({p["name"] for program in manifest["programs"]
                    for p in program.get("trained_parameters", [])
                    if "split_dim" in p})
    print("split parameters:", len(split) > 0)
    print("initializers equal the gathered parameters:",
          all(initializers[n].shape == parameters[n].shape
              and np.array_equal(initializers[n], parameters[n])
              for n in parameters))


def profiled(directory, steps, microbatches, ranks):
    """The profile `cleave train --profile` wrote: every rank's trace holds
    a forward and a backward per microbatch and an update per step, in
    schedule order within each step; profile.json has each stage's phases
    with a measured and a predicted time."""
    steps, microbatches, ranks = int(steps), int(microbatches), int(ranks)
    summary = json.load(open(os.path.join(directory, "profile.json")))
    counts_ok = True
    for rank in range(ranks):
        trace = json.load(open(os.path.join(directory,
                                            f"trace_rank_{rank}.json")))
        calls = [e for e in trace["traceEvents"] if e["ph"] == "X"]
        for phase, per_step in (("forward", microbatches),
                                ("backward", microbatches), ("update", 1)):
            counts_ok &= sum(e["cat"] == phase for e in calls) == \
                steps * per_step
        starts = [e["ts"] for e in calls]
        counts_ok &= starts == sorted(starts) and all(
            e["dur"] > 0 for e in calls)
    print("traces hold every call in order:", counts_ok)
    phases_ok = all(
        set(stage["phases"]) == {"forward", "backward", "update"}
        and all(p["measured_s"] > 0 and p["predicted_s"] > 0
                for p in stage["phases"].values())
        for stage in summary["stages"])
    print("stages:", len(summary["stages"]), "with measured and predicted "
          "phases:", phases_ok, "; timed steps:", summary["steps"])


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"build": build, "compare": compare, "exported": exported,
     "profiled": profiled,
     "build-deep": lambda out: build(out, layers=4, hidden=32, seq=32,
                                     vocab=16),
     "build-wide": lambda out: build(out, vocab=4096)}[mode](*args)
