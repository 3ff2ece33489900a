"""Reference for vllm_merge_attn_states: tokens before `prefill_tokens_with_context` merge prefix and suffix
partials by their log-sum-exps (+inf means empty, like -inf); later tokens copy the suffix."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16


def generate(launch, rng):
    """LSEs in [-3, 3] with a few empty (+inf / -inf) prefix entries."""
    shape = next(a["shape"] for a in launch["args"] if a.get("buffer") == "prefix_lse")
    p = rng.uniform(-3, 3, shape).astype(np.float32)
    p.flat[::7] = np.inf
    p.flat[3::11] = -np.inf
    return {"prefix_lse": p, "suffix_lse": rng.uniform(-3, 3, shape).astype(np.float32)}


# The bench shape's control flow depends on these inputs, and they are cheap to draw at its size.
generate_bench = generate


def reference(inputs, scalars):
    ctx = scalars[5]
    p_out = bf16_to_f32(inputs["prefix_out"]).astype(np.float64)    # [tokens, heads, d]
    s_out = bf16_to_f32(inputs["suffix_out"]).astype(np.float64)
    p_lse = inputs["prefix_lse"].T.astype(np.float64)               # [tokens, heads]
    s_lse = inputs["suffix_lse"].T.astype(np.float64)
    p_lse = np.where(p_lse == np.inf, -np.inf, p_lse)
    s_lse = np.where(s_lse == np.inf, -np.inf, s_lse)
    m = np.maximum(p_lse, s_lse)
    p_se, s_se = np.exp(p_lse - m), np.exp(s_lse - m)
    out = (p_out * p_se[..., None] + s_out * s_se[..., None]) / (p_se + s_se)[..., None]
    lse = np.log(p_se + s_se) + m
    out[ctx:] = s_out[ctx:]
    lse[ctx:] = inputs["suffix_lse"].T[ctx:]
    return {"out": f32_to_bf16(out.astype(np.float32)), "out_lse": lse.T.astype(np.float32)}
