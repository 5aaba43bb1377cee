"""Helpers that build small ONNX models for cleave's tests."""

import importlib.util
import os

from cleave.testing.onnx_builder import GraphBuilder, save_raw

__all__ = ["GraphBuilder", "load_sibling", "save_raw"]


def load_sibling(test_file: str, name: str):
    """Imports the test script `name` that lies beside `test_file` (a lit
    test's `__file__`), for its model builders; names with dashes work."""
    path = os.path.join(os.path.dirname(os.path.abspath(test_file)), name)
    spec = importlib.util.spec_from_file_location(
        os.path.splitext(name)[0].replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
