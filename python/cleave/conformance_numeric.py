"""ONNX backend node conformance of the compiled programs.

`cleave.conformance` checks that the backend node tests import; this script
goes on with every test that imports: it compiles the model (with the
configuration inputs the importer needed as constants bound to their test
data) into a bundle with `cleave compile`, runs the bundle on each
`test_data_set_N` with `cleave run --test-data`, and compares the outputs
with the expected ones at the ONNX backend's tolerances (rtol 1e-3, atol
1e-7). It prints one line per failure, the failures grouped by reason, and
compares the passing tests with a pinned list, like the import check does:

- a pinned test that no longer passes is a regression, and the script
  exits non-zero;
- a test that passes but is not pinned is reported, without failing, so
  that the pin can be raised (`--update` rewrites it, with the failure
  summary as its header).

A selected test that does not import is not attempted; it is listed as
`SKIP` with the importer's reason (the import check pins those).

The inputs bound into the model are not fed to the bundle: each data set
is presented to `cleave run` as a folder of links that holds, in the
bundle's input order, only the inputs the bundle still takes.

    python -m cleave.conformance_numeric --cleave build/bin/cleave \\
        --cleave-translate build/bin/cleave-translate
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import onnx

from cleave.conformance import (
    NodeTest,
    StageFailure,
    Tools,
    bind_inputs,
    compare_with_pin,
    default_node_test_dir,
    import_test,
    input_positions,
    parse_operator_table,
    run_tool,
    select_tests,
    stage_failure,
    test_data,
    test_data_files,
    test_data_sets,
    write_pin,
)

_REPO_ROOT = Path(__file__).resolve().parents[2]
_DEFAULT_OPERATOR_TABLE = _REPO_ROOT / "docs" / "onnx-operators.md"
_DEFAULT_PIN = (
    _REPO_ROOT / "test" / "Target" / "conformance" / "expected-numeric-pass.txt"
)

# How many examples the summary names per failure category.
_EXAMPLES = 2


@dataclass(frozen=True)
class Runner:
    """How to compile and run: the `cleave` command prefix and its options."""

    cleave: list[str]
    compile_args: list[str]
    rtol: float
    atol: float
    timeout: float


@dataclass(frozen=True)
class NumericOutcome:
    """The result of one test. `stage` is empty when it passes, else the
    step that failed (`import`, `compile`, `run`, `compare`); `reason` says
    why, and `category` is the reason with the test's own names and
    figures removed, so that failures of one cause group together."""

    name: str
    stage: str = ""
    reason: str = ""
    bound: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.stage

    @property
    def category(self) -> str:
        return categorize(self.stage, self.reason)


def categorize(stage: str, reason: str) -> str:
    """The failure category of a reason: quoted names, numbers, shapes and
    source locations replaced, so that one cause in many tests reads the
    same."""
    text = reason
    if stage == "compare":
        # Only what went wrong: a wrong shape or type, or values outside
        # tolerance (and whether they are NaN where a number is expected).
        if "expected" in text and "got" in text and "max abs" not in text:
            return "compare: wrong output type or shape"
        if "inf" in text.split("max rel error", 1)[0]:
            return "compare: output values outside tolerance (NaN or inf)"
        return "compare: output values outside tolerance"
    text = re.sub(r"^exit -?\d+:\s*", "", text)
    text = re.sub(r"^(cleave( compile| run)?|[^:\s]*\.onnx(:\d+)*):\s*", "", text)
    # The program that failed (`bundle_0/programs/rank_0.so: `).
    text = re.sub(r"\S+\.so:\s*", "", text)
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r"\"[^\"]*\"", '"…"', text)
    text = re.sub(r"\b\d+(x\d+)*x?(?=[a-z]|\b)", "N", text)
    text = re.sub(r"tensor<[^>]*>", "tensor<…>", text)
    return f"{stage}: {text}"


def _bound_values(
    test: NodeTest, data_dir: Path, names: tuple[str, ...]
) -> dict[str, onnx.TensorProto]:
    """The values of the bound graph inputs in one data set."""
    if not names:
        return {}
    model = onnx.load(str(test.model), load_external_data=False)
    tensors = test_data(data_dir, "input")
    positions = input_positions([i.name for i in model.graph.input], tensors)
    return {name: tensors[positions[name]] for name in names}


def _compile(
    test: NodeTest,
    values: dict[str, onnx.TensorProto],
    bundle: Path,
    runner: Runner,
    tools: Tools,
) -> None:
    model_path = test.model
    if values:
        model = onnx.load(str(test.model))
        bind_inputs(model, values)
        model_path = bundle.parent / f"{bundle.name}.onnx"
        onnx.save(model, str(model_path))
    command = [
        *runner.cleave,
        "compile",
        str(model_path),
        "-o",
        str(bundle),
        "--quiet",
        *runner.compile_args,
    ]
    result = run_tool("compile", command, tools)
    if result.returncode != 0:
        raise stage_failure("compile", result, [test.directory, bundle.parent])


def _feed_folder(
    test: NodeTest, data_dir: Path, bundle: Path, folder: Path
) -> Path:
    """A test data folder that holds the inputs the bundle takes, in its
    order, and the expected outputs: links into `data_dir`."""
    manifest = json.loads((bundle / "manifest.json").read_text())
    model = onnx.load(str(test.model), load_external_data=False)
    files = test_data_files(data_dir, "input")
    positions = input_positions(
        [i.name for i in model.graph.input], test_data(data_dir, "input")
    )
    folder.mkdir()
    for index, port in enumerate(manifest["inputs"]):
        if port["name"] not in positions:
            raise StageFailure(
                f"run: the bundle takes input '{port['name']}', which the "
                "test data does not hold"
            )
        (folder / f"input_{index}.pb").symlink_to(files[positions[port["name"]]])
    for index, file in enumerate(test_data_files(data_dir, "output")):
        (folder / f"output_{index}.pb").symlink_to(file)
    return folder


def _compare(bundle: Path, folder: Path, runner: Runner, tools: Tools) -> None:
    command = [
        *runner.cleave,
        "run",
        str(bundle),
        "--test-data",
        str(folder),
        "--rtol",
        f"{runner.rtol:g}",
        "--atol",
        f"{runner.atol:g}",
        # The runner runs tests side by side, one core each.
        "--threads",
        "1",
    ]
    result = run_tool("run", command, tools)
    if result.returncode == 0:
        return
    if result.returncode != 1:
        raise stage_failure("run", result, [bundle.parent])
    # Exit 1: some output differs. Report the outputs that do.
    wrong = [
        line.strip()
        for line in result.stdout.splitlines()
        if line.startswith("output '")
        and (" 0 of " not in line or ": expected " in line)
    ]
    raise StageFailure("compare: " + ("; ".join(wrong) or result.stdout.strip()))


def run_test(test: NodeTest, runner: Runner, tools: Tools) -> NumericOutcome:
    """Imports, compiles and runs one test on each of its data sets."""
    imported = import_test(test, tools)
    if not imported.imported:
        return NumericOutcome(test.name, "import", imported.error, imported.bound)
    with tempfile.TemporaryDirectory(prefix="cleave-numeric-") as scratch:
        # One bundle per distinct set of bound values; data sets that bind
        # the same configuration share it.
        bundles: dict[bytes, Path] = {}
        data_sets = test_data_sets(test.directory)
        try:
            for data_dir in data_sets:
                values = _bound_values(test, data_dir, imported.bound)
                key = b"".join(
                    values[name].SerializeToString() for name in sorted(values)
                )
                if key not in bundles:
                    bundles[key] = Path(scratch) / f"bundle_{len(bundles)}"
                    _compile(test, values, bundles[key], runner, tools)
                folder = _feed_folder(
                    test, data_dir, bundles[key], Path(scratch) / data_dir.name
                )
                try:
                    _compare(bundles[key], folder, runner, tools)
                except StageFailure as failure:
                    if len(data_sets) > 1:
                        raise StageFailure(f"{failure} [{data_dir.name}]") from None
                    raise
        except StageFailure as failure:
            stage = str(failure).split(":", 1)[0]
            reason = str(failure).split(":", 1)[1].strip()
            return NumericOutcome(test.name, stage, reason, imported.bound)
    return NumericOutcome(test.name, bound=imported.bound)


def failure_summary(outcomes: list[NumericOutcome]) -> list[str]:
    """The attempted tests' failures grouped by category, largest first,
    each with its count and examples."""
    groups: dict[str, list[str]] = defaultdict(list)
    for outcome in outcomes:
        if outcome.stage and outcome.stage != "import":
            groups[outcome.category].append(outcome.name)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    lines = []
    for category, names in ordered:
        examples = ", ".join(sorted(names)[:_EXAMPLES])
        lines.append(f"{len(names):4d}  {category}  (e.g. {examples})")
    return lines


def _report(outcomes: list[NumericOutcome], runner: Runner) -> list[str]:
    """Prints the outcome of each test and the summary; returns the
    summary's lines (the pin's header)."""
    attempted = [o for o in outcomes if o.stage != "import"]
    passed = [o for o in attempted if o.passed]
    skipped = len(outcomes) - len(attempted)
    headline = (
        f"passed {len(passed)}/{len(attempted)} node tests that import "
        f"({len(outcomes)} selected, {skipped} do not import; "
        f"rtol {runner.rtol:g}, atol {runner.atol:g})"
    )
    print(headline)
    for outcome in outcomes:
        if outcome.stage == "import":
            print(f"SKIP {outcome.name}: does not import: {outcome.reason}")
    for outcome in attempted:
        if not outcome.passed:
            bound = f" [bound: {', '.join(outcome.bound)}]" if outcome.bound else ""
            print(f"FAIL {outcome.name}: {outcome.stage}: {outcome.reason}{bound}")
    summary = failure_summary(outcomes)
    print("failures by reason:")
    for line in summary:
        print(line)
    return [headline, "", "Failures by reason (count, category, examples):", *summary]


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m cleave.conformance_numeric",
        description="Compile and run the ONNX backend node tests that import, "
        "compare their outputs with the expected ones, and compare the passing "
        "tests with the pinned set.",
    )
    parser.add_argument(
        "--cleave",
        required=True,
        type=shlex.split,
        help="cleave, as a path or a command line (compile and run)",
    )
    parser.add_argument(
        "--cleave-translate",
        required=True,
        type=shlex.split,
        help="cleave-translate, as a path or a command line (the import check)",
    )
    parser.add_argument(
        "--cleave-opt",
        type=shlex.split,
        help="cleave-opt; when given, the import check round-trips the IR too",
    )
    parser.add_argument(
        "--compile-arg",
        action="append",
        default=[],
        help="a further `cleave compile` option, e.g. --compile-arg=--cxx=clang++ "
        "(repeatable)",
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
        help="pinned list of tests that pass (default: %(default)s)",
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="rewrite the pin with the tests that pass, the failure summary "
        "as its header",
    )
    parser.add_argument(
        "--filter", type=re.compile, help="only tests whose name matches this regex"
    )
    # The ONNX backend's defaults (onnx.backend.test.case.node).
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--atol", type=float, default=1e-7)
    parser.add_argument("--jobs", type=int, default=2, help="tests run side by side")
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds allowed per tool run"
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
    tools = Tools(args.cleave_translate, args.cleave_opt, args.timeout)
    runner = Runner(args.cleave, args.compile_arg, args.rtol, args.atol, args.timeout)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(lambda test: run_test(test, runner, tools), tests))
    header = _report(outcomes, runner)
    passed = {outcome.name for outcome in outcomes if outcome.passed}

    if args.update:
        write_pin(
            args.expected,
            passed,
            [
                "ONNX backend node tests that compile, run and match their "
                "expected outputs",
                "(python -m cleave.conformance_numeric --update writes this file).",
                "",
                *header,
                "",
            ],
        )
        print(f"wrote {len(passed)} tests to {args.expected}")
        return 0
    # An import failure's reason already starts with its stage.
    reasons = {
        o.name: o.reason if o.stage == "import" else f"{o.stage}: {o.reason}"
        for o in outcomes
        if not o.passed
    }
    return compare_with_pin(
        args.expected,
        args.filter,
        args.node_dir,
        {test.name for test in tests},
        passed,
        verb="passes",
        newly="newly passing",
        reasons=reasons,
    )


if __name__ == "__main__":
    sys.exit(main())
