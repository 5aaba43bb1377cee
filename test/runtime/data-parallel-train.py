# Data-parallel training steps (`cleave compile --train --devices D`): every
# device runs the whole step on its share of the global batch (D x
# microbatches x the model's batch, cut along the first dimension), and the
# update all-reduces the gradient and loss sums over the replicas, so that
# each applies the same update. cleave.Trainer runs the devices as threads
# of one process.
#
# Checked against the one-device bundle of the same global batch, whose
# microbatches are the replicas' microbatches in order:
#   - dp=2 x 1 microbatch against 1 device x 2: the sums add the same two
#     gradients in the same order, so every loss and parameter is bitwise
#     equal (SGD with Nesterov momentum; AdamW with clipping);
#   - dp=2 x 2 and dp=4 x 1 against 1 device x 4: the all-reduce adds in
#     another order than one device's running sum; tolerance
#     max |error| <= 1e-5 * max |reference| per loss and parameter.
# Models: a ReLU MLP with an attached cross-entropy (-1 ignored), and a
# one-layer GPT (cleave.generators.gpt) with cross-entropy on its logits,
# learning to predict the next token id.
# Also: the manifest's mesh and ports, a checkpoint of a dp bundle (a rank
# file per device) read back into a new session, and training resumed from
# it equal to training straight on.
#
# ZeRO stage 1 (`zero: 1`): each replica keeps the optimizer state of one
# block of every parameter, updates that block from the reduce-scattered
# gradient sums and gathers the others'. The update is elementwise, so
# without clipping the parameters are bitwise those of the replicas that
# hold everything; with clipping the norm adds the blocks' squares in
# another order (tolerance as above). Each replica's persistent memory is
# smaller, and its checkpoint (the replicas' rank files now differ) resumes
# exactly. dp=4 pads blocks (a bias of 10 elements: blocks of 3).
#
# Synchronised batch normalisation (`--sync-batch-norm`): a conv, batch
# norm, ReLU, pool, linear model on 2 replicas of batch 2 trains as the
# same model of batch 4 on one device (losses, parameters and running
# statistics within the tolerance); each replica's own statistics do not.
# Two all-reduces per batch norm in the forward, their adjoints in the
# backward.
#
# ZeRO stage 2 (`zero: 2`) shards the gradient sums too: each microbatch's
# gradient is reduce-scattered in the backward. With one microbatch per
# replica it is bitwise ZeRO-1; with two, the sums add in another order
# (tolerance as above); persistent memory is smaller again.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s

import json
import sys

import numpy as np

import cleave
from cleave.generators.gpt import GPTConfig, build_gpt
from cleave.testing.gradients import ModelBuilder

STEPS = 5
RTOL = 1e-5


def mlp(work):
    """A ReLU MLP over 3 positions of 6 features, 4 classes; position 1 of
    the first sample is ignored."""
    m = ModelBuilder(np.float32, seed=7, opset=17)
    m.input("x", np.zeros((2, 3, 6)))
    hidden = m.node("Relu", [m.node("Add", [
        m.node("MatMul", ["x", m.weight("fc1.weight", [6, 10], -0.4, 0.4)]),
        m.weight("fc1.bias", [10], -0.1, 0.1)])])
    m.graph.node("MatMul", [hidden, m.weight("fc2.weight", [10, 4], -0.4, 0.4)],
                 ["logits"])
    m.graph.output("logits", [2, 3, 4], np.float32)

    def batch(rng):
        labels = rng.integers(0, 4, (2, 3))
        labels[0, 1] = -1
        return {"x": rng.standard_normal((2, 3, 6)).astype(np.float32),
                "labels": labels.astype(np.int64)}

    loss = {"loss": "cross-entropy", "logits": "logits", "labels": "labels",
            "ignore_index": -1}
    return m.model(), batch, loss


def gpt(work):
    cfg = GPTConfig(layers=1, hidden=16, heads=2, seq=8, vocab=32, batch=2)
    path = f"{work}/gpt.onnx"
    build_gpt(cfg, path, seed=5)

    def batch(rng):
        ids = rng.integers(0, cfg.vocab, (cfg.batch, cfg.seq))
        return {"input_ids": ids.astype(np.int64),
                "labels": ((ids + 1) % cfg.vocab).astype(np.int64)}

    loss = {"loss": "cross-entropy", "logits": "logits", "labels": "labels"}
    return path, batch, loss


def cnn_model(batch):
    """A convolution, a batch norm, ReLU, global pooling and a linear layer
    over `batch` images of 3 x 6 x 6; 5 classes."""
    from cleave.testing import GraphBuilder

    rng = np.random.default_rng(11)
    g = GraphBuilder(opset=17)
    x = g.input("x", [batch, 3, 6, 6])
    weight = lambda name, array: g.initializer(name, array.astype(np.float32))
    conv = g.node("Conv", [x, weight("conv.weight", rng.uniform(
        -0.4, 0.4, (4, 3, 3, 3)))], pads=[1, 1, 1, 1])
    norm = g.node("BatchNormalization", [
        conv, weight("bn.weight", rng.uniform(0.5, 1.5, 4)),
        weight("bn.bias", rng.uniform(-0.2, 0.2, 4)),
        weight("bn.running_mean", np.zeros(4)),
        weight("bn.running_var", np.ones(4))], momentum=0.9)
    pooled = g.node("Flatten", [g.node("GlobalAveragePool",
                                       [g.node("Relu", [norm])])])
    g.node("MatMul", [pooled, weight("fc.weight", rng.uniform(
        -0.5, 0.5, (4, 5)))], ["logits"])
    g.output("logits", [batch, 5])
    return g.model()


def sync_batch_norm(work):
    """Synchronised batch normalisation on 2 replicas (model batch 2)
    against one device whose model takes the whole batch of 4: the same
    statistics, so the same step up to the order of the sums; without
    synchronisation each replica normalises by its own half."""
    print("== sync_batch_norm: dp=2 x 1 against 1 device of batch 4")
    loss = {"loss": "cross-entropy", "logits": "logits", "labels": "labels"}
    options = {"optimizer": "sgd", "lr": 0.2, "momentum": 0.9}
    whole = cleave.compile(cnn_model(4), f"{work}/bn_whole", **loss,
                           train=options)
    bundles = {
        sync: cleave.compile(
            cnn_model(2), f"{work}/bn_{sync}", devices=2, **loss,
            train=options,
            extra_args=["--sync-batch-norm"] if sync else [])
        for sync in (True, False)}
    rng = np.random.default_rng(4)
    batches = [{"x": rng.standard_normal((4, 3, 6, 6)).astype(np.float32),
                "labels": rng.integers(0, 5, 4).astype(np.int64)}
               for _ in range(STEPS)]
    ref_losses, ref_params, _ = train(whole, batches)
    for sync, bundle in bundles.items():
        losses, params, _ = train(bundle, batches)
        worst = max(float(np.max(np.abs(params[n] - ref_params[n])))
                    / float(np.max(np.abs(ref_params[n]))) for n in ref_params)
        loss_error = float(np.max(np.abs(losses - ref_losses)))
        print(f"{'synchronised' if sync else 'per replica'}: losses and "
              f"parameters (running statistics too) within tolerance: "
              f"{loss_error <= RTOL * float(np.max(np.abs(ref_losses))) and worst <= RTOL}"
              f" (largest error {worst:.1e} of the scale)")
    count = {sync: (bundle / "model.mlir").read_text().count(
        "cleave.all_reduce ") for sync, bundle in bundles.items()}
    print("all-reduces added by synchronisation:", count[True] - count[False])


def train(bundle, batches):
    trainer = cleave.Trainer(bundle)
    losses = [trainer.step(b) for b in batches]
    return np.array(losses), trainer.parameters(), trainer


def global_batches(batch, parts, seed=0):
    rng = np.random.default_rng(seed)
    result = []
    for _ in range(STEPS):
        blocks = [batch(rng) for _ in range(parts)]
        result.append({k: np.concatenate([b[k] for b in blocks])
                       for k in blocks[0]})
    return result


def error(a, b):
    return float(np.max(np.abs(a - b))), float(np.max(np.abs(b)))


def compare(work, name, family, options, devices, microbatches, exact):
    model, batch, loss = family(work)
    blocks = devices * microbatches
    one = cleave.compile(model, f"{work}/{name}_one", **loss,
                         train={**options, "microbatches": blocks})
    dp = cleave.compile(model, f"{work}/{name}_dp", devices=devices, **loss,
                        train={**options, "microbatches": microbatches})
    batches = global_batches(batch, blocks)
    ref_losses, ref_params, _ = train(one, batches)
    losses, params, trainer = train(dp, batches)
    print(f"== {name}: dp={devices} x {microbatches} against 1 x {blocks}")
    manifest = json.loads((dp / "manifest.json").read_text())
    print("mesh", manifest["mesh"], "microbatches", manifest["microbatches"],
          "devices", manifest["devices"])
    print("inputs", [(p["name"], p["shape"], p.get("batch_dim"))
                     for p in manifest["inputs"]])
    if exact:
        print("losses bitwise equal:", np.array_equal(losses, ref_losses))
        print("parameters bitwise equal:", sorted(params) == sorted(ref_params)
              and all(np.array_equal(params[n], ref_params[n])
                      for n in ref_params))
    else:
        worst, scale = error(losses, ref_losses)
        print(f"losses within tolerance: {worst <= RTOL * scale} "
              f"({worst:.1e} of {scale:.2f})")
        ok = sorted(params) == sorted(ref_params)
        relative = 0.0
        for n in ref_params:
            worst, scale = error(params[n], ref_params[n])
            ok = ok and worst <= RTOL * scale
            relative = max(relative, worst / scale)
        print(f"parameters within tolerance: {ok} "
              f"(largest error {relative:.1e} of the scale)")
    print(f"loss {ref_losses[0]:.4f} -> {ref_losses[-1]:.4f}, falls:",
          ref_losses[-1] < ref_losses[0])
    return dp, trainer, batches


def persistent_bytes(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    return manifest["programs"][0]["persistent_bytes"]


def compare_zero(work, name, family, options, devices, stage=1,
                 microbatches=1):
    """ZeRO replicas against replicas that hold the whole state (or, for
    stage 2, against stage 1)."""
    model, batch, loss = family(work)
    options = {**options, "microbatches": microbatches}
    reference = {"zero": 1} if stage == 2 else {}
    whole = cleave.compile(model, f"{work}/{name}_whole", devices=devices,
                           **loss, train={**options, **reference})
    zero = cleave.compile(model, f"{work}/{name}_zero", devices=devices,
                          **loss, train={**options, "zero": stage})
    batches = global_batches(batch, devices * microbatches)
    ref_losses, ref_params, _ = train(whole, batches)
    losses, params, trainer = train(zero, batches)
    print(f"== {name}: ZeRO-{stage} on dp={devices} x {microbatches}")
    print("losses bitwise equal:", np.array_equal(losses, ref_losses))
    worst = max(float(np.max(np.abs(params[n] - ref_params[n])))
                / float(np.max(np.abs(ref_params[n]))) for n in ref_params)
    print("parameters bitwise equal:", worst == 0.0)
    print(f"parameters within tolerance: {worst <= RTOL} "
          f"(largest error {worst:.1e} of the scale)")
    print("persistent bytes per device smaller:",
          persistent_bytes(zero) < persistent_bytes(whole),
          f"({persistent_bytes(whole)} -> {persistent_bytes(zero)})")
    ir = (zero / "model.mlir").read_text()
    print("reduce_scatter, all_slice, all_gather, assign:",
          [ir.count(f"cleave.{op} ") for op in
           ("reduce_scatter", "all_slice", "all_gather", "assign")])
    return zero, trainer, batches


def checkpoint(work, bundle, trainer, batches):
    """Saves after STEPS steps, restores into a new trainer and trains two
    more steps on both: the same losses and bytes."""
    print("== checkpoint")
    where = f"{work}/ckpt_{bundle.name}"
    trainer.save(where)
    files = sorted(json.loads(open(f"{where}/manifest.json").read())["files"])
    print("files", files)
    restored = cleave.Trainer(bundle)
    restored.load(where)
    print("restored at step", restored.steps)
    print("parameters restored:", all(
        np.array_equal(restored.parameters()[n], v)
        for n, v in trainer.parameters().items()))
    more = batches[:2]
    straight = [trainer.step(b) for b in more]
    resumed = [restored.step(b) for b in more]
    print("resumed losses equal:", straight == resumed)
    print("resumed parameters equal:", all(
        np.array_equal(restored.parameters()[n], v)
        for n, v in trainer.parameters().items()))


if __name__ == "__main__":
    work = sys.argv[1]
    sgd = {"optimizer": "sgd", "lr": 0.1, "momentum": 0.9, "nesterov": True}
    adamw = {"optimizer": "adamw", "lr": 0.01, "clip-grad-norm": 0.5}
    bundle, trainer, batches = compare(work, "mlp_sgd", mlp, sgd, 2, 1, True)
    checkpoint(work, bundle, trainer, batches)
    compare(work, "mlp_adamw", mlp, adamw, 2, 1, True)
    compare(work, "mlp_dp2x2", mlp, adamw, 2, 2, False)
    compare(work, "gpt_dp2", gpt, adamw, 2, 1, True)
    compare(work, "gpt_dp4", gpt, adamw, 4, 1, False)
    plain = {"optimizer": "adamw", "lr": 0.01}
    compare_zero(work, "mlp_adamw", mlp, plain, 2)
    bundle, trainer, batches = compare_zero(work, "mlp_sgd", mlp, sgd, 4)
    checkpoint(work, bundle, trainer, batches)
    compare_zero(work, "mlp_clip", mlp, adamw, 2)
    # SGD: Adam would turn the rounding noise of the key bias's gradient
    # (0 in exact arithmetic) into steps of lr (see train-torch.py); with
    # momentum, so that ZeRO-1 has a state to shard (plain SGD keeps only
    # step counts).
    compare_zero(work, "gpt_clip", gpt,
                 {"optimizer": "sgd", "lr": 0.5, "momentum": 0.9,
                  "clip-grad-norm": 0.5}, 2)
    compare_zero(work, "mlp_zero2", mlp, adamw, 2, stage=2)
    compare_zero(work, "gpt_zero2", gpt, {"optimizer": "sgd", "lr": 0.5}, 2,
                 stage=2, microbatches=2)
    sync_batch_norm(work)

# CHECK-LABEL: == mlp_sgd: dp=2 x 1 against 1 x 2
# CHECK-NEXT: mesh {'dp': 2, 'pp': 1, 'tp': 1} microbatches 1 devices 2
# CHECK-NEXT: inputs [('x', [4, 3, 6], 0), ('labels', [4, 3], 0)]
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-LABEL: == checkpoint
# CHECK-NEXT: files ['rank_0.bin', 'rank_1.bin']
# CHECK-NEXT: restored at step 5
# CHECK-NEXT: parameters restored: True
# CHECK-NEXT: resumed losses equal: True
# CHECK-NEXT: resumed parameters equal: True
# CHECK-LABEL: == mlp_adamw: dp=2 x 1 against 1 x 2
# CHECK: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-LABEL: == mlp_dp2x2: dp=2 x 2 against 1 x 4
# CHECK-NEXT: mesh {'dp': 2, 'pp': 1, 'tp': 1} microbatches 2 devices 2
# CHECK-NEXT: inputs [('x', [8, 3, 6], 0), ('labels', [8, 3], 0)]
# CHECK-NEXT: losses within tolerance: True
# CHECK-NEXT: parameters within tolerance: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-LABEL: == gpt_dp2: dp=2 x 1 against 1 x 2
# CHECK: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-LABEL: == gpt_dp4: dp=4 x 1 against 1 x 4
# CHECK-NEXT: mesh {'dp': 4, 'pp': 1, 'tp': 1} microbatches 1 devices 4
# CHECK-NEXT: inputs [('input_ids', [8, 8], 0), ('labels', [8, 8], 0)]
# CHECK-NEXT: losses within tolerance: True
# CHECK-NEXT: parameters within tolerance: True
# CHECK-NEXT: loss {{.*}}, falls: True
# CHECK-LABEL: == mlp_adamw: ZeRO-1 on dp=2 x 1
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: True
# CHECK-NEXT: parameters within tolerance: True
# CHECK-NEXT: persistent bytes per device smaller: True
# CHECK-NEXT: reduce_scatter, all_slice, all_gather, assign: [3, 3, 3, 3]
# CHECK-LABEL: == mlp_sgd: ZeRO-1 on dp=4 x 1
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: True
# CHECK-NEXT: parameters within tolerance: True
# CHECK-NEXT: persistent bytes per device smaller: True
# CHECK-NEXT: reduce_scatter, all_slice, all_gather, assign: [3, 3, 3, 3]
# CHECK-LABEL: == checkpoint
# CHECK-NEXT: files ['rank_0.bin', 'rank_1.bin', 'rank_2.bin', 'rank_3.bin']
# CHECK-NEXT: restored at step 5
# CHECK-NEXT: parameters restored: True
# CHECK-NEXT: resumed losses equal: True
# CHECK-NEXT: resumed parameters equal: True
# CHECK-LABEL: == mlp_clip: ZeRO-1 on dp=2 x 1
# CHECK: parameters within tolerance: True
# CHECK-NEXT: persistent bytes per device smaller: True
# CHECK-LABEL: == gpt_clip: ZeRO-1 on dp=2 x 1
# CHECK: parameters within tolerance: True
# CHECK-NEXT: persistent bytes per device smaller: True
# CHECK-LABEL: == mlp_zero2: ZeRO-2 on dp=2 x 1
# CHECK-NEXT: losses bitwise equal: True
# CHECK-NEXT: parameters bitwise equal: True
# CHECK: persistent bytes per device smaller: True
# CHECK-NEXT: reduce_scatter, all_slice, all_gather, assign: [3, 3, 3, 3]
# CHECK-LABEL: == gpt_zero2: ZeRO-2 on dp=2 x 2
# CHECK: parameters within tolerance: True
# CHECK-NEXT: persistent bytes per device smaller: True
# CHECK-LABEL: == sync_batch_norm: dp=2 x 1 against 1 device of batch 4
# CHECK-NEXT: synchronised: losses and parameters (running statistics too) within tolerance: True
# CHECK-NEXT: per replica: losses and parameters (running statistics too) within tolerance: False
# CHECK-NEXT: all-reduces added by synchronisation: 4
