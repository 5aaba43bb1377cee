# cleave.Session runs a bundle from Python in the manner of onnxruntime's
# InferenceSession, with NumPy arrays in and out.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %S/Inputs/make_bundle.py affine %t/bundle --lib-dir %cleave_lib
# RUN: %python %s %t %cleave_lib | FileCheck %s

import os
import shutil
import subprocess
import sys

import numpy as np

import cleave

work = sys.argv[1]
session = cleave.Session(f"{work}/bundle", threads=2, profile=True)
print("device", session.device)
for info in session.get_inputs() + session.get_outputs():
    print(info.name, info.shape, info.dtype)
# CHECK:      device cpu
# CHECK-NEXT: x (2, 3) float32
# CHECK-NEXT: y (2, 3) float32
# CHECK-NEXT: stats/sum () float64
# CHECK-NEXT: threads (1,) int32

x = np.arange(6, dtype=np.float32).reshape(2, 3)
outputs = session.run({"x": x})
print(sorted(outputs))
print(outputs["y"].dtype, outputs["y"].tolist())
print(outputs["stats/sum"].dtype, outputs["stats/sum"].shape, float(outputs["stats/sum"]))
print(outputs["threads"].tolist())
# CHECK-NEXT: ['stats/sum', 'threads', 'y']
# CHECK-NEXT: float32 {{\[\[}}0.5, 1.0, 16.0], [3.5, 7.0, 25.0]]
# CHECK-NEXT: float64 () 53.0
# CHECK-NEXT: [2]

# onnxruntime's form: a list of the outputs named, all for None.
print([a.tolist() for a in session.run(["threads", "stats/sum"], {"x": x})])
print(len(session.run(None, {"x": x})))
# CHECK-NEXT: {{\[\[}}2], 53.0]
# CHECK-NEXT: 3

# Non-contiguous arrays are taken as their values; outputs own their memory.
wide = np.zeros((2, 6), np.float32)
wide[:, ::2] = x
again = session.run({"x": wide[:, ::2]})
del session
print(again["y"].tolist() == outputs["y"].tolist())
# CHECK-NEXT: True

# The program reads an aligned array where it lies, and copies one that is
# not aligned to its elements; neither is written, and the outputs do not
# share the inputs' memory.
session = cleave.Session(f"{work}/bundle")
raw = np.zeros(6 * 4 + 1, np.uint8)
unaligned = raw[1:].view(np.float32).reshape(2, 3)
unaligned[...] = x
print(unaligned.ctypes.data % 4, unaligned.flags.aligned)
# CHECK-NEXT: 1 False
for feed in (x.copy(), unaligned):
    before = feed.copy()
    result = session.run({"x": feed})
    print(result["y"].tolist() == outputs["y"].tolist(),
          np.array_equal(feed, before),
          np.shares_memory(result["y"], feed))
    feed[...] = -1
    print(result["y"].tolist() == outputs["y"].tolist())
# CHECK-NEXT: True True False
# CHECK-NEXT: True
# CHECK-NEXT: True True False
# CHECK-NEXT: True

session = cleave.Session(f"{work}/bundle", profile=True)
session.run({"x": x})
print([(step, node) for step, node, seconds in session.profile()])
print(all(seconds >= 0 for _, _, seconds in session.profile()))
# CHECK-NEXT: [(0, 'Mul_0'), (1, 'Add_1'), (2, 'ReduceSum_2')]
# CHECK-NEXT: True


def error(function):
    try:
        function()
    except (RuntimeError, ValueError, TypeError, ImportError) as e:
        print(f"{type(e).__name__}: {e}".replace(work, "WORK"))
    else:
        print("no error")


error(lambda: session.run({"x": x.astype(np.float64)}))
error(lambda: session.run({"x": x[:1]}))
error(lambda: session.run({}))
error(lambda: session.run({"x": x, "z": x}))
error(lambda: session.run(["logits"], {"x": x}))
error(lambda: session.run({"x": np.full((2, 3), -5000, np.float32)}))
# CHECK-NEXT: Error: input 'x': expected float32[2,3], got float64[2,3]
# CHECK-NEXT: Error: input 'x': expected float32[2,3], got float32[1,3]
# CHECK-NEXT: Error: missing input 'x' (float32[2,3])
# CHECK-NEXT: Error: unknown input 'z'; the model's inputs are x (float32[2,3])
# CHECK-NEXT: ValueError: unknown output 'logits'; the model's outputs are y, stats/sum, threads
# CHECK-NEXT: Error: WORK/bundle/programs/stage_0.so: step 0 (node 'Mul_0'), kernel mul: x[0] is below -1000

# The runtime's errors are RuntimeErrors; a refused bundle names the file.
shutil.copytree(f"{work}/bundle", f"{work}/changed")
with open(f"{work}/changed/weights/rank_0.bin", "ab") as f:
    f.write(b"x")
error(lambda: cleave.Session(f"{work}/changed"))
error(lambda: cleave.Session(f"{work}/bundle", device="cuda:0"))
# CHECK-NEXT: Error: WORK/changed/weights/rank_0.bin: SHA-256 {{[0-9a-f]+}} differs from {{[0-9a-f]+}} in manifest.json
# CHECK-NEXT: Error: WORK/bundle: compiled for cpu, it cannot run on cuda:0
print(issubclass(session.Error, RuntimeError))
# CHECK-NEXT: True

# An explicit build directory without the module says where it looked.
error(lambda: cleave.Session(f"{work}/bundle", build_dir=f"{work}/no-build"))
# CHECK-NEXT: ImportError: the cleave runtime module is not built (looked in WORK/no-build/python/cleave); build it with `ninja -C build cleave_python_runtime`

# Outside lit the build's python/ directory is not on the path: the module
# is loaded from the build directory given (by default <repo>/build).
code = ("import sys, cleave.session as s; m = s.load_runtime(sys.argv[1]); "
        "print(m.__name__, m.Session.__name__)")
env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(cleave.__file__)))
print(subprocess.run([sys.executable, "-c", code, os.path.dirname(sys.argv[2])],
                     env=env, capture_output=True, text=True).stdout.strip())
# CHECK-NEXT: cleave._runtime Session

# A bundle compiled again in place while a session still runs its old
# program is refused (the loader would hand back the old code); once that
# session is gone the new program loads.
shutil.copytree(f"{work}/bundle", f"{work}/again")
first = cleave.Session(f"{work}/again")
subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "Inputs", "make_bundle.py"),
                "identity", f"{work}/again", "--lib-dir", sys.argv[2], "--dtype", "float32",
                "--shape", "6"], check=True)
error(lambda: cleave.Session(f"{work}/again"))
# CHECK-NEXT: Error: WORK/again/programs/stage_0.so: an open session still runs the program this file held before it was rewritten; close that session first
del first
print(cleave.Session(f"{work}/again").run({"x": np.arange(6, dtype=np.float32)})["y"].tolist())
# CHECK-NEXT: [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]

# A bundle for several devices runs each device as a thread of this
# process: stage 0 sends x * w to stage 1, which returns y = that + b, run
# after run. A failing rank fails the run, naming it, and the session
# cannot run again.
subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "Inputs", "make_bundle.py"),
                "pipeline", f"{work}/pipe", "--lib-dir", sys.argv[2]], check=True)
pipe = cleave.Session(f"{work}/pipe", threads=1)
x = np.arange(6, dtype=np.float32).reshape(2, 3)
for scale in (1, 2):
    y = pipe.run({"x": x * scale, "mode": np.zeros(1, np.int32)})["y"]
    print(np.array_equal(y, x * scale * np.float32([1, 2, 3]) + np.float32([0.5, -1, 10])))
# CHECK-NEXT: True
# CHECK-NEXT: True
error(lambda: pipe.run({"x": x, "mode": np.full(1, 3, np.int32)}))
# CHECK-NEXT: Error: rank 1 (stage 1, dp 0, tp 0): {{.*}}mode 3 asks this step to fail
error(lambda: pipe.run({"x": x, "mode": np.zeros(1, np.int32)}))
# CHECK-NEXT: Error: the ranks of this bundle stopped at an earlier failure: rank 1 (stage 1, dp 0, tp 0)

# A tensor-parallel bundle that trains nothing has no parameters to gather.
subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "Inputs", "make_bundle.py"),
                "collectives", f"{work}/tp2", "--lib-dir", sys.argv[2], "--tp", "2"], check=True)
print(cleave.Session(f"{work}/tp2", threads=1).trained_parameters())
# CHECK-NEXT: {}
