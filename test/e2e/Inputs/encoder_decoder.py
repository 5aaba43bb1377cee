"""Writes a small encoder-decoder as an ONNX backend test folder: model.onnx
and test_data_set_0 with onnxruntime's outputs.

The decoder embeds its token ids first, then the encoder runs a
layer-normalised MLP block on the source, then two decoder blocks each
attend to the encoder's output from their own hidden state. No point of the
model has only one activation live: the embedding lives through the encoder,
the encoder's output through the decoder.

usage: encoder_decoder.py FOLDER
"""

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

BATCH, SOURCE, TARGET, HIDDEN, VOCAB = 4, 16, 8, 32, 64


def build(rng: np.random.Generator) -> onnx.ModelProto:
    weights = {
        "embed": rng.standard_normal((VOCAB, HIDDEN)),
        "enc.ln.g": 1 + 0.1 * rng.standard_normal(HIDDEN),
        "enc.ln.b": 0.1 * rng.standard_normal(HIDDEN),
        "enc.fc.w": rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN),
        "dec0.fc.w": rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN),
        "dec1.fc.w": rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN),
    }
    nodes = [
        helper.make_node("Gather", ["embed", "tgt"], ["h"]),
        helper.make_node("LayerNormalization", ["src", "enc.ln.g", "enc.ln.b"],
                         ["enc.ln"], axis=-1),
        helper.make_node("MatMul", ["enc.ln", "enc.fc.w"], ["enc.fc"]),
        helper.make_node("Add", ["src", "enc.fc"], ["enc"]),
        helper.make_node("Transpose", ["enc"], ["enc.t"], perm=[0, 2, 1]),
    ]
    hidden = "h"
    for layer in range(2):
        p = f"dec{layer}"
        nodes += [
            helper.make_node("MatMul", [hidden, "enc.t"], [f"{p}.scores"]),
            helper.make_node("Softmax", [f"{p}.scores"], [f"{p}.probs"],
                             axis=-1),
            helper.make_node("MatMul", [f"{p}.probs", "enc"], [f"{p}.ctx"]),
            helper.make_node("MatMul", [f"{p}.ctx", f"{p}.fc.w"],
                             [f"{p}.fc"]),
            helper.make_node("Add", [hidden, f"{p}.fc"], [f"{p}.out"]),
        ]
        hidden = f"{p}.out"
    nodes.append(helper.make_node("Identity", [hidden], ["out"]))
    graph = helper.make_graph(
        nodes, "encoder_decoder",
        [helper.make_tensor_value_info("src", TensorProto.FLOAT,
                                       [BATCH, SOURCE, HIDDEN]),
         helper.make_tensor_value_info("tgt", TensorProto.INT64,
                                       [BATCH, TARGET])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT,
                                       [BATCH, TARGET, HIDDEN])],
        [numpy_helper.from_array(value.astype(np.float32), name)
         for name, value in weights.items()])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def main() -> None:
    folder = Path(sys.argv[1])
    data = folder / "test_data_set_0"
    data.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    model = build(rng)
    onnx.save(model, str(folder / "model.onnx"))
    inputs = {
        "src": rng.standard_normal((BATCH, SOURCE, HIDDEN)).astype(np.float32),
        "tgt": rng.integers(0, VOCAB, (BATCH, TARGET)).astype(np.int64),
    }
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"])
    (output,) = session.run(None, inputs)
    for index, (name, value) in enumerate(inputs.items()):
        (data / f"input_{index}.pb").write_bytes(
            numpy_helper.from_array(value, name).SerializeToString())
    (data / "output_0.pb").write_bytes(
        numpy_helper.from_array(output, "out").SerializeToString())


if __name__ == "__main__":
    main()
