"""merge_masked_region(s): a later masked region with the same lane mask moves into an earlier one when nothing
between depends on it; its s_and_saveexec, skip branch and EXEC restore go."""
from __future__ import annotations

from asmevo.agent.ops_regions import merge_masked_region, merge_masked_regions

from agenttools import body_of, code, first_guard, masked_region

PRE = ["v_cmp_gt_u32_e64 s[8:9], 16, v0", "v_cmp_gt_u32_e64 s[12:13], 8, v0"]
POST = ["s_waitcnt vmcnt(0)", "v_add_f32_e32 v9, v5, v6", "v_add_f32_e32 v9, v9, v7",
        "global_store_dword v[2:3], v9, off", "s_endpgm"]
A = masked_region(1, "s[8:9]", ["global_load_dword v5, v[2:3], off"])
OTHER = masked_region(2, "s[12:13]", ["global_load_dword v7, v[2:3], off offset:8"])
B = masked_region(3, "s[8:9]", ["global_load_dword v6, v[2:3], off offset:4"])


def test_the_second_region_of_a_mask_joins_the_first_past_another_mask():
    b = body_of(PRE + A + OTHER + B + POST)
    new = merge_masked_region(b, first_guard(b))
    assert new is not None and new.no_worse(b)
    lines = code(new)
    assert lines.count("s_and_saveexec_b64 s[10:11], s[8:9]") == 1 and lines.count("s_or_b64 exec, exec, s[10:11]") == 2
    one = lines.index("global_load_dword v5, v[2:3], off")
    assert lines[one + 1] == "global_load_dword v6, v[2:3], off offset:4" and lines[one + 2] == ".Lj1:"


def test_refused_when_something_between_depends_on_it_or_the_mask_or_exec_changes():
    reads = body_of(PRE + A + ["v_mov_b32_e32 v8, v6"] + B + POST)            # X reads what R2 writes
    writes_addr = body_of(PRE + A + ["v_add_u32_e32 v2, 4, v2"] + B + POST)   # X writes what R2 reads
    mask = body_of(PRE + A + ["s_mov_b64 s[8:9], exec"] + B + POST)
    exec_ = body_of(PRE + A + ["s_and_b64 exec, exec, s[12:13]"] + B + POST)
    store = body_of(PRE + A + ["global_store_dword v[2:3], v0, off offset:64"] + B + POST)
    barrier = body_of(PRE + A + ["s_barrier"] + B + POST)
    no_skip = body_of(PRE + A + [x for x in B if not x.startswith("s_cbranch")] + POST)
    for b in (reads, writes_addr, mask, exec_, store, barrier, no_skip):
        assert merge_masked_region(b, first_guard(b)) is None


def test_refused_when_the_second_guard_s_saved_mask_or_scc_is_read_later():
    saved_read = body_of(PRE + A + B + ["s_mov_b64 s[14:15], s[10:11]"] + POST)
    scc_read = body_of(PRE + A + B + ["s_cselect_b32 s4, 1, 0"] + POST)
    for b in (saved_read, scc_read):
        assert merge_masked_region(b, first_guard(b)) is None


def test_every_region_of_the_loop_merges_with_its_mask():
    loop = [".Lloop:", *A, *OTHER, *B, *masked_region(4, "s[12:13]", ["global_load_dword v8, v[2:3], off offset:12"]),
            "s_waitcnt vmcnt(0)", "v_add_f32_e32 v9, v5, v6", "v_add_f32_e32 v9, v9, v7", "v_add_f32_e32 v9, v9, v8",
            "s_add_u32 s4, s4, 1", "s_cmp_lt_u32 s4, 8", "s_cbranch_scc1 .Lloop"]
    b = body_of(PRE + ["s_mov_b32 s4, 0"] + loop + POST[3:])
    new = merge_masked_regions(b, first_guard(b))
    lines = code(new)
    assert lines.count("s_and_saveexec_b64 s[10:11], s[8:9]") == 1
    assert lines.count("s_and_saveexec_b64 s[10:11], s[12:13]") == 1
    assert len(lines) == len(code(b)) - 6
