"""hoist_load across barriers and LDS writes, hoist_load_renamed (one-register and tuple destinations) and
hoist_loads: loads of a K loop's later tiles issue with the first tile's, hazards the moves uncover get their
nops, each refusal where moving would change what a load reads."""
from __future__ import annotations


from asmevo.agent.ops_sched import hoist_load, hoist_load_renamed, hoist_loads, no_global_write_before

from agenttools import body_of, code, evaluated, evaluator

TILES = ["global_load_dword v1, v[2:3], off", "s_waitcnt vmcnt(0)", "ds_write_b32 v0, v1", "s_waitcnt lgkmcnt(0)",
         "s_barrier", "global_load_dword v4, v[2:3], off offset:4", "s_waitcnt vmcnt(0)", "ds_write_b32 v0, v4 offset:4",
         "s_endpgm"]


def test_a_global_load_crosses_a_barrier_and_lds_writes_when_no_global_write_precedes():
    b = body_of(TILES)
    new = hoist_load(b, 5)
    assert new is not None and new.no_worse(b)
    assert code(new)[:3] == ["global_load_dword v1, v[2:3], off", "global_load_dword v4, v[2:3], off offset:4",
                             "s_waitcnt vmcnt(1)"]


def test_a_global_store_on_the_way_to_the_barrier_keeps_the_load_behind_it():
    assert hoist_load(body_of(["global_store_dword v[6:7], v5, off"] + TILES), 6) is None
    branchy = ["s_cmp_eq_u32 s0, 0", "s_cbranch_scc0 .La", "global_store_dword v[6:7], v5, off", ".La:"] + TILES
    b = body_of(branchy)
    site = next(i for i, x in enumerate(b.instructions) if x.text() == TILES[5])
    assert not no_global_write_before(b, b.cfg.block_of[site])
    assert hoist_load(b, site) is None


def test_an_lds_load_never_crosses_a_barrier_or_an_lds_write():
    b = body_of(["ds_write_b32 v0, v1", "s_waitcnt lgkmcnt(0)", "s_barrier", "ds_read_b32 v4, v5", "s_endpgm"])
    assert hoist_load(b, 3) is None
    assert hoist_load(body_of(["ds_write_b32 v0, v1", "ds_read_b32 v4, v5", "s_endpgm"]), 1) is None


REUSED = ["global_load_dword v1, v[2:3], off", "s_waitcnt vmcnt(0)", "v_add_f32_e32 v5, v1, v1",
          "global_load_dword v1, v[2:3], off offset:4", "s_waitcnt vmcnt(0)", "v_add_f32_e32 v6, v1, v5",
          "global_store_dword v[2:3], v6, off", "s_endpgm"]


def test_renaming_the_loaded_value_lets_the_load_pass_earlier_uses_of_its_register():
    b = body_of(REUSED)
    assert hoist_load(b, 3) is None  # v_add reads the old v1
    new = hoist_load_renamed(b, 3)
    assert new is not None and new.no_worse(b)
    c = code(new)
    reg = c[1].split()[1].rstrip(",")
    assert c[0] == REUSED[0] and c[1] == f"global_load_dword {reg}, v[2:3], off offset:4" and reg != "v1"
    assert f"v_add_f32_e32 v6, {reg}, v5" in c and "v_add_f32_e32 v5, v1, v1" in c


def test_renaming_refuses_a_value_read_across_lanes_or_a_load_it_would_not_move():
    pinned = REUSED[:5] + ["v_readlane_b32 s4, v1, 0", "s_endpgm"]
    assert hoist_load_renamed(body_of(pinned), 3) is None
    assert hoist_load_renamed(body_of(TILES), 5) is None  # hoist_load alone already moves it as far


def test_hoist_loads_issues_every_tile_of_the_block_together():
    lines = ["global_load_dword v1, v[2:3], off", "s_waitcnt vmcnt(0)", "ds_write_b32 v0, v1", "s_waitcnt lgkmcnt(0)",
             "s_barrier", "global_load_dword v1, v[2:3], off offset:4", "s_waitcnt vmcnt(0)", "ds_write_b32 v0, v1",
             "s_waitcnt lgkmcnt(0)", "s_barrier", "global_load_dword v1, v[2:3], off offset:8", "s_waitcnt vmcnt(0)",
             "ds_write_b32 v0, v1", "s_endpgm"]
    b = body_of(lines)
    new = hoist_loads(b, 0)
    assert new is not None and new.no_worse(b)
    c = code(new)
    assert [x.split(", ", 1)[1] for x in c[:3]] == ["v[2:3], off", "v[2:3], off offset:4", "v[2:3], off offset:8"]
    assert len({x.split()[1] for x in c[:3]}) == 3  # three registers: each tile's value kept apart
    assert hoist_loads(new, 0) is None


def test_lora_shrink_k_loop_loads_issue_together():
    """vLLM's LoRA shrink at its bench shape: its K loop stages four tiles of six `global_load_ushort`s
    through LDS, each tile's loads waiting behind the previous tile's barriers and reusing its
    registers. With every tile's loads issued at the loop's top (12 values moved to unused VGPRs,
    the waves per SIMD kept) it is verified on every verify shape and the held-out one, and faster."""
    from asmevo.agent.ops_regs import named_top, vgpr_limit

    ev = evaluator("vllm_lora_shrink", "triton", "mi300x")
    body = ev.body_of(0)
    site = next(i for i, x in enumerate(body.instructions) if x.text() == "global_load_ushort v44, v[16:17], off offset:512")
    new = hoist_loads(body, site)
    assert new is not None and new.no_worse(body)
    assert named_top(new, "v") <= vgpr_limit(body)
    blk = new.cfg.blocks[new.cfg.block_of[site]]
    assert all(x.mnemonic == "global_load_ushort" for x in new.instructions[blk.start:blk.start + 24])
    assert evaluated(ev, body, new, "hoist_loads").speedup > 1.2


PAIRS = ["ds_read_b64 v[4:5], v0", "s_waitcnt lgkmcnt(0)", "v_pk_add_f32 v[8:9], v[4:5], v[4:5]",
         "ds_read_b64 v[4:5], v0 offset:8", "s_waitcnt lgkmcnt(0)", "v_pk_add_f32 v[10:11], v[4:5], v[8:9]",
         "global_store_dwordx2 v[2:3], v[10:11], off", "s_endpgm"]


def test_a_multi_register_destination_moves_as_one_aligned_tuple():
    """The second fragment's pair moves to the first even pair the body never uses (v1 alone is free too,
    but a tuple keeps its 64-bit alignment), its reader with it; the first fragment keeps v[4:5]."""
    b = body_of(PAIRS)
    assert hoist_load(b, 3) is None  # v_pk_add reads the old v[4:5]
    new = hoist_load_renamed(b, 3)
    assert new is not None and new.no_worse(b)
    assert code(new)[:3] == ["ds_read_b64 v[4:5], v0", "ds_read_b64 v[6:7], v0 offset:8", "s_waitcnt lgkmcnt(1)"]
    assert "v_pk_add_f32 v[8:9], v[4:5], v[4:5]" in code(new) and "v_pk_add_f32 v[10:11], v[6:7], v[8:9]" in code(new)


def test_a_tuple_with_a_register_read_across_lanes_stays():
    stuck = PAIRS[:5] + ["v_readlane_b32 s6, v5, 0"] + PAIRS[5:]
    assert hoist_load_renamed(body_of(stuck), 3) is None


def test_hoist_loads_gives_an_uncovered_hazard_its_wait_states():
    """The second load was one of the two instructions between a VALU's SGPR write and a VALU reading it
    (two wait states, `valu-sgpr-valu`); hoisted, it leaves one, so an `s_nop 0` restores the other."""
    lines = ["ds_read_b32 v1, v0", "s_waitcnt lgkmcnt(0)", "v_add_f32_e32 v5, v1, v1", "v_cmp_gt_f32_e64 s[4:5], v5, v6",
             "ds_read_b32 v1, v0 offset:4", "v_mov_b32_e32 v7, 0", "v_cndmask_b32_e64 v8, v5, v7, s[4:5]",
             "s_waitcnt lgkmcnt(0)", "v_add_f32_e32 v9, v1, v8", "global_store_dword v[2:3], v9, off", "s_endpgm"]
    b = body_of(lines)
    moved = hoist_load_renamed(b, 4)
    assert moved is not None and not moved.no_worse(b)  # the move alone uncovers the hazard
    new = hoist_loads(b, 4)
    assert new is not None and new.no_worse(b)
    c = code(new)
    assert c[1].startswith("ds_read_b32") and c[c.index("v_cndmask_b32_e64 v8, v5, v7, s[4:5]") - 1] == "s_nop 0"


def test_lora_expand_fragment_reads_renamed_as_a_tuple_and_hazards_padded_verify():
    """vLLM's LoRA expand. Its K loop reads four `ds_read_b128` fragments at offset 4096 into one register
    quadruple, v[52:55]: the first moves to the one quadruple free below the VGPR count that keeps its waves
    per SIMD and issues with the four reads before it. In another block of the loop, the hoisted reads leave two
    `valu-sgpr-valu` hazards uncovered, which get a nop each. Both candidates verify on every verify shape
    and the held-out one (no faster: the launch's time is its longest wave's, which these blocks barely shape)."""
    ev = evaluator("vllm_lora_expand", "triton", "mi300x")
    body = ev.body_of(0)
    site = next(i for i, x in enumerate(body.instructions) if x.text() == "ds_read_b128 v[52:55], v60 offset:4096")
    new = hoist_loads(body, site)
    assert new is not None and new.no_worse(body)
    blk = new.cfg.blocks[new.cfg.block_of[site]]
    reads = [x.text() for x in new.instructions[blk.start:blk.end] if x.mnemonic == "ds_read_b128"]
    assert reads[:5] == [x.text() for x in new.instructions[blk.start + 40:blk.start + 45]]
    assert reads[4] == "ds_read_b128 v[164:167], v60 offset:4096"
    evaluated(ev, body, new, "hoist_loads")

    site = next(i for i, x in enumerate(body.instructions) if x.text() == "ds_read_b128 v[58:61], v34")
    new = hoist_loads(body, site)
    assert new is not None and new.no_worse(body)
    nops = lambda b: sum(x.mnemonic == "s_nop" for x in b.instructions)
    assert nops(new) == nops(body) + 2
    evaluated(ev, body, new, "hoist_loads")
