"""Reference for 67_conv_standard_1D: valid 1-D cross-correlation, stride 1, no bias, float64."""
import numpy as np


def reference(inputs, scalars):
    x = inputs["x"].astype(np.float64)
    w = inputs["weight"].astype(np.float64)
    ks = w.shape[2]
    lout = x.shape[2] - ks + 1
    y = sum(np.einsum("bcl,oc->bol", x[:, :, k:k + lout], w[:, :, k]) for k in range(ks))
    return {"y": y.astype(np.float32)}
