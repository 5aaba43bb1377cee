"""A learning task for cleave-train-reverse.test: a one-layer GPT
(cleave.generators.gpt, no torch) learns to reverse four digits.

A sample is 8 tokens: four digits, the separator, and the first three digits
of the reversal; the targets are the next tokens, and only the four digits
of the reversal count (the other targets are -1, ignored):

    input_ids  3 1 4 1 S 1 4 1
    targets    . . . . 1 4 1 3      (. = -1)

    python train_reverse.py build DIR      # DIR/model.onnx (batch 32),
                                           # DIR/data/ (input_ids.npy,
                                           # targets.npy: 2048 samples) and
                                           # DIR/held-out.npz (256 others)
    python train_reverse.py log LOG        # the losses of the --log
    python train_reverse.py accuracy DIR ONNX
                                           # the exported model on held-out
                                           # samples, by onnxruntime
"""

import json
import os
import sys

import numpy as np

DIGITS, SEPARATOR, VOCAB = 10, 10, 11
LENGTH, SEQ, BATCH, SAMPLES, HELD_OUT = 4, 8, 32, 2048, 256


def samples(digits):
    """(input_ids, targets) of the rows of `digits` [N, LENGTH]."""
    reversed_ = digits[:, ::-1]
    count = len(digits)
    separator = np.full((count, 1), SEPARATOR)
    sequence = np.concatenate([digits, separator, reversed_], axis=1)
    input_ids = sequence[:, :SEQ]
    targets = sequence[:, 1:].copy()
    targets[:, :LENGTH] = -1
    return input_ids.astype(np.int64), targets.astype(np.int64)


def build(out):
    from cleave.generators.gpt import GPTConfig, build_gpt

    config = GPTConfig(layers=1, hidden=32, heads=2, seq=SEQ, vocab=VOCAB,
                       batch=BATCH, opset=17)
    build_gpt(config, os.path.join(out, "model.onnx"), seed=1)

    rng = np.random.default_rng(0)
    digits = rng.integers(0, DIGITS, (SAMPLES + 4 * HELD_OUT, LENGTH))
    # Held-out samples are sequences no training sample has.
    codes = digits @ (DIGITS ** np.arange(LENGTH))
    train = digits[:SAMPLES]
    seen = set(codes[:SAMPLES].tolist())
    unseen = [i for i in range(SAMPLES, len(digits))
              if codes[i] not in seen][:HELD_OUT]
    data = os.path.join(out, "data")
    os.makedirs(data, exist_ok=True)
    input_ids, targets = samples(train)
    np.save(os.path.join(data, "input_ids.npy"), input_ids)
    np.save(os.path.join(data, "targets.npy"), targets)
    input_ids, targets = samples(digits[unseen])
    np.savez(os.path.join(out, "held-out.npz"), input_ids=input_ids,
             targets=targets)


def check_log(path):
    with open(path) as f:
        losses = [json.loads(line)["loss"] for line in f]
    first, last = losses[0], np.mean(losses[-10:])
    # Random weights guess among 11 tokens, ln 11 = 2.4; the threshold is a
    # probability of 0.9 for the right digit.
    print(f"steps: {len(losses)}")
    print(f"first step: {first:.3f}, above 2: {first > 2}")
    print(f"last ten steps: {last:.3f}, below {-np.log(0.9):.3f}: "
          f"{last < -np.log(0.9)}")


def accuracy(out, model):
    import onnxruntime

    held_out = np.load(os.path.join(out, "held-out.npz"))
    session = onnxruntime.InferenceSession(
        model, providers=["CPUExecutionProvider"])
    right = total = 0
    for start in range(0, HELD_OUT - BATCH + 1, BATCH):
        ids = held_out["input_ids"][start:start + BATCH]
        targets = held_out["targets"][start:start + BATCH]
        (logits,) = session.run(["logits"], {"input_ids": ids})
        counted = targets >= 0
        right += int((logits.argmax(-1) == targets)[counted].sum())
        total += int(counted.sum())
    print(f"held-out digits: {total}, right: {right / total:.3f}, "
          f"above 0.95: {right / total > 0.95}")


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
