"""Reference for sglang_gelu_and_mul: out = x[:, H:] * bf16(gelu_erf(x[:, :H])), rounded to bf16."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16, gelu


def reference(inputs, scalars):
    x = bf16_to_f32(inputs["x"])
    h = x.shape[1] // 2
    g = bf16_to_f32(f32_to_bf16(gelu(x[:, :h]).astype(np.float32)))
    return {"out": f32_to_bf16((x[:, h:].astype(np.float64) * g).astype(np.float32))}
