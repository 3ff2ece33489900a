"""remove_canonicalize: `v_max_f32 vD, vS, vS` goes when every write reaching vS gives a canonical value."""
from __future__ import annotations

from asmevo.agent.body import FloatMode
from asmevo.agent.ops_canon import remove_canonicalize, remove_canonicalizes

from agenttools import body_of, code

IEEE = {"float_mode": FloatMode(ieee=True, denorm32=3)}
FLUSH = {"float_mode": FloatMode(ieee=True, denorm32=0)}
# A running maximum: an initial constant, then max with a loaded value, re-canonicalized each iteration.
LOOP = ["v_mov_b32_e32 v6, {init}", ".Lloop:", "global_load_dword v4, v[0:1], off", "v_max_f32_e32 v6, v6, v6",
        "s_waitcnt vmcnt(0)", "v_max_f32_e32 v4, v4, v4", "v_max_f32_e32 v6, v6, v4", "s_add_u32 s2, s2, -1",
        "s_cmp_lg_u32 s2, 0", "s_cbranch_scc1 .Lloop", "global_store_dword v[0:1], v6, off", "s_endpgm"]


def loop(init: str = "0xff800000", **mode):
    return body_of([x.format(init=init) for x in LOOP], **(mode or IEEE))


def test_the_running_maximum_is_not_canonicalized_again():
    b = loop()
    new = remove_canonicalize(b, 2)
    assert new is not None and new.no_worse(b)
    assert "v_max_f32_e32 v6, v6, v6" not in code(new) and "v_max_f32_e32 v4, v4, v4" in code(new)
    assert remove_canonicalize(b, 4) is None  # a loaded value may be a signalling NaN


def test_refused_outside_ieee_mode_or_for_a_constant_that_is_no_canonical_value():
    assert remove_canonicalize(loop(**{"float_mode": FloatMode(ieee=False, denorm32=3)}), 2) is None
    assert remove_canonicalize(loop("0x7fa00000"), 2) is None            # a signalling NaN
    assert remove_canonicalize(loop("0x7fc00000"), 2) is not None        # a quiet NaN
    assert remove_canonicalize(loop("0x00000001", **FLUSH), 2) is None   # a denormal the mode flushes
    assert remove_canonicalize(loop("0x00000001"), 2) is not None        # denormals kept


def test_a_value_from_the_wave_start_or_a_partial_write_is_not_canonical():
    start = body_of(["v_max_f32_e32 v6, v6, v6", "global_store_dword v[0:1], v6, off", "s_endpgm"], **IEEE)
    assert remove_canonicalize(start, 0) is None
    # the add writes the lanes of s[4:5] only; the others keep the loaded value
    partial = body_of(["global_load_dword v6, v[0:1], off", "s_waitcnt vmcnt(0)", "s_and_saveexec_b64 s[8:9], s[4:5]",
                       "v_add_f32_e32 v6, 1.0, v6", "s_or_b64 exec, exec, s[8:9]", "v_max_f32_e32 v6, v6, v6",
                       "global_store_dword v[0:1], v6, off", "s_endpgm"], **IEEE)
    assert remove_canonicalize(partial, 5) is None


def test_a_copy_to_another_register_becomes_a_move_its_readers_see_through():
    b = body_of(["v_add_f32_e32 v9, v1, v2", "v_max_f32_e32 v10, v9, v9", "v_max_f32_e32 v13, v10, v12",
                 "v_mul_f32_e32 v10, v13, v13", "global_store_dword v[0:1], v10, off", "s_endpgm"], **IEEE)
    assert code(remove_canonicalize(b, 1))[:3] == ["v_add_f32_e32 v9, v1, v2", "v_max_f32_e32 v13, v9, v12",
                                                   "v_mul_f32_e32 v10, v13, v13"]


def test_every_canonicalize_of_a_block_at_once():
    b = body_of(["v_add_f32_e32 v8, v1, v2", "v_add_f32_e32 v9, v1, v3", "v_max_f32_e32 v8, v8, v8",
                 "v_max_f32_e32 v9, v9, v9", "v_max_f32_e32 v8, v8, v9", "global_store_dword v[0:1], v8, off",
                 "s_endpgm"], **IEEE)
    assert not any(x.endswith(("v8, v8", "v9, v9")) for x in code(remove_canonicalizes(b, 2)))


# A cross-lane maximum step: the partner lane's value comes by a DPP move, then is canonicalized.
REDUCE = ["global_load_dword v6, v[0:1], off", "s_waitcnt vmcnt(0)", "v_max_f32_e64 v7, |v6|, |v6|",
          "s_nop 1", "v_mov_b32_dpp v8, v7 row_shr:8 {masks} bound_ctrl:1", "v_max_f32_e32 v8, v8, v8",
          "v_max_f32_e32 v7, v7, v8", "global_store_dword v[0:1], v7, off", "s_endpgm"]


def test_a_dpp_move_of_a_canonical_value_is_canonical():
    """With bound_ctrl an invalid or inactive source lane reads 0; every lane is written under full masks."""
    b = body_of([x.format(masks="row_mask:0xf bank_mask:0xf") for x in REDUCE], **IEEE)
    new = remove_canonicalize(b, 5)
    assert new is not None and "v_max_f32_e32 v8, v8, v8" not in code(new)


def test_a_dpp_move_of_a_loaded_value_or_over_an_unknown_old_value_is_not():
    loaded = [x.format(masks="row_mask:0xf bank_mask:0xf").replace("v_mov_b32_dpp v8, v7", "v_mov_b32_dpp v8, v6")
              for x in REDUCE]
    assert remove_canonicalize(body_of(loaded, **IEEE), 5) is None
    # a row mask leaves rows 2 and 3 their old v8: here never written, so no canonical value
    rows = [x.format(masks="row_mask:0x3 bank_mask:0xf") for x in REDUCE]
    assert remove_canonicalize(body_of(rows, **IEEE), 5) is None
    # the old value canonical too: v8 set by a float op before
    old = ["v_add_f32_e32 v8, 1.0, v6" if x == "s_nop 1" else x for x in rows]
    assert remove_canonicalize(body_of(old, **IEEE), 5) is not None


def test_a_mode_write_of_fp16_overflow_only_keeps_the_reasoning():
    """Setting FP16_OVFL (MODE bit 23, f16 results only) leaves canonical values canonical; a write of the
    denormal field, or of the whole register, may not."""
    def with_setreg(field: str):
        return body_of([f"s_setreg_imm32_b32 {field}, 1"] + [x.format(init="0xff800000") for x in LOOP], **IEEE)
    new = remove_canonicalize(with_setreg("hwreg(HW_REG_MODE, 23, 1)"), 3)
    assert new is not None and "v_max_f32_e32 v6, v6, v6" not in code(new)
    for field in ("hwreg(HW_REG_MODE, 4, 2)", "hwreg(HW_REG_MODE, 22, 2)", "hwreg(HW_REG_MODE)"):
        assert remove_canonicalize(with_setreg(field), 3) is None, field


def test_a_packed_move_passes_on_the_dword_its_op_sel_picks():
    """`v_pk_mov_b32 v[8:9], v[6:7], v[4:5] op_sel:[0,1]`: v8 is v6, v9 is v5 (packing's pair moves)."""
    def moved(low: str, high: str):
        return body_of(["global_load_dword v1, v[2:3], off", "s_waitcnt vmcnt(0)", f"v_add_f32_e32 v6, 1.0, {low}",
                        "v_mov_b32_e32 v7, v1", "v_mov_b32_e32 v4, v1", f"v_add_f32_e32 v5, 1.0, {high}",
                        "v_pk_mov_b32 v[8:9], v[6:7], v[4:5] op_sel:[0,1]", "v_max_f32_e32 v10, v8, v8",
                        "v_max_f32_e32 v11, v9, v9", "v_add_f32_e32 v12, v10, v11",
                        "global_store_dword v[2:3], v12, off", "s_endpgm"], **IEEE)
    b = moved("v1", "v1")
    assert remove_canonicalize(b, 7) is not None and remove_canonicalize(b, 8) is not None
    swapped = [x.replace("op_sel:[0,1]", "op_sel:[1,0]") for x in code(b)]
    b2 = body_of(swapped, **IEEE)  # v8 is v7 (a loaded value), v9 is v4 (one too)
    assert remove_canonicalize(b2, 7) is None and remove_canonicalize(b2, 8) is None
