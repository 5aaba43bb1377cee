"""Compares the plan.json of a training step with sequence parallelism
(the second file) against the same mesh without it (the first): per stage
the forward collectives by kind, the bytes each device sends to the next
stage, the activation memory, and the step time.

    python sequence_parallel_summary.py plain.json sequence-parallel.json
"""

import json
import sys
from collections import Counter


def forward_collectives(plan, stage):
    counts = Counter(comm["kind"] for comm in plan["communications"]
                     if comm["stage"] == stage and comm["phase"] == "forward"
                     and comm["kind"] != "send_recv")
    return " ".join(f"{kind} x{n}" for kind, n in sorted(counts.items()))


def sent(plan, stage):
    return sum(comm["bytes"] for comm in plan["communications"]
               if comm["stage"] == stage and comm["phase"] == "forward"
               and comm["kind"] == "send_recv")


def main() -> int:
    with open(sys.argv[1]) as f:
        plain = json.load(f)
    with open(sys.argv[2]) as f:
        parallel = json.load(f)
    assert plain["mesh"] == parallel["mesh"], "the two plans differ in mesh"
    tp = parallel["mesh"]["tp"]
    print(f"sequence parallel: {plain['sequence_parallel']} "
          f"{parallel['sequence_parallel']}")
    for plain_stage, stage in zip(plain["stages"], parallel["stages"]):
        index = stage["index"]
        print(f"stage {index} forward: {forward_collectives(plain, index)} | "
              f"{forward_collectives(parallel, index)}")
        if index + 1 < len(parallel["stages"]):
            whole, sliced = sent(plain, index), sent(parallel, index)
            print(f"stage {index} sends 1/tp of the residual stream: "
                  f"{'yes' if sliced * tp == whole else f'no ({sliced} of {whole})'}")
        less = (stage["memory_bytes"]["activations"]
                < plain_stage["memory_bytes"]["activations"])
        print(f"stage {index} holds fewer activation bytes: "
              f"{'yes' if less else 'no'}")
    faster = (parallel["predicted"]["step_time_s"]
              < plain["predicted"]["step_time_s"])
    print(f"step faster: {'yes' if faster else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
