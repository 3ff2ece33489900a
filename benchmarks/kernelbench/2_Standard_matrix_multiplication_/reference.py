"""Reference for 2_Standard_matrix_multiplication_: C = A @ B, fp16 in/out, exact products summed in float64."""
import numpy as np


def reference(inputs, scalars):
    c = inputs["A"].astype(np.float64) @ inputs["B"].astype(np.float64)
    return {"C": c.astype(np.float16)}
