"""Reference for 20_LeakyReLU: y = x if x >= 0 else slope * x (fp32 multiply, like the kernel)."""
import numpy as np


def reference(inputs, scalars):
    x = inputs["x"]
    slope = np.float32(scalars[1])
    return {"y": np.where(x >= 0, x, x * slope).astype(np.float32)}
