"""Reference for vllm_decode_attention_stage1: for each sequence, query head and KV split, softmax(q K^T *
sm_scale) V over the split's tokens (paged K/V cache, GQA) and the split's log-sum-exp at index Lv.
Splits with no tokens are left untouched (zero)."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32

PAGE, SPLITS, GROUP = 16, 4, 4


def _shapes(launch):
    return {a["buffer"]: a["shape"] for a in launch["args"] if "shape" in a}


def generate(launch, rng):
    """Sequence lengths in [1, max_pages * PAGE] (one full) and page tables of distinct random pages."""
    s = _shapes(launch)
    batch, max_pages = s["page_table"]
    num_pages = s["k_cache"][0]
    lens = rng.integers(1, max_pages * PAGE + 1, batch)
    lens[0] = max_pages * PAGE
    pages = np.stack([rng.permutation(num_pages)[:max_pages] for _ in range(batch)])
    return {"seq_lens": lens.astype(np.int32), "page_table": pages.astype(np.int32)}


# The bench shape's control flow depends on these inputs, and they are cheap to draw at its size.
generate_bench = generate


def reference(inputs, scalars):
    q = bf16_to_f32(inputs["q"]).astype(np.float64)             # [batch, heads, d]
    k = bf16_to_f32(inputs["k_cache"]).astype(np.float64)       # [pages, PAGE, kv_heads, d]
    v = bf16_to_f32(inputs["v_cache"]).astype(np.float64)
    out = inputs["att_out"].copy()                               # [batch, heads, SPLITS, d + 1]
    sm_scale, d = scalars[0], q.shape[2]
    for b, n in enumerate(inputs["seq_lens"]):
        tok = np.arange(n)
        page = inputs["page_table"][b][tok // PAGE]
        kb, vb = k[page, tok % PAGE], v[page, tok % PAGE]      # [n, kv_heads, d]
        per = -(-int(n) // SPLITS)
        for s in range(SPLITS):
            lo, hi = per * s, min(per * (s + 1), int(n))
            if hi <= lo:
                continue
            for h in range(q.shape[1]):
                logits = kb[lo:hi, h // GROUP] @ q[b, h] * sm_scale
                m = logits.max()
                p = np.exp(logits - m)
                out[b, h, s, :d] = p @ vb[lo:hi, h // GROUP] / p.sum()
                out[b, h, s, d] = m + np.log(p.sum())
    return {"att_out": out}
