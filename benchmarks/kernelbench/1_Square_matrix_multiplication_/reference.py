"""Reference for 1_Square_matrix_multiplication_: C = A @ B (float64 math, float32 result)."""
import numpy as np


def reference(inputs, scalars):
    return {"C": (inputs["A"].astype(np.float64) @ inputs["B"].astype(np.float64)).astype(np.float32)}
