"""Reference for paged_attention: per sequence and query head h, softmax(q K^T / sqrt(d)) V over the
sequence's context tokens, read through its block table from the paged caches (KV head h // 8).
K is [blocks, kv_heads, d/x, block, x] and V [blocks, kv_heads, block/x, d, x] with x = 8 (16 bytes)."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16

GQA, BLOCK = 8, 16


def generate(launch, rng):
    """Context lengths in [1, max_blocks * 16] (one full) and distinct random blocks per sequence."""
    s = {f["buffer"]: f["shape"] for f in launch["args"][0]["struct"] if "shape" in f}
    batch, max_blocks = s["block_tables"]
    lens = rng.integers(1, max_blocks * BLOCK + 1, batch)
    lens[0] = max_blocks * BLOCK
    tables = np.stack([rng.permutation(s["k_cache"][0])[:max_blocks] for _ in range(batch)])
    return {"context_lens": lens.astype(np.int32), "block_tables": tables.astype(np.int32)}


# The bench shape's control flow depends on these inputs, and they are cheap to draw at its size.
generate_bench = generate


def reference(inputs, scalars):
    q = bf16_to_f32(inputs["q"]).astype(np.float64)                       # [batch, heads, d]
    kc = bf16_to_f32(inputs["k_cache"]).astype(np.float64)               # [nb, kvh, d/x, blk, x]
    vc = bf16_to_f32(inputs["v_cache"]).astype(np.float64)               # [nb, kvh, blk/x, d, x]
    nb, kvh, _, blk, x = kc.shape
    d = q.shape[2]
    k = kc.transpose(0, 1, 3, 2, 4).reshape(nb, kvh, blk, d)             # [nb, kvh, blk, d]
    v = vc.transpose(0, 1, 2, 4, 3).reshape(nb, kvh, blk, d)             # [nb, kvh, blk, d]
    out = np.zeros_like(q)
    for b, n in enumerate(inputs["context_lens"]):
        tok = np.arange(n)
        blocks = inputs["block_tables"][b][tok // BLOCK]
        for h in range(q.shape[1]):
            kk, vv = k[blocks, h // GQA, tok % BLOCK], v[blocks, h // GQA, tok % BLOCK]
            logits = kk @ q[b, h] / np.sqrt(d)
            p = np.exp(logits - logits.max())
            out[b, h] = p @ vv / p.sum()
    return {"out": f32_to_bf16(out.astype(np.float32))}
