"""Reference for vllm_prefill_attention: causal softmax(Q K^T / sqrt(d)) V per packed sequence, GQA
(query head h reads KV head h // 2)."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16

GROUP = 2
BLOCK = 128  # query rows per workgroup (BLOCK_M)


def _shapes(launch):
    return {a["buffer"]: a["shape"] for a in launch["args"] if "shape" in a}


def generate(launch, rng):
    """A random split of the `total` packed rows into `batch` sequences whose longest fills the grid's last
    query block, as vLLM launches it (grid z = cdiv(max_input_len, BLOCK) with max_input_len the longest
    sequence). The others share the rest in random proportions, none longer than the longest."""
    s = _shapes(launch)
    total, batch = s["q"][0], s["seq_lens"][0]
    blocks = launch["grid"][2]
    lo = max((blocks - 1) * BLOCK + 1, -(-total // batch))
    hi = min(blocks * BLOCK, total - (batch - 1))
    if lo > hi:
        raise ValueError(f"{batch} sequences of {total} rows cannot have their longest in query block {blocks}")
    longest = int(rng.integers(lo, hi + 1))
    rest = total - longest
    lens = np.full(batch - 1, 1, np.int64)
    if batch > 1:
        weights = rng.uniform(0.5, 1.5, batch - 1)
        lens += np.floor((rest - (batch - 1)) * weights / weights.sum()).astype(np.int64)
        lens[: rest - int(lens.sum())] += 1
        if lens.max() > longest:
            raise ValueError(f"{batch} sequences of {total} rows do not fit under a longest of {longest}")
    lens = rng.permutation(np.concatenate([[longest], lens]))
    bounds = np.concatenate([[0], np.cumsum(lens)])
    return {"seq_lens": lens.astype(np.int32), "start_loc": bounds[:-1].astype(np.int32)}


# The bench shape's control flow depends on these inputs, and they are cheap to draw at its size.
generate_bench = generate


def reference(inputs, scalars):
    q = bf16_to_f32(inputs["q"]).astype(np.float64)
    k = bf16_to_f32(inputs["k"]).astype(np.float64)
    v = bf16_to_f32(inputs["v"]).astype(np.float64)
    out = bf16_to_f32(inputs["out"]).astype(np.float64)
    scale = 1.0 / np.sqrt(q.shape[2])
    for start, n in zip(inputs["start_loc"], inputs["seq_lens"]):
        rows = slice(int(start), int(start) + int(n))
        causal = np.tril(np.ones((n, n), bool))
        for h in range(q.shape[1]):
            logits = q[rows, h] @ k[rows, h // GROUP].T * scale
            logits = np.where(causal, logits, -np.inf)
            p = np.exp(logits - logits.max(axis=1, keepdims=True))
            out[rows, h] = p @ v[rows, h // GROUP] / p.sum(axis=1, keepdims=True)
    return {"out": f32_to_bf16(out.astype(np.float32))}
