#!/usr/bin/env python3
"""Single-inference latency of cleave's CPU runtime beside onnxruntime's.

For every reference model family it exports the model (cleave.models),
compiles it for one CPU device with ``cleave compile``, and for every thread
count opens a ``cleave.Session(bundle, threads=N)`` and an onnxruntime
``InferenceSession`` with ``intra_op_num_threads=N``,
``inter_op_num_threads=1``, sequential execution and every graph
optimisation (``ORT_ENABLE_ALL``). Both are first checked to agree (the
largest absolute difference at most ``--rtol`` times the largest absolute
onnxruntime value), then warmed up, then timed one inference per sample,
in alternating blocks of runs with a pause before each (see ``measure``).
It prints per thread count the median, p10 and p90 of each, the ratio of
the medians (cleave / onnxruntime: below 1 means cleave is faster) and the
geometric mean of the ratios.

    python bench/runtime_vs_onnxruntime.py [--models gpt resnet ...]
        [--threads 1,2] [--batch 1,8] [--seconds 1.0] [--large]
        [--realistic [NAME ...]] [--march x86-64-v4]
        [--profile] [--json out.json]
        [--memory [--memory-runs 20]]
        [--exports test/e2e/exports [--export NAME ...]]

``--large`` adds GPT and BERT at a size where the matrix products, not the
per-step overhead, take the time (their builders take a configuration; the
registry's other models have one fixed size). ``--realistic`` adds the
families at the sizes people deploy (bench/realistic_models.py: ResNet-50,
ConvNeXt-Tiny, MobileNetV2 and EfficientNet-B0 at 224x224, wav2vec 2.0 base
on one second of audio, Whisper-tiny's encoder on 30 seconds), all of them
or those named.
``--batch`` times every model at each batch size listed (samples beyond a
model's own are its own, shuffled: see ``batch_inputs``; the checked-in
exports only at their own batch). ``--profile`` prints, per
model, where each engine spends a run: cleave's program steps (from
``Session(profile=True)``) and onnxruntime's nodes (from its own profiler).
``--exports DIR`` adds the checked-in torch 2 exports (ONNX backend-test
folders: ``model.onnx`` and ``test_data_set_0``), timed on their first
data set; a dynamic export is compiled with its inputs bound to that data
set's shapes. ``--models`` with no name leaves the registry's models out.

``--memory`` also measures, per model and thread count, each engine's peak
resident memory (not for a model whose outputs disagree), each in a child
process of its own (this script again, see ``memory_child``) that imports
only its engine (cleave with its runtime module loaded, from the build the
timed sessions use, or onnxruntime), reads the model's inputs from an
``.npz`` file in the workdir and records its resident set (``VmRSS``), then
opens a session as the timed one is opened, runs it ``--memory-runs`` times
and reports its peak resident set (``VmHWM``). It prints per thread count a
second table: each engine's peak MiB, its session MiB (the peak less the
resident set before the session: what the session and its runs took,
weights, scratch memory and thread stacks included, the interpreter, NumPy
and the engine's libraries left out), the ratio of the session MiB (cleave
/ onnxruntime: below 1 means cleave takes less) and the geometric mean of
the ratios.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

# cleave.models.registry is imported by the functions that need it, not
# here: a --memory child of onnxruntime imports no cleave module.

#: The first argument that makes this script a --memory child.
MEMORY_CHILD = "--memory-child"

#: Sizes for ``--large``: one sequence of 128 tokens through two layers of
#: GPT-2-small / BERT-base width (hidden 768, 12 heads, MLP 3072).
LARGE_TRANSFORMER = dict(vocab_size=1024, max_positions=128, hidden=768,
                         heads=12, layers=2, mlp_ratio=4, batch=1, seq=128)


@dataclass
class Case:
    """One model to measure: its name in the tables and how to build it."""

    name: str
    family: str
    config: dict | None = None  # TransformerConfig fields, or the registry's
    folder: Path | None = None  # an ONNX backend-test folder (--exports)
    realistic: bool = False  # a bench/realistic_models.py builder
    batch: int | None = None  # None: the model's own

    def build(self):
        if self.realistic:
            from realistic_models import BUILDERS

            assert set(BUILDERS) == set(REALISTIC), "REALISTIC is out of date"
            return BUILDERS[self.family](self.batch or 1)
        if self.config is None:
            from cleave.models.export import with_batch
            from cleave.models.registry import MODELS

            reference = MODELS[self.family].build()
            if self.batch is not None:
                reference.inputs = batch_inputs(reference, self.batch)
            return reference
        from cleave.models import text

        config = dict(self.config)
        if self.batch is not None:
            config["batch"] = self.batch
        builder = {"gpt": text.build_gpt, "bert": text.build_bert}[self.family]
        return builder(text.TransformerConfig(**config))


def batch_inputs(reference, batch: int) -> dict:
    """The model's inputs at `batch` samples: with_batch's, but a float
    sample beyond the model's own is one of its own with the elements
    shuffled (a fixed permutation per sample) rather than scaled, so that
    every sample has the values of a sample the model was made for (scaled
    images drove EfficientNet-B0's logits past 1e3, where float32 engines
    differ from one another by more than the comparison allows)."""
    import torch

    from cleave.models.export import with_batch

    inputs = with_batch(reference, batch)
    for name, tensor in inputs.items():
        if not tensor.is_floating_point():
            continue
        axis = next((d for d, label in reference.dynamic_axes.get(name, {}).items()
                     if label == "batch"), 0)
        own = reference.inputs[name].shape[axis]
        samples = list(tensor.unbind(axis))
        for j in range(own, batch):
            sample = samples[j % own]
            order = torch.randperm(sample.numel(),
                                   generator=torch.Generator().manual_seed(j))
            samples[j] = samples[j % own].flatten()[order].reshape(sample.shape)
        inputs[name] = torch.stack(samples, axis)
    return inputs


@dataclass
class Timing:
    samples_ms: list[float] = field(default_factory=list)

    def percentile(self, q: float) -> float:
        return float(np.percentile(self.samples_ms, q))

    @property
    def median(self) -> float:
        return statistics.median(self.samples_ms)


def find_cleave() -> Path:
    candidates = sorted(REPO.glob("build*/bin/cleave"), key=lambda p: p.stat().st_mtime)
    if not candidates:
        sys.exit("no build*/bin/cleave under the repository; pass --cleave")
    return candidates[-1]


def read_data_set(folder: Path) -> dict[str, np.ndarray]:
    """The inputs of an ONNX backend-test folder's first data set."""
    import onnx
    from onnx import numpy_helper

    feeds = {}
    for path in sorted((folder / "test_data_set_0").glob("input_*.pb")):
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        feeds[tensor.name] = numpy_helper.to_array(tensor)
    return feeds


#: bench/realistic_models.py's models (its BUILDERS), named here so that
#: the timing process never imports torch (see export_apart).
REALISTIC = ("resnet50-224", "convnext_tiny-224", "mobilenet_v2-224",
             "efficientnet_b0-224", "wav2vec2_base-1s", "whisper_tiny_encoder")


def export_apart(case: Case, path: Path) -> dict[str, np.ndarray]:
    """export() in a child process of its own. PyTorch links the system's
    oneDNN, the library cleave's convolutions run on, and a convolution it
    runs (an export runs the model) fixes oneDNN's instruction set for the
    process before cleave can cap it at the bundle's (Dnnl.cpp): timed in
    the process that exported it, a default x86-64-v3 bundle of ResNet-50
    ran oneDNN's AVX-512 kernels (69 ms) instead of its AVX2 ones (107)."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(export, (case, path))


def export(case: Case, path: Path) -> dict[str, np.ndarray]:
    """Writes the case's ONNX file (once) and returns its example inputs."""
    if case.folder is not None:
        return read_data_set(case.folder)
    reference = case.build()
    feeds = {k: v.numpy() for k, v in reference.inputs.items()}
    if path.exists():
        return feeds
    if case.config is None and not case.realistic and case.batch is None:
        from cleave.models.export import export_model

        export_model(case.family, str(path))
        return feeds
    # export_model's export (autograd on, static shapes), for a model or a
    # batch the registry cannot name; the comparison with cleave checks the
    # graph (export_model's own check against torch, at 1e-4 of the largest
    # output, is tighter than some models' float32 sums at batch 8).
    import torch

    torch.onnx.export(reference.module, tuple(reference.inputs.values()), str(path),
                      input_names=list(reference.inputs),
                      output_names=list(reference.output_names),
                      opset_version=17, do_constant_folding=True)
    return feeds


def input_bindings(model: Path, feeds: dict[str, np.ndarray]) -> list[str]:
    """--input-shape options for the graph inputs of `model` that have a
    dimension without a fixed size, bound to the shapes of `feeds`."""
    import onnx

    graph = onnx.load(str(model), load_external_data=False).graph
    options = []
    for value in graph.input:
        dims = value.type.tensor_type.shape.dim
        if value.name in feeds and any(not d.HasField("dim_value") for d in dims):
            shape = "x".join(str(d) for d in feeds[value.name].shape)
            options += ["--input-shape", f"{value.name}={shape}"]
    return options


def compile_bundle(cleave: Path, model: Path, bundle: Path,
                   feeds: dict[str, np.ndarray], march: str | None = None) -> None:
    if bundle.exists() and bundle.stat().st_mtime >= max(
            model.stat().st_mtime, cleave.stat().st_mtime):
        return
    options = ["--march", march] if march else []
    subprocess.run([str(cleave), "compile", str(model), "-o", str(bundle),
                    "--target", "cpu", "--quiet"] + options
                   + input_bindings(model, feeds), check=True)


def ort_session(model: Path, threads: int, profile_prefix: str | None = None):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if profile_prefix:
        options.enable_profiling = True
        options.profile_file_prefix = profile_prefix
    return ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


def agree(name: str, ours: dict, theirs: list, names: list[str], rtol: float) -> str:
    """'' when every output agrees, else what differs."""
    for output, reference in zip(names, theirs):
        got = ours[output]
        if got.shape != reference.shape:
            return f"{output}: shape {got.shape} vs {reference.shape}"
        if reference.dtype.kind in "iub":
            if np.any(got != reference):
                return f"{output}: integer outputs differ"
            continue
        error = float(np.max(np.abs(got.astype(np.float64) - reference)))
        scale = float(np.max(np.abs(reference))) or 1.0
        if not (error <= rtol * scale and np.isfinite(got).all()):
            return f"{output}: max abs error {error:.3e} > {rtol:g} x {scale:.3e}"
    return ""


def measure(ort_run, cleave_run, args: argparse.Namespace) -> tuple[Timing, Timing]:
    """Alternates the engines in blocks of `args.block` seconds until each has
    had `args.seconds` (at least `args.min_runs` samples), one inference per
    sample.

    Each block starts after a pause and a few untimed runs: both engines
    leave their worker threads spinning for a while after a run (OpenMP's
    and onnxruntime's thread pools), and an engine timed while the other's
    threads still spin measures the other engine's spinning, not itself.
    """
    deadline = time.perf_counter() + args.warmup
    while time.perf_counter() < deadline:
        ort_run()
        cleave_run()
    theirs, ours = Timing(), Timing()
    block = 0
    while (min(len(theirs.samples_ms), len(ours.samples_ms)) < args.min_runs
           or block < 2 * args.seconds / args.block) and block < 2 * args.max_blocks:
        run, timing = ((ort_run, theirs), (cleave_run, ours))[block % 2]
        time.sleep(args.pause)
        for _ in range(3):
            run()
        end = time.perf_counter() + args.block
        while time.perf_counter() < end:
            t0 = time.perf_counter_ns()
            run()
            timing.samples_ms.append((time.perf_counter_ns() - t0) / 1e6)
        block += 1
    return theirs, ours


# `// 12: add + gelu (/blocks.0/mlp/mlp.1/Mul_1)` in the emitted program.
STEP_COMMENT = re.compile(r"^\s*// (\d+): (.+) \((.*)\)$")


def step_kinds(bundle: Path) -> dict[int, str]:
    kinds = {}
    for program in (bundle / "programs").glob("*.cpp"):
        for line in program.read_text().splitlines():
            match = STEP_COMMENT.match(line)
            if match:
                kinds[int(match.group(1))] = match.group(2)
    return kinds


def profile_cleave(bundle: Path, feeds: dict, threads: int, runs: int,
                   build_dir: Path | None) -> list[tuple]:
    """(median ms, step, kind, node) of every step over `runs` runs."""
    import cleave

    session = cleave.Session(bundle, threads=threads, profile=True, build_dir=build_dir)
    kinds = step_kinds(bundle)
    per_step: dict[int, list[float]] = {}
    names: dict[int, str] = {}
    for _ in range(5):
        session.run(feeds)
    for _ in range(runs):
        session.run(feeds)
        for step, node, seconds in session.profile():
            per_step.setdefault(step, []).append(seconds * 1e3)
            names[step] = node
    return [(statistics.median(v), s, kinds.get(s, "?"), names[s]) for s, v in per_step.items()]


def profile_ort(model: Path, feeds: dict, threads: int, runs: int, workdir: Path) -> list[tuple]:
    """(median ms, op type, node) of every node over `runs` runs."""
    session = ort_session(model, threads, str(workdir / "ort-profile"))
    for _ in range(5):
        session.run(None, feeds)
    for _ in range(runs):
        session.run(None, feeds)
    path = session.end_profiling()
    events = json.loads(Path(path).read_text())
    os.unlink(path)
    per_node: dict[str, list[float]] = {}
    types: dict[str, str] = {}
    for event in events:
        if event.get("cat") != "Node" or not event["name"].endswith("_kernel_time"):
            continue
        node = event["name"][: -len("_kernel_time")]
        per_node.setdefault(node, []).append(event["dur"] / 1e3)
        types[node] = event["args"].get("op_name", "?")
    # The first 5 runs are warm-up; keep the last `runs` samples of each node.
    return [(statistics.median(v[-runs:]), types[n], n) for n, v in per_node.items()]


def print_profile(name: str, threads: int, ours: list[tuple], theirs: list[tuple],
                  top: int) -> dict:
    ours_total = sum(r[0] for r in ours)
    theirs_total = sum(r[0] for r in theirs)
    by_kind: dict[str, float] = {}
    for ms, _, kind, _ in ours:
        by_kind[kind] = by_kind.get(kind, 0.0) + ms
    by_type: dict[str, float] = {}
    for ms, op, _ in theirs:
        by_type[op] = by_type.get(op, 0.0) + ms
    print(f"\n{name}, {threads} thread(s): cleave {len(ours)} steps, {ours_total:.3f} ms "
          f"in steps; onnxruntime {len(theirs)} nodes, {theirs_total:.3f} ms in nodes")
    print("  cleave by step kind:        "
          + ", ".join(f"{k} {v:.3f}" for k, v in sorted(by_kind.items(), key=lambda x: -x[1])[:top]))
    print("  onnxruntime by op type:     "
          + ", ".join(f"{k} {v:.3f}" for k, v in sorted(by_type.items(), key=lambda x: -x[1])[:top]))
    print("  cleave top steps:")
    for ms, step, kind, node in sorted(ours, reverse=True)[:top]:
        print(f"    {ms:8.3f} ms  #{step:<4} {kind:<28} {node}")
    print("  onnxruntime top nodes:")
    for ms, op, node in sorted(theirs, reverse=True)[:top]:
        print(f"    {ms:8.3f} ms  {op:<28} {node}")
    return {"cleave_steps_ms": ours_total, "ort_nodes_ms": theirs_total,
            "cleave_by_kind": by_kind, "ort_by_type": by_type,
            "cleave_top": [list(r) for r in sorted(ours, reverse=True)[:top]],
            "ort_top": [list(r) for r in sorted(theirs, reverse=True)[:top]]}


def status_kib(name: str) -> int | None:
    """A field of /proc/self/status in KiB (``VmRSS``: the resident set now,
    ``VmHWM``: its peak), or None where the file or the field is missing."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def max_rss_kib() -> int:
    """The peak resident set so far, from getrusage (KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def memory_child(spec: dict) -> dict:
    """What a --memory child measures (MiB), in the child.

    It imports the engine `spec["engine"]` names (cleave with its runtime
    module loaded, since ``import cleave`` loads it only with the first
    session; or onnxruntime) and nothing of the other, reads the inputs from
    `spec["feeds"]` (an .npz file), records the resident set, then opens a
    session on `spec["target"]` (bundle or ONNX file) with
    `spec["threads"]` threads, as the timed sessions are opened, runs it
    `spec["runs"]` times and records the peak resident set.
    """
    engine, threads = spec["engine"], spec["threads"]
    build_dir = spec.get("build_dir")
    if engine == "cleave":
        import cleave
        from cleave.session import load_runtime

        load_runtime(build_dir)
    else:
        import onnxruntime  # noqa: F401
    with np.load(spec["feeds"]) as archive:
        feeds = {name: archive[name] for name in archive.files}
    baseline = status_kib("VmRSS") or max_rss_kib()
    if engine == "cleave":
        session = cleave.Session(spec["target"], threads=threads, build_dir=build_dir)
        for _ in range(spec["runs"]):
            session.run(feeds)
    else:
        session = ort_session(Path(spec["target"]), threads)
        for _ in range(spec["runs"]):
            session.run(None, feeds)
    peak = status_kib("VmHWM") or max_rss_kib()
    return {"baseline_mib": baseline / 1024, "peak_mib": peak / 1024,
            "session_mib": (peak - baseline) / 1024}


def run_memory_child(spec_json: str) -> int:
    """The entry point of a --memory child: measures, and writes the figures
    as JSON to `spec["out"]`."""
    spec = json.loads(spec_json)
    Path(spec["out"]).write_text(json.dumps(memory_child(spec)) + "\n")
    return 0


def runtime_build_dir(build_dir: Path | None) -> Path | None:
    """The build whose runtime module cleave.Session loads in this process
    (``--build-dir``, else the one found on the import path), for the
    --memory children of cleave to load the same module; `build_dir` where
    the module is not in a build's python/cleave (the children, with this
    process's environment and working directory, then find it the same
    way)."""
    from cleave.session import load_runtime

    module = Path(load_runtime(build_dir).__file__).resolve()
    if module.parent.name == "cleave" and module.parent.parent.name == "python":
        return module.parents[2]
    return build_dir


def measure_memory(engine: str, target: Path, feeds: Path, threads: int, runs: int,
                   build_dir: Path | None, workdir: Path) -> dict:
    """Runs one --memory child of `engine` ("cleave" or "onnxruntime") and
    returns its figures (see ``memory_child``), or {"error": ...}."""
    out = workdir / f"memory-{engine}.json"
    out.unlink(missing_ok=True)
    spec = {"engine": engine, "target": str(target), "feeds": str(feeds),
            "threads": threads, "runs": runs, "out": str(out),
            "build_dir": str(build_dir) if build_dir else None}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), MEMORY_CHILD,
                           json.dumps(spec)], capture_output=True, text=True)
    if done.returncode != 0 or not out.exists():
        lines = (done.stderr or done.stdout).strip().splitlines()
        return {"error": lines[-1] if lines else f"exit status {done.returncode}"}
    return json.loads(out.read_text())


def memory_row(model: Path, bundle: Path, feeds: Path, threads: int, runs: int,
               build_dir: Path | None, workdir: Path) -> dict:
    """Both engines' --memory figures for one model and thread count, and
    the ratio of their session MiB (cleave / onnxruntime)."""
    row = {"runs": runs,
           "ort": measure_memory("onnxruntime", model, feeds, threads, runs,
                                 build_dir, workdir),
           "cleave": measure_memory("cleave", bundle, feeds, threads, runs,
                                    build_dir, workdir)}
    theirs, ours = row["ort"].get("session_mib", 0), row["cleave"].get("session_mib", 0)
    if theirs > 0 and ours > 0:
        row["ratio"] = ours / theirs
    return row


def print_memory(threads: int, rows: list[dict], runs: int) -> float:
    """The --memory table of one thread count; returns the geometric mean of
    the ratios."""
    ratios = [r["memory"]["ratio"] for r in rows if "ratio" in r.get("memory", {})]
    print(f"\n{threads} thread(s): peak resident MiB and session MiB (the peak less the "
          f"resident set before the session), {runs} runs; ratio = cleave / onnxruntime "
          "session MiB")
    print(f"{'model':<30} {'onnxruntime peak':>16} {'session':>9} "
          f"{'cleave peak':>12} {'session':>9} {'ratio':>7}")
    for r in rows:
        memory = r.get("memory")
        if memory is None:
            continue
        failed = [f"{e} child failed: {memory[e]['error']}"
                  for e in ("ort", "cleave") if "error" in memory[e]]
        if failed:
            print(f"{r['model']:<30} {'; '.join(failed)}")
            continue
        o, c = memory["ort"], memory["cleave"]
        print(f"{r['model']:<30} {o['peak_mib']:>16.1f} {o['session_mib']:>9.1f} "
              f"{c['peak_mib']:>12.1f} {c['session_mib']:>9.1f} "
              f"{memory.get('ratio', float('nan')):>7.2f}")
    print(f"{'geometric mean':<30} {'':>16} {'':>9} {'':>12} {'':>9} {geomean(ratios):>7.2f}",
          flush=True)
    return geomean(ratios)


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main() -> int:
    from cleave.models.registry import MODELS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--exports", type=Path, default=None,
                        help="a folder of ONNX backend-test folders to add")
    parser.add_argument("--export", action="append", default=[],
                        help="with --exports: only this folder (repeatable)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--large", action="store_true",
                        help="also GPT and BERT at hidden 768, 12 heads, 1 x 128 tokens")
    parser.add_argument("--realistic", nargs="*", default=None,
                        help="also these models at deployed sizes (none named: all of "
                             "bench/realistic_models.py's)")
    parser.add_argument("--batch", default=None,
                        help="comma-separated batch sizes (default: each model's own)")
    parser.add_argument("--march", default=None,
                        help="cleave compile --march, the instruction set of the "
                             "programs and of the kernels they run (default: the "
                             "cpu target's, x86-64-v3; onnxruntime runs the CPU's own)")
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="timed seconds per engine, model and thread count")
    parser.add_argument("--warmup", type=float, default=0.3, help="warm-up seconds")
    parser.add_argument("--block", type=float, default=0.1,
                        help="seconds of one engine's runs before the other's turn")
    parser.add_argument("--pause", type=float, default=0.02,
                        help="idle seconds before each block (spinning threads settle)")
    parser.add_argument("--min-runs", type=int, default=30)
    parser.add_argument("--max-blocks", type=int, default=200, help="per engine")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--profile", action="store_true", help="print per-step hot spots")
    parser.add_argument("--profile-runs", type=int, default=50)
    parser.add_argument("--top", type=int, default=6)
    parser.add_argument("--memory", action="store_true",
                        help="also each engine's peak resident memory, in a child process")
    parser.add_argument("--memory-runs", type=int, default=20,
                        help="runs of each --memory child's session")
    parser.add_argument("--cleave", type=Path, default=None)
    parser.add_argument("--build-dir", type=Path, default=None,
                        help="the build whose runtime module Session loads")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    cleave_bin = args.cleave or find_cleave()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="cleave-rt-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)

    import cleave
    import onnxruntime as ort

    cases = [Case(m, m) for m in args.models]
    if args.large:
        cases += [Case(f"{m}-768", m, LARGE_TRANSFORMER)
                  for m in ("gpt", "bert") if m in args.models]
    if args.realistic is not None:
        unknown = sorted(set(args.realistic) - set(REALISTIC))
        if unknown:
            parser.error(f"--realistic: unknown model(s) {', '.join(unknown)}; "
                         f"known: {', '.join(REALISTIC)}")
        cases += [Case(m, m, realistic=True) for m in args.realistic or REALISTIC]
    if args.batch:
        batches = [int(b) for b in args.batch.split(",")]
        cases = [c if c.folder is not None else
                 Case(f"{c.name}-b{b}", c.family, c.config, c.folder, c.realistic, b)
                 for c in cases for b in (batches[:1] if c.folder is not None else batches)]
    if args.exports:
        folders = sorted(p for p in args.exports.iterdir()
                         if (p / "model.onnx").is_file()
                         and (not args.export or p.name in args.export))
        cases += [Case(p.name, "export", folder=p) for p in folders]

    print(f"cleave: {cleave_bin}\nonnxruntime: {ort.__version__}\n"
          f"cleave compile --march {args.march or 'x86-64-v3 (default)'}\n"
          f"cpus: {os.cpu_count()}, load average at start: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\nworkdir: {workdir}")
    prepared = {}
    for case in cases:
        model = (case.folder / "model.onnx" if case.folder is not None
                 else workdir / f"{case.name}.onnx")
        bundle = workdir / f"{case.name}.{args.march or 'default'}.cleave"
        feeds = export_apart(case, model)
        compile_bundle(cleave_bin, model, bundle, feeds, args.march)
        prepared[case.name] = (model, bundle, feeds)
        if args.memory:
            np.savez(workdir / f"{case.name}.inputs.npz", **feeds)
    build_dir = runtime_build_dir(args.build_dir) if args.memory else None
    # export_apart's reason: PyTorch in this process would set oneDNN's
    # instruction set before cleave does.
    assert "torch" not in sys.modules, "the timing process imported torch"

    results: dict = {"onnxruntime": ort.__version__, "cpus": os.cpu_count(),
                     "march": args.march or "x86-64-v3", "loadavg_start": os.getloadavg(), "threads": {}}
    for n in threads:
        rows = []
        for case in cases:
            model, bundle, feeds = prepared[case.name]
            theirs_session = ort_session(model, n)
            ours_session = cleave.Session(bundle, threads=n, build_dir=args.build_dir)
            names = [o.name for o in theirs_session.get_outputs()]
            mismatch = agree(case.name, ours_session.run(feeds),
                             theirs_session.run(None, feeds), names, args.rtol)
            row = {"model": case.name}
            if mismatch:
                print(f"{case.name}: outputs disagree ({mismatch}); not timed", flush=True)
                row["error"] = mismatch
                rows.append(row)
                continue
            theirs, ours = measure(lambda: theirs_session.run(None, feeds),
                                   lambda: ours_session.run(feeds), args)
            row.update({
                "runs": len(ours.samples_ms),
                "ort_ms": {"median": theirs.median, "p10": theirs.percentile(10),
                           "p90": theirs.percentile(90)},
                "cleave_ms": {"median": ours.median, "p10": ours.percentile(10),
                              "p90": ours.percentile(90)},
                "ratio": ours.median / theirs.median,
            })
            if args.profile:
                row["profile"] = print_profile(
                    case.name, n,
                    profile_cleave(bundle, feeds, n, args.profile_runs, args.build_dir),
                    profile_ort(model, feeds, n, args.profile_runs, workdir), args.top)
            if args.memory:
                row["memory"] = memory_row(model, bundle, workdir / f"{case.name}.inputs.npz",
                                           n, args.memory_runs, build_dir, workdir)
            rows.append(row)
        ratios = [r["ratio"] for r in rows if "ratio" in r]
        results["threads"][str(n)] = {"rows": rows, "geomean_ratio": geomean(ratios)}

        print(f"\n{n} thread(s): median ms [p10-p90]; ratio = cleave / onnxruntime")
        print(f"{'model':<30} {'onnxruntime ms':>24} {'cleave ms':>24} {'ratio':>7} {'runs':>6}")
        for r in rows:
            if "error" in r:
                print(f"{r['model']:<30} {'outputs disagree: ' + r['error']}")
                continue
            o, c = r["ort_ms"], r["cleave_ms"]
            ort_cell = f"{o['median']:.3f} [{o['p10']:.3f}-{o['p90']:.3f}]"
            cleave_cell = f"{c['median']:.3f} [{c['p10']:.3f}-{c['p90']:.3f}]"
            print(f"{r['model']:<30} {ort_cell:>24} {cleave_cell:>24} "
                  f"{r['ratio']:>7.2f} {r['runs']:>6}")
        print(f"{'geometric mean':<30} {'':>24} {'':>24} {geomean(ratios):>7.2f}", flush=True)
        if args.memory:
            results["threads"][str(n)]["geomean_memory_ratio"] = print_memory(
                n, rows, args.memory_runs)

    results["loadavg_end"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == [MEMORY_CHILD]:
        sys.exit(run_memory_child(sys.argv[2]))
    sys.exit(main())
