"""Reference for 51_Argmax_over_a_dimension: argmax over dim 1 as int64."""
import numpy as np


def generate(launch, rng):
    """Distinct values along dim 1 so the argmax is unambiguous."""
    shape = next(a for a in launch["args"] if a.get("buffer") == "x")["shape"]
    b, r, c = shape
    keys = rng.random((b, r, c)).argsort(axis=1).astype(np.float32)
    return {"x": ((keys - r / 2) / r).astype(np.float32)}


def reference(inputs, scalars):
    return {"y": inputs["x"].argmax(axis=1).astype(np.int64)}
