"""Reference for 40_Matmul_Scaling_ResidualAdd: z = x @ W.T + bias; y = z * scale + z (fp16 output)."""
import numpy as np


def reference(inputs, scalars):
    scale = float(np.float32(scalars[3]))
    z = inputs["x"].astype(np.float64) @ inputs["W"].astype(np.float64).T + inputs["bias"].astype(np.float64)
    return {"y": (z * scale + z).astype(np.float16)}
