"""Reference for 31_ELU: x if x > 0 else alpha * expm1(x), float64."""
import numpy as np


def reference(inputs, scalars):
    x = inputs["x"].astype(np.float64)
    alpha = float(scalars[1])
    return {"y": np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0.0))).astype(np.float32)}
