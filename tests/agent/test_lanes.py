"""Lanes.reaching_writes: the writes of a VGPR a read may see, stopping at a write whose EXEC holds every
lane the read runs."""
from __future__ import annotations

from asmevo.agent.lanes import Lanes
from asmevo.agent.webs import ENTRY, webs_of

from agenttools import body_of


def seen(lines: list[str], read: str, reg: int) -> set[str]:
    b = body_of(lines)
    r = next(i for i, x in enumerate(b.instructions) if x.text() == read)
    return {"ENTRY" if w == ENTRY else b.instructions[w].text() for w in Lanes(b, webs_of(b).succ).reaching_writes(r, reg)}


IF = ["s_and_saveexec_b64 s[4:5], vcc", "s_cbranch_execz .Lend"]
END = [".Lend:", "s_or_b64 exec, exec, s[4:5]"]


def test_a_write_before_an_if_covers_a_read_inside_it():
    lines = ["v_mov_b32_e32 v6, 1.0", "v_cmp_gt_f32_e32 vcc, 0, v1", *IF, "v_add_f32_e32 v7, v6, v6", *END, "s_endpgm"]
    assert seen(lines, "v_add_f32_e32 v7, v6, v6", 6) == {"v_mov_b32_e32 v6, 1.0"}


def test_a_write_inside_an_if_leaves_the_older_value_to_a_read_after_it():
    lines = ["global_load_dword v6, v[0:1], off", "s_waitcnt vmcnt(0)", "v_cmp_gt_f32_e32 vcc, 0, v1", *IF,
             "v_mov_b32_e32 v6, 1.0", *END, "v_add_f32_e32 v7, v6, v6", "s_endpgm"]
    assert seen(lines, "v_add_f32_e32 v7, v6, v6", 6) == {"v_mov_b32_e32 v6, 1.0", "global_load_dword v6, v[0:1], off"}


def test_a_loop_iteration_does_not_cover_the_next_ones_lanes():
    """Each iteration narrows EXEC afresh from the restored one: an iteration's write may miss lanes the
    next iteration reads, so the write before the loop is seen too (and with it nothing older)."""
    lines = ["global_load_dword v6, v[0:1], off", "s_waitcnt vmcnt(0)", "v_mov_b32_e32 v6, 1.0", ".Lloop:",
             "v_cmp_gt_f32_e32 vcc, s2, v1", *IF, "v_add_f32_e32 v7, v6, v6", "v_mul_f32_e32 v6, v7, v7", *END,
             "s_add_u32 s2, s2, 1", "s_cmp_lg_u32 s2, 8", "s_cbranch_scc1 .Lloop", "s_endpgm"]
    assert seen(lines, "v_add_f32_e32 v7, v6, v6", 6) == {"v_mov_b32_e32 v6, 1.0", "v_mul_f32_e32 v6, v7, v7"}


def test_an_exec_the_write_did_not_bound_or_the_wave_start():
    wide = ["v_cmp_gt_f32_e32 vcc, 0, v1", *IF, "v_mov_b32_e32 v6, 1.0", "s_mov_b64 exec, s[8:9]",
            "v_add_f32_e32 v7, v6, v6", *END, "s_endpgm"]
    assert seen(wide, "v_add_f32_e32 v7, v6, v6", 6) == {"v_mov_b32_e32 v6, 1.0", "ENTRY"}
    accumulate = ["v_fmac_f32_e32 v6, v1, v1", "v_add_f32_e32 v7, v6, v6", "s_endpgm"]
    assert seen(accumulate, "v_add_f32_e32 v7, v6, v6", 6) == {"v_fmac_f32_e32 v6, v1, v1", "ENTRY"}
