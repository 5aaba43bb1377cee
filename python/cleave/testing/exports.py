"""Compiles and runs the checked-in torch 2 exports (test/e2e/exports).

Every folder of the set is an ONNX backend test (model.onnx and
test_data_set_N with onnxruntime's outputs). For each folder and each
device configuration this compiles the model for the cpu target with
`cleave compile` and runs the bundle on each data set with
`cleave run --test-data`, which compares every output with onnxruntime's
(|got - expected| <= atol + rtol * |expected|, rtol 1e-3, atol 1e-5). A
model with dynamic input dimensions is compiled once per data set, its
inputs bound to the set's shapes with `--input-shape`. A bundle for several
devices runs as MPI ranks that `cleave run` starts. With `--target` other
than cpu (a GPU target such as h100-sxm) each bundle is only compiled, its
programs built by nvcc: it runs on that target's devices alone.

    python -m cleave.testing.exports SET WORKDIR [--cleave PATH]
        [--config 1,4,2x2] [--jobs N] [--only NAME] [--target NAME]

A configuration is `N` (N devices, the planner's choice of mesh) or
`PPxTP` (pipeline stages by tensor-parallel devices, pinned). One line is
printed per folder and configuration, in order:

    NAME [CONFIG]: PASS (mesh pp=P tp=T dp=D)
    NAME [CONFIG]: PASS (at NAME=AxB: mesh pp=P tp=T dp=D; at ...)
    NAME [CONFIG]: PASS (compiled for TARGET: mesh ...)
    NAME [CONFIG]: known failure: MESSAGE

SET/known-failures.txt lists the exports that are expected to fail, one
`NAME CONFIG: MESSAGE` a line: such an export must still fail, and its
error must contain MESSAGE. An export that fails otherwise, or a known
failure that passes, is printed as `FAIL` or `UNEXPECTED PASS` with the
error, and the exit status is 1; the whole output of a run that failed is
kept in WORKDIR/NAME-CONFIG.cleave.log.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cleave.testing.e2e import _default_cleave

_KNOWN_FAILURES = "known-failures.txt"


@dataclass(frozen=True)
class Config:
    """Devices, and the pinned mesh when there is one."""

    devices: int
    pp: int | None = None
    tp: int | None = None

    @staticmethod
    def parse(text: str) -> "Config":
        if re.fullmatch(r"[1-9][0-9]*", text):
            return Config(int(text))
        match = re.fullmatch(r"([1-9][0-9]*)x([1-9][0-9]*)", text)
        if not match:
            raise ValueError(f"configuration '{text}' is not N or PPxTP")
        pp, tp = int(match[1]), int(match[2])
        return Config(pp * tp, pp, tp)

    def __str__(self) -> str:
        if self.pp is None:
            return f"{self.devices} device" + ("s" if self.devices > 1 else "")
        return f"pp={self.pp} tp={self.tp}"

    def tag(self) -> str:
        return f"{self.devices}" if self.pp is None else f"{self.pp}x{self.tp}"

    def compile_args(self) -> list[str]:
        if self.devices == 1:
            return []
        args = ["--devices", str(self.devices)]
        if self.pp is not None:
            args += ["--pp", str(self.pp), "--tp", str(self.tp)]
        return args


@dataclass(frozen=True)
class Outcome:
    """Whether an export passed, and its mesh or its error."""

    passed: bool
    detail: str


def _first_error(output: str) -> str:
    """The first `error:` line, without the path before it, and the indented
    lines that continue it (the unsupported operators), separated by "; "."""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if "error:" in line:
            message = [line[line.index("error:") + len("error:"):].strip()]
            for more in lines[index + 1:]:
                if not more.startswith(" "):
                    break
                message.append(more.strip())
            return " ".join([message[0], "; ".join(message[1:])]).strip()
    # The first line that says something (mpirun frames its messages in
    # rows of dashes).
    lines = [line for line in output.splitlines() if line.strip("- \t")]
    return lines[0].strip() if lines else "no output"


def _mesh(bundle: Path) -> str:
    plan = json.loads((bundle / "plan.json").read_text())
    mesh = plan.get("mesh", {})
    return " ".join(f"{axis}={mesh.get(axis, 1)}" for axis in ("pp", "tp", "dp"))


def _dynamic_inputs(model: Path) -> list[str]:
    """The graph inputs with a dimension that is not a fixed size."""
    import onnx

    graph = onnx.load(str(model), load_external_data=False).graph
    initializers = {t.name for t in graph.initializer}
    names = []
    for value in graph.input:
        if value.name in initializers:
            continue
        dims = value.type.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in dims):
            names.append(value.name)
    return names


def _input_shapes(data_set: Path, names: list[str]) -> list[str]:
    """`NAME=AxB` of each of `names` in the data set's input_N.pb."""
    import onnx

    shapes = {}
    for path in sorted(data_set.glob("input_*.pb")):
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        shapes[tensor.name] = "x".join(str(d) for d in tensor.dims)
    return [f"{name}={shapes[name]}" for name in names]


def _check_data_set(cleave: str, folder: Path, data_set: Path,
                    bundle: Path, config: Config,
                    bindings: list[str], target: str = "cpu") -> Outcome:
    compiled = subprocess.run(
        [cleave, "compile", str(folder / "model.onnx"), "-o", str(bundle),
         "--target", target, "--quiet"] + config.compile_args()
        + [arg for binding in bindings for arg in ("--input-shape", binding)],
        capture_output=True, text=True)
    if compiled.returncode != 0:
        return Outcome(False, _first_error(compiled.stderr + compiled.stdout))
    if target != "cpu":
        return Outcome(True, f"compiled for {target}: mesh {_mesh(bundle)}")
    ran = subprocess.run(
        [cleave, "run", str(bundle), "--test-data", str(data_set),
         "--threads", "1"],
        capture_output=True, text=True)
    if ran.returncode != 0:
        (bundle.parent / f"{bundle.name}.log").write_text(ran.stdout + ran.stderr)
        failed = [line for line in ran.stdout.splitlines()
                  if "outside tolerance" in line and " 0 of " not in line]
        return Outcome(False, failed[0].strip() if failed
                       else _first_error(ran.stderr + ran.stdout))
    return Outcome(True, f"mesh {_mesh(bundle)}")


def _check(cleave: str, folder: Path, workdir: Path, config: Config,
           target: str = "cpu") -> Outcome:
    dynamic = _dynamic_inputs(folder / "model.onnx")
    data_sets = sorted(folder.glob("test_data_set_*"))
    if not dynamic:
        bundle = workdir / f"{folder.name}-{config.tag()}.cleave"
        return _check_data_set(cleave, folder, data_sets[0], bundle, config, [],
                               target)
    details = []
    for data_set in data_sets:
        bindings = _input_shapes(data_set, dynamic)
        suffix = data_set.name.rsplit("_", 1)[-1]
        bundle = workdir / f"{folder.name}-{config.tag()}-{suffix}.cleave"
        outcome = _check_data_set(cleave, folder, data_set, bundle, config,
                                  bindings, target)
        detail = f"at {' '.join(bindings)}: {outcome.detail}"
        if not outcome.passed:
            return Outcome(False, detail)
        details.append(detail)
    return Outcome(True, "; ".join(details))


def _known_failures(set_dir: Path) -> dict[tuple[str, str], str]:
    known: dict[tuple[str, str], str] = {}
    path = set_dir / _KNOWN_FAILURES
    if not path.exists():
        return known
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = re.fullmatch(r"(\S+) (\S+): (.+)", line.strip())
        if not match:
            raise ValueError(f"{path}:{number}: expected 'NAME CONFIG: MESSAGE'")
        known[(match[1], match[2])] = match[3]
    return known


def _report(name: str, config: Config, outcome: Outcome,
            expected_error: str | None) -> bool:
    label = f"{name} [{config}]"
    if expected_error is None:
        print(f"{label}: {'PASS' if outcome.passed else 'FAIL'} "
              f"({outcome.detail})")
        return outcome.passed
    if outcome.passed:
        print(f"{label}: UNEXPECTED PASS ({outcome.detail}); expected: "
              f"{expected_error}")
        return False
    if expected_error in outcome.detail:
        print(f"{label}: known failure: {expected_error}")
        return True
    print(f"{label}: FAIL ({outcome.detail}); expected: {expected_error}")
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", type=Path, help="the folder of exports")
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--cleave", default=_default_cleave())
    parser.add_argument("--config", default="1",
                        help="comma-separated N or PPxTP (default 1)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="exports checked at once (default 1)")
    parser.add_argument("--only", action="append", default=[],
                        help="check only this export (repeatable)")
    parser.add_argument("--target", default="cpu",
                        help="target preset; other than cpu, compile only")
    args = parser.parse_args(argv)
    try:
        configs = [Config.parse(c) for c in args.config.split(",")]
        known = _known_failures(args.set)
    except ValueError as error:
        parser.error(str(error))

    folders = sorted(p for p in args.set.iterdir()
                     if (p / "model.onnx").is_file())
    if args.only:
        folders = [f for f in folders if f.name in args.only]
        missing = set(args.only) - {f.name for f in folders}
        if missing:
            parser.error(f"no export named {', '.join(sorted(missing))}")
    if not folders:
        parser.error(f"{args.set} holds no export (no */model.onnx)")
    args.workdir.mkdir(parents=True, exist_ok=True)

    cases = [(folder, config) for folder in folders for config in configs]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(
            lambda case: _check(args.cleave, case[0], args.workdir, case[1],
                                args.target),
            cases))
    ok = True
    for (folder, config), outcome in zip(cases, outcomes):
        ok &= _report(folder.name, config, outcome,
                      known.get((folder.name, config.tag())))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
