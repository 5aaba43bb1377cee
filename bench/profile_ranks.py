"""Measured against predicted: the reference models on 1, 2 and 4 CPU ranks.

    python bench/profile_ranks.py [--models gpt bert ...] [--repeat 10]
        [--cleave build/bin/cleave] [--worker build/bin/cleave-worker]
        [--threads 1] [--workdir DIR] [--json out.json] [--batch N]
        [--target cpu|FILE.json] [--configs 1 "2 pp2" ...]

For every model family of ``cleave.models`` it exports the model, compiles
it for the cpu target on 1 device, 2 (pp=2), 4 (pp=2 x tp=2) and, when the
planner accepts them, 4 as tp=4 and pp=4, runs each bundle with
``cleave-worker run --profile --repeat K`` (one untimed warm-up run, then
the median of K) and reads the summary it writes (profile.json). It prints
per configuration the measured and predicted step and the cost model's
error ((predicted - measured) / measured), and per model the step on 1, 2
and 4 ranks with the speed-up of 2 and 4 ranks over 1.

``--onnx FILE`` (repeatable) profiles an ONNX file of fixed input shapes
too, say a deployed-size export of ``bench/runtime_vs_onnxruntime.py
--realistic`` (its inputs are random: standard normal floats, integers
1), named by its file; with ``--onnx`` and no ``--models``, only the
files run.

``--target`` compiles for another target file than the ``cpu`` preset (one
``cleave calibrate`` wrote, say; the header then says how far the
calibration's reference product drifted while it was measured), and ``--configs`` runs only the
configurations of those labels (``--configs 1``: the single-rank step).

A machine shared with other work runs slower at some minutes than at
others, and a calibration taken at one speed predicts every later run as
if at that speed. Against a calibrated target, the script therefore also
times the calibration's reference product (a 128x512x512 matrix product
over constant weights, compiled as a bundle) right before each model, and
prints its speed then against its median while calibrating (``speed``:
above 1, the machine is faster than it was) and the error with the
prediction scaled by it (``at speed``): what the cost model gets wrong
once the machine's own speed is taken out.

With ``--batch N`` the models are exported with N samples and run on 1
rank and on 2 ranks three ways instead: 2 pipeline stages fed the batch as
1 microbatch, the same fed 4 microbatches (each stage computes a microbatch
while the previous one's activations travel), and 2 data-parallel
replicas.

The ranks run on this machine with ``--threads`` kernel threads each (1:
one rank uses one core, so that 1, 2 and 4 ranks compare 1, 2 and 4 cores'
worth of work; 0: ``cleave run``'s default, cores / ranks). On a machine
with fewer cores than ranks they oversubscribe, and the speed-ups say what
that costs here, not what the partitioning would give on as many
machines.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

MODELS = ["gpt", "bert", "vit", "resnet", "mobilenet_v2", "wav2vec2", "deepspeech", "lstm"]

#: (label, devices, compile options); "4" is the column of the summary.
CONFIGS = [
    ("1", 1, []),
    ("2 pp2", 2, ["--pp", "2"]),
    ("4 pp2 tp2", 4, ["--pp", "2", "--tp", "2"]),
    ("4 tp4", 4, ["--tp", "4"]),
    ("4 pp4", 4, ["--pp", "4"]),
]

#: With --batch: the batch cut into replicas and microbatches.
BATCH_CONFIGS = [
    ("1", 1, []),
    ("2 pp2 mb1", 2, ["--pp", "2", "--microbatches", "1"]),
    ("2 pp2 mb4", 2, ["--pp", "2", "--microbatches", "4"]),
    ("2 dp2", 2, ["--dp", "2"]),
]


def calibration_stability(target: str) -> str:
    """How steady the machine was while `target` (a file `cleave calibrate`
    wrote) was measured: its reference product's rates and drift. Errors
    against a calibration that drifted by tens of percent measure the
    machine's phases as much as the cost model."""
    path = Path(target)
    if not path.is_file():
        return f"{target}: a preset, no calibration of this machine"
    stability = json.loads(path.read_text()).get("calibration", {}).get("stability")
    if not stability:
        return f"{target}: no calibration.stability recorded"
    rates = ", ".join(f"{rate / 1e9:.1f}" for rate in stability["flops_per_s"])
    return (f"{target}: while it was calibrated, {stability['reference']} ran at {rates} "
            f"GFLOP/s (drift {100 * stability['drift']:.1f}%)")


def reference_rate(target: str) -> float | None:
    """The median rate of the calibration's reference product, FLOP/s."""
    path = Path(target)
    if not path.is_file():
        return None
    stability = json.loads(path.read_text()).get("calibration", {}).get("stability")
    if not stability or stability.get("reference") != "matmul 128x512x512":
        return None
    rates = sorted(stability["flops_per_s"])
    return rates[len(rates) // 2]


class MachineSpeed:
    """Times the reference product as a bundle: its rate now over the
    calibration's. The product's step alone is timed (the profile's trace),
    and its result is summed to a short output, so that no run pays for
    faulting in a fresh output buffer."""

    M, K, N = 128, 512, 512

    def __init__(self, args, workdir: Path, calibrated: float):
        import onnx
        from onnx import TensorProto, helper, numpy_helper

        self.args, self.calibrated = args, calibrated
        rng = np.random.default_rng(0)
        weight = numpy_helper.from_array(
            (rng.standard_normal((self.K, self.N)) * 0.05).astype(np.float32), "w")
        axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["product"], name="reference_product"),
             helper.make_node("ReduceSum", ["product", "axes"], ["y"], keepdims=0)],
            "reference",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [self.M, self.K])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [self.M])], [weight, axes])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.save(model, str(workdir / "reference.onnx"))
        np.save(workdir / "reference.x.npy",
                rng.standard_normal((self.M, self.K)).astype(np.float32))
        self.workdir = workdir
        self.bundle = workdir / "reference.cleave"
        subprocess.run([str(args.cleave), "compile", str(workdir / "reference.onnx"), "-o",
                        str(self.bundle), "--target", args.target, "--devices", "1",
                        "--quiet"], check=True)

    def measure(self) -> float | None:
        """The reference's rate now over the calibration's; None if it failed."""
        directory = self.workdir / "reference.profile"
        command = [str(self.args.worker), "run", str(self.bundle), "--profile-dir",
                   str(directory), "--repeat", "30", "--timeout", "60",
                   "--input", f"x={self.workdir / 'reference.x.npy'}"]
        if self.args.threads:
            command.append(f"--threads={self.args.threads}")
        if subprocess.run(command, capture_output=True, text=True).returncode != 0:
            return None
        trace = json.loads((directory / "trace_rank_0.json").read_text())
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        durations = sorted(event["dur"] for event in events
                           if event.get("ph") == "X" and event.get("name") == "reference_product")
        if not durations:
            return None
        seconds = durations[len(durations) // 2] * 1e-6
        return 2.0 * self.M * self.K * self.N / seconds / self.calibrated


def export(name: str, workdir: Path, batch: int | None) -> tuple[Path, list[str]]:
    """The model's ONNX file and --input arguments for its example inputs."""
    from cleave.models.export import export_model, with_batch
    from cleave.models.registry import get_model

    suffix = f".batch{batch}" if batch else ""
    model = workdir / f"{name}{suffix}.onnx"
    if not model.exists():
        export_model(name, str(model), batch=batch)
    reference = get_model(name).build()
    examples = with_batch(reference, batch) if batch else reference.inputs
    inputs = []
    for input_name, value in examples.items():
        path = workdir / f"{name}.{input_name}.npy"
        np.save(path, value.numpy())
        inputs.append(f"{input_name}={path}")
    return model, inputs


def onnx_inputs(path: Path, workdir: Path) -> list[str]:
    """--input arguments of random values for the graph inputs of `path`
    (standard normal floats, integers 1); exits naming the input where one
    has a dimension that is not fixed."""
    import onnx
    from onnx import helper

    if not path.is_file():
        sys.exit(f"profile_ranks.py: --onnx {path}: no such file")
    graph = onnx.load(str(path), load_external_data=False).graph
    initializers = {init.name for init in graph.initializer}
    rng = np.random.default_rng(0)
    inputs = []
    for value in graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        shape = [dim.dim_value if dim.HasField("dim_value") else 0
                 for dim in tensor.shape.dim]
        if any(size <= 0 for size in shape):
            sys.exit(f"profile_ranks.py: --onnx {path}: input '{value.name}' has a "
                     "dimension that is not fixed; export it at a fixed size")
        dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        array = (rng.standard_normal(shape).astype(dtype) if dtype.kind == "f"
                 else np.ones(shape, dtype))
        file = workdir / f"{path.stem}.{len(inputs)}.npy"
        np.save(file, array)
        inputs.append(f"{value.name}={file}")
    return inputs


def first_error(text: str) -> str:
    for line in text.splitlines():
        if "error" in line:
            return line.strip()[:160]
    return (text.strip().splitlines() or ["failed"])[-1][:160]


def profile(args, name: str, model: Path, inputs: list[str], label: str, devices: int,
            options: list[str], workdir: Path) -> dict:
    tag = label.replace(" ", "_")
    bundle = workdir / f"{name}.{tag}.cleave"
    compiled = subprocess.run(
        [str(args.cleave), "compile", str(model), "-o", str(bundle), "--target", args.target,
         "--devices", str(devices), "--quiet", *options],
        capture_output=True, text=True)
    if compiled.returncode != 0:
        return {"status": "does not compile: " + first_error(compiled.stderr + compiled.stdout)}
    directory = workdir / f"{name}.{tag}.profile"
    command = [str(args.worker), "run", str(bundle), "--profile-dir", str(directory),
               "--repeat", str(args.repeat), "--timeout", "120"]
    if args.threads:
        command.append(f"--threads={args.threads}")
    for item in inputs:
        command += ["--input", item]
    ran = subprocess.run(command, capture_output=True, text=True)
    if ran.returncode != 0:
        return {"status": "run failed: " + first_error(ran.stderr + ran.stdout)}
    summary = json.loads((directory / "profile.json").read_text())
    return {"status": "ok", "summary": summary}


def ms(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def percent(value) -> str:
    return "-" if value is None else f"{value:+.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=None,
                        help="registry models (default: all, or none with --onnx)")
    parser.add_argument("--onnx", type=Path, action="append", default=[],
                        help="an ONNX file of fixed input shapes to profile too "
                        "(repeatable)")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--cleave", type=Path, default=REPO / "build" / "bin" / "cleave")
    parser.add_argument("--worker", type=Path, default=None,
                        help="the cleave-worker that runs the bundles (beside --cleave)")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--threads", type=int, default=1,
                        help="kernel threads per rank (0: cleave run's default)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--batch", type=int, default=None,
                        help="export with this many samples; adds dp=2 and pp=2 with "
                        "4 microbatches")
    parser.add_argument("--target", default="cpu",
                        help="the target preset or file to compile for (default cpu)")
    parser.add_argument("--configs", nargs="+", default=None,
                        help="run only the configurations of these labels ('1', '2 pp2', ...)")
    args = parser.parse_args()
    if args.models is None:
        args.models = [] if args.onnx else MODELS
    if args.onnx and args.batch:
        parser.error("--onnx: a file's batch is its own; leave out --batch")
    configs = BATCH_CONFIGS if args.batch else CONFIGS
    if args.configs:
        unknown = set(args.configs) - {label for label, _, _ in configs}
        if unknown:
            parser.error(f"--configs: no configuration {sorted(unknown)}")
        configs = [config for config in configs if config[0] in args.configs]
    if args.worker is None:
        args.worker = args.cleave.parent / "cleave-worker"
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="cleave-profile-ranks-"))
    workdir.mkdir(parents=True, exist_ok=True)
    # The files' inputs first, so that a bad file stops the run before it
    # starts.
    files = {path.stem: (path.resolve(), onnx_inputs(path, workdir)) for path in args.onnx}

    cores = os.cpu_count() or 1
    threads = (f"{args.threads} kernel thread(s) per rank" if args.threads
               else f"max(1, {cores} // ranks) kernel threads per rank")
    print(f"{args.target} target; {cores} cores, {threads}"
          + (f": ranks above {cores} oversubscribe the cores" if cores < 4 else ""))
    print(f"step = median of {args.repeat} runs after 1 warm-up; "
          "error = (predicted - measured) / measured")
    print(calibration_stability(args.target))
    calibrated = reference_rate(args.target)
    speed = MachineSpeed(args, workdir, calibrated) if calibrated else None
    if speed:
        print("speed = the reference product's rate before the model over its median "
              "while calibrating; at speed = the error with the prediction divided by it")
    print()

    results: dict[str, dict[str, dict]] = {}
    print(f"{'model':<14}{'ranks':<12}{'measured ms':>12}{'predicted ms':>14}{'error %':>9}"
          + (f"{'speed':>7}{'at speed %':>11}" if speed else "")
          + "  per stage: measured / predicted ms")
    models = list(args.models) + list(files)
    for name in models:
        model, inputs = files[name] if name in files else export(name, workdir, args.batch)
        results[name] = {}
        for label, devices, options in configs:
            factor = speed.measure() if speed else None
            result = profile(args, name, model, inputs, label, devices, options, workdir)
            results[name][label] = result
            if result["status"] != "ok":
                print(f"{name:<14}{label:<12}  {result['status']}")
                continue
            step = result["summary"]["step"]
            if factor:
                step["machine_speed"] = factor
                step["error_at_speed_percent"] = 100.0 * (
                    step["predicted_s"] / factor - step["measured_s"]) / step["measured_s"]
            stages = " ".join(f"{ms(s['measured_s'])}/{ms(s['predicted_s'])}"
                              for s in result["summary"]["stages"])
            adjusted = (f"{factor:>7.2f}{percent(step['error_at_speed_percent']):>11}"
                        if factor else (f"{'-':>7}{'-':>11}" if speed else ""))
            print(f"{name:<14}{label:<12}{ms(step['measured_s']):>12}"
                  f"{ms(step['predicted_s']):>14}{percent(step['error_percent']):>9}"
                  f"{adjusted}  {stages}", flush=True)

    def step(name: str, label: str):
        result = results[name].get(label)
        return result["summary"]["step"] if result and result["status"] == "ok" else None

    if not args.batch:
        summarise_ranks(models, step)
    else:
        summarise_batch(args.models, step, args.batch)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


def summarise_ranks(models, step) -> None:
    print("\nsummary (4 ranks: pp2 x tp2)")
    print(f"{'model':<14}{'1 rank ms':>11}{'2 ranks ms':>12}{'4 ranks ms':>12}"
          f"{'x 2 ranks':>11}{'x 4 ranks':>11}{'error 1/2/4 %':>18}{'at speed %':>16}")
    for name in models:
        steps = [step(name, label) for label in ("1", "2 pp2", "4 pp2 tp2")]
        times = [s["measured_s"] if s else None for s in steps]
        speedups = [f"{times[0] / t:.2f}" if times[0] and t else "-" for t in times[1:]]
        errors = "/".join(percent(s["error_percent"]) if s else "-" for s in steps)
        at_speed = "/".join(percent(s.get("error_at_speed_percent")) if s else "-"
                            for s in steps)
        print(f"{name:<14}{ms(times[0]):>11}{ms(times[1]):>12}{ms(times[2]):>12}"
              f"{speedups[0]:>11}{speedups[1]:>11}{errors:>18}{at_speed:>16}")


def summarise_batch(models, step, batch: int) -> None:
    print(f"\n2 ranks on a batch of {batch}: 2 stages fed 1 and 4 microbatches, "
          "and 2 replicas")
    print(f"{'model':<14}{'1 rank ms':>11}{'pp2 mb1 ms':>12}{'pp2 mb4 ms':>12}"
          f"{'dp2 ms':>10}{'x mb1':>8}{'x mb4':>8}{'x dp2':>8}")
    for name in models:
        times = [step(name, label) for label in ("1", "2 pp2 mb1", "2 pp2 mb4", "2 dp2")]
        times = [t["measured_s"] if t else None for t in times]
        speedups = [f"{times[0] / t:.2f}" if times[0] and t else "-" for t in times[1:]]
        print(f"{name:<14}{ms(times[0]):>11}{ms(times[1]):>12}{ms(times[2]):>12}"
              f"{ms(times[3]):>10}{speedups[0]:>8}{speedups[1]:>8}{speedups[2]:>8}")


if __name__ == "__main__":
    sys.exit(main())
