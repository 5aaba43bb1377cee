"""Writes the export test set: `python -m cleave.exports --out DIR`.

For every model of `cleave.exports.models` and each of its exporters, this
exports the model with torch 2 (`torch.onnx.export`, `dynamo=True` with its
default opset or at opset 23, or `dynamo=False` at opset 17 for the
TorchScript exporter), runs the file in onnxruntime on CPU, checks that
onnxruntime agrees with torch, and writes an ONNX backend-test folder:

    DIR/<model>-<exporter>/model.onnx      (exporter: dynamo, dynamo-opset23,
                                            dynamo-dynamic, torchscript)
    DIR/<model>-<exporter>/test_data_set_0/input_N.pb, output_N.pb

`dynamo-dynamic` exports with dynamic dimensions (`dynamic_shapes`): batch
and sequence of integer inputs (token ids, masks), batch of float inputs.
Its folder has a second data set, test_data_set_1, at other sizes (3
sequences of 12 tokens, or 2 samples), so that a test binds the dimensions
to sizes that are not the example's.

It needs torch 2, transformers, timm, onnx, onnxscript and onnxruntime (not
the project's venv; see test/e2e/exports/README.md), and writes VERSIONS
beside the folders with the versions it ran with.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import warnings

# Largest difference allowed between onnxruntime and torch, relative to the
# largest magnitude of the output (float32 through one or two layers).
_TOLERANCE = 1e-4
_TORCHSCRIPT_OPSET = 17
# The dynamo exporter's opset: its default (None), or 23, from which it
# writes scaled-dot-product attention as Attention and RMS norms as
# RMSNormalization instead of decomposing them.
_DYNAMO_OPSETS = {"dynamo": None, "dynamo-opset23": 23}


def _dynamic_shapes(example):
    """Which dimensions of each input a dynamic export leaves open: batch and
    sequence of integer inputs, batch of the others. The forward takes the
    inputs as *args, a single tuple for torch.export."""
    import torch
    from torch.export import Dim

    shapes = []
    for value in example.inputs.values():
        dims = (0, 1) if value.dtype == torch.int64 else (0,)
        shapes.append({d: Dim.AUTO for d in dims if d < value.dim()})
    return (tuple(shapes),)


def _other_inputs(example):
    """Inputs for the second data set of a dynamic export: 3 sequences of 12
    tokens (the second padded as in the first set) or a batch of 2."""
    import torch
    from cleave.exports.models import VOCAB, _padded_mask

    inputs = {}
    for name, value in example.inputs.items():
        if value.dtype == torch.int64:
            if "mask" in name:
                inputs[name] = _padded_mask(3, 12)
            elif name == "token_type_ids":
                inputs[name] = torch.randint(0, 2, (3, 12), dtype=torch.int64)
            else:
                inputs[name] = torch.randint(0, VOCAB, (3, 12),
                                             dtype=torch.int64)
        else:
            inputs[name] = torch.randn(2, *value.shape[1:])
    return inputs


def _export(example, exporter: str, path: str) -> None:
    import torch

    args = tuple(example.inputs.values())
    names = list(example.inputs)
    outputs = list(example.output_names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "dynamo-dynamic":
            program = torch.onnx.export(
                example.module, args, dynamo=True, input_names=names,
                output_names=outputs, external_data=False,
                dynamic_shapes=_dynamic_shapes(example))
            program.save(path, external_data=False)
        elif exporter.startswith("dynamo"):
            program = torch.onnx.export(
                example.module, args, dynamo=True, input_names=names,
                output_names=outputs, external_data=False,
                opset_version=_DYNAMO_OPSETS[exporter])
            program.save(path, external_data=False)
        else:
            torch.onnx.export(
                example.module, args, path, dynamo=False,
                opset_version=_TORCHSCRIPT_OPSET, input_names=names,
                output_names=outputs)


def _write_test_data(example, model_path: str, folder: str,
                     inputs=None, data_set: int = 0) -> str:
    """Runs the model in onnxruntime on `inputs` (the example's by default),
    checks it against torch and writes the backend-test data set; returns a
    line describing the model."""
    import numpy as np
    import onnx
    import onnxruntime
    import torch
    from onnx import numpy_helper

    model = onnx.load(model_path)
    onnx.checker.check_model(model)
    inputs = example.inputs if inputs is None else inputs
    graph_inputs = [i.name for i in model.graph.input]
    feeds = {name: inputs[name].numpy() for name in graph_inputs}
    session = onnxruntime.InferenceSession(
        model_path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    got = session.run(None, feeds)

    with torch.no_grad():
        expected = example.module(*inputs.values())
    if isinstance(expected, torch.Tensor):
        expected = (expected,)
    if len(expected) != len(got):
        raise RuntimeError(f"torch gives {len(expected)} outputs, the export "
                           f"{len(got)}")
    for name, value, reference in zip(names, got, expected):
        reference = reference.numpy()
        scale = float(np.max(np.abs(reference))) or 1.0
        error = float(np.max(np.abs(value - reference)))
        if value.shape != reference.shape or error > _TOLERANCE * scale:
            raise RuntimeError(
                f"output {name}: onnxruntime {value.shape} differs from torch "
                f"{reference.shape} by {error:g} (scale {scale:g})")

    data = os.path.join(folder, f"test_data_set_{data_set}")
    os.makedirs(data)
    for i, name in enumerate(graph_inputs):
        tensor = numpy_helper.from_array(feeds[name], name)
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(tensor.SerializeToString())
    for i, (name, value) in enumerate(zip(names, got)):
        tensor = numpy_helper.from_array(value, name)
        with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
            f.write(tensor.SerializeToString())
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    return (f"opset {opset}, {len(model.graph.node)} nodes, inputs "
            + ", ".join(f"{n}{list(feeds[n].shape)}" for n in graph_inputs))


def _versions() -> str:
    import importlib.metadata

    packages = ["torch", "transformers", "timm", "onnx", "onnxscript",
                "onnx-ir", "onnxruntime", "numpy"]
    lines = [f"python {platform.python_version()}"]
    lines += [f"{p} {importlib.metadata.version(p)}" for p in packages]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the folder to write")
    parser.add_argument("--only", action="append", default=[],
                        help="write only this model (repeatable)")
    parser.add_argument("--exporter", action="append", default=[],
                        help="write only the exports of this exporter "
                             "(repeatable)")
    args = parser.parse_args(argv)

    from cleave.exports.models import SPECS, build

    selected = [s for s in SPECS if not args.only or s.name in args.only]
    unknown = set(args.only) - {s.name for s in SPECS}
    if unknown:
        parser.error(f"unknown model(s): {', '.join(sorted(unknown))}")
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for spec in selected:
        for exporter in spec.exporters:
            if args.exporter and exporter not in args.exporter:
                continue
            tag = f"{spec.name}-{exporter}"
            folder = os.path.join(args.out, tag)
            staging = tempfile.mkdtemp(prefix=f".{tag}.", dir=args.out)
            try:
                example = build(spec)
                model_path = os.path.join(staging, "model.onnx")
                _export(example, exporter, model_path)
                summary = _write_test_data(example, model_path, staging)
                if exporter == "dynamo-dynamic":
                    summary += "; " + _write_test_data(
                        example, model_path, staging, _other_inputs(example),
                        data_set=1).split(", inputs ")[-1]
            except Exception as error:  # one failed export must not stop the rest
                shutil.rmtree(staging)
                print(f"{tag}: FAILED: {type(error).__name__}: "
                      f"{str(error).splitlines()[0] if str(error) else ''}",
                      file=sys.stderr)
                failed += 1
                continue
            shutil.rmtree(folder, ignore_errors=True)
            os.rename(staging, folder)
            print(f"{tag}: {summary}")
    with open(os.path.join(args.out, "VERSIONS"), "w") as f:
        f.write(_versions())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
