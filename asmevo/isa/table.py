"""The instruction table: one record of facts per base mnemonic, the only place a mnemonic's spelling
is turned into facts.

Every consumer (register def/use, hazards, waitcnt analysis, the emulator's dispatch, the cycle
model, agent operators, static checks) asks `instr_info(mnemonic)` instead of looking at the
spelling itself. The records are derived once, per processor, from the generated mnemonic lists in
`asmevo.isa.mnemonics` and the rules below, which follow AMD's CDNA3 ISA guide ("Microcode Formats",
"Data Share Operations", "Vector Memory Operations", "Manually Inserted Wait States") and LLVM's
gfx940 scheduling model (`SISchedule.td`, `SIDPGFX940FullSpeedModel`). `tests/isa/test_table.py`
pins them against LLVM itself: the encoding format each mnemonic decodes from, llvm-mca's
latency, reciprocal throughput and may-load/may-store flags, and the MFMA pass counts.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..errors import UnsupportedInstruction
from .mnemonics import GFX950_ADDED, GFX950_REMOVED, MFMA_ALIASES, MNEMONICS

FAMILIES = ("salu", "sopp", "smem", "valu", "vopc", "mfma", "flat", "mubuf", "ds")
_ENC_SUFFIX = re.compile(r"_(e32|e64|sdwa|dpp)$")

SCC = ("scc", 0)
VCC = (("s", 106), ("s", 107))
M0 = (("s", 124),)
EXEC = (("s", 126), ("s", 127))


@dataclass(frozen=True, slots=True)
class MfmaShape:
    """An MFMA / SMFMAC: D[m x n] (+)= A[m x k] B[k x n] per block, `blocks` blocks; `passes` 4-cycle
    passes of the matrix core (LLVM gfx940 RThroughput, = AMD's Matrix Instruction Calculator cycles
    / 4); register counts per lane; `sparse`: SMFMAC (A holds k/2 values per row, an index
    operand says which)."""

    m: int
    n: int
    k: int
    blocks: int
    passes: int
    a_regs: int
    b_regs: int
    cd_regs: int
    in_type: str
    b_type: str
    out_type: str
    sparse: bool = False

    @property
    def a_elems(self) -> int:
        """Elements of A (= of B when m == n) per lane."""
        return self.m * self.k * self.blocks // 64

    @property
    def dgemm(self) -> bool:
        return self.out_type == "f64"

    @property
    def xdl(self) -> bool:
        """gfx940's XDL pipeline: every MFMA but those with f32 or f64 inputs (LLVM isXDL)."""
        return self.in_type not in ("f32", "f64")


@dataclass(frozen=True, slots=True)
class InstrInfo:
    """Facts of one base mnemonic (encoding suffix stripped, gfx90a MFMA spellings mapped).

    `family`: one of FAMILIES. `segment`: flat/global/scratch (FLAT), buffer/tbuffer (MUBUF/MTBUF),
    buffer/scratch for scalar memory through a descriptor or scratch ('' for a 64-bit address).
    `memory`: '' or load/store/atomic/cache (cache controls and barriers of the memory system).
    `access_bytes`: bytes one lane moves (vector memory, LDS) or the wave moves (scalar memory).
    `counters`: (waitcnt counter, completes in issue order) for each counter the instruction
    increments. `n_dst`/`dst_read`: leading destination operands and whether they are also read
    (atomics return a value only with sc0/glc: `atomic_returns`). `implicit_defs`/`implicit_uses`:
    registers not spelled in the operands. `latency`/`throughput`: issue slots (4 cycles each) until
    a result can be read and the unit stays busy (LLVM's gfx940 model; memory is the cycle model's
    business). `trans`: LLVM's TRANS pipeline (the trans-use hazard). `packed`: VOP3P-encoded
    (op_sel selects source halves, never the destination's). `mfma`: the matrix shape."""

    base: str
    family: str
    segment: str = ""
    memory: str = ""
    access_bytes: int = 0
    counters: tuple[tuple[str, bool], ...] = ()
    n_dst: int = 0
    dst_read: bool = False
    implicit_defs: frozenset = frozenset()
    implicit_uses: frozenset = frozenset()
    latency: int = 1
    throughput: int = 1
    trans: bool = False
    packed: bool = False
    mfma: MfmaShape | None = None

    @property
    def vector(self) -> bool:
        """Runs per lane under EXEC."""
        return self.family in ("valu", "vopc", "mfma", "flat", "mubuf", "ds")

    @property
    def vmem(self) -> bool:
        return self.family in ("flat", "mubuf")

    @property
    def is_load(self) -> bool:
        return self.memory == "load"

    @property
    def is_store(self) -> bool:
        return self.memory == "store"

    @property
    def lds_dma(self) -> bool:
        """A global/scratch load that writes LDS instead of VGPRs (`buffer_load ... lds` is
        decided per instruction by its modifier: `asmevo.isa.regs.is_lds_dma`)."""
        return "_load_lds_" in self.base


@functools.lru_cache(maxsize=None)
def split_mnemonic(mnemonic: str) -> tuple[str, str]:
    """(base name, encoding suffix) of a mnemonic; gfx90a MFMA spellings map to gfx940 names
    (memoised: the analyses ask for the same few hundred mnemonics millions of times)."""
    m = _ENC_SUFFIX.search(mnemonic)
    base, enc = (mnemonic[:m.start()], m.group(1)) if m else (mnemonic, "")
    return MFMA_ALIASES.get(base, base), enc


@functools.lru_cache(maxsize=None)
def instr_info(mnemonic: str, processor: str = "gfx942") -> InstrInfo:
    """The table record of `mnemonic` (any encoding suffix); UnsupportedInstruction when the
    processor has no such instruction (memoised; failures are not cached and raise again)."""
    base = split_mnemonic(mnemonic)[0]
    info = _table(processor).get(base)
    if info is None:
        raise UnsupportedInstruction(base, detail=f"not a {processor} instruction known to the instruction table")
    return info


_CARRY_OUT = frozenset({"v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32"})
_CARRY_IN_OUT = frozenset({"v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32"})


def implicit_registers(mnemonic: str, processor: str = "gfx942") -> tuple[frozenset, frozenset]:
    """(defs, uses) not spelled in the operands of `mnemonic` as written: the base's, plus VCC for the
    VOPC/VOP2 (e32) forms of compares, carry arithmetic and v_cndmask_b32, which the assembler
    accepts with VCC omitted."""
    info = instr_info(mnemonic, processor)
    defs, uses = info.implicit_defs, info.implicit_uses
    if split_mnemonic(mnemonic)[1] == "e32":
        if info.family == "vopc" or info.base in _CARRY_OUT | _CARRY_IN_OUT:
            defs = defs | frozenset(VCC)
        if info.base in _CARRY_IN_OUT or info.base == "v_cndmask_b32":
            uses = uses | frozenset(VCC)
    return defs, uses


def mnemonics(processor: str = "gfx942") -> frozenset[str]:
    return frozenset(_table(processor))


# ---- MFMA shapes (CDNA3 ISA guide "Matrix Arithmetic Instructions"; passes: LLVM gfx940 model) ----

_BITS = {"f32": 32, "xf32": 32, "f16": 16, "bf16": 16, "i8": 8, "fp8": 8, "bf8": 8, "f64": 64, "i32": 32,
         "f8f6f4": 8}
# mnemonic -> (m, n, k, blocks, passes, A type, B type, out type)
_MFMA: dict[str, tuple[int, int, int, int, int, str, str, str]] = {
    "v_mfma_f32_32x32x1_2b_f32": (32, 32, 1, 2, 16, "f32", "f32", "f32"),
    "v_mfma_f32_16x16x1_4b_f32": (16, 16, 1, 4, 8, "f32", "f32", "f32"),
    "v_mfma_f32_4x4x1_16b_f32": (4, 4, 1, 16, 2, "f32", "f32", "f32"),
    "v_mfma_f32_32x32x2_f32": (32, 32, 2, 1, 16, "f32", "f32", "f32"),
    "v_mfma_f32_16x16x4_f32": (16, 16, 4, 1, 8, "f32", "f32", "f32"),
    "v_mfma_f32_32x32x4_xf32": (32, 32, 4, 1, 8, "xf32", "xf32", "f32"),
    "v_mfma_f32_16x16x8_xf32": (16, 16, 8, 1, 4, "xf32", "xf32", "f32"),
    "v_mfma_f64_16x16x4_f64": (16, 16, 4, 1, 8, "f64", "f64", "f64"),
    "v_mfma_f64_4x4x4_4b_f64": (4, 4, 4, 4, 4, "f64", "f64", "f64"),
    "v_mfma_i32_32x32x4_2b_i8": (32, 32, 4, 2, 16, "i8", "i8", "i32"),
    "v_mfma_i32_16x16x4_4b_i8": (16, 16, 4, 4, 8, "i8", "i8", "i32"),
    "v_mfma_i32_4x4x4_16b_i8": (4, 4, 4, 16, 2, "i8", "i8", "i32"),
    "v_mfma_i32_32x32x16_i8": (32, 32, 16, 1, 8, "i8", "i8", "i32"),
    "v_mfma_i32_16x16x32_i8": (16, 16, 32, 1, 4, "i8", "i8", "i32"),
}
for _t in ("f16", "bf16"):
    _MFMA.update({
        f"v_mfma_f32_32x32x4_2b_{_t}": (32, 32, 4, 2, 16, _t, _t, "f32"),
        f"v_mfma_f32_16x16x4_4b_{_t}": (16, 16, 4, 4, 8, _t, _t, "f32"),
        f"v_mfma_f32_4x4x4_16b_{_t}": (4, 4, 4, 16, 2, _t, _t, "f32"),
        f"v_mfma_f32_32x32x8_{_t}": (32, 32, 8, 1, 8, _t, _t, "f32"),
        f"v_mfma_f32_16x16x16_{_t}": (16, 16, 16, 1, 4, _t, _t, "f32"),
        f"v_smfmac_f32_16x16x32_{_t}": (16, 16, 32, 1, 4, _t, _t, "f32"),
        f"v_smfmac_f32_32x32x16_{_t}": (32, 32, 16, 1, 8, _t, _t, "f32"),
    })
for _a in ("fp8", "bf8"):
    for _b in ("fp8", "bf8"):
        _MFMA[f"v_mfma_f32_32x32x16_{_a}_{_b}"] = (32, 32, 16, 1, 8, _a, _b, "f32")
        _MFMA[f"v_mfma_f32_16x16x32_{_a}_{_b}"] = (16, 16, 32, 1, 4, _a, _b, "f32")
        _MFMA[f"v_smfmac_f32_16x16x64_{_a}_{_b}"] = (16, 16, 64, 1, 4, _a, _b, "f32")
        _MFMA[f"v_smfmac_f32_32x32x32_{_a}_{_b}"] = (32, 32, 32, 1, 8, _a, _b, "f32")
_MFMA["v_smfmac_i32_16x16x64_i8"] = (16, 16, 64, 1, 4, "i8", "i8", "i32")
_MFMA["v_smfmac_i32_32x32x32_i8"] = (32, 32, 32, 1, 8, "i8", "i8", "i32")
# CDNA4 (gfx950) shapes. Passes: LLVM's SIDPGFX950FullSpeedModel (SISchedule.td): 16x16x32 and 16x16x64 4,
# 32x32x16 and 32x32x32 8; the f8f6f4 ones 8 / 16 when A or B is an 8-bit format (cbsz or blgp <= 1), else
# 4 / 8 (`asmevo.isa.hazards.instruction_passes` reads the operands; the table keeps the larger).
# "f8f6f4": the element format is the instruction's cbsz (A) / blgp (B) field, so register counts are
# those of the widest (fp8).
for _t in ("f16", "bf16"):
    _MFMA[f"v_mfma_f32_16x16x32_{_t}"] = (16, 16, 32, 1, 4, _t, _t, "f32")
    _MFMA[f"v_mfma_f32_32x32x16_{_t}"] = (32, 32, 16, 1, 8, _t, _t, "f32")
_MFMA["v_mfma_i32_16x16x64_i8"] = (16, 16, 64, 1, 4, "i8", "i8", "i32")
_MFMA["v_mfma_i32_32x32x32_i8"] = (32, 32, 32, 1, 8, "i8", "i8", "i32")
for _s in ("", "scale_"):
    _MFMA[f"v_mfma_{_s}f32_16x16x128_f8f6f4"] = (16, 16, 128, 1, 8, "f8f6f4", "f8f6f4", "f32")
    _MFMA[f"v_mfma_{_s}f32_32x32x64_f8f6f4"] = (32, 32, 64, 1, 16, "f8f6f4", "f8f6f4", "f32")
# gfx950 pass counts that differ from gfx942's for a shared MFMA (SIDPGFX950FullSpeedModel: the f64
# 16x16x4 is a 16-pass DGEMM, Write16PassDGEMM, where gfx942's model has 8).
_GFX950_PASSES = {"v_mfma_f64_16x16x4_f64": 16}


def _mfma_shape(base: str, processor: str = "gfx942") -> MfmaShape:
    m, n, k, blocks, passes, ta, tb, to = _MFMA[base]
    if processor == "gfx950":
        passes = _GFX950_PASSES.get(base, passes)
    sparse = base.startswith("v_smfmac_")

    def regs(rows: int, typ: str, kk: int) -> int:
        return rows * kk * blocks * _BITS[typ] // (64 * 32)

    a_k = k // 2 if sparse else k
    return MfmaShape(m, n, k, blocks, passes, regs(m, ta, a_k), regs(n, tb, k),
                     m * n * blocks * _BITS[to] // (64 * 32), ta, tb, to, sparse)


# ---- classification rules ------------------------------------------------------------------

_SOPP = frozenset({
    "s_nop", "s_endpgm", "s_endpgm_saved", "s_endpgm_ordered_ps_done", "s_branch", "s_waitcnt",
    "s_barrier", "s_setkill", "s_sethalt", "s_sleep", "s_setprio", "s_sendmsg", "s_sendmsghalt",
    "s_trap", "s_icache_inv", "s_incperflevel", "s_decperflevel", "s_ttracedata", "s_wakeup",
    "s_set_gpr_idx_off", "s_set_gpr_idx_mode", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz",
    "s_cbranch_vccnz", "s_cbranch_execz", "s_cbranch_execnz", "s_cbranch_cdbgsys",
    "s_cbranch_cdbguser", "s_cbranch_cdbgsys_or_user", "s_cbranch_cdbgsys_and_user",
})
_SMEM_PREFIXES = ("s_load_", "s_buffer_", "s_store_", "s_scratch_", "s_atomic_", "s_dcache_",
                  "s_memtime", "s_memrealtime", "s_atc_probe")
_SCC_WRITERS = re.compile(
    r"^s_(add|sub)_[iu]32$|^s_(addc|subb)_u32$|^s_(min|max)_[iu]32$|"
    r"^s_(and|or|xor|andn2|orn2|nand|nor|xnor)_b(32|64)$|^s_(lshl|lshr|ashr)_[bi](32|64)$|"
    r"^s_bfe_[iu](32|64)$|^s_absdiff_i32$|^s_lshl[1-4]_add_u32$|^s_not_b(32|64)$|^s_wqm_b(32|64)$|"
    r"^s_bcnt[01]_i32_b(32|64)$|^s_quadmask_b(32|64)$|^s_abs_i32$|_saveexec_b64$|_wrexec_b64$|"
    r"^s_cmpk?_|^s_bitcmp[01]_|^s_addk_i32$")
_SCC_READERS = frozenset({"s_addc_u32", "s_subb_u32", "s_cselect_b32", "s_cselect_b64", "s_cmov_b32",
                          "s_cmov_b64", "s_cmovk_i32", "s_cbranch_scc0", "s_cbranch_scc1"})
# SALU with no destination operand: every explicit register is a source.
_SALU_NO_DST = re.compile(r"^s_(cmpk?|bitcmp[01])_|^s_(setpc_b64|rfe_b64|rfe_restore_b64|cbranch_join|"
                          r"setvskip|set_gpr_idx_on|set_gpr_idx_idx|setreg_b32|setreg_imm32_b32)$")
# SALU whose destination is also read (read-modify-write or conditional write).
_SALU_DST_READ = frozenset({"s_cmov_b32", "s_cmov_b64", "s_cmovk_i32", "s_addk_i32", "s_mulk_i32",
                            "s_bitset0_b32", "s_bitset0_b64", "s_bitset1_b32", "s_bitset1_b64"})
# VALU writing two destinations: a VGPR result and an SGPR carry / flag (VOP3b).
_TWO_DST = frozenset({"v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_addc_co_u32",
                      "v_subb_co_u32", "v_subbrev_co_u32", "v_div_scale_f32", "v_div_scale_f64",
                      "v_mad_u64_u32", "v_mad_i64_i32"})
# VALU whose destination is an input too (accumulating, tied or lane/byte-partial writes).
_VALU_DST_READ = re.compile(
    r"^v_(mac|fmac)_|^v_dot\dc_|^v_pk_fmac_|^v_(fma|mad)_mix(lo|hi)_|^v_writelane_b32$|"
    r"^v_cvt_(pk|sr)_(fp8|bf8)_f32$|^v_cvt_scalef32_pk_fp4_f32$|^v_cvt_pkaccum_u8_f32$|^v_smfmac_|"
    r"^v_(mad|fma)[a-z]*_legacy_")
# LLVM's TRANS instructions (SIInstrInfo::isTRANS): the transcendental pipeline.
_TRANS = re.compile(r"^v_(exp|log|rcp|rsq|sqrt|sin|cos)(_legacy)?_f(16|32|64)$|^v_rcp_iflag_f32$")
# Other VALU with a 4-slot result latency in LLVM's gfx940 model (float <-> int and f16/fp8
# conversions, the quad-SAD ops): latency only, full-rate issue.
_SLOW_VALU = re.compile(r"^v_cvt_(f16_f32|f32_f16|f32_[iu]32|[iu]32_f32|flr_i32_f32|rpi_i32_f32|off_f32_i4|"
                        r"f32_(fp8|bf8)|pk_f32_(fp8|bf8)|pk_(fp8|bf8)_f32|sr_(fp8|bf8)_f32)$|^v_(mqsad_u32_u8|qsad_pk_u16_u8)$")
# VOP3P-encoded VALU (CDNA3 ISA "VOP3P"): packed math, dot products, mixed-precision FMA, AGPR moves.
_PACKED = re.compile(r"^v_(pk_(?!fmac_)|dot\d_|fma_mix|mad_mix|accvgpr_(read|write)_b32$)")
_DOUBLE_WRITE = frozenset({"v_swap_b32"})  # two register writes: two issue slots (LLVM RThroughput 2)
_WIDTHS = {"dwordx16": 64, "dwordx8": 32, "dwordx4": 16, "dwordx3": 12, "dwordx2": 8, "dword": 4,
           "b128": 16, "b96": 12, "b64": 8, "b32": 4, "b16": 2, "b8": 1, "u16": 2, "i16": 2, "u8": 1, "i8": 1,
           "short": 2, "ushort": 2, "sshort": 2, "byte": 1, "ubyte": 1, "sbyte": 1}
_WIDTH_RE = re.compile(r"_(" + "|".join(sorted(_WIDTHS, key=len, reverse=True)) + r")(?=_|$)")
_CACHE_OPS = frozenset({"buffer_wbl2", "buffer_inv", "buffer_wbinvl1", "buffer_wbinvl1_vol", "s_dcache_wb",
                        "s_dcache_inv", "s_dcache_wb_vol", "s_dcache_inv_vol", "s_dcache_discard",
                        "s_dcache_discard_x2", "s_icache_inv"})
_FORMAT_BYTES = {"x": 4, "xy": 8, "xyz": 12, "xyzw": 16}


def _family(base: str) -> str:
    if base.startswith(("v_mfma_", "v_smfmac_")):
        return "mfma"
    if base.startswith(("v_cmp_", "v_cmpx_")):
        return "vopc"
    if base.startswith("v_"):
        return "valu"
    if base.startswith(("flat_", "global_", "scratch_")):
        return "flat"
    if base.startswith(("buffer_", "tbuffer_")):
        return "mubuf"
    if base.startswith("ds_"):
        return "ds"
    if base in _SOPP:
        return "sopp"
    if base.startswith(_SMEM_PREFIXES):
        return "smem"
    return "salu"


def _access_bytes(base: str, family: str) -> int:
    if family not in ("flat", "mubuf", "ds", "smem") or base in _CACHE_OPS:
        return 0
    fmt = re.search(r"_format_(?:d16_(?:hi_)?)?(xyzw|xyz|xy|x)$", base)
    if fmt:
        n = _FORMAT_BYTES[fmt.group(1)]
        return n // 2 if "_d16" in base else n
    m = _WIDTH_RE.search(base)
    if m:
        n = _WIDTHS[m.group(1)]
    elif "_x2" in base or base.endswith(("_u64", "_i64", "_f64", "_b64")):
        n = 8
    else:
        n = 4
    return 2 * n if ("read2" in base or "write2" in base or "wrxchg2" in base) else n


def _memory(base: str, family: str) -> str:
    if base in _CACHE_OPS:
        return "cache"
    if family == "ds":
        if base in ("ds_nop", "ds_swizzle_b32", "ds_permute_b32", "ds_bpermute_b32") or base.startswith("ds_gws_"):
            return ""
        if base.startswith("ds_read"):
            return "load"
        if base.startswith("ds_write"):
            return "store"
        return "atomic"
    if family in ("flat", "mubuf", "smem"):
        for kind in ("atomic", "load", "store"):
            if f"_{kind}" in base or base.startswith(f"s_{kind}"):
                return kind
    return ""


def _counters(base: str, family: str) -> tuple[tuple[str, bool], ...]:
    """SIInsertWaitcnts for gfx9: VMEM on vmcnt in order (FLAT also on lgkmcnt, out of order: it may
    be an LDS access); LDS in order and SMEM out of order on lgkmcnt; s_sendmsg on lgkmcnt."""
    if family in ("flat", "mubuf"):
        return (("vmcnt", True), ("lgkmcnt", False)) if base.startswith("flat_") else (("vmcnt", True),)
    if family == "ds" and base != "ds_nop":
        return (("lgkmcnt", True),)
    if family == "smem":
        return (("lgkmcnt", False),)
    if base in ("s_sendmsg", "s_sendmsghalt"):
        return (("lgkmcnt", False),)
    return ()


def _destinations(base: str, family: str, memory: str) -> tuple[int, bool]:
    if family == "salu":
        return (0, False) if _SALU_NO_DST.search(base) else (1, base in _SALU_DST_READ)
    if family == "sopp":
        return 0, False
    if family == "smem":
        if memory == "load" or base in ("s_memtime", "s_memrealtime"):
            return 1, False
        return (1, True) if memory == "atomic" else (0, False)
    if family in ("valu", "vopc", "mfma"):
        if base in ("v_swap_b32", "v_permlane16_swap_b32", "v_permlane32_swap_b32"):
            return 2, True
        return (2 if base in _TWO_DST else 1), bool(_VALU_DST_READ.search(base))
    if family in ("flat", "mubuf"):
        if memory == "load" and "_load_lds_" not in base:
            return 1, "_d16" in base
        return (1, True) if memory == "atomic" else (0, False)
    returns = base.startswith(("ds_read", "ds_swizzle", "ds_permute", "ds_bpermute", "ds_consume", "ds_append")) \
        or "_rtn_" in base
    return (1, "_d16" in base) if returns else (0, False)


def _implicit(base: str, family: str) -> tuple[frozenset, frozenset]:
    defs: set = set()
    uses: set = set()
    if family in ("valu", "vopc", "mfma", "flat", "mubuf", "ds"):
        uses.update(EXEC)
    if base.startswith("v_cmpx_"):
        defs.update(EXEC)
    if base.startswith("v_div_fmas_"):
        uses.update(VCC)
    if family == "salu":
        if _SCC_WRITERS.search(base):
            defs.add(SCC)
        if base.endswith(("_saveexec_b64", "_wrexec_b64")):
            defs.update(EXEC)
            uses.update(EXEC)
        if base in ("s_movrels_b32", "s_movrels_b64", "s_movreld_b32", "s_movreld_b64"):
            uses.update(M0)
        if base in ("s_set_gpr_idx_on", "s_set_gpr_idx_idx"):
            defs.update(M0)
    if base in _SCC_READERS:
        uses.add(SCC)
    if base in ("s_cbranch_vccz", "s_cbranch_vccnz"):
        uses.update(VCC)
    if base in ("s_cbranch_execz", "s_cbranch_execnz"):
        uses.update(EXEC)
    if base in ("s_sendmsg", "s_sendmsghalt", "s_ttracedata") or "_load_lds_" in base or \
            base in ("ds_read_addtid_b32", "ds_write_addtid_b32", "ds_append", "ds_consume"):
        uses.update(M0)
    return frozenset(defs), frozenset(uses)


def _timing(base: str, family: str, mfma: MfmaShape | None) -> tuple[int, int]:
    """(latency, throughput) in issue slots: LLVM's gfx940 model for ALU instructions."""
    if mfma is not None:
        return mfma.passes + 4, mfma.passes
    if family in ("valu", "vopc") and (_TRANS.match(base) or _SLOW_VALU.match(base)):
        return 4, 1
    if base in _DOUBLE_WRITE:
        return 1, 2
    return 1, 1


def build_info(base: str, processor: str = "gfx942") -> InstrInfo:
    """The record of a base mnemonic of `processor`, from the rules above."""
    family = _family(base)
    memory = _memory(base, family)
    mfma = _mfma_shape(base, processor) if family == "mfma" else None
    n_dst, dst_read = _destinations(base, family, memory)
    defs, uses = _implicit(base, family)
    latency, throughput = _timing(base, family, mfma)
    segment = base.split("_", 1)[0] if family in ("flat", "mubuf") else \
        (base.split("_")[1] if family == "smem" and base.split("_")[1] in ("buffer", "scratch") else "")
    return InstrInfo(base, family, segment, memory, _access_bytes(base, family), _counters(base, family),
                     n_dst, dst_read, defs, uses, latency, throughput, bool(_TRANS.match(base)),
                     family == "mfma" or bool(_PACKED.match(base)), mfma)


_BASES = {"gfx942": MNEMONICS, "gfx950": (MNEMONICS - GFX950_REMOVED) | GFX950_ADDED}


@functools.lru_cache(maxsize=None)
def _table(processor: str) -> dict[str, InstrInfo]:
    if processor not in _BASES:
        raise UnsupportedInstruction(processor, detail="no instruction table for this processor")
    return {base: build_info(base, processor) for base in _BASES[processor]}
