"""chain_masked_regions / chain_all_masked_regions: consecutive masked regions with only scalar work (or vector work
that can run first) between them keep EXEC in one pair; each restore + s_and_saveexec becomes one s_and_b64."""
from __future__ import annotations

from asmevo.agent.ops_chain import chain_all_masked_regions, chain_masked_regions

from agenttools import body_of, code, first_guard, masked_region

PRE = ["v_cmp_gt_u32_e64 s[8:9], 16, v0", "v_cmp_gt_u32_e64 s[12:13], 8, v0", "v_cmp_gt_u32_e64 s[14:15], 4, v0"]
POST = ["s_waitcnt vmcnt(0)", "v_add_f32_e32 v9, v5, v6", "v_add_f32_e32 v9, v9, v7",
        "global_store_dword v[2:3], v9, off", "s_endpgm"]
A = masked_region(1, "s[8:9]", ["global_load_dword v5, v[2:3], off"])
B = masked_region(2, "s[12:13]", ["global_load_dword v6, v[2:3], off offset:4"])
C = masked_region(3, "s[14:15]", ["global_load_dword v7, v[2:3], off offset:8"])


def test_three_regions_keep_exec_in_one_pair():
    b = body_of(PRE + A + ["s_add_u32 s4, s4, 1"] + B + C + POST)
    new = chain_masked_regions(b, first_guard(b))
    assert new is not None and new.no_worse(b)
    lines = code(new)
    assert lines.count("s_and_saveexec_b64 s[10:11], s[8:9]") == 1
    assert "s_and_b64 exec, s[10:11], s[12:13]" in lines and "s_and_b64 exec, s[10:11], s[14:15]" in lines
    assert lines.count("s_or_b64 exec, exec, s[10:11]") == 1 and len(lines) == len(code(b)) - 2
    # the skip branches still skip their region, landing on the scalar work and the next EXEC write
    assert lines[lines.index(".Lj1:") + 1] == "s_add_u32 s4, s4, 1"


def test_vector_work_between_moves_before_the_first_guard():
    b = body_of(PRE + A + ["v_mov_b32_e32 v6, 0"] + B + POST)
    new = chain_masked_regions(b, first_guard(b))
    lines = code(new)
    assert lines.index("v_mov_b32_e32 v6, 0") < lines.index("s_and_saveexec_b64 s[10:11], s[8:9]")
    assert len(lines) == len(code(b)) - 1


def test_a_fresh_pair_keeps_exec_when_the_chain_writes_the_saved_one():
    b = body_of(PRE + A + ["s_cmp_lt_u32 s4, 8", "s_cselect_b64 s[10:11], -1, 0",
                         "s_and_b64 s[12:13], s[12:13], s[10:11]"] + B + POST)
    new = chain_masked_regions(b, first_guard(b))
    lines = code(new)
    assert "s_and_saveexec_b64 s[0:1], s[8:9]" in lines and "s_and_b64 exec, s[0:1], s[12:13]" in lines
    assert lines.count("s_or_b64 exec, exec, s[0:1]") == 1


def test_lane_reads_and_writes_stay_between_the_regions():
    """vllm_scaled_mm_int8's K loop reads each row's mask back from a spilled lane before its region: V_READLANE_B32
    (and V_WRITELANE_B32) ignore EXEC, so they stay where they are, as scalar work, and now write the saved pair
    (a fresh one keeps EXEC). V_READFIRSTLANE_B32 reads the first active lane: it is vector work that reads what
    R1 loads, so that chain is refused."""
    spill = ["v_readlane_b32 s10, v40, 3", "v_readlane_b32 s11, v40, 4", "v_writelane_b32 v41, s4, 0",
             "s_and_b64 s[12:13], s[10:11], vcc"]
    b = body_of(PRE + ["v_cmp_gt_u32_e32 vcc, 2, v0"] + A + spill + B + POST)
    new = chain_masked_regions(b, first_guard(b))
    assert new is not None and new.no_worse(b)
    lines = code(new)
    assert "s_and_saveexec_b64 s[0:1], s[8:9]" in lines and "s_and_b64 exec, s[0:1], s[12:13]" in lines
    assert lines[lines.index(".Lj1:") + 1:lines.index(".Lj1:") + 5] == spill
    first = PRE + A + ["v_readfirstlane_b32 s4, v5", "s_add_u32 s4, s4, 1"] + B + POST
    b = body_of(first)
    assert chain_masked_regions(b, first_guard(b)) is None


def test_regions_without_skip_branches_chain():
    """After `remove_skip_branches` a region is no CFG block (vllm_scaled_mm_int8's winner takes that first): a
    save, its work and its restore within one block chain as well, and a branch target between them ends the run."""
    skipless = lambda mask, load: [f"s_and_saveexec_b64 s[10:11], {mask}", load, "s_or_b64 exec, exec, s[10:11]"]
    a = skipless("s[8:9]", "global_load_dword v5, v[2:3], off")
    b2 = skipless("s[12:13]", "global_load_dword v6, v[2:3], off offset:4")
    b = body_of(PRE + a + ["s_add_u32 s4, s4, 1"] + b2 + C + POST)
    new = chain_masked_regions(b, first_guard(b))
    assert new is not None and new.no_worse(b)
    lines = code(new)
    assert "s_and_b64 exec, s[10:11], s[12:13]" in lines and "s_and_b64 exec, s[10:11], s[14:15]" in lines
    assert lines.count("s_or_b64 exec, exec, s[10:11]") == 1 and len(lines) == len(code(b)) - 2
    b = body_of(PRE + ["s_cbranch_scc1 .Lmid"] + a + [".Lmid:", "s_add_u32 s4, s4, 1"] + b2 + POST)
    assert chain_masked_regions(b, first_guard(b)) is None


def test_refused_where_exec_scc_or_a_saved_pair_would_change():
    exec_read = PRE + A + ["s_and_b64 s[20:21], vcc, exec"] + B + POST       # X reads EXEC (now E & m1)
    scc_read = PRE + A + ["s_cselect_b32 s4, 1, 0"] + B + POST               # X reads the restore's SCC
    writes_exec = PRE + masked_region(1, "s[8:9]", ["s_mov_b64 exec, s[14:15]"]) + B + POST
    stuck = PRE + A + ["v_mov_b32_e32 v5, 0"] + B + POST                   # X's vector work reads what R1 writes
    waits = PRE + A + ["s_waitcnt vmcnt(0)", "v_mov_b32_e32 v6, 0"] + B + POST  # it cannot move above the wait
    memory = PRE + A + ["global_store_dword v[2:3], v0, off offset:64"] + B + POST
    saved_read = PRE + A + masked_region(2, "s[12:13]", ["global_load_dword v6, v[2:3], off offset:4"], "s[16:17]") + \
        ["s_mov_b64 s[18:19], s[16:17]"] + POST                              # G2's saved pair read after it
    for lines in (exec_read, scc_read, writes_exec, stuck, waits, memory, saved_read):
        b = body_of(lines)
        assert chain_masked_regions(b, first_guard(b)) is None, lines


def test_every_run_of_the_loop_chains():
    loop = [".Lloop:", *A, *B, "s_waitcnt vmcnt(0)", "v_add_f32_e32 v8, v5, v6", *C,
            *masked_region(4, "s[8:9]", ["global_load_dword v5, v[2:3], off offset:12"]),
            "s_waitcnt vmcnt(0)", "v_add_f32_e32 v9, v7, v5", "s_add_u32 s4, s4, 1", "s_cmp_lt_u32 s4, 8",
            "s_cbranch_scc1 .Lloop"]
    b = body_of(PRE + ["s_mov_b32 s4, 0"] + loop + ["s_endpgm"])
    new = chain_all_masked_regions(b, first_guard(b))
    lines = code(new)
    assert lines.count("s_and_saveexec_b64 s[10:11], s[8:9]") == 1
    assert lines.count("s_and_saveexec_b64 s[10:11], s[14:15]") == 1
    assert lines.count("s_or_b64 exec, exec, s[10:11]") == 2 and len(lines) == len(code(b)) - 2
