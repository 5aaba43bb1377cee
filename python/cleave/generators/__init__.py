"""Torch-free generators of ONNX models with the shapes of real networks.

They build graphs with the onnx package alone, so tests, examples and
benchmarks can make models of any size without a deep-learning framework or
downloaded weights.
"""
