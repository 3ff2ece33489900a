"""Register definitions and uses of gfx9 / CDNA3 (gfx942) instructions.

Registers are `(file, index)` pairs: `('v', i)`, `('a', i)`, `('s', i)` (specials map into the
SGPR file: vcc = s106/s107, m0 = s124, exec = s126/s127, ttmpN = s(108+N)) and `('scc', 0)`.
Widths come from the operand text, which LLVM's syntax spells out (`v[0:3]`, `s[4:5]`, `vcc`).
Which operands are destinations is decided per encoding family and mnemonic; a mnemonic that is
not a gfx942 instruction raises `UnsupportedInstruction` rather than being guessed at.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UnsupportedInstruction
from .instruction import Instruction
from .mnemonics import MFMA_ALIASES, MNEMONICS
from .operands import Operand

Reg = tuple[str, int]
RegSet = frozenset[Reg]

SCC: Reg = ("scc", 0)
M0: Reg = ("s", 124)
VCC: RegSet = frozenset({("s", 106), ("s", 107)})
EXEC: RegSet = frozenset({("s", 126), ("s", 127)})
_SGPR_FILE_END = 102  # s_movrel indexing stays within s0..s101
_VGPR_FILE_END = 256

_ENC_SUFFIX = re.compile(r"_(e32|e64|sdwa|dpp)$")

# Family of a base mnemonic: 'salu', 'sopp', 'smem', 'valu', 'vopc', 'mfma', 'flat', 'mubuf', 'ds'.
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

# SALU mnemonics (by regex on the base name) that write SCC.
_SCC_WRITERS = re.compile(
    r"^s_(add|sub)_[iu]32$|^s_(addc|subb)_u32$|^s_(min|max)_[iu]32$|"
    r"^s_(and|or|xor|andn2|orn2|nand|nor|xnor)_b(32|64)$|^s_(lshl|lshr|ashr)_[bi](32|64)$|"
    r"^s_bfe_[iu](32|64)$|^s_absdiff_i32$|^s_lshl[1-4]_add_u32$|^s_not_b(32|64)$|^s_wqm_b(32|64)$|"
    r"^s_bcnt[01]_i32_b(32|64)$|^s_quadmask_b(32|64)$|^s_abs_i32$|_saveexec_b64$|_wrexec_b64$|"
    r"^s_cmpk?_|^s_bitcmp[01]_|^s_addk_i32$")
_SCC_READERS = frozenset({"s_addc_u32", "s_subb_u32", "s_cselect_b32", "s_cselect_b64",
                          "s_cmov_b32", "s_cmov_b64", "s_cmovk_i32", "s_cbranch_scc0", "s_cbranch_scc1"})
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
    r"^v_cvt_(pk|sr)_(fp8|bf8)_f32$|^v_cvt_pkaccum_u8_f32$|^v_smfmac_|^v_(mad|fma)[a-z]*_legacy_")
_VOP3P = re.compile(r"^v_(pk_|dot|fma_mix|mad_mix|mfma_|smfmac_)")
_TRANS = re.compile(r"^v_(exp|log|rcp|rsq|sqrt|sin|cos)(_legacy)?_f(16|32|64)$|^v_rcp_iflag_f32$|"
                    r"^v_exp_legacy_f32$|^v_log_legacy_f32$")


@dataclass(frozen=True, slots=True)
class RegInfo:
    """Registers one instruction reads and writes.

    `dst` / `srcs` are the explicit destination and source operands in textual order; `defs` /
    `uses` also include implicit registers (EXEC for vector ops, SCC, VCC for v_div_fmas, M0, ...).
    """

    base: str
    family: str
    encoding: str
    dst: tuple[Operand, ...]
    srcs: tuple[Operand, ...]
    defs: RegSet
    uses: RegSet


def base_mnemonic(mnemonic: str) -> tuple[str, str]:
    """(base name, encoding suffix) of a mnemonic, gfx90a MFMA spellings mapped to gfx940 names."""
    m = _ENC_SUFFIX.search(mnemonic)
    base, enc = (mnemonic[:m.start()], m.group(1)) if m else (mnemonic, "")
    return MFMA_ALIASES.get(base, base), enc


def family(base: str) -> str:
    """Encoding family of a base mnemonic (see module docstring); unknown names raise."""
    if base not in MNEMONICS:
        raise UnsupportedInstruction(base, detail="not a gfx942 instruction known to the register model")
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


def operand_regs(op: Operand) -> set[Reg]:
    """Registers an operand names (condition sources like vccz/execz/scc included)."""
    if op.kind == "vgpr":
        return {("v", i) for i in range(op.index, op.index + op.count)}
    if op.kind == "agpr":
        return {("a", i) for i in range(op.index, op.index + op.count)}
    rng = op.sgpr_range()
    if rng is not None:
        return {("s", i) for i in rng}
    if op.kind == "special":
        if op.name in ("scc", "src_scc"):
            return {SCC}
        if op.name in ("vccz", "src_vccz"):
            return set(VCC)
        if op.name in ("execz", "src_execz"):
            return set(EXEC)
    return set()


def is_returning_atomic(ins: Instruction) -> bool:
    """A FLAT/MUBUF/SMEM atomic that returns the pre-op value (sc0 on gfx940, glc before)."""
    return ins.modifier("sc0") is not None or ins.modifier("glc") is not None


def is_lds_dma(ins: Instruction) -> bool:
    """A buffer/global/scratch load that writes LDS instead of VGPRs (address from M0)."""
    base, _ = base_mnemonic(ins.mnemonic)
    return ("_load_lds_" in base) or (base.startswith("buffer_load") and ins.modifier("lds") is not None)


def is_trans(base: str) -> bool:
    """Transcendental VALU (quarter-rate trans unit)."""
    return bool(_TRANS.match(base))


def reg_info(ins: Instruction) -> RegInfo:
    """Defs and uses of `ins`; raises UnsupportedInstruction for unknown mnemonics. Kept on the
    instruction after the first call (analyses of edited candidates re-read the same instructions
    many times)."""
    if ins.reg_info_memo is None:
        ins.reg_info_memo = _reg_info(ins)
    return ins.reg_info_memo


def _reg_info(ins: Instruction) -> RegInfo:
    base, enc = base_mnemonic(ins.mnemonic)
    fam = family(base)
    ops = ins.operands
    n_dst, dst_read = _destinations(ins, base, fam)
    dst, srcs = ops[:n_dst], ops[n_dst:]
    defs: set[Reg] = set()
    uses: set[Reg] = set()
    for op in dst:
        defs |= operand_regs(op)
    for op in srcs:
        uses |= operand_regs(op)
    if dst_read:
        for op in dst:
            uses |= operand_regs(op)
    _implicit(ins, base, fam, defs, uses)
    if base.startswith("s_movrel"):  # M0-indexed: any SGPR from the named one upward
        indexed = srcs[0] if base.startswith("s_movrels") else dst[0]
        regs = {("s", i) for i in range(indexed.index, _SGPR_FILE_END)} if indexed.kind == "sgpr" else set()
        (uses if base.startswith("s_movrels") else defs).update(regs)
    return RegInfo(base, fam, enc, tuple(dst), tuple(srcs), frozenset(defs), frozenset(uses))


def _destinations(ins: Instruction, base: str, fam: str) -> tuple[int, bool]:
    """(number of leading destination operands, whether the destination is also read)."""
    ops = ins.operands
    if not ops:
        return 0, False
    if fam == "salu":
        if _SALU_NO_DST.search(base):
            return 0, False
        return 1, base in _SALU_DST_READ
    if fam == "sopp":
        return 0, False
    if fam == "smem":
        if base.startswith(("s_load_", "s_buffer_load_", "s_scratch_load_", "s_memtime", "s_memrealtime")):
            return 1, False
        if "_atomic_" in base:
            return (1, True) if is_returning_atomic(ins) else (0, False)
        return 0, False
    if fam in ("valu", "vopc", "mfma"):
        if base == "v_swap_b32":
            return 2, True
        n = 2 if base in _TWO_DST else 1
        return n, bool(_VALU_DST_READ.search(base)) or _partial_valu_write(ins, base)
    if fam in ("flat", "mubuf"):
        if is_lds_dma(ins):
            return 0, False
        if "_load_" in base:
            return 1, "_d16" in base
        if "_atomic_" in base:
            return (1, True) if is_returning_atomic(ins) else (0, False)
        return 0, False
    if fam == "ds":
        returns = base.startswith(("ds_read", "ds_swizzle", "ds_permute", "ds_bpermute", "ds_consume",
                                   "ds_append")) or "_rtn_" in base
        return (1, "_d16" in base) if returns else (0, False)
    raise UnsupportedInstruction(base, detail=f"no operand model for family {fam}")


def _partial_valu_write(ins: Instruction, base: str) -> bool:
    """SDWA with UNUSED_PRESERVE, DPP (disabled lanes keep the old value), VOP3 op_sel writing the
    high half of a 16-bit result: the old destination value survives in part. (VOP3P op_sel
    selects source halves only.)"""
    if ins.mnemonic.endswith("_dpp"):
        return True
    if ins.modifier("dst_unused") == "UNUSED_PRESERVE":
        return True
    op_sel = ins.modifier("op_sel")
    if op_sel and not _VOP3P.match(base):
        return op_sel.strip("[]").split(",")[-1].strip() == "1"
    return False


def _implicit(ins: Instruction, base: str, fam: str, defs: set[Reg], uses: set[Reg]) -> None:
    """Add implicit register reads and writes."""
    if fam in ("valu", "vopc", "mfma", "flat", "mubuf", "ds"):
        uses |= EXEC
    if fam == "vopc" and base.startswith("v_cmpx_"):
        defs |= EXEC
    if base.startswith("v_div_fmas_"):
        uses |= VCC
    if fam == "salu":
        if _SCC_WRITERS.search(base):
            defs.add(SCC)
        if base.endswith(("_saveexec_b64", "_wrexec_b64")):
            defs |= EXEC
            uses |= EXEC
        if base in ("s_movrels_b32", "s_movrels_b64", "s_movreld_b32", "s_movreld_b64"):
            uses.add(M0)
        if base in ("s_set_gpr_idx_on", "s_set_gpr_idx_idx"):
            defs.add(M0)
    if base in _SCC_READERS:
        uses.add(SCC)
    if base in ("s_cbranch_vccz", "s_cbranch_vccnz"):
        uses |= VCC
    if base in ("s_cbranch_execz", "s_cbranch_execnz"):
        uses |= EXEC
    if base in ("s_sendmsg", "s_sendmsghalt", "s_ttracedata"):
        uses.add(M0)
    if is_lds_dma(ins) or base in ("ds_read_addtid_b32", "ds_write_addtid_b32", "ds_append", "ds_consume"):
        uses.add(M0)
    if fam == "ds" and ins.modifier("gds") is not None:
        uses.add(M0)


def def_use_all(instructions: list[Instruction]) -> list[RegInfo]:
    """`reg_info` for a straight instruction list, widening VGPR operands to the rest of the file
    inside `s_set_gpr_idx_on` ... `s_set_gpr_idx_off` windows (operands are M0-indexed there)."""
    out = []
    indexed = False
    for ins in instructions:
        info = reg_info(ins)
        if info.base == "s_set_gpr_idx_on":
            indexed = True
        elif info.base == "s_set_gpr_idx_off":
            indexed = False
        elif indexed and info.family in ("valu", "vopc", "mfma"):
            info = _widen_vgprs(info)
        out.append(info)
    return out


def _widen_vgprs(info: RegInfo) -> RegInfo:
    def widen(regs: RegSet) -> RegSet:
        lows = [i for f, i in regs if f == "v"]
        extra = {("v", i) for i in range(min(lows), _VGPR_FILE_END)} if lows else set()
        return frozenset(set(regs) | extra)
    return RegInfo(info.base, info.family, info.encoding, info.dst, info.srcs,
                   widen(info.defs), widen(info.uses) | {M0})
