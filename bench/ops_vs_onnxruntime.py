#!/usr/bin/env python3
"""Single operators of CPU programs beside onnxruntime, ratio per operator.

Each case is a small ONNX graph written here with onnx.helper: the fused
elementwise activations whose loops call the math library (SiLU, GELU in
its erf and tanh forms, sigmoid, tanh, exp, log), softmax over attention
scores (BERT-base's and Whisper-tiny's), BERT-base's two linear layers
with what follows them (bias and GELU; bias and residual add), depthwise
convolutions
at EfficientNet-B0's shapes (3x3 and 5x5, strides 1 and 2), dense and
grouped convolutions (3x3 on ResNet's small maps and on larger ones,
pointwise, grouped, a strided 1-D one), ResNet's 3x3 stride-2 max pool
on a small map and at 224x224, and one EfficientNet-B0 MBConv block (1x1
expansion, SiLU, 5x5 depthwise, SiLU, squeeze-and-excitation, 1x1
projection, residual add). Every case is
compiled with ``cleave compile --target cpu`` (``--march`` chooses the
instruction set of the program and of the kernels the session runs) and
run by a ``cleave.Session`` and an onnxruntime ``InferenceSession`` with
the same number of threads (1 by default), both first checked to agree
within ``--rtol`` of the largest onnxruntime value, then timed in the same
run with runtime_vs_onnxruntime.measure (alternating blocks, medians).

It prints per case the elements of its output, each engine's median
(and nanoseconds per output element) and the ratio cleave / onnxruntime:
below 1 means cleave is faster.

    python bench/ops_vs_onnxruntime.py [--cases silu gelu_erf dw3x3_s1 ...]
        [--march x86-64-v4] [--threads 1] [--seconds 1.0] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "bench"))

from runtime_vs_onnxruntime import (agree, find_cleave, geomean, measure,  # noqa: E402
                                    ort_session)

OPSET = 17


@dataclass
class Case:
    """One graph: its name in the table, what it is, and its builder."""

    name: str
    what: str
    build: object  # () -> (onnx.ModelProto, feeds)


def _model(nodes, inputs, outputs, initializers=()):
    from onnx import helper

    graph = helper.make_graph(nodes, "bench", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return model


def _value(name, shape):
    from onnx import TensorProto, helper

    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _constant(name, array):
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(array, np.float32), name)


def _random(shape, seed, scale=1.0, low=None):
    rng = np.random.default_rng(seed)
    if low is not None:
        return rng.uniform(low, low + scale, shape).astype(np.float32)
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# EfficientNet-B0's first expanded activation: 32 channels of 112 x 112.
ACTIVATION_SHAPE = [1, 32, 112, 112]
# The feed-forward activation of a BERT-base layer over 128 tokens.
GELU_SHAPE = [128, 3072]


def unary(op_nodes, shape, low=None):
    """A graph of `op_nodes` (x -> y, with initializers) over `shape`."""

    def build():
        nodes, initializers = op_nodes()
        model = _model(nodes, [_value("x", shape)], [_value("y", shape)], initializers)
        x = _random(shape, 1, scale=4.0) if low is None else _random(shape, 1, 10.0, low)
        return model, {"x": x}

    return build


def silu_nodes():
    from onnx import helper

    return [helper.make_node("Sigmoid", ["x"], ["s"]),
            helper.make_node("Mul", ["x", "s"], ["y"])], []


def single_nodes(op):
    def nodes():
        from onnx import helper

        return [helper.make_node(op, ["x"], ["y"])], []

    return nodes


def gelu_erf_nodes():
    from onnx import helper

    return [helper.make_node("Mul", ["x", "inv_sqrt2"], ["a"]),
            helper.make_node("Erf", ["a"], ["b"]),
            helper.make_node("Add", ["b", "one"], ["c"]),
            helper.make_node("Mul", ["x", "c"], ["d"]),
            helper.make_node("Mul", ["d", "half"], ["y"])], [
        _constant("inv_sqrt2", 0.7071067811865476), _constant("one", 1.0),
        _constant("half", 0.5)]


def gelu_tanh_nodes():
    from onnx import helper

    return [helper.make_node("Pow", ["x", "three"], ["x3"]),
            helper.make_node("Mul", ["x3", "cubic"], ["a"]),
            helper.make_node("Add", ["x", "a"], ["b"]),
            helper.make_node("Mul", ["b", "k"], ["c"]),
            helper.make_node("Tanh", ["c"], ["t"]),
            helper.make_node("Add", ["t", "one"], ["u"]),
            helper.make_node("Mul", ["x", "u"], ["v"]),
            helper.make_node("Mul", ["v", "half"], ["y"])], [
        _constant("three", 3.0), _constant("cubic", 0.044715),
        _constant("k", 0.7978845608028654), _constant("one", 1.0),
        _constant("half", 0.5)]


def depthwise(channels, size, kernel, stride):
    """A depthwise convolution with bias, padded to keep size / stride."""

    def build():
        from onnx import helper

        pad = kernel // 2
        out = (size + 2 * pad - kernel) // stride + 1
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=channels,
                                kernel_shape=[kernel, kernel], strides=[stride, stride],
                                pads=[pad] * 4)
        model = _model([node], [_value("x", [1, channels, size, size])],
                       [_value("y", [1, channels, out, out])],
                       [_constant("w", _random([channels, 1, kernel, kernel], 2, 0.3)),
                        _constant("b", _random([channels], 3, 0.1))])
        return model, {"x": _random([1, channels, size, size], 1)}

    return build


def max_pool(channels, size, kernel=3, stride=2):
    """A max pool padded by kernel // 2 (ResNet's after its first convolution)."""

    def build():
        from onnx import helper

        pad = kernel // 2
        out = (size + 2 * pad - kernel) // stride + 1
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[kernel, kernel],
                                strides=[stride, stride], pads=[pad] * 4)
        model = _model([node], [_value("x", [1, channels, size, size])],
                       [_value("y", [1, channels, out, out])])
        return model, {"x": _random([1, channels, size, size], 1)}

    return build


def dense(channels, out_channels, size, kernel, stride=1, group=1, spatial=2):
    """A convolution with bias over `spatial` dimensions, padded to keep
    size / stride: ResNet's 3x3 on small maps, a pointwise one, a strided
    1-D one as a speech front end has."""

    def build():
        from onnx import helper

        pad = kernel // 2
        out = (size + 2 * pad - kernel) // stride + 1
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=group,
                                kernel_shape=[kernel] * spatial, strides=[stride] * spatial,
                                pads=[pad] * (2 * spatial))
        x_shape = [1, channels] + [size] * spatial
        model = _model([node], [_value("x", x_shape)],
                       [_value("y", [1, out_channels] + [out] * spatial)],
                       [_constant("w", _random([out_channels, channels // group]
                                               + [kernel] * spatial, 2, 0.05)),
                        _constant("b", _random([out_channels], 3, 0.1))])
        return model, {"x": _random(x_shape, 1)}

    return build


def linear(tokens, n_in, n_out, after):
    """A transformer's linear layer over `tokens` tokens as exporters write
    it: MatMul by a weight, Add of its bias, then `after`: "gelu" (the erf
    decomposition) or "residual" (an Add of an input of the result's shape)."""

    def build():
        from onnx import helper

        nodes = [helper.make_node("MatMul", ["x", "weight"], ["product"]),
                 helper.make_node("Add", ["product", "bias"],
                                  ["h" if after == "gelu" else "q"])]
        initializers = [_constant("weight", _random([n_in, n_out], 2, 0.05)),
                        _constant("bias", _random([n_out], 3, 0.1))]
        inputs = [_value("x", [1, tokens, n_in])]
        feeds = {"x": _random([1, tokens, n_in], 1)}
        if after == "gelu":
            gelu, constants = gelu_erf_nodes()
            for node in gelu:
                node.input[:] = ["h" if name == "x" else name for name in node.input]
            nodes += gelu
            initializers += constants
        else:
            nodes.append(helper.make_node("Add", ["q", "r"], ["y"]))
            inputs.append(_value("r", [1, tokens, n_out]))
            feeds["r"] = _random([1, tokens, n_out], 4)
        model = _model(nodes, inputs, [_value("y", [1, tokens, n_out])], initializers)
        return model, feeds

    return build


def mbconv(channels=40, size=28, expand=6, kernel=5, squeeze=10):
    """EfficientNet-B0's MBConv block of stage 3 (40 channels at 28 x 28,
    expansion 6, 5x5 depthwise, squeeze to 10), batch norms folded into the
    convolutions as an exporter leaves them, with the residual add."""

    def build():
        from onnx import helper

        wide = channels * expand
        shape = [1, channels, size, size]
        nodes = [
            helper.make_node("Conv", ["x", "w_expand", "b_expand"], ["e"], kernel_shape=[1, 1]),
            helper.make_node("Sigmoid", ["e"], ["e_s"]),
            helper.make_node("Mul", ["e", "e_s"], ["e_act"]),
            helper.make_node("Conv", ["e_act", "w_dw", "b_dw"], ["d"], group=wide,
                             kernel_shape=[kernel, kernel], pads=[kernel // 2] * 4),
            helper.make_node("Sigmoid", ["d"], ["d_s"]),
            helper.make_node("Mul", ["d", "d_s"], ["d_act"]),
            helper.make_node("GlobalAveragePool", ["d_act"], ["p"]),
            helper.make_node("Conv", ["p", "w_reduce", "b_reduce"], ["r"], kernel_shape=[1, 1]),
            helper.make_node("Sigmoid", ["r"], ["r_s"]),
            helper.make_node("Mul", ["r", "r_s"], ["r_act"]),
            helper.make_node("Conv", ["r_act", "w_excite", "b_excite"], ["g"], kernel_shape=[1, 1]),
            helper.make_node("Sigmoid", ["g"], ["gate"]),
            helper.make_node("Mul", ["d_act", "gate"], ["scaled"]),
            helper.make_node("Conv", ["scaled", "w_project", "b_project"], ["proj"],
                             kernel_shape=[1, 1]),
            helper.make_node("Add", ["proj", "x"], ["y"]),
        ]
        weights = [
            _constant("w_expand", _random([wide, channels, 1, 1], 2, 0.15)),
            _constant("b_expand", _random([wide], 3, 0.1)),
            _constant("w_dw", _random([wide, 1, kernel, kernel], 4, 0.2)),
            _constant("b_dw", _random([wide], 5, 0.1)),
            _constant("w_reduce", _random([squeeze, wide, 1, 1], 6, 0.1)),
            _constant("b_reduce", _random([squeeze], 7, 0.1)),
            _constant("w_excite", _random([wide, squeeze, 1, 1], 8, 0.3)),
            _constant("b_excite", _random([wide], 9, 0.1)),
            _constant("w_project", _random([channels, wide, 1, 1], 10, 0.06)),
            _constant("b_project", _random([channels], 11, 0.1)),
        ]
        model = _model(nodes, [_value("x", shape)], [_value("y", shape)], weights)
        return model, {"x": _random(shape, 1)}

    return build


CASES = [
    Case("silu", f"x * sigmoid(x), {ACTIVATION_SHAPE}", unary(silu_nodes, ACTIVATION_SHAPE)),
    Case("sigmoid", f"Sigmoid, {ACTIVATION_SHAPE}",
         unary(single_nodes("Sigmoid"), ACTIVATION_SHAPE)),
    Case("gelu_erf", f"0.5 x (1 + erf(x / sqrt 2)), {GELU_SHAPE}",
         unary(gelu_erf_nodes, GELU_SHAPE)),
    Case("gelu_tanh", f"0.5 x (1 + tanh(k (x + 0.044715 x^3))), {GELU_SHAPE}",
         unary(gelu_tanh_nodes, GELU_SHAPE)),
    Case("tanh", f"Tanh, {GELU_SHAPE}", unary(single_nodes("Tanh"), GELU_SHAPE)),
    Case("exp", f"Exp, {GELU_SHAPE}", unary(single_nodes("Exp"), GELU_SHAPE)),
    Case("log", f"Log of (0.01, 10.01), {GELU_SHAPE}",
         unary(single_nodes("Log"), GELU_SHAPE, low=0.01)),
    Case("softmax_128", "Softmax, last axis, 12 x 128 x 128 (BERT-base's scores)",
         unary(single_nodes("Softmax"), [12, 128, 128])),
    Case("softmax_1500", "Softmax, last axis, 1 x 1500 x 1500 (a head of Whisper-tiny)",
         unary(single_nodes("Softmax"), [1, 1500, 1500])),
    Case("linear_gelu", "MatMul 768 -> 3072, bias, GELU (erf), 128 tokens (BERT-base's)",
         linear(128, 768, 3072, "gelu")),
    Case("linear_res", "MatMul 3072 -> 768, bias, residual add, 128 tokens (BERT-base's)",
         linear(128, 3072, 768, "residual")),
    Case("dw3x3_s1", "depthwise 3x3 stride 1, 32 x 112 x 112", depthwise(32, 112, 3, 1)),
    Case("dw3x3_s2", "depthwise 3x3 stride 2, 96 x 112 x 112", depthwise(96, 112, 3, 2)),
    Case("dw3x3_s1_56", "depthwise 3x3 stride 1, 144 x 56 x 56", depthwise(144, 56, 3, 1)),
    Case("dw3x3_s1_14", "depthwise 3x3 stride 1, 384 x 14 x 14", depthwise(384, 14, 3, 1)),
    Case("dw5x5_s1", "depthwise 5x5 stride 1, 240 x 28 x 28", depthwise(240, 28, 5, 1)),
    Case("dw5x5_s2", "depthwise 5x5 stride 2, 144 x 56 x 56", depthwise(144, 56, 5, 2)),
    Case("dw5x5_7x7", "depthwise 5x5 stride 1, 1152 x 7 x 7", depthwise(1152, 7, 5, 1)),
    Case("conv3x3_1x1", "conv 3x3, 512 -> 512 at 1 x 1 (ResNet's layer 4)",
         dense(512, 512, 1, 3)),
    Case("conv3x3_2x2", "conv 3x3, 256 -> 256 at 2 x 2 (ResNet's layer 3)",
         dense(256, 256, 2, 3)),
    Case("conv3x3_56", "conv 3x3, 64 -> 64 at 56 x 56", dense(64, 64, 56, 3)),
    Case("conv3x3_s2", "conv 3x3 stride 2, 128 -> 256 at 28 x 28", dense(128, 256, 28, 3, 2)),
    Case("conv1x1_56", "conv 1x1, 96 -> 24 at 56 x 56 (pointwise)", dense(96, 24, 56, 1)),
    Case("conv1x1_7", "conv 1x1, 320 -> 1280 at 7 x 7 (pointwise)", dense(320, 1280, 7, 1)),
    Case("group3x3", "conv 3x3, 4 groups, 128 -> 128 at 14 x 14", dense(128, 128, 14, 3, 1, 4)),
    Case("conv1d_s2", "conv1d 3 stride 2, 512 -> 512 at 400", dense(512, 512, 400, 3, 2, 1, 1)),
    Case("mbconv", "MBConv 40 x 28 x 28, expand 6, 5x5, SE 10, residual", mbconv()),
    Case("maxpool_16", "max pool 3x3 stride 2, 64 x 16 x 16 (the registry's ResNet)",
         max_pool(64, 16)),
    Case("maxpool_112", "max pool 3x3 stride 2, 64 x 112 x 112 (ResNet-50 at 224)",
         max_pool(64, 112)),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [case.name for case in CASES]
    parser.add_argument("--cases", nargs="+", default=names, choices=names)
    parser.add_argument("--march", default=None,
                        help="cleave compile --march (default: the cpu target's, x86-64-v3)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="timed seconds per engine and case")
    parser.add_argument("--block", type=float, default=0.1, help="seconds per timed block")
    parser.add_argument("--pause", type=float, default=0.05, help="seconds before each block")
    parser.add_argument("--warmup", type=float, default=0.2)
    parser.add_argument("--min-runs", type=int, default=20)
    parser.add_argument("--max-blocks", type=int, default=200)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--cleave", type=Path, default=None)
    parser.add_argument("--build-dir", type=Path, default=None,
                        help="the build whose runtime module Session loads")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args()

    import onnx

    import cleave

    tool = args.cleave or find_cleave()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="cleave-ops-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"cleave {tool}, --march {args.march or '(target default)'}, "
          f"{args.threads} thread(s), work in {workdir}")
    header = (f"{'case':<10} {'output elements':>15} {'ORT ms':>9} {'ORT ns/el':>9} "
              f"{'cleave ms':>9} {'ns/el':>7} {'ratio':>6}  kernels  what")
    print(header)
    rows, failures = [], 0
    for case in CASES:
        if case.name not in args.cases:
            continue
        model, feeds = case.build()
        path = workdir / f"{case.name}.onnx"
        onnx.save(model, str(path))
        bundle = workdir / f"{case.name}.cleave"
        shutil.rmtree(bundle, ignore_errors=True)
        command = [str(tool), "compile", str(path), "-o", str(bundle), "--target", "cpu",
                   "--quiet"]
        if args.march:
            command += ["--march", args.march]
        subprocess.run(command, check=True)
        ours = cleave.Session(bundle, threads=args.threads, build_dir=args.build_dir)
        theirs = ort_session(path, args.threads)
        outputs = [o.name for o in theirs.get_outputs()]
        mismatch = agree(case.name, ours.run(feeds), theirs.run(None, feeds), outputs,
                         args.rtol)
        if mismatch:
            print(f"{case.name:<10} disagrees with onnxruntime: {mismatch}")
            failures += 1
            continue
        ort_timing, cleave_timing = measure(lambda: theirs.run(None, feeds),
                                            lambda: ours.run(feeds), args)
        elements = int(np.prod(theirs.get_outputs()[0].shape))
        ort_ms, cleave_ms = ort_timing.median, cleave_timing.median
        ratio = cleave_ms / ort_ms
        print(f"{case.name:<10} {elements:>15} {ort_ms:>9.4f} {ort_ms * 1e6 / elements:>9.3f} "
              f"{cleave_ms:>9.4f} {cleave_ms * 1e6 / elements:>7.3f} {ratio:>6.2f}  "
              f"{ours.kernel_isa:<8} {case.what}", flush=True)
        rows.append({"case": case.name, "what": case.what, "elements": elements,
                     "ort_ms": ort_ms, "cleave_ms": cleave_ms, "ratio": ratio,
                     "ort_p10_p90": [ort_timing.percentile(10), ort_timing.percentile(90)],
                     "cleave_p10_p90": [cleave_timing.percentile(10),
                                        cleave_timing.percentile(90)],
                     "kernel_isa": ours.kernel_isa})
    if rows:
        print(f"geometric mean of the ratios: {geomean([r['ratio'] for r in rows]):.2f}")
    if args.json:
        args.json.write_text(json.dumps({"march": args.march, "threads": args.threads,
                                         "rows": rows}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
