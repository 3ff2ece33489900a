"""hoist_constant: a scalar constant rematerialised in several blocks is defined once, in the nearest
common dominator, in an SGPR nothing else writes."""
from __future__ import annotations

from asmevo.agent.ops_const import fuse_constant_fma, hoist_constant, hoist_vector_constant

from agenttools import body_of, code

# Two store blocks under their own lane masks, each rebuilding 0x7fffffff (s_brev_b32 of -2).
DIAMOND = ["v_cmp_gt_f32_e32 vcc, 0, v1", "s_and_saveexec_b64 s[4:5], vcc", "s_cbranch_execz .Lb",
           "s_brev_b32 s8, -2", "v_bfi_b32 v2, s8, v3, v2", "global_store_dword v[0:1], v2, off",
           ".Lb:", "s_or_b64 exec, exec, s[4:5]", "s_and_saveexec_b64 s[4:5], s[6:7]", "s_cbranch_execz .Lc",
           "s_brev_b32 s0, -2", "v_bfi_b32 v2, s0, v5, v4", "global_store_dword v[0:1], v2, off offset:4",
           ".Lc:", "s_endpgm"]


def test_copies_in_sibling_blocks_become_one_definition_in_their_dominator():
    b = body_of(["s_nop 0", "s_branch .La", ".La:", *DIAMOND])  # the entry block holds no copy
    new = hoist_constant(b, b.instructions.index(next(x for x in b.instructions if x.mnemonic == "s_brev_b32")))
    assert new is not None and new.no_worse(b)
    c = code(new)
    brevs = [x for x in c if x.startswith("s_brev_b32")]
    assert len(brevs) == 1
    reg = brevs[0].split()[1].rstrip(",")
    assert reg not in ("s0", "s8") and c.index(brevs[0]) < c.index("s_cbranch_execz .Lb")
    assert [x.split(", ")[1] for x in c if x.startswith("v_bfi_b32")] == [reg, reg]


def test_a_copy_in_the_dominator_stays_and_serves_the_others():
    b = body_of(["s_brev_b32 s9, -2", "v_bfi_b32 v7, s9, v3, v2", "s_branch .La", ".La:", *DIAMOND])
    new = hoist_constant(b, 0)
    c = code(new)
    assert [x for x in c if x.startswith("s_brev_b32")] == [c[0]]  # the entry block's copy, renamed
    reg = c[0].split()[1].rstrip(",")
    assert reg not in ("s0", "s8", "s9") and [x.split(", ")[1] for x in c if x.startswith("v_bfi_b32")] == [reg] * 3


def test_no_hoist_into_the_entry_block_or_past_a_live_register():
    # the entry block of a kernarg-preloading kernel is a preamble hardware skips
    assert hoist_constant(body_of(DIAMOND), 3) is None
    live = body_of(["s_branch .La", ".La:", *DIAMOND[:-1], "v_add_u32_e32 v9, s0, v9", "s_endpgm"])
    assert hoist_constant(live, 4) is None  # s0 is read after the second copy's block
    single = body_of(["s_branch .La", ".La:", *DIAMOND[:9], "s_endpgm"])  # one copy: nothing to share
    assert hoist_constant(single, 4) is None


POLY = ["v_mul_f32_e32 v3, v2, v2", "v_mov_b32_e32 v8, 0x3ba10414", "v_fmac_f32_e32 v8, 0xba1345e1, v3",
        "v_fmaak_f32 v8, v3, v8, 0xbcdac9b8"]


def test_mov_fmac_with_an_inline_coefficient_becomes_one_fmaak():
    b = body_of(["v_mov_b32_e32 v8, 0x3ba10414", "v_fmac_f32_e32 v8, 0.5, v3", "s_endpgm"])
    assert code(fuse_constant_fma(b, 0)) == ["v_fmaak_f32 v8, 0.5, v3, 0x3ba10414", "s_endpgm"]


def test_a_literal_coefficient_is_set_once_at_the_wave_start_for_every_pair():
    b = body_of(["s_load_dwordx2 s[2:3], s[0:1], 0x0", *POLY, "v_cmp_gt_f32_e32 vcc, 0, v8",
                 "s_and_saveexec_b64 s[4:5], vcc", "s_cbranch_execz .La",
                 *[x.replace("v8", "v9").replace("v3", "v4") for x in POLY], ".La:", "s_endpgm"])
    new = fuse_constant_fma(b, 2)
    assert new is not None and new.no_worse(b)
    c = code(new)
    assert c[0] == "v_mov_b32_e32 v0, 0xba1345e1"  # v0: the first VGPR the body leaves alone
    assert [x for x in c if x.startswith("v_fmaak_f32") and "0x3ba10414" in x] == [
        "v_fmaak_f32 v8, v0, v3, 0x3ba10414", "v_fmaak_f32 v9, v0, v4, 0x3ba10414"]
    assert not any(x.startswith(("v_fmac", "v_mov_b32_e32 v8", "v_mov_b32_e32 v9")) for x in c)


def test_no_fusion_when_exec_may_leave_the_launch_lanes_or_the_value_is_read_between():
    whole_wave = body_of(["s_or_saveexec_b64 s[4:5], -1", *POLY, "s_or_b64 exec, exec, s[4:5]", "s_endpgm"])
    assert fuse_constant_fma(whole_wave, 2) is None
    read_between = body_of(["v_mov_b32_e32 v8, 0x3ba10414", "v_add_f32_e32 v5, v8, v8",
                            "v_fmac_f32_e32 v8, 0.5, v3", "s_endpgm"])
    assert fuse_constant_fma(read_between, 0) is None


def test_the_search_proposes_the_hoist_once_for_all_copies_of_a_constant():
    """Hoisting from any copy gives the same code, so `propose` applies it at the first site only."""
    from asmevo.agent.operators import BY_NAME, propose

    b = body_of(["s_nop 0", "s_branch .La", ".La:", *DIAMOND])
    copies = [i for i, x in enumerate(b.instructions) if x.mnemonic == "s_brev_b32"]
    proposals = list(propose(b, copies, (BY_NAME["hoist_constant"],)))
    assert len(copies) == 2 and [p.site for p in proposals] == copies[:1]
    assert proposals[0].body.same_code(hoist_constant(b, copies[1]))


# Two masked blocks each rebuild 0x7f800000 for a VOP3 select (no literal there).
SELECTS = ["v_cmp_gt_f32_e32 vcc, 0, v1", "s_and_saveexec_b64 s[4:5], vcc", "s_cbranch_execz .Lb",
           "v_mov_b32_e32 v8, 0x7f800000", "v_cndmask_b32_e64 v2, v8, v3, s[6:7]",
           "global_store_dword v[0:1], v2, off",
           ".Lb:", "s_or_b64 exec, exec, s[4:5]", "s_and_saveexec_b64 s[4:5], s[10:11]", "s_cbranch_execz .Lc",
           "v_mov_b32_e32 v9, 0x7f800000", "v_cndmask_b32_e64 v2, v9, v5, s[6:7]",
           "global_store_dword v[0:1], v2, off offset:4",
           ".Lc:", "s_endpgm"]


def test_vector_constant_copies_become_one_write_at_the_wave_start():
    b = body_of(["s_load_dwordx2 s[2:3], s[0:1], 0x0", *SELECTS])
    new = hoist_vector_constant(b, b.instructions.index(next(x for x in b.instructions if x.mnemonic == "v_mov_b32_e32")))
    assert new is not None and new.no_worse(b)
    c = code(new)
    assert c[0] == "v_mov_b32_e32 v4, 0x7f800000"  # v4: the first VGPR the body leaves alone
    assert [x for x in c if x.startswith("v_cndmask")] == ["v_cndmask_b32_e64 v2, v4, v3, s[6:7]",
                                                         "v_cndmask_b32_e64 v2, v4, v5, s[6:7]"]
    assert sum(x.startswith("v_mov_b32") for x in c) == 1


def test_a_constant_built_by_v_not_or_v_bfrev_is_hoisted_as_the_value_it_builds():
    """LLVM builds -64 as `v_not_b32 63` and the sign bit as `v_bfrev_b32 1` (no literal); each is the
    constant it builds, shared with a move of the same value, and neither is a move `fuse_constant_fma` fuses."""
    built = [x.replace("v_mov_b32_e32 v8, 0x7f800000", "v_not_b32_e32 v8, 63")
             .replace("v_mov_b32_e32 v9, 0x7f800000", "v_mov_b32_e32 v9, 0xffffffc0") for x in SELECTS]
    b = body_of(["s_load_dwordx2 s[2:3], s[0:1], 0x0", *built])
    new = hoist_vector_constant(b, b.instructions.index(next(x for x in b.instructions if x.mnemonic == "v_not_b32_e32")))
    assert new is not None and new.no_worse(b)
    c = code(new)
    assert c[0] == "v_mov_b32_e32 v4, 0xffffffc0" and not any(x.startswith(("v_not", "v_mov_b32_e32 v9")) for x in c)
    assert [x for x in c if x.startswith("v_cndmask")] == ["v_cndmask_b32_e64 v2, v4, v3, s[6:7]",
                                                         "v_cndmask_b32_e64 v2, v4, v5, s[6:7]"]
    sign = body_of(["s_load_dwordx2 s[2:3], s[0:1], 0x0", *(x.replace("v_mov_b32_e32 v8, 0x7f800000", "v_bfrev_b32_e32 v8, 1")
                                                              .replace("v_mov_b32_e32 v9, 0x7f800000", "v_bfrev_b32_e32 v9, 1")
                                                              for x in SELECTS)])
    assert code(hoist_vector_constant(sign, 4))[0] == "v_mov_b32_e32 v4, 0x80000000"
    fma = body_of(["v_not_b32_e32 v8, 63", "v_fmac_f32_e32 v8, 0x3f000001, v3", "global_store_dword v[0:1], v8, off",
                   "s_endpgm"])
    assert fuse_constant_fma(fma, 0) is None


def test_no_vector_hoist_for_an_accumulated_value_a_wide_exec_or_the_entry_block_alone():
    mov = lambda b: b.instructions.index(next(x for x in b.instructions if x.mnemonic == "v_mov_b32_e32"))
    accumulated = body_of(["s_nop 0", "s_branch .La", ".La:", "v_mov_b32_e32 v8, 0x3ba10414",
                           "v_fmac_f32_e32 v8, 0x3f000001, v3", "global_store_dword v[0:1], v8, off", "s_endpgm"])
    assert hoist_vector_constant(accumulated, mov(accumulated)) is None
    whole_wave = body_of(["s_or_saveexec_b64 s[12:13], -1", *SELECTS[:-1], "s_or_b64 exec, exec, s[12:13]", "s_endpgm"])
    assert hoist_vector_constant(whole_wave, mov(whole_wave)) is None
    entry_only = body_of(["v_mov_b32_e32 v8, 0x7f800000", "v_cndmask_b32_e64 v2, v8, v3, s[6:7]",
                          "global_store_dword v[0:1], v2, off", "s_endpgm"])
    assert hoist_vector_constant(entry_only, 0) is None


def test_a_value_read_across_lanes_stays_where_it_is():
    add = lambda reader: body_of(["s_nop 0", "s_branch .La", ".La:", "v_mov_b32_e32 v8, 0x7f800000", reader,
                                  "global_store_dword v[0:1], v2, off", "s_endpgm"])
    assert code(hoist_vector_constant(add("v_add_f32_e32 v2, v8, v3"), 2))[:2] == [
        "v_mov_b32_e32 v4, 0x7f800000", "s_nop 0"]
    assert hoist_vector_constant(add("v_add_f32_dpp v2, v8, v3 row_shr:1 bound_ctrl:0"), 2) is None
