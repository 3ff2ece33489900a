"""Reference for 76_Gemm_Add_ReLU: y = relu(x @ W.T + bias) (fp16 output)."""
import numpy as np


def reference(inputs, scalars):
    z = inputs["x"].astype(np.float64) @ inputs["W"].astype(np.float64).T + inputs["bias"].astype(np.float64)
    return {"y": np.maximum(z, 0.0).astype(np.float16)}
