"""Reference for vllm_rotary: GPT-NeoX rotary embedding (halves, not interleaved) over the full head."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16


def reference(inputs, scalars):
    x = bf16_to_f32(inputs["x"]).astype(np.float64)           # [batch, seqlen, heads, 128]
    seqlen = x.shape[1]
    cos = bf16_to_f32(inputs["cos"])[:seqlen].astype(np.float64)[None, :, None, :]
    sin = bf16_to_f32(inputs["sin"])[:seqlen].astype(np.float64)[None, :, None, :]
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    out = np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
    return {"out": f32_to_bf16(out.astype(np.float32))}
