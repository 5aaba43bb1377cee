"""Real torch 2 exports of published architectures, as a test set.

`python -m cleave.exports --out DIR` (with torch 2, transformers and timm;
test/e2e/exports/README.md) writes one ONNX backend-test folder per model
and exporter; `cleave.testing.exports` compiles and runs the checked-in set.
"""
