"""Command line: `python -m cleave.models {list,export}`."""

from __future__ import annotations

import argparse
import sys

from cleave.models.registry import MODELS, get_model

# Mirrors cleave.models.export, which is not imported before it is needed
# because importing torch takes seconds.
_OPSETS = range(13, 18)
_DEFAULT_OPSET = 17


def _list_models() -> int:
    width = max(len(name) for name in MODELS)
    for name, spec in sorted(MODELS.items()):
        print(f"{name:<{width}}  {spec.summary}")
    return 0


def _export(
    name: str, path: str, opset: int, dynamic: bool, batch: int | None
) -> int:
    try:
        get_model(name)
    except KeyError as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return 2

    from cleave.models.export import ExportError, export_model

    try:
        result = export_model(name, path, opset, dynamic, batch)
    except (ExportError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    shapes = ", ".join(
        f"{k}={'x'.join(map(str, v))}" for k, v in result.input_shapes.items()
    )
    print(
        f"{name}: wrote {result.path} (opset {result.opset}, "
        f"{result.node_count} nodes, inputs {shapes})"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cleave.models",
        description="Export small randomly initialised reference models to ONNX.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="list the models and their configurations")
    export = commands.add_parser(
        "export",
        help="export one model, check it with onnx.checker and run it in "
        "onnxruntime against torch",
    )
    export.add_argument("name", help="model name (see `list`)")
    export.add_argument("output", help="path of the .onnx file to write")
    export.add_argument(
        "--opset",
        type=int,
        default=_DEFAULT_OPSET,
        choices=_OPSETS,
        metavar=f"{{{_OPSETS.start}..{_OPSETS.stop - 1}}}",
        help=f"ONNX opset to write (default {_DEFAULT_OPSET})",
    )
    export.add_argument(
        "--dynamic",
        action="store_true",
        help="make the batch (and sequence) dimensions symbolic; the example "
        "input shapes are printed for binding them again",
    )
    export.add_argument(
        "--batch",
        type=int,
        metavar="N",
        help="samples in the batch of the example inputs (and of a static "
        "export); the model's own samples, then changed copies of them",
    )
    args = parser.parse_args(argv)
    if args.command == "list":
        return _list_models()
    return _export(args.name, args.output, args.opset, args.dynamic, args.batch)


if __name__ == "__main__":
    sys.exit(main())
