"""ONNX backend node conformance of the importer.

The onnx wheel ships one small model per operator behaviour
(`onnx/backend/test/data/node/<test>/model.onnx`, with inputs and expected
outputs in `test_data_set_0/`). This script imports every such model whose
operators the importer claims to support, prints how many import, and
compares the result against a pinned list of tests that are known to import:

- a pinned test that no longer imports is a regression, and the script
  exits non-zero;
- a test that imports but is not pinned is reported, without failing, so
  that the pin can be raised (`--update` rewrites it).

A test imports when

1. `cleave-translate --import-onnx` exits cleanly,
2. with `--cleave-opt`, its output parses and verifies again in
   `cleave-opt --verify-each` (printed IR that cannot be read back is as
   broken as IR that was never written), and
3. the result types of the imported function are the shapes and element
   types of the test's expected outputs.

Many node tests pass configuration (axes, shapes, pads, scales, bounds) as
graph inputs, which the importer requires to be constants. When the
importer reports that such a graph input is computed at run time, the
script binds that input to its value in `test_data_set_0` (it becomes an
initializer) and imports again; the report counts those tests.

    python -m cleave.conformance --cleave-translate build/bin/cleave-translate \\
        --cleave-opt build/bin/cleave-opt
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import onnx

_REPO_ROOT = Path(__file__).resolve().parents[2]
_DEFAULT_OPERATOR_TABLE = _REPO_ROOT / "docs" / "onnx-operators.md"
_DEFAULT_PIN = (
    _REPO_ROOT / "test" / "Import" / "ONNX" / "conformance" / "expected-pass.txt"
)

# Node tests use the default ONNX domain; other domains (ai.onnx.ml,
# ai.onnx.preview.training) are out of the importer's scope.
_DEFAULT_DOMAINS = frozenset({"", "ai.onnx"})

# The importer's diagnostic for a configuration input it cannot fold, e.g.
# "input 1 ('axes', value 'axes') must be a constant, but it is computed at
# run time"; the group is the ONNX value.
_RUN_TIME_VALUE = re.compile(
    r"value '([^']+)'\) must be a constant, but it is computed at run time"
)

_ELEMENT_TYPES = {
    onnx.TensorProto.FLOAT: "f32",
    onnx.TensorProto.DOUBLE: "f64",
    onnx.TensorProto.FLOAT16: "f16",
    onnx.TensorProto.BFLOAT16: "bf16",
    onnx.TensorProto.BOOL: "i1",
    onnx.TensorProto.INT8: "i8",
    onnx.TensorProto.INT16: "i16",
    onnx.TensorProto.INT32: "i32",
    onnx.TensorProto.INT64: "i64",
    onnx.TensorProto.UINT8: "ui8",
    onnx.TensorProto.UINT16: "ui16",
    onnx.TensorProto.UINT32: "ui32",
    onnx.TensorProto.UINT64: "ui64",
}


@dataclass(frozen=True)
class NodeTest:
    """One backend node test: its directory and the operators in its model."""

    directory: Path
    op_types: frozenset[str]
    domains: frozenset[str]

    @property
    def name(self) -> str:
        return self.directory.name

    @property
    def model(self) -> Path:
        return self.directory / "model.onnx"


@dataclass(frozen=True)
class Outcome:
    """The result of one test: `error` is empty when it imports; `bound`
    names the graph inputs that were bound to their test data."""

    name: str
    error: str
    bound: tuple[str, ...] = ()

    @property
    def imported(self) -> bool:
        return not self.error


@dataclass(frozen=True)
class Tools:
    """How to run the tools: command prefixes and the time allowed per run."""

    translate: list[str]
    opt: list[str] | None
    timeout: float


class StageFailure(Exception):
    """One stage of a test failed; the message says which and why."""


def default_node_test_dir() -> Path:
    """The node tests of the installed onnx package."""
    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"


def parse_operator_table(text: str) -> frozenset[str]:
    """Operator names from the Markdown table of docs/onnx-operators.md.

    The first cell of each table row names an operator, optionally in
    backticks; header and separator rows do not look like operator names
    and are skipped. A row whose cells say "no" or "unsupported" is not a
    supported operator.
    """
    operators = set()
    for line in text.splitlines():
        if not line.lstrip().startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        name = cells[0].strip("`* ")
        if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", name):
            continue
        if any(cell.lower() in ("no", "unsupported") for cell in cells[1:]):
            continue
        operators.add(name)
    return frozenset(operators)


def load_node_test(directory: Path) -> NodeTest:
    """Reads the operators of one test's model.

    Operators inside subgraphs (If, Loop, Scan bodies) count too: the
    importer has to handle every node it is given.
    """
    model = onnx.load(str(directory / "model.onnx"), load_external_data=False)
    op_types: set[str] = set()
    domains: set[str] = set()
    pending = [model.graph]
    while pending:
        graph = pending.pop()
        for node in graph.node:
            op_types.add(node.op_type)
            domains.add(node.domain)
            for attribute in node.attribute:
                pending.extend(attribute.graphs)
                if attribute.HasField("g"):
                    pending.append(attribute.g)
    return NodeTest(directory, frozenset(op_types), frozenset(domains))


def select_tests(
    node_dir: Path, supported: frozenset[str], name_filter: re.Pattern[str] | None
) -> list[NodeTest]:
    """The tests whose every operator is in `supported`, sorted by name."""
    selected = []
    for directory in sorted(node_dir.iterdir()):
        if not (directory / "model.onnx").is_file():
            continue
        if name_filter and not name_filter.search(directory.name):
            continue
        test = load_node_test(directory)
        if test.domains <= _DEFAULT_DOMAINS and test.op_types <= supported:
            selected.append(test)
    return selected


def first_error_line(output: str) -> str:
    """The line a reader needs first: the first diagnostic marked as an
    error, else the first non-empty line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[0] if lines else "(no output)"


def run_tool(
    stage: str, command: list[str], tools: Tools, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            command, input=stdin, capture_output=True, text=True, timeout=tools.timeout
        )
    except subprocess.TimeoutExpired:
        raise StageFailure(f"{stage}: timed out after {tools.timeout:g} s") from None


def stage_failure(
    stage: str, result: subprocess.CompletedProcess[str], paths: list[Path]
) -> StageFailure:
    message = first_error_line(result.stderr or result.stdout)
    # Absolute paths of models make every line long and say nothing.
    for path in paths:
        message = message.replace(str(path) + os.sep, "")
    return StageFailure(f"{stage}: exit {result.returncode}: {message}")


def test_data_files(data_dir: Path, kind: str) -> list[Path]:
    """The `input_N.pb` or `output_N.pb` files of one test data set, in
    order."""
    files = []
    while (data_dir / f"{kind}_{len(files)}.pb").is_file():
        files.append(data_dir / f"{kind}_{len(files)}.pb")
    return files


def test_data(data_dir: Path, kind: str) -> list[onnx.TensorProto]:
    """The `input` or `output` tensors of one test data set, in order."""
    return [onnx.load_tensor(str(f)) for f in test_data_files(data_dir, kind)]


def test_data_sets(directory: Path) -> list[Path]:
    """The `test_data_set_N` folders of one test, in order."""
    sets = [d for d in directory.glob("test_data_set_*") if d.is_dir()]
    return sorted(sets, key=lambda d: int(d.name.rsplit("_", 1)[1]))


def input_positions(
    graph_inputs: list[str], tensors: list[onnx.TensorProto]
) -> dict[str, int]:
    """Which `input_N.pb` of a data set holds each graph input: named test
    data by its name, unnamed test data in the order of the graph inputs."""
    if all(tensor.name for tensor in tensors):
        return {tensor.name: index for index, tensor in enumerate(tensors)}
    return {name: index for index, name in enumerate(graph_inputs[: len(tensors)])}


def bind_inputs(model: onnx.ModelProto, values: dict[str, onnx.TensorProto]) -> None:
    """Turns the graph inputs named in `values` into initializers."""
    kept = [i for i in model.graph.input if i.name not in values]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    for name, tensor in values.items():
        initializer = model.graph.initializer.add()
        initializer.CopyFrom(tensor)
        initializer.name = name


def result_types(module_text: str, function: str = "main") -> list[str] | None:
    """The result types of `function` as written in the IR (`2x3xf32`, or
    `f32` for a scalar), or None when the function is not there."""
    start = module_text.find(f"func.func @{function}(")
    if start < 0:
        return None
    # Skip the argument list: its types and attributes hold no parentheses.
    depth = 0
    position = module_text.index("(", start)
    for position in range(position, len(module_text)):
        depth += {"(": 1, ")": -1}.get(module_text[position], 0)
        if depth == 0:
            break
    rest = module_text[position + 1 :].lstrip()
    if not rest.startswith("->"):
        return []
    rest = rest[2:].lstrip()
    if rest.startswith("("):
        rest = rest[1 : rest.index(")")]
    else:
        rest = rest.split(" ", 1)[0]
    return re.findall(r"tensor<([^>]*)>", rest)


def expected_type(tensor: onnx.TensorProto, declared: int) -> str:
    """The IR spelling (`2x3xf32`, `f32`) of a test output: its shape from
    the test data, its element type as the model declares it (`declared`,
    0 when it does not) or else from the data.

    The declared type comes first because the test data stores bfloat16
    outputs as uint16.
    """
    data_type = declared or tensor.data_type
    element = _ELEMENT_TYPES.get(data_type, f"onnx-type-{data_type}")
    return "".join(f"{dim}x" for dim in tensor.dims) + element


def _check_signature(test: NodeTest, module_text: str) -> None:
    actual = result_types(module_text)
    if actual is None:
        raise StageFailure("signature: the output has no func.func @main")
    model = onnx.load(str(test.model), load_external_data=False)
    declared = [o.type.tensor_type.elem_type for o in model.graph.output]
    outputs = test_data(test.directory / "test_data_set_0", "output")
    expected = [
        expected_type(tensor, element) for tensor, element in zip(outputs, declared)
    ]
    if actual != expected:
        raise StageFailure(
            "signature: @main returns "
            + ", ".join(f"tensor<{t}>" for t in actual)
            + "; the test expects "
            + ", ".join(f"tensor<{t}>" for t in expected)
        )


def import_test(test: NodeTest, tools: Tools) -> Outcome:
    """Imports one test, binding configuration inputs to their test data
    when the importer asks for constants, then checks the result."""
    bound: dict[str, onnx.TensorProto] = {}
    with tempfile.TemporaryDirectory(prefix="cleave-conformance-") as scratch:
        model_path = test.model
        try:
            while True:
                result = run_tool(
                    "import", [*tools.translate, "--import-onnx", str(model_path)], tools
                )
                if result.returncode == 0:
                    break
                wanted = _bindable_inputs(test, result.stderr, bound)
                if not wanted:
                    raise stage_failure(
                        "import", result, [test.directory, Path(scratch)]
                    )
                bound.update(wanted)
                model = onnx.load(str(test.model))
                bind_inputs(model, bound)
                model_path = Path(scratch) / "model.onnx"
                onnx.save(model, str(model_path))
            module_text = result.stdout
            if tools.opt:
                check = run_tool(
                    "round-trip", [*tools.opt, "--verify-each"], tools, module_text
                )
                if check.returncode != 0:
                    raise stage_failure("round-trip", check, [])
            _check_signature(test, module_text)
        except StageFailure as failure:
            return Outcome(test.name, str(failure), tuple(sorted(bound)))
    return Outcome(test.name, "", tuple(sorted(bound)))


def _bindable_inputs(
    test: NodeTest, diagnostics: str, bound: dict[str, onnx.TensorProto]
) -> dict[str, onnx.TensorProto]:
    """The graph inputs to bind so that the values the importer reports as
    computed at run time become constants.

    A reported value that is a graph input is bound itself. One computed
    from graph inputs (a function expansion computing pads from a target
    shape) has its integer-typed graph inputs bound: configuration is
    integer-valued, while the data a test feeds is not bound.
    """
    reported = set(_RUN_TIME_VALUE.findall(diagnostics))
    if not reported:
        return {}
    model = onnx.load(str(test.model), load_external_data=False)
    graph_inputs = {i.name: i for i in model.graph.input}
    producers = {out: node for node in model.graph.node for out in node.output}
    integer_types = {onnx.TensorProto.INT32, onnx.TensorProto.INT64}

    wanted: set[str] = set()
    for name in reported:
        if name in graph_inputs:
            wanted.add(name)
            continue
        for ancestor in _ancestors(name, producers):
            info = graph_inputs.get(ancestor)
            if info is not None and info.type.tensor_type.elem_type in integer_types:
                wanted.add(ancestor)
    wanted -= set(bound)

    tensors = test_data(test.directory / "test_data_set_0", "input")
    positions = input_positions(list(graph_inputs), tensors)
    return {name: tensors[positions[name]] for name in wanted if name in positions}


def _ancestors(value: str, producers: dict[str, onnx.NodeProto]) -> set[str]:
    """Every value that `value` is computed from, itself included."""
    seen = {value}
    pending = [value]
    while pending:
        node = producers.get(pending.pop())
        for name in node.input if node is not None else ():
            if name and name not in seen:
                seen.add(name)
                pending.append(name)
    return seen


def read_pin(path: Path) -> set[str]:
    """Test names of the pin file; blank lines and `#` comments are ignored."""
    if not path.exists():
        return set()
    names = set()
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(line)
    return names


def write_pin(path: Path, names: set[str], header: Sequence[str] = ()) -> None:
    """Writes the sorted test names, after `header` as `#` comment lines."""
    comments = "".join(f"# {line}".rstrip() + "\n" for line in header)
    path.write_text(comments + "".join(f"{name}\n" for name in sorted(names)))


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m cleave.conformance",
        description="Import the ONNX backend node tests whose operators the "
        "importer supports and compare with the pinned passing set.",
    )
    parser.add_argument(
        "--cleave-translate",
        required=True,
        type=shlex.split,
        help="cleave-translate, as a path or a command line",
    )
    parser.add_argument(
        "--cleave-opt",
        type=shlex.split,
        help="cleave-opt, as a path or a command line; when given, each "
        "imported module must also parse and verify there",
    )
    parser.add_argument(
        "--node-dir",
        type=Path,
        default=default_node_test_dir(),
        help="directory of node tests (default: the installed onnx package's)",
    )
    parser.add_argument(
        "--operators",
        type=Path,
        default=_DEFAULT_OPERATOR_TABLE,
        help="Markdown table of supported operators (default: %(default)s)",
    )
    parser.add_argument(
        "--expected",
        type=Path,
        default=_DEFAULT_PIN,
        help="pinned list of tests that import (default: %(default)s)",
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="rewrite the pin with the tests that import",
    )
    parser.add_argument(
        "--filter", type=re.compile, help="only tests whose name matches this regex"
    )
    parser.add_argument("--jobs", type=int, default=2, help="parallel imports")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds allowed per tool run"
    )
    return parser.parse_args(argv)


def _report(outcomes: list[Outcome], supported: frozenset[str]) -> set[str]:
    imported = {outcome.name for outcome in outcomes if outcome.imported}
    with_bound = sum(1 for o in outcomes if o.imported and o.bound)
    print(
        f"imported {len(imported)}/{len(outcomes)} node tests "
        f"({len(supported)} supported operators; {with_bound} of the imported "
        "with configuration inputs bound to their test data)"
    )
    for outcome in outcomes:
        if not outcome.imported:
            bound = f" [bound: {', '.join(outcome.bound)}]" if outcome.bound else ""
            print(f"FAIL {outcome.name}: {outcome.error}{bound}")
    return imported


def compare_with_pin(
    pin: Path,
    name_filter: re.Pattern[str] | None,
    node_dir: Path,
    selected: set[str],
    passing: set[str],
    verb: str = "imports",
    newly: str = "newly imported",
    reasons: dict[str, str] | None = None,
) -> int:
    """Prints the pinned tests that no longer pass (`REGRESSION`) and the
    passing tests that are not pinned (`NEW`); returns 1 when any pinned
    test regressed. `verb` says what passing means ("imports"), `reasons`
    why a selected test failed."""
    pinned = read_pin(pin)
    if name_filter:
        pinned = {name for name in pinned if name_filter.search(name)}
    available = {path.name for path in node_dir.iterdir()}
    # A pinned test that this onnx release does not ship cannot regress.
    for name in sorted(pinned - available):
        print(f"note: pinned test {name} is not in {node_dir}")
    regressions = sorted((pinned & available) - passing)
    new_names = sorted(passing - pinned)
    for name in new_names:
        print(f"NEW {name}: {verb} but is not pinned (raise the pin with --update)")
    for name in regressions:
        if name not in selected:
            reason = "is no longer selected (an operator left the supported table)"
        elif reasons and name in reasons:
            reason = f"no longer {verb}: {reasons[name]}"
        else:
            reason = f"no longer {verb}"
        print(f"REGRESSION {name}: {reason}")
    print(
        f"{len(regressions)} regressions, {len(new_names)} {newly}, "
        f"{len(pinned)} pinned"
    )
    return 1 if regressions else 0


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    if not args.node_dir.is_dir():
        print(f"error: no node tests at {args.node_dir}", file=sys.stderr)
        return 2
    if not args.operators.is_file():
        print(f"error: no operator table at {args.operators}", file=sys.stderr)
        return 2
    supported = parse_operator_table(args.operators.read_text())
    if not supported:
        print(f"error: no operators listed in {args.operators}", file=sys.stderr)
        return 2

    tests = select_tests(args.node_dir, supported, args.filter)
    tools = Tools(args.cleave_translate, args.cleave_opt, args.timeout)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(lambda test: import_test(test, tools), tests))
    imported = _report(outcomes, supported)

    if args.update:
        write_pin(args.expected, imported)
        print(f"wrote {len(imported)} tests to {args.expected}")
        return 0
    return compare_with_pin(
        args.expected,
        args.filter,
        args.node_dir,
        {test.name for test in tests},
        imported,
    )


if __name__ == "__main__":
    sys.exit(main())
