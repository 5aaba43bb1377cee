"""A learning task for cleave-train-cnn.test: a small CNN (onnx.helper, no
torch) tells apart three strokes drawn at random places on noisy 12x12
images: a horizontal, a vertical and a diagonal line of 5 pixels.

    python train_cnn.py build DIR        # DIR/model.onnx (batch 32: two
                                         # 3x3 convolutions with ReLU, max
                                         # pooling, global average pooling,
                                         # a linear classifier), DIR/data/
                                         # (image.npy, label.npy: 1536
                                         # samples), DIR/held-out.npz (256)
    python train_cnn.py log LOG          # the losses of the --log
    python train_cnn.py accuracy DIR ONNX
                                         # the exported model on the
                                         # held-out images, by onnxruntime
"""

import json
import os
import sys

import numpy as np

SIZE, STROKE, CLASSES = 12, 5, 3
BATCH, SAMPLES, HELD_OUT = 32, 1536, 256


def images(rng, count):
    """(images [count, 1, SIZE, SIZE] float32, labels [count] int64)."""
    labels = rng.integers(0, CLASSES, count)
    pictures = rng.normal(0, 0.3, (count, 1, SIZE, SIZE))
    steps = {0: (0, 1), 1: (1, 0), 2: (1, 1)}
    for picture, label in zip(pictures, labels):
        dy, dx = steps[int(label)]
        y = rng.integers(0, SIZE - dy * (STROKE - 1))
        x = rng.integers(0, SIZE - dx * (STROKE - 1))
        for i in range(STROKE):
            picture[0, y + i * dy, x + i * dx] += 1.0
    return pictures.astype(np.float32), labels.astype(np.int64)


def build(out):
    from cleave.testing import GraphBuilder

    rng = np.random.default_rng(2)

    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2 / fan_in)).astype(
            np.float32)

    g = GraphBuilder(opset=17)
    image = g.input("image", [BATCH, 1, SIZE, SIZE])
    w1 = g.initializer("conv1.weight", he((8, 1, 3, 3), 9))
    b1 = g.initializer("conv1.bias", np.zeros(8, np.float32))
    w2 = g.initializer("conv2.weight", he((16, 8, 3, 3), 72))
    b2 = g.initializer("conv2.bias", np.zeros(16, np.float32))
    w3 = g.initializer("fc.weight", he((CLASSES, 16), 16))
    b3 = g.initializer("fc.bias", np.zeros(CLASSES, np.float32))
    h = g.node("Relu", [g.node("Conv", [image, w1, b1], pads=[1, 1, 1, 1])])
    h = g.node("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = g.node("Relu", [g.node("Conv", [h, w2, b2], pads=[1, 1, 1, 1])])
    h = g.node("Flatten", [g.node("GlobalAveragePool", [h])])
    g.node("Gemm", [h, w3, b3], ["logits"], transB=1)
    g.output("logits", [BATCH, CLASSES])
    g.save(os.path.join(out, "model.onnx"))

    data = os.path.join(out, "data")
    os.makedirs(data, exist_ok=True)
    pictures, labels = images(rng, SAMPLES)
    np.save(os.path.join(data, "image.npy"), pictures)
    np.save(os.path.join(data, "label.npy"), labels)
    pictures, labels = images(rng, HELD_OUT)
    np.savez(os.path.join(out, "held-out.npz"), image=pictures, label=labels)


def check_log(path):
    with open(path) as f:
        losses = [json.loads(line)["loss"] for line in f]
    first, last = np.mean(losses[:10]), np.mean(losses[-10:])
    # Guessing among three classes costs ln 3 = 1.1; the threshold is a
    # probability of 0.9 for the right class.
    print(f"steps: {len(losses)}")
    print(f"first ten steps: {first:.3f}, above 0.9: {first > 0.9}")
    print(f"last ten steps: {last:.3f}, below {-np.log(0.9):.3f}: "
          f"{last < -np.log(0.9)}")


def accuracy(out, model):
    import onnxruntime

    held_out = np.load(os.path.join(out, "held-out.npz"))
    session = onnxruntime.InferenceSession(
        model, providers=["CPUExecutionProvider"])
    right = 0
    for start in range(0, HELD_OUT, BATCH):
        (logits,) = session.run(
            ["logits"], {"image": held_out["image"][start:start + BATCH]})
        right += int((logits.argmax(-1)
                      == held_out["label"][start:start + BATCH]).sum())
    print(f"held-out images: {HELD_OUT}, right: {right / HELD_OUT:.3f}, "
          f"above 0.95: {right / HELD_OUT > 0.95}")


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "build":
        build(sys.argv[2])
    elif command == "log":
        check_log(sys.argv[2])
    elif command == "accuracy":
        accuracy(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown command {command}")
