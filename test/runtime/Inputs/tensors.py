"""Writes and checks tensor files for the runtime tests.

    tensors.py npy FILE DTYPE SHAPE VALUES     write a .npy
    tensors.py pb FILE DTYPE SHAPE VALUES      write an ONNX TensorProto
    tensors.py check FILE DTYPE SHAPE VALUES   a .npy holds exactly this

SHAPE is comma-separated ("" for a scalar); VALUES are comma-separated and
may be nan, inf, -inf.
"""

import sys

import numpy as np


def array(dtype, shape, values):
    dims = tuple(int(d) for d in shape.split(",") if d)
    items = [float(v) for v in values.split(",") if v]
    return np.array(items).astype(dtype).reshape(dims)


def main():
    command, path, dtype, shape, values = sys.argv[1:6]
    expected = array(dtype, shape, values)
    if command == "npy":
        np.save(path, expected)
    elif command == "pb":
        from onnx import numpy_helper

        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(expected).SerializeToString())
    elif command == "check":
        got = np.load(path)
        if got.dtype != expected.dtype or got.shape != expected.shape:
            print(f"{path}: {got.dtype}{list(got.shape)}, expected "
                  f"{expected.dtype}{list(expected.shape)}")
            return 1
        if not np.array_equal(got, expected, equal_nan=got.dtype.kind == "f"):
            print(f"{path}: {got.ravel().tolist()}, expected {expected.ravel().tolist()}")
            return 1
        print(f"{path}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
