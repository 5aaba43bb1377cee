"""Training steps on one CPU rank, on two data-parallel replicas, on two
pipeline stages and on two tensor-parallel devices, against the same
global batch; prints measured and predicted step times and the speed-ups
over one rank.

The model is a GPT (cleave.generators.gpt) with cross-entropy on its
logits, AdamW. Each layout takes the same global batch of
``--microbatches x --batch`` sequences:

  one rank       1 device,  M microbatches, all cores
  dp=2           2 devices, M/2 microbatches each, cores / 2 per rank
  pp=2 (1F1B)    2 devices, M microbatches through 2 stages, cores / 2 each
  tp=2           2 devices, M microbatches, the ops split over both (the
                 plan's choice of loops), cores / 2 each

The ranks are threads of one process (cleave.Trainer). Step times are the
median of ``--steps`` steps after ``--warmup``; "predicted" is the plan's
step time (plan.json, predicted.step_time_s) for the cpu target.

    python bench/train_scaling.py --layers 4 --hidden 256 --seq 64
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import cleave
from cleave.generators.gpt import GPTConfig, build_gpt


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--batch", type=int, default=2,
                        help="sequences per microbatch")
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="cleave-train-scaling-")
    cfg = GPTConfig(layers=args.layers, hidden=args.hidden, heads=args.heads,
                    seq=args.seq, vocab=args.vocab, batch=args.batch)
    model = os.path.join(work, "gpt.onnx")
    build_gpt(cfg, model, seed=1)
    loss = {"loss": "cross-entropy", "logits": "logits", "labels": "labels"}
    options = {"optimizer": "adamw", "lr": 1e-3}
    m = args.microbatches
    layouts = [
        ("one rank", 1, {"microbatches": m}, args.threads),
        ("dp=2", 2, {"microbatches": m // 2}, max(1, args.threads // 2)),
        ("pp=2 1f1b", 2, {"microbatches": m, "pp": 2},
         max(1, args.threads // 2)),
        ("tp=2", 2, {"microbatches": m, "tp": 2}, max(1, args.threads // 2)),
    ]
    rng = np.random.default_rng(0)
    rows = m * args.batch
    batches = []
    for _ in range(args.steps + args.warmup):
        ids = rng.integers(0, cfg.vocab, (rows, cfg.seq))
        batches.append({"input_ids": ids.astype(np.int64),
                        "labels": ((ids + 1) % cfg.vocab).astype(np.int64)})

    print(f"GPT {args.layers} layers, hidden {args.hidden}, sequence "
          f"{args.seq}; global batch {rows} sequences ({m} x {args.batch}); "
          f"{args.threads} cores; median of {args.steps} steps")
    print(f"{'layout':<12} {'threads/rank':>12} {'step ms':>9} "
          f"{'predicted ms':>13} {'speed-up':>9} {'loss':>8}")
    base = None
    for name, devices, extra, threads in layouts:
        bundle = cleave.compile(model, os.path.join(work, name.replace(" ", "_")),
                                devices=devices, **loss,
                                train={**options, **extra})
        plan = json.loads((bundle / "plan.json").read_text())
        predicted = plan.get("predicted", {}).get("step_time_s")
        trainer = cleave.Trainer(bundle, threads=threads)
        times = []
        last = None
        for i, batch in enumerate(batches):
            start = time.perf_counter()
            last = trainer.step(batch)
            if i >= args.warmup:
                times.append(time.perf_counter() - start)
        step = statistics.median(times)
        base = base or step
        print(f"{name:<12} {threads:>12} {step * 1e3:>9.1f} "
              f"{(predicted or float('nan')) * 1e3:>13.1f} "
              f"{base / step:>8.2f}x {last:>8.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
