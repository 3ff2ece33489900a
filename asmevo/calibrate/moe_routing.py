"""MoE routing data as AITer's fused-MoE kernels read it, generated the way AITer's MoE tuner does.

The tuner (`aiter_meta/hsa/gfx942/fmoe_2stages/tune.py`, `FmoeTuner.generate_data`) draws gating scores
`randn(token, expert)`, routes with `fused_topk(..., renormalize=True)` (softmax over experts, top-k,
weights renormalised to sum 1) and sorts with `moe_sorting` (`aiter/fused_moe.py`), which fills

- `sorted_token_ids` [topk * tokens + experts * block - topk]: per expert (ascending, experts without
  tokens skipped), its (token, slot) pairs in token order, padded to a multiple of `block` with the
  pad id; each id packs the token in bits 0-23 and the top-k slot in bits 24-31 (CK's
  `MOE_SORTING_MOCK_ID`, `ck_tile/ops/fused_moe/kernel/moe_sorting_kernel.hpp`);
- `sorted_weights` (same length): the routing weight of each entry, 0 for padding;
- `sorted_expert_ids` [ceil(len(sorted_token_ids) / block)]: the expert of each block;
- `num_valid_ids` [2]: the padded count of valid entries, and the token count.

Entries past the valid ones are what `torch.empty` left on the GPU; here they are the pad id, weight 0
and expert 0. numpy's generator replaces torch's, so the draws differ from the tuner's, not their law.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Routing:
    """One routed batch: `topk_ids`/`topk_weights` [tokens, topk], the block size and moe_sorting's four
    outputs."""

    block: int
    topk_ids: np.ndarray
    topk_weights: np.ndarray
    sorted_token_ids: np.ndarray
    sorted_weights: np.ndarray
    sorted_expert_ids: np.ndarray
    num_valid_ids: np.ndarray

    @property
    def valid_blocks(self) -> int:
        """Blocks holding routed tokens (the rest of the grid's blocks exit without work)."""
        return int(self.num_valid_ids[0]) // self.block


def mock_id(token: int | np.ndarray, slot: int | np.ndarray) -> np.ndarray:
    """CK's packed (token, top-k slot) id."""
    return ((np.asarray(token, np.int64) & 0xFFFFFF) | ((np.asarray(slot, np.int64) & 0xFF) << 24)).astype(np.uint32)


def fused_topk(scores: np.ndarray, topk: int) -> tuple[np.ndarray, np.ndarray]:
    """Softmax over experts, the `topk` largest (descending, ties to the lower expert), renormalised."""
    z = scores.astype(np.float64)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    ids = np.argsort(-p, axis=1, kind="stable")[:, :topk]
    w = np.take_along_axis(p, ids, axis=1)
    return (w / w.sum(axis=1, keepdims=True)).astype(np.float32), ids.astype(np.int32)


def max_padded(tokens: int, experts: int, topk: int, block: int) -> int:
    """moe_sorting's `max_num_tokens_padded`."""
    return tokens * topk + experts * block - topk


def moe_sorting(topk_ids: np.ndarray, topk_weights: np.ndarray, experts: int, block: int) -> Routing:
    """moe_sorting's outputs for `topk_ids` [tokens, topk] (CK's reference_moe_sorting, skipping experts
    without tokens, mock ids)."""
    tokens, topk = topk_ids.shape
    length = max_padded(tokens, experts, topk, block)
    blocks = -(-length // block)
    pad = mock_id(tokens, topk)
    ids = np.full(length, pad, np.uint32)
    weights = np.zeros(length, np.float32)
    expert_ids = np.zeros(blocks, np.int32)
    flat_e = topk_ids.reshape(-1)
    order = np.argsort(flat_e, kind="stable")  # by expert, then token, then slot
    pos = 0
    for e in range(experts):
        entries = order[flat_e[order] == e]
        if not len(entries):
            continue
        t, s = np.divmod(entries, topk)
        ids[pos:pos + len(entries)] = mock_id(t, s)
        weights[pos:pos + len(entries)] = topk_weights.reshape(-1)[entries]
        n_blocks = -(-len(entries) // block)
        expert_ids[pos // block:pos // block + n_blocks] = e
        pos += n_blocks * block
    return Routing(block, topk_ids, topk_weights, ids.view(np.int32), weights, expert_ids,
                   np.array([pos, tokens], np.int32))


def route(tokens: int, experts: int, topk: int, block: int, seed: int) -> Routing:
    """The tuner's routing for one shape: standard normal gating scores (seeded), fused_topk, moe_sorting."""
    rng = np.random.default_rng([seed, tokens, experts, topk, block])
    weights, ids = fused_topk(rng.standard_normal((tokens, experts)), topk)
    return moe_sorting(ids, weights, experts, block)
