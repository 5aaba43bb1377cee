# Every communication call of CommList.def between the devices of one
# tensor-parallel group (Inputs/collectives.cpp), for groups of 2 and 4
# ranks started by `cleave-worker` itself (mpirun underneath), compared with
# NumPy: all_reduce (sum, product, max, min, average; float32 and int64),
# all_gather along dims 1 and 0, reduce_scatter, all_slice, all_to_all;
# float16 and bfloat16 are reduced in float32 and rounded once.
# Only the tp-0 device writes, so each output is written once.
# Groups (Inputs/groups.cpp): on a pp=2 x dp=2 x tp=2 mesh every device
# all-reduces and all-gathers its X over its group along each axis, and
# checks the results against NumPy's (make_bundle.py groups), so each
# reduces over the right ranks in the right order; with the dp and tp
# expectations swapped the run fails, naming the axis.
# REQUIRES: mpi
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t %cleave_lib | FileCheck %s

import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import make_bundle  # noqa: E402

WORK, LIB = sys.argv[1], sys.argv[2]
# More `cleave-worker run` options (--single-process: single-process.test).
OPTIONS = sys.argv[3:]
WORKER = shutil.which("cleave-worker")


def expected(g):
    xs = [make_bundle.collective_input(r) for r in range(g)]
    n = 4 // g
    blocks = lambda x: [x[:, j * n:(j + 1) * n] for j in range(g)]
    swapped = [np.concatenate([blocks(xs[j])[r] for j in range(g)], axis=0)
               for r in range(g)]
    return {
        "sum": sum(xs),
        "product": np.prod(xs, axis=0),
        "max": np.max(xs, axis=0),
        "min": np.min(xs, axis=0),
        "average": sum(xs) / g,
        "gather1": np.concatenate(xs, axis=1),
        "gather0": np.concatenate(xs, axis=0),
        "scattered": sum(xs),
        "sliced": np.concatenate([blocks(xs[r])[r] for r in range(g)], axis=1),
        "exchanged": np.concatenate(swapped, axis=1),
        "isum": sum(x.astype(np.int64) for x in xs),
        "hsum": sum(x.astype(np.float16).astype(np.float32) for x in xs)
        .astype(np.float16),
        # bfloat16 outputs are written as float32.
        "bsum": make_bundle.from_bfloat16_bits(make_bundle.to_bfloat16_bits(
            sum(make_bundle.from_bfloat16_bits(make_bundle.to_bfloat16_bits(x))
                for x in xs))),
    }


for g in (2, 4):
    bundle, out = f"{WORK}/tp{g}", f"{WORK}/out{g}"
    subprocess.run([sys.executable, make_bundle.__file__, "collectives", bundle,
                    "--lib-dir", LIB, "--tp", str(g)], check=True)
    result = subprocess.run([WORKER, "run", bundle, "--output-dir", out] + OPTIONS,
                            capture_output=True, text=True, timeout=120)
    print(f"tp={g}: exit {result.returncode}")
    lines = result.stdout.splitlines()
    # Only rank 0 (tp 0) writes; every output once.
    writers = {line.split(":")[0] for line in lines if "-> " in line}
    print(f"  writers {sorted(writers)}, {sum('-> ' in l for l in lines)} outputs")
    print(f"  files {len(os.listdir(out))}")
    for name, want in expected(g).items():
        got = np.load(f"{out}/{name}.npy")
        ok = got.dtype == want.dtype and got.shape == want.shape and \
            np.allclose(got, want, rtol=1e-6, atol=0)
        print(f"  {name} {'ok' if ok else 'DIFFERS'}"
              + ("" if ok else f": got {got.dtype}{got.shape} {got.tolist()}, "
                 f"expected {want.dtype}{want.shape} {want.tolist()}"))

for swap in ([], ["--swap"]):
    bundle = f"{WORK}/groups{len(swap)}"
    subprocess.run([sys.executable, make_bundle.__file__, "groups", bundle,
                    "--lib-dir", LIB, "--pp", "2", "--dp", "2", "--tp", "2"]
                   + swap, check=True)
    result = subprocess.run([WORKER, "run", bundle] + OPTIONS,
                            capture_output=True, text=True, timeout=120)
    ran = [l for l in result.stdout.splitlines() if l.startswith("ran ")]
    print(f"groups{' swapped' if swap else ''}: "
          f"{'exit 0' if result.returncode == 0 else 'failed'}, {ran}")
    errors = [l for l in result.stderr.splitlines() if "error:" in l]
    print("  " + (errors[0] if errors else "no error"))

# CHECK-LABEL: tp=2: exit 0
# CHECK-NEXT:   writers ['rank 0'], 13 outputs
# CHECK-NEXT:   files 13
# CHECK-NEXT:   sum ok
# CHECK-NEXT:   product ok
# CHECK-NEXT:   max ok
# CHECK-NEXT:   min ok
# CHECK-NEXT:   average ok
# CHECK-NEXT:   gather1 ok
# CHECK-NEXT:   gather0 ok
# CHECK-NEXT:   scattered ok
# CHECK-NEXT:   sliced ok
# CHECK-NEXT:   exchanged ok
# CHECK-NEXT:   isum ok
# CHECK-NEXT:   hsum ok
# CHECK-NEXT:   bsum ok
# CHECK-LABEL: tp=4: exit 0
# CHECK-NEXT:   writers ['rank 0'], 13 outputs
# CHECK-NEXT:   files 13
# CHECK-NEXT:   sum ok
# CHECK-NEXT:   product ok
# CHECK-NEXT:   max ok
# CHECK-NEXT:   min ok
# CHECK-NEXT:   average ok
# CHECK-NEXT:   gather1 ok
# CHECK-NEXT:   gather0 ok
# CHECK-NEXT:   scattered ok
# CHECK-NEXT:   sliced ok
# CHECK-NEXT:   exchanged ok
# CHECK-NEXT:   isum ok
# CHECK-NEXT:   hsum ok
# CHECK-NEXT:   bsum ok
# CHECK-LABEL: groups: exit 0, ['ran {{.*}}groups0 on 8 cpu devices in {{.*}} ms']
# CHECK-NEXT:    no error
# CHECK-LABEL: groups swapped: failed, []
# CHECK-NEXT:    cleave run: error: rank {{[0-9]+}} {{.*}}kernel all_reduce: all_reduce over dp: element 0 is {{[0-9]+}}, NumPy says {{[0-9]+}}
