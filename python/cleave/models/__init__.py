"""Small reference models, randomly initialised, exported to ONNX.

The importer, the planner and the end-to-end tests need the graphs that real
exporters write, not hand-made ones: shape arithmetic, decomposed layer norms
and GELUs, fused batch norms, recurrent layers. Each model here is built from
its reference implementation (torch.nn, torchvision, torchaudio) at a size
that exports in seconds, and no pretrained weights are involved.

    python -m cleave.models list
    python -m cleave.models export gpt gpt.onnx --opset 17

`cleave.models.export.export_model` is the same export as a function; it
imports torch, which this package's catalogue (`MODELS`) does not.
"""

from cleave.models.registry import MODELS, ModelSpec, get_model

__all__ = ["MODELS", "ModelSpec", "get_model"]
