"""Reference for mla_decode (MLA decode stage 1): sequence b reads its tokens kv[kv_page_indices[kv_indptr[b]:
kv_indptr[b + 1]]] (page size 1). Its KV splits each take `split_len` consecutive tokens, the per-split length a
multiple of 64 (stage 2 reads cdiv(len, 64) splits): split i holds tokens [i * split_len, (i + 1) * split_len).
For every split with tokens, split_out = softmax(q k^T * scale) v over those tokens (k = all 576 dims, v = the
first 512) and split_lse = log(sum exp(q k^T * scale)); splits without tokens are left untouched (they keep the
buffers' initial values)."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32

SPLIT_ALIGN, DV = 64, 512


def generate(launch, rng):
    """Sequence lengths in [1, pages] (the first uses every page), each a random permutation of the pages."""
    s = {f["buffer"]: f["shape"] for f in launch["args"][0]["struct"] if "shape" in f}
    (batch,), pages = s["kv_last_page_lens"], s["kv"][0]
    lens = rng.integers(1, pages + 1, batch)
    lens[0] = pages
    indices = np.zeros(batch * pages, np.int32)
    indices[:lens.sum()] = np.concatenate([rng.permutation(pages)[:n] for n in lens])
    return {"kv_indptr": np.concatenate([[0], np.cumsum(lens)]).astype(np.int32), "kv_page_indices": indices}


# The bench shape's control flow depends on these inputs, and they are cheap to draw at its size.
generate_bench = generate


def split_len(n: int, splits: int) -> int:
    return -(-(-(-n // splits)) // SPLIT_ALIGN) * SPLIT_ALIGN


def reference(inputs, scalars):
    scale = float(np.float32(scalars[0]["scalar"]))
    q = bf16_to_f32(inputs["q"]).astype(np.float64)                  # [batch, heads, 576]
    kv = bf16_to_f32(inputs["kv"]).astype(np.float64)[:, 0, 0]       # [pages, 576]
    out, lse = inputs["split_out"].astype(np.float64), inputs["split_lse"].astype(np.float64)
    indptr = inputs["kv_indptr"]
    splits = out.shape[1]
    for b in range(q.shape[0]):
        tokens = kv[inputs["kv_page_indices"][indptr[b]:indptr[b + 1]]]
        step = split_len(len(tokens), splits)
        for i in range(splits):
            part = tokens[i * step:(i + 1) * step]
            if len(part) == 0:
                continue
            logits = q[b] @ part.T * scale                                 # [heads, tokens]
            m = logits.max(-1, keepdims=True)
            p = np.exp(logits - m)
            out[b, i] = p @ part[:, :DV] / p.sum(-1, keepdims=True)
            lse[b, i] = m + np.log(p.sum(-1, keepdims=True))
    return {"split_out": out.astype(np.float32), "split_lse": lse.astype(np.float32)}
