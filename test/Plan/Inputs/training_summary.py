"""Prints what a training plan.json says of its step, one fact per line, for
FileCheck, with the relations between its numbers checked here:

    python training_summary.py plan.json

Lines: `training OPTIMIZER precision=P zero=Z recompute=N`, `flops backward
per forward R` and whether forward + backward + recompute make the total,
per stage its phases' times (in microseconds, rounded) and whether its
memory terms add up to its total, whether each backward collective answers a
forward one of the same bytes, the phases of the timeline, and whether every
device's work fits in the predicted step.
"""

import json
import sys
from collections import Counter

CONJUGATE = {"all_reduce": "all_reduce", "all_gather": "reduce_scatter",
             "reduce_scatter": "all_gather", "send_recv": "send_recv"}


def yes(value: bool) -> str:
    return "yes" if value else "no"


def main() -> int:
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    training = plan["training"]
    print(f"training {training['optimizer']} precision={training['precision']} "
          f"zero={training['zero']['stage']} recompute={training['recompute']['segments']}")
    flops = training["flops"]
    print(f"flops backward per forward {flops['backward'] / flops['forward']:.2f}")
    added = flops["forward"] + flops["backward"] + flops["recompute"]
    print(f"flops add up: {yes(abs(added - flops['total']) <= 1e-9 * flops['total'])}")
    terms = ("weights", "gradients", "optimizer_state", "activations", "communication")
    step = plan["predicted"]["step_time_s"]
    microbatches = plan["microbatches"]
    busy = Counter()
    for stage in plan["stages"]:
        times = stage["training"]["phase_time_s"]
        memory = stage["memory_bytes"]
        print(f"stage {stage['index']} "
              + " ".join(f"{phase}={times[phase] > 0}" for phase in
                         ("forward", "recompute", "backward", "update"))
              + f" memory adds up: {yes(sum(memory[t] for t in terms) == memory['total'])}")
        device = stage["ranks"][0]
        busy[device] += microbatches * (times["forward"] + times["recompute"]
                                        + times["backward"]) + times["update"]
    sums = Counter()
    gradients = Counter()
    for comm in plan["communications"]:
        if "parameter" in comm:
            # A parameter's gradient, all-reduced in the backward.
            assert comm["phase"] == "backward" and comm["kind"] == "all_reduce"
            gradients[comm["parameter"]] += 1
            continue
        kind = comm["kind"] if comm["phase"] == "forward" else CONJUGATE[comm["kind"]]
        sums[(comm["phase"], kind)] += comm["bytes"]
    answered = all(sums[("backward", kind)] == sums[("forward", kind)]
                   for phase, kind in sums if kind != "send_recv")
    print(f"backward collectives answer the forward ones: {yes(answered)}")
    print("gradients all-reduced over the tensor-parallel group: "
          + (" ".join(f"{name} x{count}" for name, count in sorted(gradients.items()))
             or "none"))
    phases = sorted({step["phase"] for row in plan["timeline"] for step in row})
    print("timeline phases " + " ".join(phases))
    print(f"every device's work fits in the step: "
          f"{yes(all(b <= step * (1 + 1e-9) for b in busy.values()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
