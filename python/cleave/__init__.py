"""cleave: an ahead-of-time model-partitioning compiler (Python side)."""
