"""Reference for vllm_decode_attention_stage2: merge the non-empty KV-split partials (value rows and their
log-sum-exps at index Lv) into o = sum_s exp(lse_s - m) o_s / sum_s exp(lse_s - m) and lse = m + log(sum)."""
import numpy as np

from asmevo.suites.refutil import f32_to_bf16

SPLITS = 4


def generate(launch, rng):
    """Sequence lengths 1..9 and some long ones, so some sequences leave KV splits empty."""
    batch = next(a["shape"][0] for a in launch["args"] if a.get("buffer") == "seq_lens")
    lens = rng.integers(1, 10, batch)
    lens[::2] = rng.integers(100, 5000, len(lens[::2]))
    return {"seq_lens": lens.astype(np.int32)}


# The bench shape's control flow depends on these inputs, and they are cheap to draw at its size.
generate_bench = generate


def reference(inputs, scalars):
    mid = inputs["mid_o"].astype(np.float64)                    # [batch, heads, SPLITS, d + 1]
    d = mid.shape[-1] - 1
    o = np.zeros(mid.shape[:2] + (d,))
    lse = np.zeros(mid.shape[:2])
    for b, n in enumerate(inputs["seq_lens"]):
        per = -(-int(n) // SPLITS)
        live = [s for s in range(SPLITS) if min(per * (s + 1), int(n)) > per * s]
        lses = mid[b][:, live, d]                               # [heads, live]
        m = lses.max(axis=1, keepdims=True)
        wts = np.exp(lses - m)
        o[b] = np.einsum("hs,hsd->hd", wts, mid[b][:, live, :d]) / wts.sum(axis=1, keepdims=True)
        lse[b] = m[:, 0] + np.log(wts.sum(axis=1))
    return {"o": f32_to_bf16(o.astype(np.float32)), "lse": lse.astype(np.float32)}
