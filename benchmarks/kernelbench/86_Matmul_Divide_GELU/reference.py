"""Reference for 86_Matmul_Divide_GELU: y = gelu((x @ W.T + bias) / divisor), float64 math."""
import numpy as np

from asmevo.suites.refutil import gelu


def reference(inputs, scalars):
    divisor = float(scalars[3])
    z = inputs["x"].astype(np.float64) @ inputs["W"].astype(np.float64).T + inputs["bias"].astype(np.float64)
    return {"y": gelu(z / divisor).astype(np.float32)}
