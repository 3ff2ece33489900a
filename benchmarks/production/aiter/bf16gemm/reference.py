"""Reference for bf16gemm: D = A @ B^T in float64 (bf16 inputs), stored as fp32."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32


def reference(inputs, scalars):
    a = bf16_to_f32(inputs["A"]).astype(np.float64)
    b = bf16_to_f32(inputs["B"]).astype(np.float64)
    return {"D": (a @ b.T).astype(np.float32)}
