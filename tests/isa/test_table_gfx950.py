"""The gfx950 instruction table: gfx942's mnemonics without the xf32 MFMAs, plus GFX950_ADDED, each pinned
against LLVM's gfx950 assembler (LLVM >= 21; skipped, with the reason, when none is installed)."""
import pytest

from asmevo.errors import ToolchainError, UnsupportedInstruction
from asmevo.isa.mnemonics import GFX950_ADDED, GFX950_REMOVED
from asmevo.isa.table import instr_info, mnemonics

LINES = {  # one accepted line per added mnemonic
    "v_mfma_f32_16x16x32_f16": "v_mfma_f32_16x16x32_f16 v[0:3], v[4:7], v[8:11], v[0:3]",
    "v_mfma_f32_32x32x16_f16": "v_mfma_f32_32x32x16_f16 v[0:15], v[16:19], v[20:23], v[0:15]",
    "v_mfma_f32_16x16x32_bf16": "v_mfma_f32_16x16x32_bf16 v[0:3], v[4:7], v[8:11], v[0:3]",
    "v_mfma_f32_32x32x16_bf16": "v_mfma_f32_32x32x16_bf16 v[0:15], v[16:19], v[20:23], v[0:15]",
    "v_mfma_i32_16x16x64_i8": "v_mfma_i32_16x16x64_i8 v[0:3], v[4:7], v[8:11], v[0:3]",
    "v_mfma_i32_32x32x32_i8": "v_mfma_i32_32x32x32_i8 v[0:15], v[16:19], v[20:23], v[0:15]",
    "v_mfma_f32_16x16x128_f8f6f4": "v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3]",
    "v_mfma_f32_32x32x64_f8f6f4": "v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[0:15]",
    "v_mfma_scale_f32_16x16x128_f8f6f4": "v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21",
    "v_mfma_scale_f32_32x32x64_f8f6f4":
        "v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[0:15], v32, v33",
    "v_permlane16_swap_b32": "v_permlane16_swap_b32 v1, v2",
    "v_permlane32_swap_b32": "v_permlane32_swap_b32 v1, v2",
    "v_cvt_pk_bf16_f32": "v_cvt_pk_bf16_f32 v0, v1, v2",
    "v_cvt_pk_f16_f32": "v_cvt_pk_f16_f32 v0, v1, v2",
    "v_cvt_scalef32_pk_fp4_f32": "v_cvt_scalef32_pk_fp4_f32 v1, v2, v3, v4",
    "ds_read_b64_tr_b4": "ds_read_b64_tr_b4 v[0:1], v1",
    "ds_read_b64_tr_b8": "ds_read_b64_tr_b8 v[0:1], v1",
    "ds_read_b64_tr_b16": "ds_read_b64_tr_b16 v[0:1], v1",
    "ds_read_b96_tr_b6": "ds_read_b96_tr_b6 v[0:2], v1",
    "global_load_lds_dwordx3": "global_load_lds_dwordx3 v[2:3], off",
    "global_load_lds_dwordx4": "global_load_lds_dwordx4 v[2:3], off",
    "buffer_atomic_pk_add_bf16": "buffer_atomic_pk_add_bf16 v1, v2, s[4:7], 0 offen",
    "v_bitop3_b32": "v_bitop3_b32 v0, v1, s2, v3 bitop3:0x6c",
}


def test_table_is_gfx942s_without_xf32_plus_the_cdna4_additions():
    assert mnemonics("gfx950") == (mnemonics("gfx942") - GFX950_REMOVED) | GFX950_ADDED
    assert set(LINES) == GFX950_ADDED
    with pytest.raises(UnsupportedInstruction, match="not a gfx950 instruction"):
        instr_info("v_mfma_f32_16x16x8_xf32", "gfx950")
    with pytest.raises(UnsupportedInstruction, match="not a gfx942 instruction"):
        instr_info("v_permlane16_swap_b32")
    assert instr_info("v_mfma_f64_16x16x4_f64", "gfx950").mfma.passes == 16      # SIDPGFX950FullSpeedModel
    assert instr_info("v_mfma_f64_16x16x4_f64").mfma.passes == 8


def test_llvm_accepts_the_additions_for_gfx950_and_rejects_xf32():
    from asmevo.isa.assemble import encode_lines
    from asmevo.target import TargetId
    lines = list(LINES.values()) + ["v_mfma_f32_16x16x8_xf32 v[0:3], v[4:5], v[6:7], v[0:3]"]
    try:
        encodings, errors = encode_lines(lines, TargetId("gfx950", None, None))
    except ToolchainError as exc:
        pytest.skip(f"no LLVM for gfx950: {exc}")
    assert all(encodings[:-1]), {lines[i]: e for i, e in errors.items()}
    assert "not supported on this GPU" in errors[len(lines) - 1]
