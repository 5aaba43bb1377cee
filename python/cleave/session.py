"""Run a compiled bundle from Python, in the manner of onnxruntime.

    import numpy as np
    import cleave

    session = cleave.Session("model.cleave")
    [ids] = session.get_inputs()
    outputs = session.run({ids.name: np.zeros(ids.shape, ids.dtype)})

The work is done by libcleave_rt through the compiled ``cleave._runtime``
module, found as described in ``load_runtime``.
"""

from __future__ import annotations

import glob
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from typing import Mapping, NamedTuple, Sequence

import numpy as np

# The build tree this source tree builds into by default (README).
_DEFAULT_BUILD = Path(__file__).resolve().parents[2] / "build"


def load_runtime(build_dir: str | os.PathLike | None = None):
    """Returns the compiled ``cleave._runtime`` module.

    It is looked for, in order: in ``<build_dir>/python/cleave`` when
    ``build_dir`` is given; as ``cleave._runtime`` on the import path (any
    ``<build>/python`` directory on ``sys.path`` joins the ``cleave``
    package, which is how the lit tests pick their build); and in
    ``<repo>/build/python/cleave``, the default build of this checkout.
    """
    if build_dir is None:
        try:
            from cleave import _runtime

            return _runtime
        except ImportError:
            pass
    directory = Path(build_dir or _DEFAULT_BUILD) / "python" / "cleave"
    loaded = sys.modules.get("cleave._runtime")
    if loaded is not None and Path(loaded.__file__).parent == directory:
        return loaded
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        for path in glob.glob(str(directory / ("_runtime" + suffix))):
            spec = importlib.util.spec_from_file_location("cleave._runtime", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules["cleave._runtime"] = module
            return module
    where = str(directory) + ("" if build_dir else " and on the import path")
    raise ImportError(
        f"the cleave runtime module is not built (looked in {where}); build "
        "it with `ninja -C build cleave_python_runtime`"
    )


class TensorInfo(NamedTuple):
    """A graph input or output: its name, static shape and NumPy dtype name."""

    name: str
    shape: tuple
    dtype: str


def _bfloat16():
    try:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        return None


class Session:
    """A bundle loaded onto its devices, ready to run. A bundle for several
    devices runs each as a thread of this process.

    ``threads``: CPU kernel threads, per device (default: every core,
    shared among the devices). ``device``:
    ``"cpu"`` or ``"cuda:N"`` (default: the bundle's own kind). ``profile``:
    time every program step (see ``profile()``). ``build_dir``: where the
    compiled runtime module is, when it is not found by itself.

    Raises ``RuntimeError`` (``cleave._runtime.Error``) with the runtime's
    message when the bundle is refused.
    """

    def __init__(
        self,
        bundle: str | os.PathLike,
        threads: int | None = None,
        device: str | None = None,
        profile: bool = False,
        build_dir: str | os.PathLike | None = None,
    ):
        runtime = load_runtime(build_dir)
        self.Error = runtime.Error
        self._session = runtime.Session(
            os.fspath(bundle), threads or 0, device or "", profile
        )
        self._inputs = [TensorInfo(n, tuple(s), d) for n, d, s in self._session.inputs]
        self._outputs = [TensorInfo(n, tuple(s), d) for n, d, s in self._session.outputs]

    @property
    def device(self) -> str:
        return self._session.device

    @property
    def kernel_isa(self) -> str:
        """The instruction set of the CPU kernels this session runs
        (``x86-64``, ``x86-64-v3``, ``x86-64-v4``): the highest the CPU
        has, no higher than the bundle's ``cpu_isa``; empty on a GPU."""
        return self._session.kernel_isa

    def get_inputs(self) -> list[TensorInfo]:
        return list(self._inputs)

    def get_outputs(self) -> list[TensorInfo]:
        return list(self._outputs)

    def run(self, output_names_or_feeds, feeds: Mapping | None = None):
        """Runs the model.

        ``run({name: array})`` returns ``{output name: array}``.
        ``run(output_names, {name: array})`` is onnxruntime's form: it
        returns a list of the outputs named (all, in order, for ``None``).

        Arrays must have the input's dtype and shape exactly (no implicit
        casts). A bfloat16 input takes an ``ml_dtypes.bfloat16`` array or a
        uint16 array of bit patterns; bfloat16 outputs are
        ``ml_dtypes.bfloat16`` when ml_dtypes is installed, uint16 bit
        patterns otherwise.
        """
        if feeds is None:
            if not isinstance(output_names_or_feeds, Mapping):
                raise TypeError("run() takes {name: array} or (output_names, {name: array})")
            return dict(zip((o.name for o in self._outputs),
                            self._run(output_names_or_feeds)))
        values = dict(zip((o.name for o in self._outputs), self._run(feeds)))
        names = output_names_or_feeds
        if names is None:
            return list(values.values())
        unknown = [n for n in names if n not in values]
        if unknown:
            raise ValueError(
                f"unknown output {unknown[0]!r}; the model's outputs are "
                + ", ".join(values)
            )
        return [values[n] for n in names]

    def _run(self, feeds: Mapping) -> Sequence[np.ndarray]:
        arrays = {name: np.asarray(value) for name, value in feeds.items()}
        outputs = self._session.run(arrays)
        bfloat16 = None
        for i, info in enumerate(self._outputs):
            if info.dtype == "bfloat16":
                bfloat16 = bfloat16 or _bfloat16()
                if bfloat16 is not None:
                    outputs[i] = outputs[i].view(bfloat16)
        return outputs

    def profile(self) -> list[tuple[int, str, float]]:
        """(step, node, seconds) of every step of the last run, when the
        session was opened with ``profile=True``."""
        return self._session.profile()

    def memory(self) -> list[dict[str, int]]:
        """Per device (rank order): the bytes its session holds for the
        program, as allocated or mapped: ``arena`` (working memory, stash
        included), ``persistent`` (parameters, gradient sums, optimizer
        state), ``weights`` (the weight file, mapped on the host),
        ``ports`` (a GPU's buffers for one block of the inputs and
        outputs), ``packed`` (the bundle's packed-weight file, mapped on
        the host) and ``repacked`` (constant weights the CPU kernels have
        packed themselves so far: 0 when the bundle stored every packing
        they needed)."""
        return self._session.memory()

    def trained_parameters(self) -> dict[str, np.ndarray]:
        """``{name: array}`` of the parameters a training bundle (compiled
        with ``--train``) updates, as they are now; empty for other
        bundles."""
        return dict(self._session.trained_parameters())


class Trainer:
    """Runs a training bundle (``cleave compile --train``) step by step.

    The parameters and the optimizer state stay in the session's memory
    from one step to the next, starting from the model's initializers.
    ``threads`` and ``device`` are those of ``Session``.

        trainer = cleave.Trainer(bundle)
        for batch in batches:
            loss = trainer.step({"x": x, "labels": y})
        weights = trainer.parameters()
        trainer.save("checkpoints/by-hand")  # the format of cleave train

    ``load(dir)`` restores a checkpoint of this bundle, from ``save`` or
    from ``cleave train``.
    """

    def __init__(self, bundle: str | os.PathLike, threads: int | None = None,
                 device: str | None = None):
        self.session = Session(bundle, threads=threads, device=device)
        outputs = self.session.get_outputs()
        if len(outputs) != 1 or outputs[0].shape not in ((), (1,)):
            raise ValueError(
                f"{os.fspath(bundle)} is not a training bundle: its outputs "
                "are " + ", ".join(f"{o.name}{list(o.shape)}" for o in outputs)
                + "; a bundle compiled with --train has one, the loss")
        if not self.session.trained_parameters():
            raise ValueError(
                f"{os.fspath(bundle)} is not a training bundle: it updates "
                "no parameter (compile it with --train)")
        self.steps = 0

    def step(self, batch: Mapping) -> float:
        """One training step on ``batch`` (``{input name: array}``): the
        forward, the backward and the update. Returns the loss, computed
        before the update."""
        (loss,) = self.session.run(None, batch)
        self.steps += 1
        return float(np.asarray(loss).reshape(()))

    def parameters(self) -> dict[str, np.ndarray]:
        """``{initializer name: array}``: the trained parameters now."""
        return self.session.trained_parameters()

    def save(self, directory: str | os.PathLike) -> None:
        """Saves the parameters, the optimizer state and the step count as
        the checkpoint ``directory`` (the format of ``cleave train
        --checkpoint-dir``), written under a temporary name and renamed
        into place. It records no data order: ``cleave train`` resumed
        from it starts its data order from the beginning."""
        self.session._session.save_checkpoint(os.fspath(directory), self.steps)

    def load(self, directory: str | os.PathLike) -> None:
        """Restores a checkpoint saved by ``save`` or by ``cleave train``
        from this bundle: the parameters, the optimizer state and the step
        count. Raises ``RuntimeError`` naming the file when a file is
        damaged or the checkpoint comes from another bundle."""
        position = self.session._session.load_checkpoint(os.fspath(directory))
        self.steps = position["step"]

    def learning_rate(self) -> float | None:
        """The learning rate of the next step, as the bundle's schedule
        gives it; None when the bundle does not record its schedule."""
        rate = self.session._session.learning_rate(self.steps)
        return rate if rate >= 0 else None


def sample_order(samples: int, seed: int, epoch: int,
                 build_dir: str | os.PathLike | None = None) -> np.ndarray:
    """The order in which ``cleave train --seed seed`` takes ``samples``
    samples during epoch ``epoch`` (from 0): a permutation of
    ``range(samples)``; step k takes the batch that follows step k-1's in
    this order, running into the next epoch's order at the end of one."""
    runtime = load_runtime(build_dir)
    return np.asarray(runtime.sample_order(samples, seed, epoch), dtype=np.int64)
