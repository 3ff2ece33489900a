"""Reference for fmha_fwd: per batch and query head h (KV head h // (heads / kv_heads)), O = softmax(Q K^T * scale) V
over all key positions (no mask), and LSE = log(sum exp(Q K^T * scale)) (natural log) per query row.
Q/K/V/O are [batch, seq, heads, 128] bf16; LSE is [batch, heads, seq_q] fp32."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16


def reference(inputs, scalars):
    scale = float(np.float32(scalars[0]["scalar"]))
    q = bf16_to_f32(inputs["q"]).astype(np.float64).transpose(0, 2, 1, 3)   # [b, h, sq, d]
    k = bf16_to_f32(inputs["k"]).astype(np.float64).transpose(0, 2, 1, 3)   # [b, hk, sk, d]
    v = bf16_to_f32(inputs["v"]).astype(np.float64).transpose(0, 2, 1, 3)
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    logits = q @ k.transpose(0, 1, 3, 2) * scale                              # [b, h, sq, sk]
    m = logits.max(-1, keepdims=True)
    p = np.exp(logits - m)
    l = p.sum(-1, keepdims=True)
    out = (p @ v / l).transpose(0, 2, 1, 3)
    return {"out": f32_to_bf16(out.astype(np.float32)), "lse": (m + np.log(l))[..., 0].astype(np.float32)}
