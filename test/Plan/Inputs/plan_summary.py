"""Prints a plan.json as one fact per line, for FileCheck.

    python plan_summary.py plan.json

Lines: `mesh pp=P tp=T dp=D microbatches=M`, `stage K ranks=A-B ops=FIRST..LAST`,
`comm KIND stage=K producer=NAME group=A-B`, `weight NAME[WINDOW] split=D|none`,
`alternative pp=P tp=T dp=D VERDICT`, and the counts `all_reduces N`.
"""

import json
import sys


def ranks(values):
    return f"{values[0]}-{values[-1]}" if len(values) > 1 else str(values[0])


def main() -> int:
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    mesh = plan["mesh"]
    print(f"mesh pp={mesh['pp']} tp={mesh['tp']} dp={mesh['dp']} "
          f"microbatches={plan['microbatches']}")
    for stage in plan["stages"]:
        print(f"stage {stage['index']} ranks={ranks(stage['ranks'])} "
              f"ops={stage['first_op']}..{stage['last_op']}")
    for comm in plan["communications"]:
        print(f"comm {comm['kind']} stage={comm['stage']} producer={comm['producer']} "
              f"group={ranks(comm['group'])}")
    for weight in plan["weights"]:
        window = ""
        if "window_starts" in weight:
            window = "[" + ",".join(str(s) for s in weight["window_starts"]) + "]"
        split = weight["split_dim"]
        print(f"weight {weight['name']}{window} split={'none' if split is None else split}")
    for alternative in plan["alternatives"]:
        m = alternative["mesh"]
        print(f"alternative pp={m['pp']} tp={m['tp']} dp={m['dp']} {alternative['verdict']}")
    kinds = [c["kind"] for c in plan["communications"]]
    print(f"all_reduces {kinds.count('all_reduce')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
