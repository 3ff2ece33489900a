"""gfx950 (CDNA4) wait states: LLVM GCNHazardRecognizer's IsGFX950 / hasGFX950Insts paths and the
SIDPGFX950FullSpeedModel pass counts, each case hand-derived from those (gfx942's numbers beside)."""
import pytest

from asmevo.isa.hazards import check_hazards, instruction_passes
from asmevo.isa.instruction import parse_instruction
from isatools import program

XDL8 = "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]"      # 8 passes on both
XDL2 = "v_mfma_f32_4x4x4_16b_f16 v[0:3], v[16:17], v[18:19], v[0:3]"       # 2 passes
DGEMM16 = "v_mfma_f64_16x16x4_f64 v[0:7], v[16:17], v[18:19], v[0:7]"     # 8 passes gfx942, 16 gfx950
SGEMM = "v_mfma_f32_32x32x2_f32 v[32:47], v20, v21, v[32:47]"             # non-XDL consumer


def needed(text: str, rule: str, processor: str) -> int:
    ins, labels = program(text + "\ns_endpgm")
    found = [v.needed for v in check_hazards(ins, labels, processor=processor) if v.rule == rule]
    return found[0] if found else 0


@pytest.mark.parametrize("producer,consumer,rule,gfx942,gfx950", [
    (XDL8, "v_add_f32 v20, v0, v1", "mfma-result-read", 11, 12),              # 8 + 3 (+1)
    (XDL2, "v_add_f32 v20, v0, v1", "mfma-result-read", 5, 5),                # 2 passes: no +1
    (XDL8, "global_store_dword v[40:41], v0, off", "mfma-result-read", 11, 12),
    (XDL8, "v_mov_b32 v3, 0", "mfma-result-write", 11, 12),
    (XDL8, "v_mfma_f32_32x32x8_f16 v[32:47], v[0:1], v[18:19], v[32:47]", "mfma-srcab", 11, 12),
    (XDL8, "v_mfma_f32_32x32x8_f16 v[32:47], v[16:17], v[18:19], v[2:17]", "mfma-srcc", 9, 10),   # XDL -> XDL: +1
    (XDL2, "v_mfma_f32_4x4x4_16b_f16 v[8:11], v[16:17], v[18:19], v[1:4]", "mfma-srcc", 3, 4),     # 2 passes too
    (XDL2, "v_mfma_f32_32x32x2_f32 v[32:47], v20, v21, v[1:16]", "mfma-srcc", 3, 3),               # XDL -> SGEMM
    (DGEMM16, "v_add_f32 v20, v0, v1", "mfma-result-read", 11, 19),
    (DGEMM16, "global_store_dword v[40:41], v0, off", "mfma-result-read", 18, 18),
    (DGEMM16, "v_mfma_f64_16x16x4_f64 v[8:15], v[0:1], v[18:19], v[8:15]", "mfma-srcab", 11, 19),
    (DGEMM16, "v_mfma_f64_16x16x4_f64 v[8:15], v[16:17], v[18:19], v[2:9]", "mfma-srcc", 9, 17),
])
def test_mfma_wait_states_per_processor(producer, consumer, rule, gfx942, gfx950):
    assert needed(f"{producer}\n{consumer}", rule, "gfx942") == gfx942
    assert needed(f"{producer}\n{consumer}", rule, "gfx950") == gfx950


def test_f8f6f4_passes_follow_the_formats():
    """SISchedule.td: 8 passes (16x16x128) when A or B is fp8/bf8 (cbsz/blgp <= 1), else 4."""
    fp4 = parse_instruction("v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:7], v[8:11], v[0:3] cbsz:4 blgp:4")
    mixed = parse_instruction("v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[8:11], v[0:3] cbsz:0 blgp:4")
    big = parse_instruction("v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:21], v[24:29], v[0:15] cbsz:2 blgp:3")
    assert [instruction_passes(i, "gfx950") for i in (fp4, mixed, big)] == [4, 8, 8]
    text = "v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:7], v[8:11], v[0:3] cbsz:4 blgp:4\nv_add_f32 v20, v0, v1"
    assert needed(text, "mfma-result-read", "gfx950") == 4 + 3 + 1


def test_permlane_swap_waits_for_valu_and_vcmpx():
    """checkPermlaneHazards: VALU writes a swapped VGPR: 2; v_cmpx writes EXEC: 4."""
    assert needed("v_mov_b32 v2, 0\nv_permlane16_swap_b32 v1, v2", "valu-vgpr-permlane-swap", "gfx950") == 2
    assert needed("v_mov_b32 v1, 0\nv_permlane32_swap_b32 v1, v2", "valu-vgpr-permlane-swap", "gfx950") == 2
    assert needed("v_mov_b32 v1, 0\ns_nop 1\nv_permlane16_swap_b32 v1, v2", "valu-vgpr-permlane-swap", "gfx950") == 0
    assert needed("v_cmpx_eq_u32 s[4:5], v3, v4\nv_permlane16_swap_b32 v1, v2", "vcmpx-exec-permlane-swap",
                  "gfx950") == 4


def test_gfx950_dst_sel_forwarding_covers_byte_selects_and_overwrites():
    """hasCvtScaleForwardingHazard: a byte-selecting fp8 conversion (op_sel[2]) forwards to any operand,
    a later overwrite included; gfx942's rule (op_sel[3] only, reads only) is unchanged."""
    sr = "v_cvt_sr_fp8_f32 v1, v2, v3 op_sel:[0,0,1,0]"
    assert needed(f"{sr}\nv_add_f32 v5, v1, v6", "dst-sel-forward", "gfx950") == 1
    assert needed(f"{sr}\nv_add_f32 v5, v1, v6", "dst-sel-forward", "gfx942") == 0
    hi = "v_cvt_sr_fp8_f32 v1, v2, v3 op_sel:[0,0,0,1]"
    assert needed(f"{hi}\nv_mov_b32 v1, 0", "dst-sel-forward", "gfx950") == 1
    assert needed(f"{hi}\nv_mov_b32 v1, 0", "dst-sel-forward", "gfx942") == 0
    assert needed(f"{hi}\nv_add_f32 v5, v1, v6", "dst-sel-forward", "gfx942") == 1


def test_static_checks_of_a_gfx950_code_object_use_its_rules(tmp_path):
    """`asmevo.static_checks` reads a gfx950 object with the gfx950 table and hazard rules: the permlane
    swap right after the VALU write is a finding, the global load's result read without s_waitcnt too."""
    from asmevo.static_checks import check_code_object
    from cotools import gfx950_code_object
    body = """  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_mov_b32 v2, 0
  v_permlane16_swap_b32 v1, v2
  s_waitcnt lgkmcnt(0)
  global_load_dword v3, v2, s[4:5]
  v_add_u32 v4, v3, v3
  s_endpgm"""
    found = {(f.check, f.rule) for f in check_code_object(gfx950_code_object(tmp_path / "k.co", body))}
    assert found == {("hazard", "valu-vgpr-permlane-swap"), ("waitcnt", "vmcnt")}
