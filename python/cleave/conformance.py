"""ONNX backend node conformance of the importer.

The onnx wheel ships one small model per operator behaviour
(`onnx/backend/test/data/node/<test>/model.onnx`). This script imports every
such model whose operators the importer claims to support, prints how many
import, and compares the result against a pinned list of tests that are
known to import:

- a pinned test that no longer imports is a regression, and the script
  exits non-zero;
- a test that imports but is not pinned is reported, without failing, so
  that the pin can be raised (`--update` rewrites it).

A test "imports" when `cleave-translate --import-onnx` exits cleanly and its
output parses and verifies again in `cleave-opt` (a printed module that
cannot be read back is as broken as one that was never written).

    python -m cleave.conformance --cleave-translate build/bin/cleave-translate \\
        --cleave-opt build/bin/cleave-opt
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
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


@dataclass(frozen=True)
class NodeTest:
    """One backend node test: its name and model, and the operators in it."""

    name: str
    model: Path
    op_types: frozenset[str]
    domains: frozenset[str]


@dataclass(frozen=True)
class Outcome:
    """The result of importing one test; `error` is empty on success."""

    name: str
    error: str

    @property
    def imported(self) -> bool:
        return not self.error


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
    """Reads the operators of one test's model (weights are not needed).

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
    return NodeTest(
        directory.name,
        directory / "model.onnx",
        frozenset(op_types),
        frozenset(domains),
    )


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


def import_test(
    test: NodeTest, translate: str, opt: str | None, timeout: float
) -> Outcome:
    """Imports one model and, with `opt`, parses and verifies the result."""
    stages = [("import", [translate, "--import-onnx", str(test.model)])]
    if opt:
        stages.append(("round-trip", [opt, "--verify-each"]))
    text: str | None = None
    for stage, command in stages:
        try:
            result = subprocess.run(
                command, input=text, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return Outcome(test.name, f"{stage}: timed out after {timeout:g} s")
        if result.returncode != 0:
            message = first_error_line(result.stderr or result.stdout)
            # The model's absolute path makes every line long and says nothing.
            message = message.replace(str(test.model.parent) + os.sep, "")
            return Outcome(
                test.name, f"{stage}: exit {result.returncode}: {message}"
            )
        text = result.stdout
    return Outcome(test.name, "")


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


def write_pin(path: Path, names: set[str]) -> None:
    path.write_text("".join(f"{name}\n" for name in sorted(names)))


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m cleave.conformance",
        description="Import the ONNX backend node tests whose operators the "
        "importer supports and compare with the pinned passing set.",
    )
    parser.add_argument(
        "--cleave-translate", required=True, help="path of cleave-translate"
    )
    parser.add_argument(
        "--cleave-opt",
        help="path of cleave-opt; when given, each imported module must also "
        "parse and verify there",
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
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(
            pool.map(
                lambda test: import_test(
                    test, args.cleave_translate, args.cleave_opt, args.timeout
                ),
                tests,
            )
        )

    imported = {outcome.name for outcome in outcomes if outcome.imported}
    failures = [outcome for outcome in outcomes if not outcome.imported]
    print(
        f"imported {len(imported)}/{len(outcomes)} node tests "
        f"({len(supported)} supported operators)"
    )
    for outcome in failures:
        print(f"FAIL {outcome.name}: {outcome.error}")

    if args.update:
        write_pin(args.expected, imported)
        print(f"wrote {len(imported)} tests to {args.expected}")
        return 0

    pinned = read_pin(args.expected)
    if args.filter:
        pinned = {name for name in pinned if args.filter.search(name)}
    selected = {test.name for test in tests}
    available = {path.name for path in args.node_dir.iterdir()}
    # A pinned test that this onnx release does not ship cannot regress.
    absent = sorted(pinned - available)
    for name in absent:
        print(f"note: pinned test {name} is not in {args.node_dir}")
    regressions = sorted((pinned & available) - imported)
    newly = sorted(imported - pinned)
    for name in newly:
        print(f"NEW {name}: imports but is not pinned (raise the pin with --update)")
    for name in regressions:
        reason = (
            "no longer imports"
            if name in selected
            else "is no longer selected (an operator left the supported table)"
        )
        print(f"REGRESSION {name}: {reason}")
    print(
        f"{len(regressions)} regressions, {len(newly)} newly imported, "
        f"{len(pinned)} pinned"
    )
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
