"""Reference for vllm_rms_norm: y = x / sqrt(mean(x^2) + eps) * w, per row, rounded once to bf16."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16


def reference(inputs, scalars):
    x = bf16_to_f32(inputs["x"]).astype(np.float64)
    w = bf16_to_f32(inputs["w"]).astype(np.float64)
    eps = scalars[3]
    y = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * w
    return {"y": f32_to_bf16(y.astype(np.float32))}
