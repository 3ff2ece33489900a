"""Reference for 3_Batched_matrix_multiplication: C[b] = A[b] @ B[b], bf16 (uint16 storage) in/out."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16


def reference(inputs, scalars):
    a = bf16_to_f32(inputs["A"]).astype(np.float64)
    b = bf16_to_f32(inputs["B"]).astype(np.float64)
    return {"C": f32_to_bf16(np.matmul(a, b).astype(np.float32))}
