"""pack_f32: pairs of f32 ops into an aligned VGPR pair become one packed op, only when moving the
second to the first's place changes nothing; the result runs like K0 on the emulator."""
from __future__ import annotations

from asmevo.agent.edit import Window
from asmevo.agent.operators import BY_NAME, propose
from asmevo.agent.ops_pack import pack_f32, pack_f32_block, pack_f32_chains, pack_f32_renamed
from agenttools import body_of, code, evaluator


def test_two_adds_into_a_pair_become_one_packed_add_with_halves_selected():
    b = body_of(["v_add_f32_e32 v31, v31, v34", "v_mov_b32_e32 v7, 0", "v_add_f32_e32 v30, v30, v35", "s_endpgm"])
    new = pack_f32(b, 0)
    assert code(new) == ["v_pk_add_f32 v[30:31], v[30:31], v[34:35] op_sel:[0,1] op_sel_hi:[1,0]",
                         "v_mov_b32_e32 v7, 0", "s_endpgm"]
    assert new.no_worse(b)


def test_fmac_pairs_accumulate_into_their_destination_pair_and_negations_carry_over():
    b = body_of(["v_fmac_f32_e32 v4, v0, v2", "v_fmac_f32_e32 v5, v1, v2", "v_mul_f32_e64 v6, -v0, s2",
                 "v_mul_f32_e64 v7, v1, s3", "s_endpgm"])
    assert code(pack_f32(b, 0))[0] == "v_pk_fma_f32 v[4:5], v[0:1], v[2:3], v[4:5] op_sel_hi:[1,0,1]"
    assert code(pack_f32(b, 2))[2] == "v_pk_mul_f32 v[6:7], v[0:1], s[2:3] neg_lo:[1,0]"
    assert code(pack_f32_block(b, 0))[:2] == ["v_pk_fma_f32 v[4:5], v[0:1], v[2:3], v[4:5] op_sel_hi:[1,0,1]",
                                              "v_pk_mul_f32 v[6:7], v[0:1], s[2:3] neg_lo:[1,0]"]


def test_subtractions_pack_as_an_add_of_the_negated_subtrahend():
    b = body_of(["v_sub_f32_e32 v4, v0, v2", "v_sub_f32_e64 v5, v1, -v3", "s_endpgm"])
    assert code(pack_f32(b, 0))[0] == "v_pk_add_f32 v[4:5], v[0:1], v[2:3] neg_lo:[0,1]"
    c = body_of(["v_sub_f32_e32 v4, v0, v2", "v_add_f32_e32 v5, v1, v3", "s_endpgm"])
    assert pack_f32(c, 0) is None       # a subtraction and an add are not the same operation here


def test_no_pack_when_moving_the_second_op_would_change_a_value():
    assert pack_f32(body_of(["v_add_f32_e32 v4, v0, v2", "v_add_f32_e32 v5, v4, v3", "s_endpgm"]), 0) is None
    assert pack_f32(body_of(["v_add_f32_e32 v4, v0, v2", "v_mov_b32_e32 v1, 0", "v_add_f32_e32 v5, v1, v3",
                             "s_endpgm"]), 0) is None  # its source is written in between
    assert pack_f32(body_of(["v_add_f32_e32 v4, v0, v2", "v_mov_b32_e32 v9, v5", "v_add_f32_e32 v5, v1, v3",
                             "s_endpgm"]), 0) is None  # its old destination is read in between
    assert pack_f32(body_of(["v_add_f32_e32 v4, v0, v2", "s_mov_b64 exec, s[4:5]", "v_add_f32_e32 v5, v1, v3",
                             "s_endpgm"]), 0) is None  # EXEC changes in between
    wait = ["global_load_dword v3, v[8:9], off", "v_add_f32_e32 v4, v0, v2", "s_waitcnt vmcnt(0)",
            "v_add_f32_e32 v5, v1, v3", "v_add_f32_e32 v6, v4, v5", "s_endpgm"]
    assert pack_f32(body_of(wait), 1) is None  # the second reads a load the wait retires
    # the renaming variant packs at the second one's place instead (the first may move down past a wait)
    assert code(pack_f32_renamed(body_of(wait), 1))[1:3] == [
        "s_waitcnt vmcnt(0)", "v_pk_add_f32 v[4:5], v[0:1], v[2:3]"]


def test_no_pack_for_what_packed_f32_cannot_express():
    assert pack_f32(body_of(["v_add_f32_e64 v4, |v0|, v2", "v_add_f32_e64 v5, |v1|, v3", "s_endpgm"]), 0) is None
    assert pack_f32(body_of(["v_add_f32_e32 v4, 1.0, v2", "v_add_f32_e32 v5, 1.0, v3", "s_endpgm"]), 0) is None
    assert pack_f32(body_of(["v_mul_f32_e64 v4, v0, s2", "v_mul_f32_e64 v5, v1, s5", "s_endpgm"]), 0) is None
    assert pack_f32(body_of(["v_add_f32_e32 v5, v0, v2", "v_add_f32_e32 v6, v1, v3", "s_endpgm"]), 0) is None
    assert pack_f32(body_of(["v_add_f32_e32 v4, v0, v2", "v_add_f32_e32 v5, v1, v4", "s_endpgm"]), 0) is None


def test_packed_logsoftmax_runs_like_k0():
    ev = evaluator("24_LogSoftmax")
    body = ev.body_of(0)
    props = list(propose(body, list(range(len(body.instructions))), (BY_NAME["pack_f32s"],)))
    prop = max(props, key=lambda p: sum(c.startswith("v_pk_add_f32") for c in code(p.body)))
    assert sum(c.startswith("v_pk_add_f32") for c in code(prop.body)) - sum(
        c.startswith("v_pk_add_f32") for c in code(body)) == 4
    assert prop.body.no_worse(body)
    cand = ev.evaluate(0, prop.body.edit(body, prop.operator, prop.note), Window(*ev.source_of(0).body),
                       agent="test", step=1)
    assert cand.verified and cand.cycles < ev.baseline.cycles


_ELU_LIKE = ["s_mov_b32 s1, 0x3fb8aa3b", "global_load_dwordx2 v[0:1], v[2:3], off", "s_waitcnt vmcnt(0)",
             "v_mul_f32_e32 v6, 0x3fb8aa3b, v1", "v_mul_f32_e32 v7, 0x3fb8aa3b, v0",
             "v_fma_f32 v11, v1, s1, -v6", "v_rndne_f32_e32 v12, v6", "v_fma_f32 v13, v0, s1, -v7",
             "v_fmac_f32_e32 v11, 0x32a5705f, v1", "v_fmac_f32_e32 v13, 0x32a5705f, v0",
             "v_add_f32_e32 v6, v6, v11", "v_add_f32_e32 v7, v7, v13", "v_add_f32_e32 v2, v6, v7",
             "global_store_dword v[4:5], v2, off", "s_endpgm"]


def test_two_elements_chains_pack_after_their_results_move_into_free_pairs():
    b = body_of(_ELU_LIKE)
    new = pack_f32_chains(b, 3)
    assert code(new) == [
        "s_mov_b32 s0, 0x32a5705f",  # a literal no SGPR holds yet goes into a free one at the wave's start
        "s_mov_b32 s1, 0x3fb8aa3b", "global_load_dwordx2 v[0:1], v[2:3], off", "s_waitcnt vmcnt(0)",
        "v_pk_mul_f32 v[6:7], s[0:1], v[0:1] op_sel:[1,1] op_sel_hi:[1,0]",  # s1 holds this one
        "v_pk_fma_f32 v[10:11], v[0:1], s[0:1], v[6:7] op_sel:[0,1,1] op_sel_hi:[1,1,0] neg_lo:[0,0,1] neg_hi:[0,0,1]",
        "v_rndne_f32_e32 v12, v6",
        "v_pk_fma_f32 v[10:11], s[0:1], v[0:1], v[10:11] op_sel_hi:[0,1,1]",  # v13's value moved to v10
        "v_pk_add_f32 v[6:7], v[6:7], v[10:11] op_sel:[0,1] op_sel_hi:[1,0]",
        "v_add_f32_e32 v2, v6, v7", "global_store_dword v[4:5], v2, off", "s_endpgm"]
    assert new.no_worse(b)


def test_no_renamed_pack_for_dependent_unpaired_or_pinned_values():
    assert pack_f32_renamed(body_of(["v_mul_f32_e32 v6, v0, v1", "v_mul_f32_e32 v9, v6, v1", "s_endpgm"]), 0) is None
    assert pack_f32_renamed(body_of(["v_mul_f32_e32 v6, v1, v4", "v_mul_f32_e32 v9, v2, v4", "s_endpgm"]), 0) is None
    # both values are read by other lanes (DPP), so neither may move next to the other
    dpp = "quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf"
    lines = ["v_mul_f32_e32 v6, v0, v4", "v_mul_f32_e32 v9, v1, v4", f"v_mov_b32_dpp v3, v9 {dpp}"]
    assert code(pack_f32_renamed(body_of(lines + ["s_endpgm"]), 0))[0] == \
        "v_pk_mul_f32 v[8:9], v[0:1], v[4:5] op_sel_hi:[1,0]"  # v6's value moves to v8
    assert pack_f32_renamed(body_of(lines + [f"v_mov_b32_dpp v2, v6 {dpp}", "s_endpgm"]), 0) is None


def test_no_renamed_pack_above_the_vgprs_that_keep_the_waves():
    # v0..v63 all hold live values at the pair (8 waves/SIMD up to 64 VGPRs): no free pair below v64
    lines = [f"v_mov_b32_e32 v{r}, {r}" for r in range(64)]
    lines += ["v_mul_f32_e32 v60, v0, v4", "v_mul_f32_e32 v63, v1, v4"]
    lines += [f"global_store_dword v[0:1], v{r}, off" for r in range(2, 64)] + ["s_endpgm"]
    assert pack_f32_renamed(body_of(lines), 64) is None
    lines.remove("global_store_dword v[0:1], v61, off")  # v61 is free where v63's value lives
    assert code(pack_f32_renamed(body_of(lines), 64))[64] == "v_pk_mul_f32 v[60:61], v[0:1], v[4:5] op_sel_hi:[1,0]"


def test_packed_chains_of_elu_run_like_k0_and_faster():
    ev = evaluator("31_ELU")
    body = ev.body_of(0)
    props = list(propose(body, list(range(len(body.instructions))), (BY_NAME["pack_f32_chains"],)))
    best = max(props, key=lambda p: sum(c.startswith("v_pk_") for c in code(p.body)))
    assert sum(c.startswith("v_pk_") for c in code(best.body)) - sum(c.startswith("v_pk_") for c in code(body)) >= 8
    cand = ev.evaluate(0, best.body.edit(body, best.operator, best.note), Window(*ev.source_of(0).body),
                       agent="test", step=1)
    assert cand.verified and cand.cycles < ev.baseline.cycles


def test_two_moves_become_one_packed_move_after_their_values_move_into_a_pair():
    b = body_of(["v_mov_b32_e32 v45, 0", "v_mov_b32_e32 v56, 0", "s_and_saveexec_b64 s[20:21], s[30:31]",
                 "global_load_dword v56, v[36:37], off", "global_load_dword v45, v[38:39], off",
                 "s_or_b64 exec, exec, s[20:21]", "s_waitcnt vmcnt(0)", "v_mov_b32_e32 v7, v3", "v_mov_b32_e32 v9, v12",
                 "v_add_f32_e32 v1, v7, v9", "ds_write2st64_b32 v48, v56, v45 offset1:4", "s_endpgm"])
    new = pack_f32_chains(b, 0)
    assert code(new) == [
        "v_pk_mov_b32 v[44:45], 0, 0",  # masked loads' defaults: v56's value (and its load) moved to v44
        "s_and_saveexec_b64 s[20:21], s[30:31]", "global_load_dword v44, v[36:37], off",
        "global_load_dword v45, v[38:39], off", "s_or_b64 exec, exec, s[20:21]", "s_waitcnt vmcnt(0)",
        "v_pk_mov_b32 v[6:7], v[12:13], v[2:3] op_sel:[0,1]",  # v6 = v12 (moved from v9), v7 = v3
        "v_add_f32_e32 v1, v7, v6", "ds_write2st64_b32 v48, v44, v45 offset1:4", "s_endpgm"]
    assert new.no_worse(b)


def test_no_packed_move_of_nonzero_inline_constants_or_two_scalar_pairs():
    # how a 64-bit operand widens an inline constant other than 0 is left alone
    assert pack_f32(body_of(["v_mov_b32_e32 v4, 1.0", "v_mov_b32_e32 v5, 1.0", "s_endpgm"]), 0) is None
    assert pack_f32(body_of(["v_mov_b32_e32 v4, s2", "v_mov_b32_e32 v5, s4", "s_endpgm"]), 0) is None  # constant bus
    assert code(pack_f32(body_of(["v_mov_b32_e32 v4, s3", "v_mov_b32_e32 v5, s2", "s_endpgm"]), 0))[0] == \
        "v_pk_mov_b32 v[4:5], s[2:3], s[2:3] op_sel:[1,0]"


def test_packed_masked_defaults_of_86_run_like_k0():
    ev = evaluator("86_Matmul_Divide_GELU")
    body = ev.body_of(0)
    i = next(k for k, ins in enumerate(body.instructions) if ins.text() == "v_mov_b32_e32 v45, 0")
    new = pack_f32_chains(body, i)
    assert sum(c.startswith("v_pk_mov_b32") and c.endswith(", 0, 0") for c in code(new)) == 1
    cand = ev.evaluate(0, new.edit(body, "pack_f32_chains", "test"), Window(*ev.source_of(0).body), agent="test", step=1)
    assert cand.verified


def test_fmaak_and_inline_constants_pack_with_the_constant_from_an_sgpr():
    """v_fmaak_f32 D = S0 * S1 + K packs as an FMA with K from an SGPR; so does an add of the inline constant 1.0
    (VOP3P takes no literal, and a constant for both halves is read plainly from an SGPR)."""
    lines = ["global_load_dwordx2 v[0:1], v[2:3], off", "s_waitcnt vmcnt(0)",
             "v_fmaak_f32 v6, v0, v0, 0xbd5c1c4e", "v_fmaak_f32 v9, v1, v1, 0xbd5c1c4e",
             "v_add_f32_e32 v6, 1.0, v6", "v_add_f32_e32 v9, 1.0, v9",
             "v_add_f32_e32 v2, v6, v9", "global_store_dword v[4:5], v2, off", "s_endpgm"]
    b = body_of(lines)
    c = code(pack_f32_chains(b, 2))
    movs = {x.split(", ")[1]: x.split()[1].rstrip(",") for x in c if x.startswith("s_mov_b32")}
    assert set(movs) == {"0xbd5c1c4e", "1.0"}
    [fma] = [x for x in c if x.startswith("v_pk_fma_f32")]
    [add] = [x for x in c if x.startswith("v_pk_add_f32")]
    assert "v[0:1], v[0:1], s[" in fma and not any(x.startswith(("v_fmaak", "v_add_f32_e32 v6", "v_add_f32_e32 v9"))
                                                 for x in c)
    assert add.split(", ")[1].startswith("s[")


_COPIES = ["global_load_dwordx2 v[0:1], v[2:3], off", "s_waitcnt vmcnt(0)",
           "s_mov_b32 s24, 0x3fb8aa3b", "s_mov_b32 s28, {second}",
           "v_fma_f32 v6, v0, s24, -v4", "v_fma_f32 v9, v1, s28, -v5",
           "v_add_f32_e32 v2, v6, v9", "global_store_dword v[4:5], v2, off", "s_endpgm"]


def test_two_copies_reading_one_constant_from_sgprs_of_two_pairs_pack_reading_it_from_one():
    """Interleaved element copies set the same constant in SGPRs of different pairs (s24, s28); a packed op reads
    one pair, so the packed FMA reads the constant from one SGPR that holds it (here s24, written once before)."""
    c = code(pack_f32_renamed(body_of([x.format(second="0x3fb8aa3b") for x in _COPIES]), 4))
    assert c[4:6] == ["v_pk_fma_f32 v[6:7], v[0:1], s[24:25], v[4:5] op_sel_hi:[1,0,1] neg_lo:[0,0,1] neg_hi:[0,0,1]",
                      "v_add_f32_e32 v2, v6, v7"]   # v9's value moved to v7


def test_no_pack_when_the_two_sgprs_hold_different_constants_or_one_is_unknown():
    assert pack_f32_renamed(body_of([x.format(second="0x3f800001") for x in _COPIES]), 4) is None
    unknown = [x.format(second="0x3fb8aa3b") for x in _COPIES]
    unknown.insert(4, "s_add_u32 s28, s28, 1")   # s28 no longer holds the constant the s_mov_b32 set
    assert pack_f32_renamed(body_of(unknown), 5) is None
