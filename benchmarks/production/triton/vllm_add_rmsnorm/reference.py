"""Reference for vllm_add_rmsnorm: res_out = bf16(residual + delta); y = rmsnorm(res_out) * w in bf16."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16


def reference(inputs, scalars):
    s = f32_to_bf16(bf16_to_f32(inputs["residual"]) + bf16_to_f32(inputs["delta"]))
    x = bf16_to_f32(s).astype(np.float64)
    w = bf16_to_f32(inputs["w"]).astype(np.float64)
    y = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + scalars[0]) * w
    return {"y": f32_to_bf16(y.astype(np.float32)), "res_out": s}
