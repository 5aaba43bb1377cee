"""Prints the rows of `bench/megatron_fidelity.py --json` as facts for FileCheck.

    python fidelity_summary.py rows.json BOUND_PERCENT

Per row: `NAME pinned mesh pp=P tp=T dp=D microbatch=B`, then `NAME pinned
within BOUND%` or `NAME pinned off by E%` (the predicted TFLOP/s per GPU
against the paper's), then `NAME free at least as fast` or `NAME free
slower` (the unpinned plan's prediction against the pinned one's).
"""

import json
import sys


def main() -> int:
    with open(sys.argv[1]) as f:
        rows = json.load(f)
    bound = float(sys.argv[2])
    for row in rows:
        name = row["model"]
        if "pinned_tflops" not in row:
            print(f"{name} pinned failed: {row.get('pinned_error', '?')}")
            continue
        pp, tp, dp = row["pinned_mesh"]
        print(f"{name} pinned mesh pp={pp} tp={tp} dp={dp} "
              f"microbatch={row['pinned_microbatch_size']}")
        error = 100 * (row["pinned_tflops"] / row["paper_tflops"] - 1)
        if abs(error) <= bound:
            print(f"{name} pinned within {bound:g}%")
        else:
            print(f"{name} pinned off by {error:+.1f}%")
        if "free_tflops" in row:
            # The free search includes the pinned configuration, so it may
            # only tie it up to rounding.
            faster = row["free_tflops"] >= row["pinned_tflops"] * (1 - 1e-9)
            print(f"{name} free {'at least as fast' if faster else 'slower'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
