"""Reference for sglang_gemma4_routing: top-8 of 128 logits (ties to the lower expert id), softmax over
the top-8, times the per-expert scale."""
import numpy as np


def generate(launch, rng):
    """Positive per-expert scales (router logits stay uniform [-1, 1), distinct with probability 1)."""
    return {"expert_scale": rng.uniform(0.5, 1.5, 128).astype(np.float32)}


def reference(inputs, scalars):
    logits = inputs["gating"].astype(np.float64)
    k = 8
    order = np.lexsort((np.broadcast_to(np.arange(logits.shape[1]), logits.shape), -logits), axis=1)[:, :k]
    top = np.take_along_axis(logits, order, axis=1)
    e = np.exp(top - top[:, :1])
    w = e / e.sum(axis=1, keepdims=True) * inputs["expert_scale"].astype(np.float64)[order]
    return {"topk_weights": w.astype(np.float32), "topk_ids": order.astype(np.int32)}
