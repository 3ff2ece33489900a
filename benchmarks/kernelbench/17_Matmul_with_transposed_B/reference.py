"""Reference for 17_Matmul_with_transposed_B: C = A @ B.T, bf16 (uint16 storage) inputs, float32 output."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32


def reference(inputs, scalars):
    a = bf16_to_f32(inputs["A"]).astype(np.float64)
    b = bf16_to_f32(inputs["B"]).astype(np.float64)
    return {"C": (a @ b.T).astype(np.float32)}
