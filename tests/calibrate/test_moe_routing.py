import numpy as np

from asmevo.calibrate.moe_routing import fused_topk, max_padded, mock_id, moe_sorting, route


def test_moe_sorting_matches_cks_documented_example():
    """ck_tile moe_sorting_kernel.hpp's worked example (6 experts, top-3, block 4, 5 tokens; experts without
    tokens skipped): sorted ids per expert padded to the block with the pad id (token count 5, slot 3)."""
    ids = np.array([[0, 3, 5], [2, 3, 5], [1, 3, 5], [1, 2, 3], [1, 3, 5]], np.int32)
    w = np.arange(15, dtype=np.float32).reshape(5, 3) + 1
    r = moe_sorting(ids, w, 6, 4)
    tokens = r.sorted_token_ids.view(np.uint32) & 0xFFFFFF
    assert list(tokens[:24]) == [0, 5, 5, 5, 2, 3, 4, 5, 1, 3, 5, 5, 0, 1, 2, 3, 4, 5, 5, 5, 0, 1, 2, 4]
    assert list(r.sorted_expert_ids[:6]) == [0, 1, 2, 3, 3, 5] and list(r.num_valid_ids) == [24, 5]
    assert len(r.sorted_token_ids) == max_padded(5, 6, 3, 4) == 36 and len(r.sorted_expert_ids) == 9
    slots = r.sorted_token_ids.view(np.uint32) >> 24
    assert slots[1] == 3 and slots[4] == 0 and slots[12] == 1  # pad slot = topk; (token 0, expert 3) is slot 1
    assert r.sorted_weights[4] == w[2, 0] and r.sorted_weights[1] == 0 and r.valid_blocks == 6
    assert mock_id(5, 3) == (3 << 24) | 5


def test_fused_topk_renormalises_the_largest_softmax_entries():
    scores = np.array([[0.0, 2.0, 1.0, -1.0]])
    w, ids = fused_topk(scores, 2)
    p = np.exp(scores[0]) / np.exp(scores[0]).sum()
    assert list(ids[0]) == [1, 2]
    np.testing.assert_allclose(w[0], p[[1, 2]] / p[[1, 2]].sum(), rtol=1e-6)


def test_route_is_deterministic_and_consistent():
    a, b = route(37, 8, 2, 32, 0), route(37, 8, 2, 32, 0)
    assert all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("sorted_token_ids", "sorted_expert_ids"))
    assert not np.array_equal(route(37, 8, 2, 32, 1).topk_ids, a.topk_ids)
    valid = a.sorted_token_ids[:a.num_valid_ids[0]].view(np.uint32)
    real = valid[(valid & 0xFFFFFF) < 37]
    assert len(real) == 37 * 2  # every (token, slot) routed exactly once
    for i, v in enumerate(valid):
        if (v & 0xFFFFFF) < 37:
            assert a.topk_ids[v & 0xFFFFFF, v >> 24] == a.sorted_expert_ids[i // 32]
