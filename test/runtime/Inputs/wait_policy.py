"""Prints the OpenMP waits after `import cleave`."""

import os

import cleave  # noqa: F401

marker = os.environ.get("CLEAVE_OPENMP_WAITS")
print("policy", os.environ.get("OMP_WAIT_POLICY"), "spins", os.environ.get("GOMP_SPINCOUNT"),
      "marked", "self" if marker == str(os.getpid()) else marker)
