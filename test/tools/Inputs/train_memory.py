"""What `cleave compile --train` says it planned against the bundle and the
runtime, for cleave-compile-train-memory.test.

    python train_memory.py check SUMMARY BUNDLE CHECKPOINT MOMENTS
    python train_memory.py states SGD MOMENTUM

SUMMARY: the compile command's output; CHECKPOINT: a checkpoint the runtime
saved of the bundle (its rank file holds the persistent memory as the
session holds it); MOMENTS: the optimizer's state per parameter element
(adam: 2, sgd with momentum: 1, plain sgd: 0). `states` counts the
momentum buffers and step counters of the manifests of two SGD bundles of
one model, without and with momentum, and compares their persistent
memory.
"""

import json
import math
import os
import re
import struct
import sys

ALIGNMENT = 64


def kib(text, name):
    return float(re.search(name + r" ([0-9.]+) KiB", text).group(1))


def check(summary_path, bundle, checkpoint, moments):
    with open(summary_path) as f:
        summary = f.read()
    with open(os.path.join(bundle, "manifest.json")) as f:
        (program,) = json.load(f)["programs"]
    persistent = program["persistent_bytes"]
    parameters = sum(4 * math.prod(p["shape"])
                     for p in program["trained_parameters"])

    # The gradient sums hold one float32 per parameter element and the
    # loss's sum one more.
    gradients = parameters + 4
    # The summary reports the manifest's sizes.
    for name, value in [("arena", program["arena_bytes"]),
                        ("weights", program["weight_bytes"]),
                        ("persistent", persistent),
                        ("parameters", parameters),
                        ("gradients", gradients),
                        ("optimizer state", persistent - parameters - gradients)]:
        print(f"summary {name}: {abs(kib(summary, name) - value / 1024) < 0.05}")

    # The optimizer state is its moments per parameter element, each tensor
    # aligned, and the step counters: under one aligned block per tensor
    # (parameter, gradient sum, moment, counter) more than the moments.
    state = persistent - parameters - gradients
    count = len(program["trained_parameters"])
    slack = state - moments * parameters
    print(f"optimizer state: {moments} moments per element: "
          f"{0 <= slack <= ALIGNMENT * (count * (moments + 3) + 2)}")

    # The runtime holds exactly the planned persistent memory.
    with open(os.path.join(checkpoint, "rank_0.bin"), "rb") as f:
        data = f.read()
    assert data[:8] == b"CLEAVECK"
    (length,) = struct.unpack("<Q", data[8:16])
    header = json.loads(data[16:16 + length])
    held = len(data) - header["data_offset"]
    print(f"runtime persistent bytes: {held}, planned: {persistent}, "
          f"equal: {held == persistent == header['persistent_bytes']}")

    # What a session of the bundle allocates (and maps) is what the
    # compiler planned and reported.
    import cleave

    (memory,) = cleave.Session(bundle, threads=1).memory()
    for name, planned in [("arena", program["arena_bytes"]),
                          ("persistent", persistent),
                          ("weights", program["weight_bytes"])]:
        print(f"session {name} bytes: {memory[name]}, planned: {planned}, "
              f"reported: {abs(kib(summary, name) - memory[name] / 1024) < 0.05}"
              f", equal: {memory[name] == planned}")
    print(f"session port buffers on the host: {memory['ports']}")


def program_of(bundle):
    with open(os.path.join(bundle, "manifest.json")) as f:
        (program,) = json.load(f)["programs"]
    return program


def states(sgd, momentum):
    programs = {"sgd": program_of(sgd), "momentum": program_of(momentum)}
    for name, program in programs.items():
        names = [state["name"] for state in program.get("states", [])]
        for kind, prefix in [("momentum buffers", "sgd.momentum_buffer:"),
                             ("step counters", "sgd.step:")]:
            print(f"{name} {kind}: "
                  f"{sum(n.startswith(prefix) for n in names)}")
    parameters = sum(4 * math.prod(p["shape"])
                     for p in programs["sgd"]["trained_parameters"])
    saved = (programs["momentum"]["persistent_bytes"]
             - programs["sgd"]["persistent_bytes"])
    print("sgd persistent bytes below momentum's by at least the "
          f"parameters: {saved >= parameters}")


if __name__ == "__main__":
    if sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif sys.argv[1] == "states":
        states(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown command {sys.argv[1]}")
