"""Register def/use tables on representative gfx942 instructions."""
import pytest

from asmevo.errors import UnsupportedInstruction
from asmevo.isa.instruction import parse_instruction
from asmevo.isa.regs import EXEC, M0, SCC, VCC, reg_info


def v(*idx):
    return {("v", i) for i in idx}


def s(*idx):
    return {("s", i) for i in idx}


def a(*idx):
    return {("a", i) for i in idx}


CASES = [
    ("v_add_f32_e32 v1, v2, v3", v(1), v(2, 3) | EXEC),
    ("v_add_co_u32_e32 v0, vcc, v1, v2", v(0) | VCC, v(1, 2) | EXEC),
    ("v_addc_co_u32_e64 v1, s[4:5], v2, v3, s[6:7]", v(1) | s(4, 5), v(2, 3) | s(6, 7) | EXEC),
    ("v_cndmask_b32_e32 v0, v1, v2, vcc", v(0), v(1, 2) | VCC | EXEC),
    ("v_cmp_gt_i32_e32 vcc, s5, v0", VCC, s(5) | v(0) | EXEC),
    ("v_cmpx_gt_i32_e64 s[0:1], s2, v0", s(0, 1) | EXEC, s(2) | v(0) | EXEC),
    ("v_div_fmas_f32 v0, v1, v2, v3", v(0), v(1, 2, 3) | VCC | EXEC),
    ("v_lshlrev_b64 v[0:1], 2, v[2:3]", v(0, 1), v(2, 3) | EXEC),
    ("v_fmac_f32_e32 v5, s4, v4", v(5), v(4, 5) | s(4) | EXEC),
    ("v_readlane_b32 s0, v1, s2", s(0), v(1) | s(2) | EXEC),
    ("v_writelane_b32 v0, s1, 5", v(0), v(0) | s(1) | EXEC),
    ("v_readfirstlane_b32 s3, v7", s(3), v(7) | EXEC),
    ("v_accvgpr_read_b32 v0, a1", v(0), a(1) | EXEC),
    ("v_accvgpr_write_b32 a2, v3", a(2), v(3) | EXEC),
    ("v_mfma_f32_32x32x8f16 a[0:15], v[0:1], v[2:3], a[0:15]", a(*range(16)), a(*range(16)) | v(0, 1, 2, 3) | EXEC),
    ("v_mfma_f32_4x4x4_16b_f16 v[4:7], v[0:1], v[2:3], 0", v(4, 5, 6, 7), v(0, 1, 2, 3) | EXEC),
    ("v_mov_b32_dpp v2, v1 row_shr:1 row_mask:0xf bank_mask:0xf", v(2), v(1, 2) | EXEC),
    ("v_add_f32_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:DWORD src1_sel:DWORD",
     v(0), v(0, 1, 2) | EXEC),
    # packed FP32 reads the dwords op_sel (low result) and op_sel_hi (high result) pick, not the others
    ("v_pk_fma_f32 v[2:3], v[44:45], v[30:31], v[2:3] op_sel_hi:[1,0,1]", v(2, 3), v(44, 45, 30, 2, 3) | EXEC),
    ("v_pk_mul_f32 v[6:7], s[22:23], v[0:1] op_sel:[0,1] op_sel_hi:[0,0]", v(6, 7), s(22) | v(1, 0) | EXEC),
    ("v_pk_add_f32 v[6:7], -1.0, v[6:7] op_sel_hi:[0,1]", v(6, 7), v(6, 7) | EXEC),
    ("v_pk_mov_b32 v[0:1], v[2:3], v[4:5] op_sel:[1,0]", v(0, 1), v(3, 4) | EXEC),
    ("s_add_u32 s0, s4, s0", s(0) | {SCC}, s(4, 0)),
    ("s_addc_u32 s1, s5, s1", s(1) | {SCC}, s(5, 1) | {SCC}),
    ("s_cselect_b64 s[0:1], s[2:3], 0", s(0, 1), s(2, 3) | {SCC}),
    ("s_mov_b64 s[6:7], 0", s(6, 7), set()),
    ("s_cmp_lt_i32 s8, 1", {SCC}, s(8)),
    ("s_and_saveexec_b64 s[2:3], vcc", s(2, 3) | EXEC | {SCC}, VCC | EXEC),
    ("s_andn2_b64 exec, exec, s[6:7]", EXEC | {SCC}, EXEC | s(6, 7)),
    ("s_movrels_b32 s0, s100", s(0), s(100, 101) | {M0}),
    ("s_cbranch_scc1 36", set(), {SCC}),
    ("s_cbranch_execz 4", set(), EXEC),
    ("s_cbranch_vccnz 4", set(), VCC),
    ("s_load_dwordx4 s[0:3], s[0:1], 0x0", s(0, 1, 2, 3), s(0, 1)),
    ("s_store_dword s2, s[0:1], 0x0", set(), s(0, 1, 2)),
    ("s_atomic_add s2, s[0:1], 0x0 glc", s(2), s(0, 1, 2)),
    ("global_load_dwordx2 v[4:5], v1, s[2:3] offset:512", v(4, 5), v(1) | s(2, 3) | EXEC),
    ("global_store_dword v[0:1], v5, off", set(), v(0, 1, 5) | EXEC),
    ("global_atomic_add v0, v[0:1], v2, off sc0", v(0), v(0, 1, 2) | EXEC),
    ("global_atomic_add v[0:1], v2, off", set(), v(0, 1, 2) | EXEC),
    ("global_load_short_d16_hi v3, v[0:1], off", v(3), v(0, 1, 3) | EXEC),
    ("scratch_load_dword v0, off, s4", v(0), s(4) | EXEC),
    ("buffer_load_dword v1, v2, s[0:3], 0 offen", v(1), v(2) | s(0, 1, 2, 3) | EXEC),
    ("buffer_store_dwordx4 v[0:3], v4, s[8:11], s5 offen", set(), v(0, 1, 2, 3, 4) | s(8, 9, 10, 11, 5) | EXEC),
    ("buffer_load_dword off, s[0:3], 0 lds", set(), s(0, 1, 2, 3) | {M0} | EXEC),
    ("buffer_atomic_add v1, v2, s[0:3], 0 offen sc0", v(1), v(1, 2) | s(0, 1, 2, 3) | EXEC),
    ("ds_read_b32 v0, v1 offset:4", v(0), v(1) | EXEC),
    ("ds_read2_b32 v[4:5], v2 offset1:32", v(4, 5), v(2) | EXEC),
    ("ds_write2_b32 v1, v2, v3 offset1:4", set(), v(1, 2, 3) | EXEC),
    ("ds_add_rtn_u32 v0, v1, v2", v(0), v(1, 2) | EXEC),
    ("ds_add_u32 v1, v2", set(), v(1, 2) | EXEC),
    ("ds_bpermute_b32 v0, v1, v2", v(0), v(1, 2) | EXEC),
    ("ds_read_addtid_b32 v0", v(0), {M0} | EXEC),
    ("s_waitcnt vmcnt(0) lgkmcnt(0)", set(), set()),
    ("s_sendmsg sendmsg(MSG_INTERRUPT)", set(), {M0}),
]


@pytest.mark.parametrize("text,defs,uses", CASES, ids=[c[0].split()[0] + f"#{i}" for i, c in enumerate(CASES)])
def test_def_use(text, defs, uses):
    info = reg_info(parse_instruction(text))
    assert set(info.defs) == set(defs)
    assert set(info.uses) == set(uses)


def test_families_and_aliases():
    assert reg_info(parse_instruction("v_mfma_f32_32x32x8f16 a[0:15], v[0:1], v[2:3], a[0:15]")).base \
        == "v_mfma_f32_32x32x8_f16"
    assert reg_info(parse_instruction("v_cmp_eq_u32_e64 s[0:1], 0, v0")).family == "vopc"
    assert reg_info(parse_instruction("s_load_dword s0, s[2:3], 0x0")).family == "smem"
    assert reg_info(parse_instruction("flat_load_dword v0, v[0:1]")).family == "flat"


@pytest.mark.parametrize("text", ["v_frobnicate_b32 v0, v1", "v_movreld_b32 v0, v1", "image_load v0, v1, s[0:7]"])
def test_unknown_mnemonic_is_named_error(text):
    with pytest.raises(UnsupportedInstruction):
        reg_info(parse_instruction(text))


def test_gpr_idx_window_widens_vgprs():
    from asmevo.isa.regs import def_use_all
    ins = [parse_instruction(t) for t in
           ("s_set_gpr_idx_on s2, gpr_idx(SRC0)", "v_mov_b32_e32 v0, v10", "s_set_gpr_idx_off", "v_mov_b32_e32 v1, v10")]
    infos = def_use_all(ins)
    assert ("v", 200) in infos[1].uses and M0 in infos[1].uses
    assert ("v", 200) not in infos[3].uses
