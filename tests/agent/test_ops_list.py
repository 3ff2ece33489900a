"""list_schedule: a block's independent work issued in the shadow of the model's result latencies."""
from __future__ import annotations

import pytest

from asmevo.agent.ops_list import list_schedule, list_schedules
from asmevo.agent.pad import hazard_nops, site_hazard_nops

from agenttools import body_of, code, evaluated, evaluator

# two conversions (4-slot latency by the model's table) each read at once by a multiply
TWO = ["v_cvt_f32_i32_e32 v1, v0", "v_mul_f32_e32 v2, v1, v1",
       "v_cvt_f32_i32_e32 v3, v4", "v_mul_f32_e32 v5, v3, v3"]


def test_the_second_conversion_moves_into_the_first_ones_shadow():
    b = body_of(TWO + ["s_endpgm"])
    new = list_schedule(b, 0)
    assert new is not None and new.no_worse(b)
    assert code(new) == ["v_cvt_f32_i32_e32 v1, v0", "v_cvt_f32_i32_e32 v3, v4", "v_mul_f32_e32 v2, v1, v1",
                         "v_mul_f32_e32 v5, v3, v3", "s_endpgm"]


def test_a_dependent_chain_or_a_reused_register_keeps_its_order():
    chain = body_of(["v_cvt_f32_i32_e32 v1, v0", "v_mul_f32_e32 v2, v1, v1", "v_cvt_f32_i32_e32 v3, v2",
                     "v_mul_f32_e32 v5, v3, v3", "s_endpgm"])
    assert list_schedule(chain, 0) is None
    reused = body_of(["v_cvt_f32_i32_e32 v1, v0", "v_mul_f32_e32 v2, v1, v1",
                      "v_cvt_f32_i32_e32 v1, v4", "v_mul_f32_e32 v5, v1, v1", "s_endpgm"])  # v1 read, then rewritten
    assert list_schedule(reused, 0) is None


def test_loaded_registers_stay_behind_their_wait_and_memory_keeps_its_order():
    b = body_of(["global_load_dword v6, v[10:11], off", "v_cvt_f32_i32_e32 v1, v0", "v_mul_f32_e32 v2, v1, v1",
                 "s_waitcnt vmcnt(0)", "v_add_f32_e32 v7, v6, v6", "ds_write_b32 v8, v7",
                 "v_cvt_f32_i32_e32 v3, v4", "ds_write_b32 v8, v2 offset:4", "v_mul_f32_e32 v5, v3, v3", "s_endpgm"])
    new = list_schedule(b, 0)
    assert new is not None and new.no_worse(b)
    c = code(new)
    assert c.index("v_cvt_f32_i32_e32 v3, v4") < c.index("v_mul_f32_e32 v2, v1, v1")  # into the first shadow
    assert c.index("s_waitcnt vmcnt(0)") < c.index("v_add_f32_e32 v7, v6, v6")
    assert c.index("ds_write_b32 v8, v7") < c.index("ds_write_b32 v8, v2 offset:4")


def test_nothing_crosses_a_fence_and_the_final_branch_stays_last():
    fenced = body_of(["v_cvt_f32_i32_e32 v1, v0", "v_mul_f32_e32 v2, v1, v1", "s_setprio 2",
                      "v_cvt_f32_i32_e32 v3, v4", "v_mul_f32_e32 v5, v3, v3", "s_endpgm"])
    assert list_schedule(fenced, 0) is None
    looped = body_of(["top:"] + TWO + ["s_cmp_lg_u32 s0, 0", "s_cbranch_scc1 top", "s_endpgm"])
    new = list_schedule(looped, 0)
    assert new is not None and code(new)[-2:] == ["s_cbranch_scc1 top", "s_endpgm"]
    assert code(new).index("v_cvt_f32_i32_e32 v3, v4") < code(new).index("v_mul_f32_e32 v2, v1, v1")


def test_hazard_wait_states_the_new_order_needs_are_inserted():
    # the select reads the compare's mask: gfx940 wants 2 wait states (VALU writes SGPR -> VALU reads it),
    # which the parent's conversion and multiply gave; scheduled, the compare and select come together
    b = body_of(["v_cmp_gt_f32_e64 s[0:1], 0, v6", "v_cvt_f32_i32_e32 v1, v0", "v_mul_f32_e32 v2, v1, v1",
                 "v_cndmask_b32_e64 v7, 0, v6, s[0:1]"] + TWO[2:] + ["s_endpgm"])
    new = list_schedule(b, 0)
    assert new is not None and new.no_worse(b) and not new.findings
    c = code(new)
    compare, select = c.index("v_cmp_gt_f32_e64 s[0:1], 0, v6"), c.index("v_cndmask_b32_e64 v7, 0, v6, s[0:1]")
    assert c[compare + 1:select] == ["s_nop 1"]


def test_a_real_softmax_block_scheduled_runs_like_k0():
    ev = evaluator("23_Softmax")
    body = ev.body_of(0)
    new = list_schedules(body, 0)
    assert new is not None and new.no_worse(body)
    evaluated(ev, body, new, "list_schedules")


@pytest.mark.slow
def test_aiter_int8_gemm_epilogue_scheduled_is_faster_at_the_bench_shape(wheel):
    """gemm_a8w8 runs one wave per SIMD: its epilogue's conversions stall their multiplies (4-slot latency) with
    nothing else to issue; scheduled, each group's conversions issue together."""
    ev = evaluator("a8w8_gemm", "aiter", "mi300x")
    body = ev.body_of(0)
    new = list_schedules(body, 0)
    assert new is not None
    cand = evaluated(ev, body, new, "list_schedules")
    assert ev.lineage.get(0).cycles / cand.cycles > 1.03


def test_a_known_hazard_is_not_traded_for_a_new_one():
    """Shipped code may lack wait states (a known finding); a reordering that fixes that site but opens the same
    hazard at another passes a count per rule, not the emulator, so the new site gets its nop."""
    parent = body_of(["v_cmp_gt_f32_e64 s[0:1], 0, v6", "v_cndmask_b32_e64 v7, 0, v6, s[0:1]",
                      "v_add_f32_e32 v1, v0, v0", "v_add_f32_e32 v2, v0, v0", "v_cmp_gt_f32_e64 s[2:3], 0, v8",
                      "v_mul_f32_e32 v3, v0, v0", "v_mul_f32_e32 v4, v0, v0", "v_cndmask_b32_e64 v9, 0, v8, s[2:3]",
                      "s_endpgm"])
    assert sum(parent.findings.values()) == 1
    moved = parent.replace([parent.items[k] for k in (0, 2, 3, 1, 4, 7, 5, 6, 8)])
    assert hazard_nops(moved, parent) is moved  # one finding each: equal counts
    fixed = site_hazard_nops(moved, parent)
    c = code(fixed)
    assert c[c.index("v_cndmask_b32_e64 v9, 0, v8, s[2:3]") - 1] == "s_nop 1" and not fixed.findings
