"""Prints the OpenMP wait policy after `import cleave`."""

import os

import cleave  # noqa: F401

print("policy", os.environ.get("OMP_WAIT_POLICY"))
