"""Reference for vllm_fused_moe: c[t, j] = a[t] @ w[e(t, j)]^T for each token t and its j-th routed
expert, with tokens grouped by expert into 16-row blocks (vLLM's moe_align_block_size layout). A block whose
expert id is -1 (an expert on another rank under expert parallelism) gets zero rows, as fused_moe_kernel writes
them (write_zeros_to_output)."""
import numpy as np

from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16

BLOCK_M, TOP_K = 16, 2


def generate(launch, rng):
    """Distinct random experts per token; sorted ids padded per expert with the sentinel tokens * TOP_K;
    blocks past num_tokens_post_padded are never read."""
    s = {a["buffer"]: a["shape"] for a in launch["args"] if "shape" in a}
    tokens, experts = s["a"][0], s["w"][0]
    em = s["sorted_token_ids"][0]
    topk = np.stack([rng.choice(experts, TOP_K, replace=False) for _ in range(tokens)]).astype(np.int32)
    flat = topk.reshape(-1)
    sorted_ids, block_experts = [], []
    for e in range(experts):
        ids = np.flatnonzero(flat == e)
        if len(ids) == 0:
            continue
        padded = -(-len(ids) // BLOCK_M) * BLOCK_M
        sorted_ids += list(ids) + [tokens * TOP_K] * (padded - len(ids))
        block_experts += [e] * (padded // BLOCK_M)
    used = len(sorted_ids)
    sorted_arr = np.full(em, tokens * TOP_K, np.int32)
    sorted_arr[:used] = sorted_ids
    expert_arr = np.zeros(em // BLOCK_M, np.int32)
    expert_arr[:len(block_experts)] = block_experts
    return {"sorted_token_ids": sorted_arr, "expert_ids": expert_arr,
            "num_tokens_post_padded": np.array([used], np.int32)}


# The bench shape's control flow depends on these inputs, and they are cheap to draw at its size.
generate_bench = generate


def reference(inputs, scalars):
    a = bf16_to_f32(inputs["a"]).astype(np.float64)
    w = bf16_to_f32(inputs["w"]).astype(np.float64)
    c = bf16_to_f32(inputs["c"]).astype(np.float64)
    tokens = a.shape[0]
    used = int(inputs["num_tokens_post_padded"][0])
    for i, tid in enumerate(inputs["sorted_token_ids"][:used]):
        if tid < tokens * TOP_K:
            e = inputs["expert_ids"][i // BLOCK_M]
            c[tid // TOP_K, tid % TOP_K] = 0 if e == -1 else w[e] @ a[tid // TOP_K]
    return {"c": f32_to_bf16(c.astype(np.float32))}
