"""Compares the predictions of two training plan.json files of one model:
whether the step FLOPs and the mesh agree, and how the second's step time
and each stage's forward time relate to the first's.

    python compare_steps.py first.json second.json
"""

import json
import sys


def relation(a: float, b: float) -> str:
    return "lower" if b < a * (1 - 1e-9) else "higher" if b > a * (1 + 1e-9) else "equal"


def main() -> int:
    with open(sys.argv[1]) as f:
        first = json.load(f)
    with open(sys.argv[2]) as f:
        second = json.load(f)
    same_mesh = first["mesh"] == second["mesh"] and \
        first["microbatches"] == second["microbatches"]
    print(f"same mesh: {'yes' if same_mesh else 'no'}")
    same_flops = first["training"]["flops"] == second["training"]["flops"]
    print(f"same flops: {'yes' if same_flops else 'no'}")
    print("step time of the second: "
          + relation(first["predicted"]["step_time_s"], second["predicted"]["step_time_s"]))
    for a, b in zip(first["stages"], second["stages"]):
        forward = relation(a["training"]["phase_time_s"]["forward"],
                           b["training"]["phase_time_s"]["forward"])
        print(f"stage {a['index']} forward of the second: {forward}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
