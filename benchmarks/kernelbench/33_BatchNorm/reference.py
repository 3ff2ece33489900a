"""Reference for 33_BatchNorm (inference): (x - mean[c]) / sqrt(var[c] + eps) * w[c] + b[c]."""
import numpy as np


def generate(launch, rng):
    """Running variances must be positive."""
    c = next(a for a in launch["args"] if a.get("buffer") == "running_var")["shape"]
    return {"running_var": rng.uniform(0.25, 2.0, size=c).astype(np.float32)}


def reference(inputs, scalars):
    eps = float(scalars[2])
    f = lambda k: inputs[k].astype(np.float64)[None, :, None, None]  # noqa: E731
    y = (inputs["x"].astype(np.float64) - f("running_mean")) / np.sqrt(f("running_var") + eps) * f("weight") + f("bias")
    return {"y": y.astype(np.float32)}
