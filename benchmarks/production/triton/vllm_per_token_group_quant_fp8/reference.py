"""Reference for vllm_per_token_group_quant_fp8: per 128-wide group, s = max(absmax, eps) * (1 / 240)
and q = fp8_e4m3fnuz(clamp(x / s, -240, 240)), each step a single fp32 operation."""
import numpy as np

from asmevo.device.dtypes import get_dtype
from asmevo.suites.refutil import bf16_to_f32

FP8 = get_dtype("float8_e4m3fnuz")


def reference(inputs, scalars):
    group, eps = scalars[0], np.float32(scalars[3])
    x = bf16_to_f32(inputs["x"])
    g = x.reshape(x.shape[0], -1, group)
    absmax = np.maximum(np.abs(g).max(axis=2, keepdims=True), eps)
    s = (absmax * np.float32(1.0 / 240.0)).astype(np.float32)
    q = np.clip((g / s).astype(np.float32), -240.0, 240.0)
    return {"x_q": FP8.encode(q).reshape(x.shape), "x_s": s[..., 0]}
