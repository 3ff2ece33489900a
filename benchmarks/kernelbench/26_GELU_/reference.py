"""Reference for 26_GELU_: exact GELU, 0.5 x (1 + erf(x / sqrt 2)), in float64."""
import numpy as np

from asmevo.suites.refutil import gelu


def reference(inputs, scalars):
    return {"y": gelu(inputs["x"]).astype(np.float32)}
