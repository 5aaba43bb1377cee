# A program with two entry points: the runtime runs, for each step its
# stage records, the entry of the step's phase (a forward, then a backward
# that reads the forward's stash), and the persistent memory (a writable
# weight, filled from the weight file, and a call counter, zeroed) lives as
# long as the session.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %S/Inputs/make_bundle.py phases %t/bundle --lib-dir %cleave_lib
# RUN: %python %s %t | FileCheck %s

import sys

import numpy as np

import cleave

work = sys.argv[1]
x = np.array([1, 2, 3], dtype=np.float32)
session = cleave.Session(f"{work}/bundle")
for run in range(2):
    outputs = session.run({"x": x})
    print("run", run, "y", outputs["y"].tolist(), "z", outputs["z"].tolist())
# The weight starts as the weight file has it and keeps the forward's
# update; the backward reads the stashed x and the count of calls.
# CHECK:      run 0 y [2.0, 4.0, 6.0] z [11.0, 21.0, 31.0]
# CHECK-NEXT: run 1 y [3.0, 5.0, 7.0] z [12.0, 22.0, 32.0]

# A new session starts from the weight file and zeroed memory again.
session = cleave.Session(f"{work}/bundle")
outputs = session.run({"x": x})
print("fresh y", outputs["y"].tolist(), "z", outputs["z"].tolist())
# CHECK-NEXT: fresh y [2.0, 4.0, 6.0] z [11.0, 21.0, 31.0]
