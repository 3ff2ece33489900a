"""Rewrite operators on small hand-written kernel bodies: each result is what the operator
promises and still passes the waitcnt/hazard checks."""
from __future__ import annotations

from asmevo.agent.body import Body
from asmevo.agent.ops_cleanup import propagate_move, remove_dead_write
from asmevo.agent.ops_sched import hoist_invariant, hoist_load, hoist_past_wait, speculate_kernarg_load
from asmevo.agent.ops_waitcnt import hoist_to_predecessors, relax, sink
from asmevo.agent.source import KernelSource
from agenttools import body_of, code


def waits(body: Body) -> list[str]:
    return [c for c in code(body) if c.startswith("s_waitcnt")]


def test_relax_counts_only_what_the_consumer_needs():
    b = body_of(["global_load_dword v1, v[2:3], off", "global_load_dword v4, v[2:3], off offset:4",
                 "s_waitcnt vmcnt(0)", "v_add_f32_e32 v5, v1, v1", "s_waitcnt vmcnt(0)",
                 "v_add_f32_e32 v6, v4, v4", "s_endpgm"])
    new = relax(b, 2 + 0)  # item 2 is the first wait
    assert waits(new) == ["s_waitcnt vmcnt(1)", "s_waitcnt vmcnt(0)"]
    assert new.no_worse(b)


def test_relax_keeps_a_double_buffer_wait_for_lds_dma_loads():
    """The read after the barrier already has the other buffer's LDS-DMA loads pending (the analysis cannot
    tell the buffers apart); dropping the wait leaves the read's own buffer pending too: refused (flatmm_fp8's
    prologue wait, which the emulator rejected when only the count of findings per read was compared)."""
    b = body_of(["buffer_load_dword off, s[4:7], 0 lds", "buffer_load_dword off, s[4:7], 0 offset:4 lds",
                 "buffer_load_dword off, s[4:7], 0 offset:8 lds", "s_waitcnt vmcnt(1)", "s_barrier",
                 "ds_read_b32 v0, v1", "s_endpgm"])
    assert relax(b, 3) is None


def test_sink_moves_wait_past_independent_work_and_splits():
    b = body_of(["global_load_dword v1, v[2:3], off", "global_load_dword v4, v[2:3], off offset:4",
                 "s_waitcnt vmcnt(0)", "v_mov_b32_e32 v7, 1", "v_add_f32_e32 v5, v1, v1",
                 "v_add_f32_e32 v6, v4, v4", "s_endpgm"])
    new = sink(b, 2)
    assert code(new) == ["global_load_dword v1, v[2:3], off", "global_load_dword v4, v[2:3], off offset:4",
                         "v_mov_b32_e32 v7, 1", "s_waitcnt vmcnt(1)", "v_add_f32_e32 v5, v1, v1",
                         "s_waitcnt vmcnt(0)", "v_add_f32_e32 v6, v4, v4", "s_endpgm"]
    assert new.no_worse(b)


def test_hoist_to_predecessors_stops_waiting_for_stores():
    b = body_of(["global_load_dword v1, v[2:3], off", "global_load_dword v4, v[2:3], off offset:4",
                 "s_cbranch_scc0 .La", "v_mov_b32_e32 v9, 0", ".La:", "s_waitcnt vmcnt(0)",
                 "global_store_dword v[2:3], v1, off", "s_waitcnt vmcnt(0)", "global_store_dword v[2:3], v4, off",
                 "s_endpgm"])
    new = hoist_to_predecessors(b, 5)
    assert new is not None and new.no_worse(b)
    c = code(new)
    # one wait on each incoming path, none left between the stores
    assert c.index("s_waitcnt vmcnt(0)") < c.index(".La:")
    assert "s_waitcnt" not in " ".join(c[c.index(".La:"):])


def test_hoist_load_crosses_independent_alu_and_relaxes_the_wait_it_crosses():
    b = body_of(["global_load_dword v1, v[2:3], off", "s_waitcnt vmcnt(0)", "v_add_f32_e32 v5, v1, v1",
                 "global_load_dword v4, v[6:7], off", "s_waitcnt vmcnt(0)", "v_add_f32_e32 v8, v4, v4", "s_endpgm"])
    new = hoist_load(b, 3)
    assert code(new)[:4] == ["global_load_dword v1, v[2:3], off", "global_load_dword v4, v[6:7], off",
                             "s_waitcnt vmcnt(1)", "v_add_f32_e32 v5, v1, v1"]
    assert new.no_worse(b)


def test_hoist_load_never_crosses_a_store_or_its_address_producer():
    b = body_of(["global_store_dword v[2:3], v1, off", "global_load_dword v4, v[2:3], off", "s_endpgm"])
    assert hoist_load(b, 1) is None
    b = body_of(["v_mov_b32_e32 v2, 0", "global_load_dword v4, v[2:3], off", "s_endpgm"])
    assert hoist_load(b, 1) is None


def test_interleave_moves_independent_alu_above_the_wait_only():
    b = body_of(["global_load_dword v1, v[2:3], off", "s_waitcnt vmcnt(0)", "v_add_f32_e32 v5, v1, v1",
                 "v_mov_b32_e32 v7, 2", "s_endpgm"])
    new = hoist_past_wait(b, 3)
    assert code(new)[1:3] == ["v_mov_b32_e32 v7, 2", "s_waitcnt vmcnt(0)"]
    assert hoist_past_wait(b, 2) is None or not new.same_code(hoist_past_wait(b, 2))


def test_dead_write_removed_only_when_nothing_reads_it():
    b = body_of(["s_mov_b32 s4, 1", "s_mov_b32 s4, 2", "v_mov_b32_e32 v0, s4", "s_endpgm"])
    new = remove_dead_write(b, 0)
    assert code(new) == ["s_mov_b32 s4, 2", "v_mov_b32_e32 v0, s4", "s_endpgm"]
    assert remove_dead_write(b, 1) is None


def test_propagate_move_rewrites_reads_and_deletes_the_copy():
    b = body_of(["v_mov_b32_e32 v3, v2", "v_add_f32_e32 v4, v3, v3", "s_endpgm"])
    new = propagate_move(b, 0)
    assert code(new) == ["v_add_f32_e32 v4, v2, v2", "s_endpgm"]
    b = body_of(["v_mov_b32_e32 v3, v2", "v_add_f32_e32 v4, v3, v3", "s_branch .Lx", ".Lx:",
                 "v_add_f32_e32 v5, v3, v3", "s_endpgm"])
    assert propagate_move(b, 0) is None  # v3 is read in a later block


def test_propagate_move_deletes_a_copy_its_block_overwrites_under_the_same_exec():
    tail = ["s_branch .Lx", ".Lx:", "v_add_f32_e32 v5, v3, v3", "s_endpgm"]
    b = body_of(["v_mov_b32_e32 v3, v2", "v_add_f32_e32 v4, v3, v3", "v_mul_f32_e32 v3, v4, v4", *tail])
    assert code(propagate_move(b, 0))[:2] == ["v_add_f32_e32 v4, v2, v2", "v_mul_f32_e32 v3, v4, v4"]
    exec_between = body_of(["v_mov_b32_e32 v3, v2", "v_add_f32_e32 v4, v3, v3", "s_mov_b64 exec, s[8:9]",
                            "v_mul_f32_e32 v3, v4, v4", *tail])
    assert propagate_move(exec_between, 0) is None  # the overwrite may miss lanes the copy wrote
    accumulate = body_of(["v_mov_b32_e32 v3, v2", "v_add_f32_e32 v4, v3, v3", "v_fmac_f32_e32 v3, v4, v4", *tail])
    assert propagate_move(accumulate, 0) is None  # the fmac reads the copy (not rewritten: it also writes v3)


def test_speculate_kernarg_load_into_the_dominator():
    text = ("\t.text\n\t.type k,@function\nk:\n\ts_load_dword s4, s[0:1], 0x0\n\ts_waitcnt lgkmcnt(0)\n\ts_cmp_eq_u32 s4, 0\n"
            "\ts_cbranch_scc1 .Lout\n\ts_load_dwordx2 s[6:7], s[0:1], 0x8\n\ts_waitcnt lgkmcnt(0)\n"
            "\tv_mov_b32_e32 v1, s6\n.Lout:\n\ts_endpgm\n.Lend_k:\n")
    b = Body.of(KernelSource(text, "k"), kernarg=0)
    new = speculate_kernarg_load(b, 4)
    assert code(new)[:4] == ["s_load_dword s4, s[0:1], 0x0", "s_waitcnt lgkmcnt(0)", "s_cmp_eq_u32 s4, 0",
                             "s_load_dwordx2 s[6:7], s[0:1], 0x8"]
    assert speculate_kernarg_load(Body.of(KernelSource(text, "k")), 4) is None  # pointer unknown
    clobber = text.replace("\ts_endpgm", "\tv_mov_b32_e32 v2, s6\n\ts_endpgm")
    assert speculate_kernarg_load(Body.of(KernelSource(clobber, "k"), kernarg=0), 4) is None  # s6 live on the other path


def test_hoist_loop_invariant_scalar_work():
    b = body_of(["s_mov_b32 s2, 0", "s_mov_b32 s5, 7", ".Lloop:", "s_mul_i32 s4, s5, 3", "s_add_u32 s2, s2, s4",
                 "s_cmp_lt_u32 s2, 100", "s_cbranch_scc1 .Lloop", "s_endpgm"])
    new = hoist_invariant(b, 2)
    assert code(new)[:4] == ["s_mov_b32 s2, 0", "s_mov_b32 s5, 7", "s_mul_i32 s4, s5, 3", ".Lloop:"]
    assert hoist_invariant(b, 3) is None  # s2 is redefined in the loop
    varying = body_of(["s_mov_b32 s2, 0", ".Lloop:", "s_mul_i32 s4, s2, 3", "s_add_u32 s2, s2, s4",
                       "s_cmp_lt_u32 s2, 100", "s_cbranch_scc1 .Lloop", "s_endpgm"])
    assert hoist_invariant(varying, 1) is None
