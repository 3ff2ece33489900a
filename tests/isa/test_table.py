"""The instruction table against LLVM: which mnemonics exist, the encoding format each decodes from,
llvm-mca's latency / throughput / memory flags for every instruction, and MFMA pass counts."""
from __future__ import annotations

import pytest

from asmevo.errors import UnsupportedInstruction
from asmevo.isa.table import instr_info, mnemonics
from asmevo.toolchain import find_toolchain

from llvm_oracle import decoded as decodable
from llvm_oracle import examples, mca_info

# The encoding formats (CDNA3 ISA "Microcode Formats") each family is encoded in.
FAMILY_FORMATS = {
    "salu": {"sop2", "sopk", "sop1", "sopc"}, "sopp": {"sopp"}, "smem": {"smem"},
    "valu": {"vop2", "vop1", "vop3", "vop3p"}, "vopc": {"vopc", "vop3"}, "mfma": {"vop3p"},
    "flat": {"flat", "scratch", "global"}, "mubuf": {"mubuf", "mtbuf"}, "ds": {"ds"},
}
# llvm-mca 19 aborts (assertion / out of memory) on every non-atomic MUBUF instruction for gfx942.
MCA_CRASHES = lambda base: base.startswith("buffer_") and "atomic" not in base  # noqa: E731
# Decoded by LLVM, but none of the sweep's operand patterns for them re-assembles (the assembler is
# stricter than the disassembler on register alignment and on GWS operands).
NOT_REASSEMBLED = {"ds_gws_sema_br"}


@pytest.fixture(scope="module")
def decoded():
    try:
        return examples("gfx942")
    except Exception as exc:  # no libLLVM / llvm-mc
        pytest.skip(f"LLVM 19 with libLLVM not available: {exc}")


def test_every_decodable_mnemonic_is_in_the_table_and_back(decoded):
    assert set(decodable("gfx942")) == set(mnemonics("gfx942"))
    assert set(mnemonics("gfx942")) - set(decoded) <= NOT_REASSEMBLED


def test_family_matches_the_encoding_format(decoded):
    wrong = {b: (instr_info(b).family, ex.fmt) for b, ex in decoded.items()
             if ex.fmt not in FAMILY_FORMATS[instr_info(b).family]}
    assert not wrong


def test_packed_is_the_vop3p_format(decoded):
    assert {b for b, ex in decoded.items() if ex.fmt == "vop3p"} == {b for b in decoded if instr_info(b).packed}


def _mca_rows(decoded):
    bases = sorted(b for b in decoded if not MCA_CRASHES(b))
    return bases, mca_info([decoded[b].text for b in bases])


@pytest.fixture(scope="module")
def mca(decoded):
    if "llvm-mca" not in find_toolchain().paths:
        pytest.skip("llvm-mca not installed")
    return dict(zip(*_mca_rows(decoded)))


def test_alu_latency_and_throughput_match_llvm_mca(mca):
    """LLVM's gfx940 model in issue slots; memory and control instructions have the cycle model's
    own costs (LLVM's are heuristics there: VMEM 80, SMEM/LDS 5, branch 8, barrier 500)."""
    wrong = {}
    for base, info in mca.items():
        t = instr_info(base)
        if t.family in ("valu", "vopc", "mfma") and (t.latency, t.throughput) != (info.latency, info.rthroughput):
            wrong[base] = ((t.latency, t.throughput), (info.latency, info.rthroughput))
    assert not wrong


def test_memory_direction_matches_llvm_mca(mca):
    """Loads may load and not store, stores the reverse, atomics both (LDS-DMA loads too: they
    store to LDS); non-memory ALU neither. GWS operations are synchronisation, which LLVM models
    as memory side effects: not checked."""
    expect = {"load": (True, False), "store": (False, True), "atomic": (True, True), "": (False, False)}
    wrong = {}
    for base, info in mca.items():
        t = instr_info(base)
        want = (True, True) if t.lds_dma else expect.get(t.memory)
        if want and t.family != "sopp" and not base.startswith("ds_gws_") and \
                (info.may_load, info.may_store) != want:
            wrong[base] = (t.memory, info.may_load, info.may_store)
    assert not wrong


def test_mfma_passes_are_llvm_mca_throughput(mca):
    mfmas = {b: i for b, i in mca.items() if instr_info(b).mfma is not None}
    assert len(mfmas) == 46
    assert {b: instr_info(b).mfma.passes for b in mfmas} == {b: int(i.rthroughput) for b, i in mfmas.items()}
    # v_mfma_f64_16x16x4_f64 is 8 passes (the disagreement the architecture review measured).
    assert instr_info("v_mfma_f64_16x16x4f64").mfma.passes == 8


def test_counters_follow_the_family():
    assert instr_info("global_load_dword").counters == (("vmcnt", True),)
    assert instr_info("flat_store_dword").counters == (("vmcnt", True), ("lgkmcnt", False))
    assert instr_info("ds_read_b32").counters == (("lgkmcnt", True),)
    assert instr_info("s_load_dwordx4").counters == (("lgkmcnt", False),)
    assert instr_info("v_add_f32_e32").counters == ()


@pytest.mark.parametrize("mnemonic,nbytes", [
    ("global_load_dwordx4", 16), ("buffer_load_ushort", 2), ("ds_read2_b64", 16), ("ds_write_b96", 12),
    ("s_load_dwordx8", 32), ("global_atomic_add_f64", 8), ("buffer_load_format_d16_xyzw", 8),
    ("ds_read_u8_d16_hi", 1), ("global_load_lds_sshort", 2), ("flat_atomic_cmpswap_x2", 8)])
def test_access_bytes(mnemonic, nbytes):
    assert instr_info(mnemonic).access_bytes == nbytes


def test_unknown_mnemonic_is_a_named_error():
    with pytest.raises(UnsupportedInstruction, match="v_frobnicate"):
        instr_info("v_frobnicate_f32")


def test_implicit_vcc_depends_on_the_encoding():
    from asmevo.isa.table import VCC, implicit_registers
    vcc = frozenset(VCC)
    assert implicit_registers("v_cmp_gt_i32_e32")[0] >= vcc
    assert not implicit_registers("v_cmp_gt_i32_e64")[0] & vcc
    assert implicit_registers("v_addc_co_u32_e32") == (vcc | implicit_registers("v_addc_co_u32_e64")[0],
                                                       vcc | implicit_registers("v_addc_co_u32_e64")[1])
    assert implicit_registers("v_cndmask_b32_e32")[1] >= vcc and not implicit_registers("v_cndmask_b32_e32")[0] & vcc
    assert implicit_registers("s_cbranch_vccz")[1] >= vcc
