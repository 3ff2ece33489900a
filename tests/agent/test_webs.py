"""VGPR webs: kills under the whole EXEC and within one EXEC epoch, webs joined by partial writes,
pinned values, occupancy of loads until their wait, renaming, and refusals."""
from __future__ import annotations

import pytest

from asmevo.agent.webs import NotAnalysable, VgprWebs
from agenttools import body_of, code


def webs_of_reg(w: VgprWebs, reg: int):
    return [x for x in w.webs if x.reg == reg]


def test_a_write_under_the_whole_exec_starts_a_new_value():
    b = body_of(["v_mov_b32_e32 v1, 0", "v_add_f32_e32 v2, v1, v1", "v_mov_b32_e32 v1, 1.0",
                 "v_add_f32_e32 v3, v1, v1", "s_endpgm"])
    w = VgprWebs(b)
    first, second = sorted(webs_of_reg(w, 1), key=lambda x: min(x.defs))
    assert (first.defs, first.uses, second.defs, second.uses) == ({0}, {1}, {2}, {3})
    assert not first.pinned and not second.pinned and not first.occupied & second.occupied


MASKED = ["v_mov_b32_e32 v1, 0", "v_cmp_gt_u32_e32 vcc, 4, v0", "s_and_saveexec_b64 s[2:3], vcc",
          "v_mov_b32_e32 v1, 1.0", "s_or_b64 exec, exec, s[2:3]", "v_add_f32_e32 v2, v1, v1", "s_endpgm"]


def test_a_write_under_a_mask_read_after_the_restore_joins_the_earlier_value():
    w = VgprWebs(body_of(MASKED))
    [web] = webs_of_reg(w, 1)
    assert web.defs == {0, 3} and web.uses == {5}


def test_a_write_read_only_under_its_own_mask_kills():
    b = body_of(["v_mov_b32_e32 v1, 0", "v_add_f32_e32 v4, v1, v1", "v_cmp_gt_u32_e32 vcc, 4, v0",
                 "s_and_saveexec_b64 s[2:3], vcc", "v_mov_b32_e32 v1, 1.0", "v_add_f32_e32 v2, v1, v1",
                 "s_or_b64 exec, exec, s[2:3]", "s_endpgm"])
    w = VgprWebs(b)
    assert sorted(sorted(x.defs) for x in webs_of_reg(w, 1)) == [[0], [4]]


def test_pinned_values():
    b = body_of(["v_mov_b32_e32 v1, v0", "v_mov_b32_e32 v3, 0", "global_load_dword v4, v[2:3], off",
                 "v_mov_b32_dpp v5, v1 row_shr:1 row_mask:0xf bank_mask:0xf", "s_waitcnt vmcnt(0)", "s_endpgm"])
    w = VgprWebs(b)
    assert all(x.pinned for x in webs_of_reg(w, 0))   # the work-item id the wave starts with
    assert all(x.pinned for x in webs_of_reg(w, 3))   # inside the address pair v[2:3]
    assert all(x.pinned for x in webs_of_reg(w, 1))   # read across lanes by DPP


def test_a_load_destination_is_occupied_until_the_wait_that_retires_it():
    b = body_of(["global_load_dword v4, v[2:3], off", "v_mov_b32_e32 v5, 0", "v_mov_b32_e32 v6, 0",
                 "s_waitcnt vmcnt(0)", "v_mov_b32_e32 v7, 0", "s_endpgm"])
    w = VgprWebs(b)
    [load] = webs_of_reg(w, 4)
    # dead after the load, yet its write lands any time before the wait: v5 and v6 may not take it
    assert load.occupied >> 3 & 1 and load.occupied >> 5 & 1
    assert not w.can_move(webs_of_reg(w, 5)[0], 4) and w.can_move(webs_of_reg(w, 7)[0], 4)


def test_renaming_rewrites_only_the_operands_that_carry_the_web():
    b = body_of(["v_mov_b32_e32 v1, 0", "v_add_f32_e32 v1, v1, v1", "v_add_f32_e32 v2, v1, v1", "s_endpgm"])
    w = VgprWebs(b)
    second = next(x for x in webs_of_reg(w, 1) if 1 in x.defs)
    assert w.can_move(second, 9)
    assert code(w.renamed({id(second): 9})) == ["v_mov_b32_e32 v1, 0", "v_add_f32_e32 v9, v1, v1",
                                               "v_add_f32_e32 v2, v9, v9", "s_endpgm"]


@pytest.mark.parametrize("line", ["s_setpc_b64 s[4:5]", "v_movrels_b32_e32 v1, v2", "s_set_gpr_idx_on s2, gpr_idx(SRC0)"])
def test_indirect_code_is_refused(line):
    with pytest.raises(NotAnalysable):
        VgprWebs(body_of(["v_mov_b32_e32 v1, 0", line, "s_endpgm"]))
