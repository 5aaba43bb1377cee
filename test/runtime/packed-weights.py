# cleave compile packs a CPU bundle's constant weights into the kernels'
# layouts once, by running each rank on zeros, and stores them in the
# bundle (weights/rank_N.packed, named by the rank's packed_weights and
# hashed in files); a session maps them instead of packing again, and its
# memory() says so (packed: the file's bytes; repacked: what the kernels
# packed themselves). The convolution (oneDNN at every level) packs on
# x86-64-v3 and v4 bundles; the matrix product of constant weights only on
# v4, where oneDNN has a kernel that takes packed weights. A bundle
# compiled with --no-prepack stores none and its kernels pack on the first
# run; outputs match onnxruntime either way. Pipeline stages each have
# their file; data-parallel replicas share their device's, as they share
# its weight file. A packed file that changed, or
# one that is not a packed-weight file, is refused, naming it. Each bundle
# runs in a process of its own, as oneDNN takes the instruction set of the
# first bundle a process runs.
# REQUIRES: cpu-x86-64-v4
# RUN: rm -rf %t && mkdir -p %t && %python %s %t | FileCheck %s
# CHECK: x86-64-v3: packed_weights weights/rank_0.packed, packed > 0 True, repacked 0, matches onnxruntime True
# CHECK: x86-64-v4: packed_weights weights/rank_0.packed, packed > 0 True, repacked 0, matches onnxruntime True
# CHECK: v4 packs more than v3: True
# CHECK: no-prepack: packed_weights None, packed 0, repacked > 0 True, matches onnxruntime True
# CHECK: pp 2: packed files ['weights/rank_0.packed', 'weights/rank_1.packed'], repacked [0, 0], matches onnxruntime True
# CHECK: dp 2: packed files ['weights/rank_0.packed', 'weights/rank_0.packed'], written ['rank_0.packed'], repacked [0, 0], matches onnxruntime True
# CHECK: changed file: {{.*}}rank_0.packed: SHA-256 {{.*}} differs from {{.*}} in manifest.json
# CHECK: not a packed-weight file: {{.*}}rank_0.packed: not a packed-weight file of this bundle: it does not begin with CLVPACK1

import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import cleave

work = sys.argv[1]
rng = np.random.default_rng(0)
conv_w = (rng.standard_normal((32, 32, 3, 3)) * 0.1).astype(np.float32)
dense_w = (rng.standard_normal((256, 256)) * 0.1).astype(np.float32)
dense2_w = (rng.standard_normal((256, 256)) * 0.1).astype(np.float32)
graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "cw"], ["c"], pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["c"], ["y"]),
     helper.make_node("MatMul", ["h", "dw"], ["d"]),
     helper.make_node("Tanh", ["d"], ["t"]),
     helper.make_node("MatMul", ["t", "dw2"], ["z"])],
    "packed",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32, 32, 32]),
     helper.make_tensor_value_info("h", TensorProto.FLOAT, [64, 256])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
    [numpy_helper.from_array(conv_w, "cw"), numpy_helper.from_array(dense_w, "dw"),
     numpy_helper.from_array(dense2_w, "dw2")],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
path = os.path.join(work, "packed.onnx")
onnx.save(model, path)

feeds = {"x": rng.standard_normal((2, 32, 32, 32)).astype(np.float32),
         "h": rng.standard_normal((64, 256)).astype(np.float32)}
expected = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
    None, feeds)


def agrees(outputs, reference):
    return len(outputs) == len(reference) and all(
        np.allclose(ours, theirs, rtol=1e-4, atol=1e-4)
        for ours, theirs in zip(outputs, reference))


def manifest(bundle):
    with open(os.path.join(bundle, "manifest.json")) as f:
        return json.load(f)


RUN = """
import json, sys
import numpy as np
import cleave
session = cleave.Session(sys.argv[1], threads=2)
outputs = session.run(None, dict(np.load(sys.argv[2])))
np.savez(sys.argv[3], *outputs)
print(json.dumps(session.memory()))
"""
def run(bundle, inputs=feeds, reference=expected):
    """Runs `bundle` on `inputs` in a process of its own (oneDNN takes the
    instruction set of the first bundle a process runs for the rest of
    it); returns its memory() and whether its outputs match `reference`."""
    np.savez(os.path.join(work, "feeds.npz"), **inputs)
    result = os.path.join(work, "outputs.npz")
    memory = subprocess.run(
        [sys.executable, "-c", RUN, bundle, os.path.join(work, "feeds.npz"),
         result], capture_output=True, text=True, check=True).stdout
    with np.load(result) as outputs:
        ok = agrees([outputs[name] for name in sorted(outputs.files)],
                    reference)
    return json.loads(memory.strip().splitlines()[-1]), ok


packed_bytes = {}
for march in ["x86-64-v3", "x86-64-v4"]:
    bundle = str(cleave.compile(path, os.path.join(work, march),
                                extra_args=["--march", march]))
    rank = manifest(bundle)["ranks"][0]
    [memory], ok = run(bundle)
    packed_bytes[march] = memory["packed"]
    print(f"{march}: packed_weights {rank.get('packed_weights')}, "
          f"packed > 0 {memory['packed'] > 0}, repacked {memory['repacked']}, "
          f"matches onnxruntime {ok}")
print("v4 packs more than v3:", packed_bytes["x86-64-v4"] > packed_bytes["x86-64-v3"])

bundle = str(cleave.compile(path, os.path.join(work, "plain"),
                            extra_args=["--march", "x86-64-v4", "--no-prepack"]))
rank = manifest(bundle)["ranks"][0]
[memory], ok = run(bundle)
print(f"no-prepack: packed_weights {rank.get('packed_weights')}, packed "
      f"{memory['packed']}, repacked > 0 {memory['repacked'] > 0}, "
      f"matches onnxruntime {ok}")

bundle = str(cleave.compile(path, os.path.join(work, "pp2"),
                            extra_args=["--march", "x86-64-v4", "--devices", "2",
                                        "--pp", "2"]))
ranks = manifest(bundle)["ranks"]
memory, ok = run(bundle)
print(f"pp 2: packed files {sorted(r.get('packed_weights') for r in ranks)}, "
      f"repacked {[m['repacked'] for m in memory]}, matches onnxruntime {ok}")

# Replicas split the batch: the convolution alone, on a batch of 2.
conv_graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "cw"], ["c"], pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["c"], ["y"])],
    "conv",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32, 32, 32])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [numpy_helper.from_array(conv_w, "cw")],
)
conv_model = helper.make_model(conv_graph,
                               opset_imports=[helper.make_opsetid("", 17)])
conv_model.ir_version = 8
conv_path = os.path.join(work, "conv.onnx")
onnx.save(conv_model, conv_path)
bundle = str(cleave.compile(conv_path, os.path.join(work, "dp2"),
                            extra_args=["--march", "x86-64-v4", "--devices", "2",
                                        "--dp", "2"]))
ranks = manifest(bundle)["ranks"]
memory, ok = run(bundle, {"x": feeds["x"]}, expected[:1])
print(f"dp 2: packed files {[r.get('packed_weights') for r in ranks]}, "
      f"written {sorted(f for f in os.listdir(os.path.join(bundle, 'weights')) if f.endswith('.packed'))}, "
      f"repacked {[m['repacked'] for m in memory]}, matches onnxruntime {ok}")

# The v4 bundle's packed file, changed by one byte: its hash no longer
# matches. Then replaced by a file that is not a packed-weight file, with
# the manifest's hashes updated to match: the format check refuses it.
bundle = os.path.join(work, "x86-64-v4")
packed = os.path.join(bundle, "weights", "rank_0.packed")
data = bytearray(open(packed, "rb").read())
data[-1] ^= 0xFF
open(packed, "wb").write(bytes(data))
try:
    cleave.Session(bundle)
except RuntimeError as e:
    print("changed file:", e)

open(packed, "wb").write(b"not packed weights at all")
text = manifest(bundle)
text["files"]["weights/rank_0.packed"] = hashlib.sha256(
    open(packed, "rb").read()).hexdigest()
body = json.dumps(text, indent=2) + "\n"
open(os.path.join(bundle, "manifest.json"), "w").write(body)
open(os.path.join(bundle, "manifest.sha256"), "w").write(
    hashlib.sha256(body.encode()).hexdigest() + "  manifest.json\n")
try:
    cleave.Session(bundle)
except RuntimeError as e:
    print("not a packed-weight file:", e)
