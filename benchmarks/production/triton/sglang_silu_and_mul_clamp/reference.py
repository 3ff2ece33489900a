"""Reference for sglang_silu_and_mul_clamp: silu(min(g, L)) * clamp(u, -L, L) for rows [g | u]."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16


def generate(launch, rng):
    """Values in [-10, 10] so both clamps (limit 7) are exercised."""
    shape = next(a["shape"] for a in launch["args"] if a.get("buffer") == "x")
    return {"x": f32_to_bf16(rng.uniform(-10, 10, shape).astype(np.float32))}


def reference(inputs, scalars):
    inter, limit = scalars[0], scalars[3]
    x = bf16_to_f32(inputs["x"]).astype(np.float64)
    g = np.minimum(x[:, :inter], limit)
    u = np.clip(x[:, inter:2 * inter], -limit, limit)
    return {"out": f32_to_bf16((g / (1.0 + np.exp(-g)) * u).astype(np.float32))}
