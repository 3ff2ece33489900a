"""Reference for layer_norm: residual_out = bf16(x + residual_in); out = LayerNorm(residual_out) * weight
+ bias over each 8192-wide row. The kernel converts fp32 to bf16 by truncation (round toward zero), so the
reference does too."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32


def bf16_rtz(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def reference(inputs, scalars):
    eps = scalars[0]["epsilon"]
    s = bf16_rtz(bf16_to_f32(inputs["x"]) + bf16_to_f32(inputs["residual_in"]))
    x = bf16_to_f32(s).astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps) * bf16_to_f32(inputs["weight"]) + bf16_to_f32(inputs["bias"])
    return {"out": bf16_rtz(y.astype(np.float32)), "residual_out": s}
