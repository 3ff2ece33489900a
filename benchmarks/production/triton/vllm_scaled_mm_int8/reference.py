"""Reference for vllm_scaled_mm_int8: c = bf16(scale_b * (scale_a * (A @ B))) with an exact int32 product."""
import numpy as np

from asmevo.suites.refutil import f32_to_bf16


def generate(launch, rng):
    """Full int8 range operands and positive per-row / per-column scales around 1e-3."""
    s = {a["buffer"]: a["shape"] for a in launch["args"] if "shape" in a}
    return {"a": rng.integers(-128, 128, s["a"]).astype(np.int8), "b": rng.integers(-128, 128, s["b"]).astype(np.int8),
            "scale_a": rng.uniform(5e-4, 2e-3, s["scale_a"]).astype(np.float32),
            "scale_b": rng.uniform(5e-4, 2e-3, s["scale_b"]).astype(np.float32)}


def reference(inputs, scalars):
    acc = inputs["a"].astype(np.int64) @ inputs["b"].astype(np.int64)
    c = inputs["scale_b"][:, 0].astype(np.float64) * (inputs["scale_a"].astype(np.float64) * acc)
    return {"c": f32_to_bf16(c.astype(np.float32))}
