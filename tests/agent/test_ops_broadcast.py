"""propagate_broadcast: a scalar moved into a VGPR only to be read back in its block is read from the SGPR,
and the move and the lane-0 read-back go; refused wherever the VGPR's value could differ from the SGPR's."""
from __future__ import annotations

import pytest

from asmevo.agent.ops_broadcast import broadcast_move, propagate_broadcast, propagate_broadcasts
from asmevo.agent.operators import BY_NAME
from asmevo.agent.edit import Window
from asmevo.agent.gates import Evaluator
from asmevo.launches import suite_launches
from asmevo.suites import load_suite
from agenttools import body_of, code

# One round of a wave-wide top-k (AITer topksoftmax's shape): the maximum is read out of lane 63, broadcast,
# compared with every lane's values, accumulated, and read back from lane 0.
ROUND = ["v_readlane_b32 s20, v4, 63", "v_mov_b32_e32 v17, s20", "v_add_f32_e32 v19, v19, v17",
         "v_cmp_eq_f32_e64 s[24:25], v17, v11", "v_readlane_b32 s20, v17, 0", "v_writelane_b32 v14, s20, 0",
         "v_max_f32_e32 v17, v11, v12"]
END = ["global_store_dword v[0:1], v17, off", "global_store_dword v[0:1], v19, off offset:4", "s_endpgm"]


def site(body, text: str = "v_mov_b32_e32 v17, s20") -> int:
    return next(i for i, x in enumerate(body.instructions) if x.text() == text)


def test_the_block_reads_the_scalar_and_the_move_and_the_read_back_go():
    b = body_of(ROUND + END)
    new = propagate_broadcast(b, site(b))
    assert new is not None and new.no_worse(b)
    c = code(new)
    assert "v_mov_b32_e32 v17, s20" not in c and "v_readlane_b32 s20, v17, 0" not in c
    # v17 was the second source of a VOP2: the VOP3 form reads the SGPR there, operand order kept
    assert "v_add_f32_e64 v19, v19, s20" in c and "v_cmp_eq_f32_e64 s[24:25], s20, v11" in c
    # the VALU-written s20 is read sooner now: wait states go in where the move was (gfx940 rule)
    assert c[:2] == ["v_readlane_b32 s20, v4, 63", "s_nop 1"]
    assert sum(new.findings.values()) < sum(b.findings.values())  # the move's own missing wait states are gone


def test_a_first_source_is_read_in_place_and_a_read_back_into_another_sgpr_becomes_a_scalar_move():
    b = body_of(["v_mov_b32_e32 v16, s20", "s_nop 4", "v_rcp_f32_e32 v15, v16", "v_readlane_b32 s21, v16, 0",
                 "v_mov_b32_e32 v16, 0", "global_store_dword v[0:1], v15, off", "s_endpgm"])
    new = propagate_broadcast(b, site(b, "v_mov_b32_e32 v16, s20"))
    assert new is not None
    assert code(new)[:3] == ["s_nop 4", "v_rcp_f32_e32 v15, s20", "s_mov_b32 s21, s20"]


def test_every_round_goes_at_once():
    b = body_of(ROUND + ["v_readlane_b32 s20, v17, 63"] + ROUND[1:] + END)
    new = propagate_broadcasts(b, site(b))
    assert new is not None and not any(x.startswith("v_mov_b32_e32 v17") for x in code(new))


@pytest.mark.parametrize("change", [
    ("v_readlane_b32 s20, v17, 0", "v_readlane_b32 s20, v17, 5"),          # lane 5 may be inactive at the move
    ("v_add_f32_e32 v19, v19, v17", "v_add_f32_dpp v19, v17, v17 row_shr:1"),  # reads other lanes of v17
    ("v_add_f32_e32 v19, v19, v17", "v_fma_f32 v19, v17, s3, v19"),        # two scalars on the constant bus
    ("v_add_f32_e32 v19, v19, v17", "v_mul_f32_e32 v19, 0x3f317217, v17"),  # a literal has no VOP3 form
    ("v_add_f32_e32 v19, v19, v17", "v_add_f32_e64 v19, v19, -v17"),       # a modifier on the read
    ("v_max_f32_e32 v17, v11, v12", "v_add_f32_e32 v18, v17, v11"),       # v17 read after the block's reads end
])
def test_refused_where_the_vgpr_may_not_equal_the_sgpr(change):
    old, new_line = change
    lines = [new_line if ln == old else ln for ln in ROUND] + END
    b = body_of(lines)
    assert propagate_broadcast(b, site(b)) is None


def test_refused_under_a_narrowed_exec_or_when_the_sgpr_changes_before_a_read():
    narrowed = body_of(["v_cmp_gt_u32_e32 vcc, 5, v0", "s_and_saveexec_b64 s[8:9], vcc", *ROUND,
                        "s_or_b64 exec, exec, s[8:9]", *END])
    assert propagate_broadcast(narrowed, site(narrowed)) is None  # lane 0 of v17 may not be written
    changed = body_of([*ROUND[:2], "s_mov_b32 s20, 0", *ROUND[2:], *END])
    assert propagate_broadcast(changed, site(changed)) is None


def test_refused_when_a_later_block_reads_the_vgpr():
    b = body_of([*ROUND[:-1], "s_cbranch_scc0 .Lskip", "v_mov_b32_e32 v3, 0", ".Lskip:",
                 "v_add_f32_e32 v18, v17, v11", *END])
    assert propagate_broadcast(b, site(b)) is None


@pytest.mark.slow
def test_topksoftmax_rounds_read_the_maximum_from_its_sgpr(wheel):
    """AITer topksoftmax broadcasts each top-k round's maximum and reads it back from lane 0 (eight rounds on
    each of its two paths): all 17 moves and 16 read-backs go, verified on every verify shape and the
    held-out one."""
    suite = load_suite("aiter")
    suite.prepare()
    p = suite.problem("topksoftmax")
    ev = Evaluator(p.code_object, suite_launches(p, heldout=True))
    body = ev.body_of(0)
    new = BY_NAME["propagate_broadcasts"].apply(body, site(body, "v_mov_b32_e32 v16, s20"))
    assert new is not None and new.no_worse(body)
    moves = lambda b: sum(broadcast_move(b, i) is not None for i in range(len(b.instructions)))
    read_backs = lambda b: sum(x.startswith("v_readlane_b32") and x.endswith(", 0") for x in code(b))
    assert (moves(body), moves(new), read_backs(body) - read_backs(new)) == (17, 0, 16)
    cand = ev.evaluate(0, new.edit(body, "propagate_broadcasts", "v_mov_b32_e32 v16, s20"),
                       Window(*ev.source_of(0).body), agent="test", step=1)
    assert cand.status == "verified", cand.summary()
