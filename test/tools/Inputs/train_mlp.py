"""A learnable task for cleave-train.test: a tanh MLP (16 -> 32 -> 2)
fitted to the outputs of a fixed teacher MLP, with a mean squared error.

    python train_mlp.py build DIR     # DIR/model.onnx (batch 8), DIR/data/
                                      # (60 samples: x.npy, y.npy), and bad
                                      # data directories for the errors
    python train_mlp.py log DIR LOG   # checks the --log of a run
    python train_mlp.py trainer DIR CKPT LOG STEPS SEED
                                      # the same steps by cleave.Trainer
    python train_mlp.py export DIR CKPT ONNX
                                      # the exported model by onnxruntime
    python train_mlp.py same-log LOG1 LOG2
                                      # compares two logs but their times
    python train_mlp.py same-parameters BUNDLE1 CKPT1 BUNDLE2 CKPT2
                                      # the parameters of two checkpoints,
                                      # each loaded into its bundle
    python train_mlp.py load BUNDLE CKPT
                                      # Trainer.load, printing its error
    python train_mlp.py forge CKPT garbage|truncated
                                      # a bad rank file, its SHA-256
                                      # recorded
    python train_mlp.py corrupt FILE  # flips one byte in the middle
"""

import json
import math
import os
import sys

import numpy as np

BATCH, SAMPLES, IN, HIDDEN, OUT = 8, 60, 16, 32, 2
LR, WARMUP = 0.01, 4


def teacher(x, rng):
    w1 = rng.standard_normal((IN, HIDDEN)) / math.sqrt(IN)
    w2 = rng.standard_normal((HIDDEN, OUT)) / math.sqrt(HIDDEN)
    return np.tanh(x @ w1) @ w2


def build(out):
    from cleave.testing import GraphBuilder

    rng = np.random.default_rng(3)
    g = GraphBuilder(opset=17)
    x = g.input("x", [BATCH, IN])
    y = g.input("y", [BATCH, OUT])
    w1 = g.initializer("fc1.weight", (rng.standard_normal((IN, HIDDEN)) * 0.2)
                       .astype(np.float32))
    b1 = g.initializer("fc1.bias", np.zeros(HIDDEN, np.float32))
    w2 = g.initializer("fc2.weight", (rng.standard_normal((HIDDEN, OUT)) * 0.2)
                       .astype(np.float32))
    b2 = g.initializer("fc2.bias", np.zeros(OUT, np.float32))
    h = g.node("Tanh", [g.node("Add", [g.node("MatMul", [x, w1]), b1])])
    prediction = g.node("Add", [g.node("MatMul", [h, w2]), b2])
    error = g.node("Sub", [prediction, y])
    g.node("ReduceMean", [g.node("Mul", [error, error])], ["mse"], keepdims=0)
    g.output("mse", [])
    g.save(os.path.join(out, "model.onnx"))

    xs = rng.standard_normal((SAMPLES, IN)).astype(np.float32)
    ys = teacher(xs.astype(np.float64), rng).astype(np.float32)
    data = os.path.join(out, "data")
    os.makedirs(data, exist_ok=True)
    np.save(os.path.join(data, "x.npy"), xs)
    np.save(os.path.join(data, "y.npy"), ys)

    # One directory per data error.
    def bad(name, **arrays):
        directory = os.path.join(out, name)
        os.makedirs(directory, exist_ok=True)
        for key, value in arrays.items():
            np.save(os.path.join(directory, key + ".npy"), value)

    bad("missing-y", x=xs)
    bad("counts", x=xs, y=ys[:50])
    bad("dtype", x=xs.astype(np.float64), y=ys)
    bad("trailing", x=xs[:, :12], y=ys)

    # A loss of the weights alone: nothing to feed samples to.
    g = GraphBuilder(opset=17)
    w = g.initializer("w", np.ones(4, np.float32))
    g.node("ReduceMean", [g.node("Mul", [w, w])], ["loss"], keepdims=0)
    g.output("loss", [])
    g.save(os.path.join(out, "no-inputs.onnx"))

    # Models that are not the bundle's, for `export --model`: one whose
    # fc1.weight has another shape, one without fc1.bias.
    for name, shapes in [("other.onnx", [(IN, 4), (HIDDEN,), (HIDDEN, OUT),
                                         (OUT,)]),
                         ("partial.onnx", [(IN, 4)])]:
        g = GraphBuilder(opset=17)
        x = g.input("x", [BATCH, IN])
        names = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
        for initializer, shape in zip(names, shapes):
            g.initializer(initializer, np.zeros(shape, np.float32))
        g.node("Identity", [x], ["h"])
        g.output("h", [BATCH, IN])
        g.save(os.path.join(out, name))


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def schedule(step):
    """The learning rate of step `step` (from 0): --lr with --warmup-steps."""
    return LR * (step + 1) / WARMUP if step < WARMUP else LR


def check_log(out, path):
    lines = read_log(path)
    steps = [line["step"] for line in lines]
    print("steps:", steps[0], "to", steps[-1], "consecutive:",
          steps == list(range(steps[0], steps[-1] + 1)))
    losses = [line["loss"] for line in lines]
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    # Learnable: the loss of the last five steps is below a fifth of the
    # first five's.
    print(f"loss falls: {last < 0.2 * first}")
    rates_ok = all(math.isclose(line["lr"], schedule(line["step"] - 1),
                                rel_tol=1e-9) for line in lines)
    print("learning rates follow the schedule:", rates_ok)
    print("epochs:", lines[-1]["epoch"])


def batches(steps, seed):
    """The samples of each step, as cleave train takes them."""
    import cleave

    order, epoch, offset = None, -1, 0
    current = 0
    for _ in range(steps):
        batch = []
        while len(batch) < BATCH:
            if order is None or epoch != current:
                order = cleave.sample_order(SAMPLES, seed, current)
                epoch = current
            batch.append(order[offset])
            offset += 1
            if offset == SAMPLES:
                offset, current = 0, current + 1
        yield np.array(batch)


def trainer(out, checkpoint, log, steps, seed):
    import cleave

    xs = np.load(os.path.join(out, "data", "x.npy"))
    ys = np.load(os.path.join(out, "data", "y.npy"))
    by_hand = cleave.Trainer(os.path.join(out, "bundle"))
    losses = [by_hand.step({"x": xs[b], "y": ys[b]})
              for b in batches(steps, seed)]
    logged = [line["loss"] for line in read_log(log)]
    # %.9g prints a float32 exactly; the loss is a float32.
    print("losses equal cleave.Trainer's:",
          np.array_equal(np.float32(losses), np.float32(logged)))
    restored = cleave.Trainer(os.path.join(out, "bundle"))
    restored.load(checkpoint)
    print("restored at step", restored.steps)
    mine, theirs = by_hand.parameters(), restored.parameters()
    print("parameters equal cleave.Trainer's:", sorted(mine) == sorted(theirs)
          and all(np.array_equal(mine[n], theirs[n]) for n in mine))

    # Trainer.save writes the format Trainer.load and cleave train read:
    # one more step from each gives the same bytes.
    saved = os.path.join(out, "trainer-ckpt")
    by_hand.save(saved)
    again = cleave.Trainer(os.path.join(out, "bundle"))
    again.load(saved)
    batch = {"x": xs[:BATCH], "y": ys[:BATCH]}
    same = by_hand.step(batch) == again.step(batch)
    a, b = by_hand.parameters(), again.parameters()
    print("save/load round trip:", same and all(np.array_equal(a[n], b[n])
                                                for n in a))
    print("next learning rate:", again.learning_rate())


def export(out, checkpoint, path):
    import onnx
    import onnxruntime
    from onnx import numpy_helper

    import cleave

    stored = onnx.load(path, load_external_data=False)
    external = [t.name for t in stored.graph.initializer
                if t.data_location == onnx.TensorProto.EXTERNAL]
    model = onnx.load(path)  # with the external data beside it
    initializers = {t.name: numpy_helper.to_array(t)
                    for t in model.graph.initializer}
    print("external:", sorted(external))
    trained = cleave.Trainer(os.path.join(out, "bundle"))
    trained.load(checkpoint)
    parameters = trained.parameters()
    print("initializers equal the trained parameters:",
          all(np.array_equal(initializers[n], parameters[n])
              for n in parameters))
    xs = np.load(os.path.join(out, "data", "x.npy"))
    ys = np.load(os.path.join(out, "data", "y.npy"))
    feeds = {"x": xs[:BATCH], "y": ys[:BATCH]}
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    (reference,) = session.run(["mse"], feeds)
    # The step's loss is the forward's, computed before its update.
    loss = trained.step(feeds)
    error = abs(loss - float(reference))
    print(f"onnxruntime agrees with the bundle's forward: "
          f"{error <= 1e-5 * abs(float(reference)) + 1e-7}")


def same_log(first, second):
    keys = ("step", "loss", "lr", "epoch")
    a = [tuple(line[k] for k in keys) for line in read_log(first)]
    b = [tuple(line[k] for k in keys) for line in read_log(second)]
    print("the logs agree on step, loss, lr and epoch:", a == b)


def forge(checkpoint, content):
    """Replaces a checkpoint's rank file and records its SHA-256, as a
    writer that gets the format wrong would."""
    import hashlib

    path = os.path.join(checkpoint, "rank_0.bin")
    with open(path, "wb") as f:
        f.write(content)
    manifest_path = os.path.join(checkpoint, "manifest.json")
    manifest = json.load(open(manifest_path))
    manifest["files"]["rank_0.bin"] = hashlib.sha256(content).hexdigest()
    with open(manifest_path, "w") as f:
        json.dump(manifest, f)


def with_buffers(checkpoint, out):
    """Copies a checkpoint of a bundle of SGD without momentum into `out`
    as an earlier cleave saved one: with a momentum buffer of zeros per
    trained parameter, and so another layout."""
    import hashlib
    import shutil

    shutil.copytree(checkpoint, out)
    path = os.path.join(out, "rank_0.bin")
    data = open(path, "rb").read()
    assert data[:8] == b"CLEAVECK"
    length = int.from_bytes(data[8:16], "little")
    header = json.loads(data[16:16 + length])
    memory = bytearray(data[header["data_offset"]:])
    for region in header["regions"]:
        offset = (len(memory) + 63) // 64 * 64
        memory.extend(bytes(offset - len(memory) + region["bytes"]))
        header["states"].append(dict(region, offset=offset,
                                     name="sgd.momentum_buffer:" +
                                     region["name"]))
    header["persistent_bytes"] = len(memory)
    header["layout_digest"] = hashlib.sha256(b"older layout").hexdigest()
    header["data_offset"] = 0
    text = json.dumps(header)
    header["data_offset"] = (16 + len(text) + 32 + 63) // 64 * 64
    text = json.dumps(header).encode()
    prefix = b"CLEAVECK" + len(text).to_bytes(8, "little") + text
    content = prefix.ljust(header["data_offset"], b"\0") + bytes(memory)
    with open(path, "wb") as f:
        f.write(content)
    manifest_path = os.path.join(out, "manifest.json")
    manifest = json.load(open(manifest_path))
    manifest["ranks"][0]["layout_digest"] = header["layout_digest"]
    manifest["files"]["rank_0.bin"] = hashlib.sha256(content).hexdigest()
    with open(manifest_path, "w") as f:
        json.dump(manifest, f)
    print("momentum buffers added:", len(header["regions"]))


def corrupt(path):
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))


command, out = sys.argv[1], sys.argv[2]
if command == "build":
    build(out)
elif command == "log":
    check_log(out, sys.argv[3])
elif command == "trainer":
    trainer(out, sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
elif command == "export":
    export(out, sys.argv[3], sys.argv[4])
elif command == "load":
    import cleave

    try:
        cleave.Trainer(out).load(sys.argv[3])
    except RuntimeError as error:
        print("RuntimeError:", error)
        sys.exit(1)
elif command == "same-log":
    same_log(out, sys.argv[3])
elif command == "same-parameters":
    import cleave

    first, second = cleave.Trainer(out), cleave.Trainer(sys.argv[4])
    first.load(sys.argv[3])
    second.load(sys.argv[5])
    p, q = first.parameters(), second.parameters()
    print("parameters equal:", sorted(p) == sorted(q) and
          all(np.array_equal(p[n], q[n]) for n in p))
elif command == "forge":
    # "garbage", or a header that claims more bytes than the file has.
    forge(out, b"not a checkpoint" if sys.argv[3] == "garbage" else
          b"CLEAVECK" + (4096).to_bytes(8, "little") + b"{}")
elif command == "corrupt":
    corrupt(out)
elif command == "with-buffers":
    with_buffers(out, sys.argv[3])
