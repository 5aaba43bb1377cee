"""Reading back the bytes that `cleave.weight` ops reference."""

import re

import numpy as np

_WEIGHT = re.compile(
    r'cleave\.weight "(?P<name>[^"]+)" \{file = "(?P<file>[^"]+)", '
    r"length = (?P<length>\d+) : i64, offset = (?P<offset>\d+) : i64\} : "
    r"tensor<(?P<type>[^>]+)>"
)
_DTYPES = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i8": np.int8,
    "i32": np.int32,
    "i64": np.int64,
}


def weights_in(mlir_text):
    """Yields (name, file, offset, length, shape, dtype) of every weight."""
    for match in _WEIGHT.finditer(mlir_text):
        *dims, element = match["type"].split("x")
        yield (
            match["name"],
            match["file"],
            int(match["offset"]),
            int(match["length"]),
            [int(d) for d in dims],
            _DTYPES[element],
        )


def verify_weights(mlir_text, expected):
    """Reads each weight named in `expected` (name -> array) from the file
    range the IR gives and compares it with the array. Returns the number of
    weights checked; raises AssertionError on the first mismatch."""
    count = 0
    for name, path, offset, length, shape, dtype in weights_in(mlir_text):
        if name not in expected:
            continue
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read(length)
        value = np.frombuffer(data, dtype).reshape(shape)
        assert np.array_equal(value, expected[name]), (
            f"weight {name}: the bytes at [{offset}, {offset + length}) of "
            f"{path} differ from the initializer"
        )
        count += 1
    return count
