"""Reference for 35_GroupNorm_: GroupNorm(G, C) with affine weight/bias, float64."""
import numpy as np


def reference(inputs, scalars):
    hw, cpg, groups, eps = int(scalars[0]), int(scalars[1]), int(scalars[2]), float(scalars[3])
    x = inputs["x"].astype(np.float64)
    n, c = x.shape[:2]
    g = x.reshape(n, groups, cpg * hw)
    y = (g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + eps)
    y = y.reshape(x.shape) * inputs["weight"].astype(np.float64)[None, :, None, None] \
        + inputs["bias"].astype(np.float64)[None, :, None, None]
    return {"y": y.astype(np.float32)}
