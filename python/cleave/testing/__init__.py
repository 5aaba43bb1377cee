"""Helpers that build small ONNX models for cleave's tests."""

from cleave.testing.onnx_builder import GraphBuilder, save_raw

__all__ = ["GraphBuilder", "save_raw"]
