"""Export a reference model to ONNX and prove the file is sound.

An export that the ONNX checker rejects, that onnxruntime cannot run, or
whose numbers differ from torch's would make every importer test built on it
meaningless; `export_model` therefore fails loudly on each of those.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime
import torch

from cleave.models.common import ReferenceModel
from cleave.models.registry import get_model

#: Opsets the exporter of the installed torch (1.13) writes; 13 is the first
#: with the tensor-input forms of Split, Squeeze and ReduceSum.
SUPPORTED_OPSETS = range(13, 18)
DEFAULT_OPSET = 17

# Largest difference allowed between onnxruntime and torch, relative to the
# largest magnitude of the output: float32 through a few layers, where the
# two pick different kernels and reduction orders, stays far below it.
_TOLERANCE = 1e-4


class ExportError(RuntimeError):
    """The exported file is invalid, does not run, or disagrees with torch."""


@dataclass(frozen=True)
class ExportResult:
    """What was written, for callers that report on it."""

    path: str
    opset: int
    input_shapes: dict[str, tuple[int, ...]]
    node_count: int


def export_model(
    name: str,
    path: str,
    opset: int = DEFAULT_OPSET,
    dynamic: bool = False,
    batch: int | None = None,
) -> ExportResult:
    """Builds model `name`, exports it to `path`, checks it with
    onnx.checker and runs it once in onnxruntime against torch.

    The export has static shapes unless `dynamic` is set; then the
    dimensions the model declares variable (batch, sequence) are symbolic,
    and the graph keeps the shape computations that a static export folds.
    `batch` sets the size of the batch dimension of the example inputs
    (see `with_batch`), and so of a static export.
    """
    if opset not in SUPPORTED_OPSETS:
        raise ValueError(
            f"opset {opset} is outside {SUPPORTED_OPSETS.start}.."
            f"{SUPPORTED_OPSETS.stop - 1}"
        )
    reference = get_model(name).build()
    if batch is not None:
        reference.inputs = with_batch(reference, batch)
    if dynamic and not reference.dynamic_axes:
        raise ValueError(f"{name} has no dynamic dimensions to export")
    inputs = tuple(reference.inputs.values())
    with torch.no_grad():
        expected = reference.module(*inputs)
    if isinstance(expected, torch.Tensor):
        expected = (expected,)

    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    # Traced with autograd enabled: in inference mode torch's
    # TransformerEncoderLayer and MultiheadAttention switch to fused kernels
    # (aten::_transformer_encoder_layer_fwd, aten::_native_multi_head_attention)
    # that torch 1.13 cannot export; with autograd on they run the composite
    # path, the same arithmetic, which the comparison below confirms against
    # the fused result.
    torch.onnx.export(
        reference.module,
        inputs,
        path,
        input_names=list(reference.inputs),
        output_names=list(reference.output_names),
        opset_version=opset,
        do_constant_folding=True,
        dynamic_axes=reference.dynamic_axes if dynamic else None,
    )

    model = onnx.load(path)
    try:
        onnx.checker.check_model(model, full_check=True)
    except onnx.checker.ValidationError as error:
        raise ExportError(f"{name}: onnx.checker rejects {path}: {error}") from error
    _compare_with_onnxruntime(name, path, reference.inputs, expected)

    return ExportResult(
        path=path,
        opset=opset,
        input_shapes={k: tuple(v.shape) for k, v in reference.inputs.items()},
        node_count=len(model.graph.node),
    )


def with_batch(reference: ReferenceModel, batch: int) -> dict[str, torch.Tensor]:
    """The example inputs of `reference` with `batch` samples: sample j is
    the model's own sample j modulo its batch, changed by round j // batch
    so that no two samples are equal (floats scaled by 1 + 0.05 per round,
    which keeps them near the model's own inputs, integers rolled along
    their last dimension). The batch dimension is the one the
    model names "batch" in its dynamic axes, else dimension 0.
    """
    if batch < 1:
        raise ValueError(f"the batch must be positive, got {batch}")
    inputs = {}
    for name, tensor in reference.inputs.items():
        axis = next(
            (d for d, label in reference.dynamic_axes.get(name, {}).items()
             if label == "batch"),
            0,
        )
        own = tensor.shape[axis]
        samples = []
        for j in range(batch):
            sample = tensor.narrow(axis, j % own, 1)
            round_ = j // own
            if round_:
                if sample.is_floating_point():
                    sample = sample * (1 + 0.05 * round_)
                elif sample.dtype != torch.bool:
                    sample = torch.roll(sample, shifts=round_, dims=-1)
            samples.append(sample)
        inputs[name] = torch.cat(samples, dim=axis).contiguous()
    return inputs


def _compare_with_onnxruntime(
    name: str,
    path: str,
    inputs: dict[str, torch.Tensor],
    expected: tuple[torch.Tensor, ...],
) -> None:
    try:
        session = onnxruntime.InferenceSession(
            path, providers=["CPUExecutionProvider"]
        )
        actual = session.run(None, {k: v.numpy() for k, v in inputs.items()})
    except Exception as error:  # onnxruntime raises its own exception types
        raise ExportError(f"{name}: onnxruntime cannot run {path}: {error}") from error
    if len(actual) != len(expected):
        raise ExportError(
            f"{name}: onnxruntime returns {len(actual)} outputs, torch {len(expected)}"
        )
    for index, (got, want) in enumerate(zip(actual, expected)):
        want = want.numpy()
        if got.shape != want.shape:
            raise ExportError(
                f"{name}: output {index} has shape {got.shape} in onnxruntime, "
                f"{want.shape} in torch"
            )
        # A constant output would make the comparison blind to a wrong graph.
        if np.std(want) == 0:
            raise ExportError(f"{name}: output {index} is constant in torch")
        scale = float(np.max(np.abs(want)))
        error = float(np.max(np.abs(got - want)))
        if error > _TOLERANCE * scale:
            raise ExportError(
                f"{name}: output {index} differs between onnxruntime and torch "
                f"by {error:.3g}, more than {_TOLERANCE:g} x {scale:.3g}"
            )
