"""Compares two plan.json files: whether they make the same predictions and
the same stages (everything but the schedule's name), and which bubble is
smaller."""

import json
import sys


def main() -> int:
    with open(sys.argv[1]) as f:
        first = json.load(f)
    with open(sys.argv[2]) as f:
        second = json.load(f)
    print(f"schedules {first['schedule']} {second['schedule']}")
    def without_schedule(alternatives):
        return [{k: v for k, v in a.items() if k != "schedule"} for a in alternatives]

    same = all(first[key] == second[key]
               for key in ("mesh", "microbatches", "predicted", "stages",
                           "communications")) and \
        without_schedule(first["alternatives"]) == without_schedule(second["alternatives"])
    print(f"same predictions and stages: {'yes' if same else 'no'}")
    a = first["predicted"]["bubble_fraction"]
    b = second["predicted"]["bubble_fraction"]
    relation = "smaller" if b < a else "larger" if b > a else "equal"
    print(f"bubble of the second: {relation}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
