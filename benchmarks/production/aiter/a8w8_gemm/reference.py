"""Reference for a8w8_gemm: C = (A @ B^T) * a_scale[:, None] * b_scale[None, :] + bias, int8 A [M, K] and B [N, K]
(B pre-shuffled as AITer's shuffle_weight(B, layout=(32, 16)) leaves it: 32x32 tiles of (row tile, k tile), each
stored as two 16-column halves of 32 rows x 16 bytes), bf16 C."""
import numpy as np

from asmevo.suites.refutil import f32_to_bf16, shuffle_weight, unshuffle_weight


def generate(launch, rng):
    """Full-range int8 operands (B stored shuffled), positive per-token / per-channel scales, a bias."""
    s = {f["buffer"]: f["shape"] for f in launch["args"][0]["struct"] if "shape" in f}
    (m, k), (n, _) = s["A"], s["B"]
    return {"A": rng.integers(-128, 128, (m, k)).astype(np.int8),
            "B": shuffle_weight(rng.integers(-128, 128, (n, k)).astype(np.int8), 32),
            "a_scale": rng.uniform(0.5e-3, 2e-3, m).astype(np.float32),
            "b_scale": rng.uniform(0.5e-3, 2e-3, n).astype(np.float32),
            "bias": rng.uniform(-1, 1, n).astype(np.float32)}


def reference(inputs, scalars):
    a = inputs["A"].astype(np.int64)
    b = unshuffle_weight(inputs["B"], 32).astype(np.int64)
    c = (a @ b.T).astype(np.float64) * inputs["a_scale"].astype(np.float64)[:, None] \
        * inputs["b_scale"].astype(np.float64)[None, :]
    return {"C": f32_to_bf16((c + inputs["bias"].astype(np.float64)[None, :]).astype(np.float32))}
