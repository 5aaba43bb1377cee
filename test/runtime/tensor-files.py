# The readers of .npy and ONNX .pb files, and the .npy writer, keep every
# dtype's bytes: a program that copies its input to its output
# (Inputs/identity.cpp, 24 bytes) returns what each file held.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t %cleave_lib | FileCheck %s

import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import make_bundle  # noqa: E402

WORK, LIB = sys.argv[1], sys.argv[2]
WORKER = shutil.which("cleave-worker")

# Shapes of 24 bytes each.
CASES = [
    ("float32", (2, 3), [1.5, -2.0, 0.0, 3.25, -0.125, 1e30]),
    ("float64", (3,), [1.5, -2.0, 1e300]),
    ("float16", (3, 4), [1.5, -2.0, 0.0, 65504.0, -0.5, 1e-4, 7, 8, 9, 10, 11, 12]),
    ("int64", (3,), [-(2**62), 0, 2**62 + 1]),
    ("int32", (6,), [-(2**31), -1, 0, 1, 2**31 - 1, 7]),
    ("int16", (12,), [-32768, -1, 0, 1, 32767, 5, 6, 7, 8, 9, 10, 11]),
    ("int8", (24,), list(range(-12, 12))),
    ("uint8", (2, 12), list(range(0, 240, 10))),
    ("uint16", (12,), [0, 1, 65535, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
    ("uint32", (6,), [0, 1, 2**32 - 1, 3, 4, 5]),
    ("uint64", (3,), [0, 2**64 - 1, 2**40]),
    ("bool", (2, 3, 4), [i % 3 == 0 for i in range(24)]),
]


def run(bundle, data, out):
    result = subprocess.run(
        [WORKER, bundle, "--input", f"x={data}", "--output-dir", out],
        capture_output=True, text=True)
    if result.returncode != 0:
        return None, result.stderr.strip()
    return np.load(os.path.join(out, "y.npy")), ""


def make_identity(bundle, dtype, shape):
    """The identity program compiled for `dtype` x `shape` (a program
    records the types of its ports, and the runtime checks them)."""
    sys.argv = ["make_bundle.py", "identity", bundle, "--lib-dir", LIB,
                "--dtype", dtype, "--shape", ",".join(str(d) for d in shape)]
    make_bundle.main()


def main():
    for dtype, shape, values in CASES:
        expected = np.array(values, dtype=dtype).reshape(shape)
        bundle = os.path.join(WORK, dtype)
        make_identity(bundle, dtype, shape)
        onnx_type = helper.np_dtype_to_tensor_dtype(expected.dtype)
        files = {
            "npy": expected,
            "raw": numpy_helper.from_array(expected, "x"),
            # The typed fields: float_data, int32_data, int64_data,
            # double_data or uint64_data, as ONNX picks for the type.
            "typed": helper.make_tensor("x", onnx_type, shape, expected.ravel().tolist()),
        }
        results = []
        for kind, content in files.items():
            if kind == "npy":
                path = os.path.join(WORK, f"{dtype}.npy")
                np.save(path, content)
            else:
                path = os.path.join(WORK, f"{dtype}-{kind}.pb")
                with open(path, "wb") as f:
                    f.write(content.SerializeToString())
            got, error = run(bundle, path, os.path.join(WORK, f"out-{dtype}-{kind}"))
            same = got is not None and got.dtype == expected.dtype and np.array_equal(got, expected)
            results.append(f"{kind} {'ok' if same else 'WRONG ' + (error or str(got))}")
        print(f"{dtype}: {', '.join(results)}")

    # bfloat16 travels as .pb (NumPy has no bfloat16) and comes back as
    # float32, exactly.
    bundle = os.path.join(WORK, "bfloat16")
    make_identity(bundle, "bfloat16", (12,))
    values = [1.5, -2.0, 0.0, 0.25, 3.0, -1024.0, 7, 8, 9, 10, 11, 12]
    path = os.path.join(WORK, "bfloat16.pb")
    with open(path, "wb") as f:
        f.write(helper.make_tensor("x", TensorProto.BFLOAT16, (12,), values).SerializeToString())
    got, error = run(bundle, path, os.path.join(WORK, "out-bfloat16"))
    print(f"bfloat16: {got.dtype} {got.tolist() == values}" if got is not None else error)
    np.save(os.path.join(WORK, "bf.npy"), np.zeros(12, np.float32))
    print(run(bundle, os.path.join(WORK, "bf.npy"), os.path.join(WORK, "o"))[1])

    # A .pb whose element count disagrees with its dims.
    bad = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=[2, 3], float_data=[1.0, 2.0])
    path = os.path.join(WORK, "bad.pb")
    with open(path, "wb") as f:
        f.write(bad.SerializeToString())
    print(run(os.path.join(WORK, "float32"), path, os.path.join(WORK, "o"))[1])


main()

# CHECK: float32: npy ok, raw ok, typed ok
# CHECK: float64: npy ok, raw ok, typed ok
# CHECK: float16: npy ok, raw ok, typed ok
# CHECK: int64: npy ok, raw ok, typed ok
# CHECK: int32: npy ok, raw ok, typed ok
# CHECK: int16: npy ok, raw ok, typed ok
# CHECK: int8: npy ok, raw ok, typed ok
# CHECK: uint8: npy ok, raw ok, typed ok
# CHECK: uint16: npy ok, raw ok, typed ok
# CHECK: uint32: npy ok, raw ok, typed ok
# CHECK: uint64: npy ok, raw ok, typed ok
# CHECK: bool: npy ok, raw ok, typed ok
# CHECK: bfloat16: float32 True
# CHECK: cleave run: error: input 'x': expected bfloat16[12], got float32[12]
# CHECK: cleave run: error: {{.*}}bad.pb: float32[2,3] holds 6 elements, but float_data has 2
