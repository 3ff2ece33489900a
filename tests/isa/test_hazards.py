"""Every hazard rule: violated without wait states, satisfied with enough s_nop; corpus checks."""
import pytest

from asmevo.isa.hazards import check_hazards, is_xdl, mfma_passes
from asmevo.isa.cfg import build_cfg
from isatools import program, remove

MFMA_F16_32 = "v_mfma_f32_32x32x8f16 v[0:15], v[32:33], v[34:35], v[0:15]"

# rule, producer lines, consumer line, wait states needed
RULES = [
    ("valu-sgpr-vmem", "v_readfirstlane_b32 s4, v0", "global_load_dword v1, v2, s[4:5]", 5),
    ("valu-sgpr-valu", "v_readfirstlane_b32 s4, v0", "v_add_u32_e32 v1, s4, v1", 2),
    ("valu-exec-rwlane", "v_cmpx_gt_i32_e32 vcc, 0, v0", "v_readfirstlane_b32 s0, v1", 4),
    ("valu-vgpr-readlane", "v_mov_b32_e32 v1, 0", "v_readlane_b32 s0, v1, 3", 1),
    ("trans-use", "v_exp_f32_e32 v1, v0", "v_add_f32_e32 v2, v1, v1", 1),
    ("dst-sel-forward", "v_add_f32_sdwa v1, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:DWORD "
                        "src1_sel:DWORD", "v_add_f32_e32 v4, v1, v1", 1),
    ("store-data-overwrite", "global_store_dwordx4 v[0:1], v[2:5], off", "v_mov_b32_e32 v3, 0", 2),
    ("dpp-vgpr", "v_mov_b32_e32 v1, 0", "v_mov_b32_dpp v2, v1 row_shr:1 row_mask:0xf bank_mask:0xf", 2),
    ("dpp-exec", "v_cmpx_gt_i32_e32 vcc, 0, v0", "v_mov_b32_dpp v2, v1 row_shr:1 row_mask:0xf bank_mask:0xf", 5),
    ("div-fmas-vcc", "v_div_scale_f32 v0, vcc, v1, v1, v2", "v_div_fmas_f32 v3, v4, v5, v6", 4),
    ("rwlane-lane-select", "v_readfirstlane_b32 s2, v0", "v_readlane_b32 s0, v1, s2", 4),
    ("setreg-getreg", "s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s0", "s_getreg_b32 s1, hwreg(HW_REG_MODE, 0, 4)", 2),
    ("setreg-setreg", "s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s0", "s_setreg_b32 hwreg(HW_REG_MODE, 4, 4), s1", 2),
    ("setreg-vskip", "s_setreg_b32 hwreg(HW_REG_MODE, 28, 1), s0", "v_mov_b32_e32 v0, 0", 2),
    ("setvskip-getreg", "s_setvskip s0, 0", "s_getreg_b32 s1, hwreg(HW_REG_MODE, 0, 32)", 2),
    ("salu-m0", "s_mov_b32 m0, s0", "s_movrels_b32 s1, s2", 1),
    ("salu-m0", "s_mov_b32 m0, s0", "buffer_load_dword off, s[4:7], 0 lds", 1),
    ("valu-vccz-execz", "v_cmp_eq_u32_e32 vcc, 0, v0", "v_mov_b32_e32 v1, src_vccz", 5),
    ("valu-exec-mfma", "v_cmpx_gt_i32_e32 vcc, 0, v0", "v_mfma_f32_4x4x4f16 a[0:3], v[2:3], v[4:5], a[0:3]", 4),
    ("valu-vgpr-mfma", "v_mov_b32_e32 v2, 0", "v_mfma_f32_4x4x4f16 a[0:3], v[2:3], v[4:5], a[0:3]", 2),
    ("mfma-srcc", MFMA_F16_32, "v_mfma_f32_32x32x8f16 v[16:31], v[32:33], v[34:35], v[8:23]", 9),
    ("mfma-srcc", "v_mfma_f32_4x4x4f16 v[0:3], v[32:33], v[34:35], v[0:3]",
     "v_mfma_f32_4x4x4f16 v[0:3], v[36:37], v[38:39], v[0:3]", 2),
    ("mfma-srcab", "v_mfma_f32_32x32x2f32 v[0:15], v16, v17, v[0:15]",
     "v_mfma_f32_32x32x2f32 v[20:35], v0, v17, v[20:35]", 18),
    ("mfma-srcab", MFMA_F16_32, "v_mfma_f32_32x32x8f16 v[40:55], v[0:1], v[34:35], v[40:55]", 11),
    ("mfma-result-read", "v_mfma_f32_16x16x16f16 v[0:3], v[4:5], v[6:7], v[0:3]", "v_add_f32_e32 v8, v0, v0", 7),
    ("mfma-result-read", "v_mfma_f32_32x32x8f16 a[0:15], v[32:33], v[34:35], a[0:15]",
     "v_accvgpr_read_b32 v0, a3", 11),
    ("mfma-result-read", "v_mfma_f64_16x16x4f64 v[0:7], v[8:9], v[10:11], v[0:7]",
     "global_store_dwordx2 v[20:21], v[0:1], off", 18),
    ("mfma-result-write", "v_mfma_f32_4x4x4f16 v[0:3], v[4:5], v[6:7], v[0:3]", "v_mov_b32_e32 v1, 0", 5),
    ("mfma-srcc-overwrite", "v_mfma_f32_32x32x8f16 v[0:15], v[32:33], v[34:35], v[16:31]",
     "v_mov_b32_e32 v20, 0", 7),
    ("dgemm-fma64", "v_mfma_f64_4x4x4f64 v[0:1], v[2:3], v[4:5], v[0:1]",
     "v_fma_f64 v[10:11], v[12:13], v[14:15], v[16:17]", 2),
    ("dot-read", "v_dot2_f32_f16 v0, v1, v2, v0", "v_add_f32_e32 v3, v0, v0", 3),
    ("dot-write", "v_dot2_f32_f16 v0, v1, v2, v0", "v_mov_b32_e32 v0, 0", 3),
    ("soft-clause", "global_load_dword v0, v[4:5], off", "global_load_dword v4, v[6:7], off", 1),
]


def nops(n: int) -> str:
    out = []
    while n > 0:
        out.append(f"s_nop {min(n, 16) - 1}")
        n -= 16
    return "\n".join(out)


@pytest.mark.parametrize("rule,producer,consumer,needed", RULES, ids=[f"{r[0]}-{i}" for i, r in enumerate(RULES)])
def test_rule_violated(rule, producer, consumer, needed):
    ins, labels = program(f"{producer}\n{consumer}\ns_endpgm")
    found = [v for v in check_hazards(ins, labels) if v.rule == rule]
    assert found and found[0].needed == needed and found[0].found == 0
    assert rule in found[0].message
    if needed > 1:
        ins, labels = program(f"{producer}\n{nops(needed - 1)}\n{consumer}\ns_endpgm")
        short = [v for v in check_hazards(ins, labels) if v.rule == rule]
        assert short and short[0].found == needed - 1


@pytest.mark.parametrize("rule,producer,consumer,needed", RULES, ids=[f"{r[0]}-{i}" for i, r in enumerate(RULES)])
def test_rule_satisfied_by_nops(rule, producer, consumer, needed):
    ins, labels = program(f"{producer}\n{nops(needed)}\n{consumer}\ns_endpgm")
    assert check_hazards(ins, labels) == []


def test_independent_instructions_count_as_wait_states():
    ins, labels = program("v_readfirstlane_b32 s4, v0\n" + "s_mov_b32 s9, 0\n" * 5 +
                          "global_load_dword v1, v2, s[4:5]\ns_endpgm")
    assert check_hazards(ins, labels) == []


def test_same_accumulator_back_to_back_xdl_is_fine():
    ins, labels = program(f"{MFMA_F16_32}\n{MFMA_F16_32}\ns_endpgm")
    assert check_hazards(ins, labels) == []


def test_join_takes_worst_predecessor():
    ins, labels = program("""
        v_readfirstlane_b32 s4, v0
        s_cbranch_scc1 skip
        s_nop 7
        skip:
        global_load_dword v1, v2, s[4:5]
        s_endpgm
    """)
    v = check_hazards(ins, labels)
    assert [x.rule for x in v] == ["valu-sgpr-vmem"] and v[0].found == 1


def test_loop_back_edge_carries_hazard():
    ins, labels = program("""
        s_mov_b32 s0, 0
        top:
        v_add_f32_e32 v8, v0, v0
        v_mfma_f32_16x16x16f16 v[0:3], v[4:5], v[6:7], v[0:3]
        s_add_u32 s0, s0, 1
        s_cmp_lt_u32 s0, 4
        s_cbranch_scc1 top
        s_endpgm
    """)
    v = check_hazards(ins, labels)
    assert any(x.rule == "mfma-result-read" and x.index == 1 for x in v)


def test_soft_clause_only_with_xnack():
    ins, labels = program("global_load_dword v0, v[4:5], off\nglobal_load_dword v4, v[6:7], off\ns_endpgm")
    assert check_hazards(ins, labels, xnack=False) == []


def test_mfma_classification():
    assert mfma_passes("v_mfma_f32_32x32x8_f16") == 8 and is_xdl("v_mfma_f32_32x32x8_f16")
    assert mfma_passes("v_mfma_f32_32x32x2_f32") == 16 and not is_xdl("v_mfma_f32_32x32x2_f32")
    assert mfma_passes("v_mfma_f32_16x16x16_f16") == 4
    assert mfma_passes("v_mfma_f32_16x16x4_4b_f16") == 8
    assert mfma_passes("v_mfma_f32_4x4x4_16b_f16") == 2
    assert mfma_passes("v_mfma_f32_32x32x4_xf32") == 8 and is_xdl("v_mfma_f32_32x32x4_xf32")
    # 8 passes: llvm-mca-19 -mcpu=gfx942 gives RThroughput 8.00 (this module used to say 16).
    assert mfma_passes("v_mfma_f64_16x16x4_f64") == 8 and not is_xdl("v_mfma_f64_16x16x4_f64")


def test_corpus_has_no_false_positives(corpus_kernels):
    assert len(corpus_kernels) >= 10
    for name, ins in corpus_kernels.items():
        assert check_hazards(ins) == [], name


def test_corpus_every_compiler_nop_is_needed(corpus_kernels):
    removed = 0
    for name, ins in corpus_kernels.items():
        cfg = build_cfg(ins)
        live = set(cfg.reachable())
        for i, x in enumerate(ins):
            if x.mnemonic == "s_nop" and cfg.block_of[i] in live:
                assert check_hazards(remove(ins, i)), f"{name}: removing #{i} {x.text()} went unnoticed"
                removed += 1
    assert removed >= 20


def test_checking_some_consumers_finds_exactly_their_hazards(corpus_kernels):
    """A check restricted to a set of consumers (the agent's windowed re-check) reports exactly the full
    check's findings at those consumers, here with every compiler nop removed in turn."""
    compared = 0
    for name, ins in corpus_kernels.items():
        for i, x in enumerate(ins):
            if x.mnemonic != "s_nop":
                continue
            edited = remove(ins, i)
            full = check_hazards(edited)
            some = set(range(max(0, i - 3), min(len(edited), i + 25)))
            assert check_hazards(edited, consumers=sorted(some)) == [v for v in full if v.index in some], name
            compared += bool(full)
    assert compared >= 20
