"""Reference for vllm_lora_shrink: out[0, t] = scaling * x[t] @ lora_a[l(t)]^T for tokens with a LoRA
(l(t) >= 0); tokens without one (-1) keep zeros. Token groups follow vLLM's LoRA mapping metadata."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32


def generate(launch, rng):
    """Each token maps to a LoRA in [-1, loras); every group is non-empty. Tokens are grouped by LoRA id
    in ascending order (-1 first), as torch.unique + argsort produce them."""
    s = {a["buffer"]: a["shape"] for a in launch["args"] if "shape" in a}
    tokens, ids_len = s["token_indices"][0], s["lora_ids"][0]
    mapping = np.concatenate([np.arange(-1, ids_len - 1), rng.integers(-1, ids_len - 1, tokens - ids_len)])
    mapping = rng.permutation(mapping)
    order = np.argsort(mapping, kind="stable")
    lora_ids, counts = np.unique(mapping, return_counts=True)
    return {"token_indices": order.astype(np.int32), "tokens_per_lora": counts.astype(np.int32),
            "lora_start_loc": np.concatenate([[0], np.cumsum(counts)]).astype(np.int32),
            "lora_ids": lora_ids.astype(np.int32)}


# The bench shape's control flow depends on these inputs, and they are cheap to draw at its size.
generate_bench = generate


def token_loras(inputs):
    """LoRA id of every token, recovered from the grouping tables."""
    lora = np.full(inputs["token_indices"].shape[0], -1)
    for lid, start, n in zip(inputs["lora_ids"], inputs["lora_start_loc"], inputs["tokens_per_lora"]):
        lora[inputs["token_indices"][start:start + n]] = lid
    return lora


def reference(inputs, scalars):
    scaling = scalars[3]
    x = bf16_to_f32(inputs["x"]).astype(np.float64)
    a = bf16_to_f32(inputs["lora_a"]).astype(np.float64)       # [loras, rank, hidden]
    out = inputs["out"].astype(np.float64).copy()
    for t, lid in enumerate(token_loras(inputs)):
        if lid >= 0:
            out[0, t] += scaling * (a[lid] @ x[t])
    return {"out": out.astype(np.float32)}
