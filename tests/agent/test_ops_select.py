"""fuse_select_and: an all-or-nothing `s_cselect` mask folded into the `s_and` that reads it, the cases it must
refuse, and its result on a real K loop through every gate."""
from __future__ import annotations

from asmevo.agent.edit import Window
from asmevo.agent.ops_select import fuse_select_and, fuse_select_ands
from agenttools import body_of, code, evaluator

HEAD = ["s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_cmp_lt_i32 s4, s10"]
TAIL = ["s_and_saveexec_b64 s[8:9], s[6:7]", "s_waitcnt lgkmcnt(0)", "global_store_dword v0, v1, s[2:3]",
        "s_or_b64 exec, exec, s[8:9]", "s_endpgm"]


def _fold(lines: list[str], at: int = 2):
    return fuse_select_and(body_of(HEAD + lines + TAIL), at)


def test_the_select_moves_into_the_and_with_either_polarity_and_operand_order():
    new = _fold(["s_cselect_b64 s[4:5], -1, 0", "s_and_b64 s[6:7], s[24:25], s[4:5]"])
    assert code(new)[2] == "s_cselect_b64 s[6:7], s[24:25], 0" and len(code(new)) == len(HEAD) + 1 + len(TAIL)
    new = _fold(["s_cselect_b64 s[4:5], 0, -1", "s_and_b64 s[6:7], s[4:5], exec"])
    assert code(new)[2] == "s_cselect_b64 s[6:7], 0, exec"
    new = _fold(["s_cselect_b64 s[4:5], -1, 0", "v_mov_b32_e32 v1, s11", "s_and_b64 s[4:5], s[24:25], s[4:5]",
                 "s_mov_b64 s[6:7], s[4:5]"])  # the AND overwrites the mask; SCC is not read on the way
    assert code(new)[2:4] == ["v_mov_b32_e32 v1, s11", "s_cselect_b64 s[4:5], s[24:25], 0"]


def test_refused_when_scc_or_the_mask_is_still_needed_or_scc_changes_first():
    assert _fold(["s_cselect_b64 s[4:5], -1, 0", "s_and_b64 s[6:7], s[24:25], s[4:5]",
                  "s_cselect_b32 s12, 1, 2", "v_mov_b32_e32 v1, s12"]) is None  # the AND's SCC is read
    assert _fold(["s_cselect_b64 s[4:5], -1, 0", "s_and_b64 s[6:7], s[24:25], s[4:5]",
                  "s_or_b64 s[6:7], s[6:7], s[4:5]"]) is None  # the mask is read again
    assert _fold(["s_cselect_b64 s[4:5], -1, 0", "s_cmp_eq_u32 s11, 0", "s_and_b64 s[6:7], s[24:25], s[4:5]"]) is None
    assert _fold(["s_cselect_b64 s[4:5], -1, 0", "s_and_b64 s[6:7], s[4:5], s[4:5]"]) is None
    assert _fold(["s_cselect_b64 s[4:5], -1, 1", "s_and_b64 s[6:7], s[24:25], s[4:5]"]) is None  # not all or nothing
    assert _fold(["s_cselect_b64 s[4:5], -1, 0", "s_or_b64 s[6:7], s[24:25], s[4:5]"]) is None


def test_a_batched_matmul_k_loop_issues_eight_scalar_instructions_fewer_per_iteration():
    ev = evaluator("3_Batched_matrix_multiplication")
    body = ev.body_of(0)
    site = next(i for i, ins in enumerate(body.instructions) if ins.mnemonic == "s_cselect_b64"
                and [op.text for op in ins.operands[1:]] == ["-1", "0"])
    new = fuse_select_ands(body, site)
    assert new is not None and len(body.instructions) - len(new.instructions) == 8 and new.no_worse(body)
    cand = ev.evaluate(0, new.edit(body, "fuse_select_ands", "test"), Window(*ev.source_of(0).body), agent="test", step=1)
    assert cand.status == "verified" and cand.verdict["kind"] == "equivalent", cand.summary()
