"""Register definitions and uses of gfx9 / CDNA3 (gfx942) instructions.

Registers are `(file, index)` pairs: `('v', i)`, `('a', i)`, `('s', i)` (specials map into the
SGPR file: vcc = s106/s107, m0 = s124, exec = s126/s127, ttmpN = s(108+N)) and `('scc', 0)`.
Widths come from the operand text, which LLVM's syntax spells out (`v[0:3]`, `s[4:5]`, `vcc`).
Which operands are destinations and which registers are implicit comes from the instruction table
(`asmevo.isa.table`); this module adds what depends on the instruction's modifiers (returning
atomics, DPP/SDWA/op_sel partial writes, GDS, M0-indexed operands). A mnemonic that is not a
gfx942 instruction raises `UnsupportedInstruction` rather than being guessed at.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..target import processor
from .instruction import Instruction
from .operands import Operand
from .table import InstrInfo, instr_info, split_mnemonic

Reg = tuple[str, int]
RegSet = frozenset[Reg]

_GFX942 = processor("gfx942")
SCC: Reg = ("scc", 0)
M0: Reg = ("s", _GFX942.special_sgprs["m0"])
VCC: RegSet = frozenset({("s", _GFX942.special_sgprs["vcc"]), ("s", _GFX942.special_sgprs["vcc"] + 1)})
EXEC: RegSet = frozenset({("s", _GFX942.special_sgprs["exec"]), ("s", _GFX942.special_sgprs["exec"] + 1)})
_SGPR_FILE_END = _GFX942.addressable_sgprs  # s_movrel indexing stays within the addressable SGPRs
_VGPR_FILE_END = _GFX942.arch_vgprs

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
    return split_mnemonic(mnemonic)


def family(base: str) -> str:
    """Encoding family of a base mnemonic (`asmevo.isa.table.FAMILIES`); unknown names raise."""
    return instr_info(base).family


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


def is_lds_dma(ins: Instruction, processor: str = "gfx942") -> bool:
    """A buffer/global/scratch load that writes LDS instead of VGPRs (address from M0)."""
    info = instr_info(ins.mnemonic, processor)
    return info.lds_dma or (info.segment == "buffer" and info.is_load and ins.modifier("lds") is not None)


def reg_info(ins: Instruction, processor: str = "gfx942") -> RegInfo:
    """Defs and uses of `ins` as an instruction of `processor`; raises UnsupportedInstruction for
    mnemonics the processor's table lacks. Kept on the instruction after the first call (analyses of
    edited candidates re-read the same instructions many times; a mnemonic both processors know has
    the same operand roles on both)."""
    if ins.reg_info_memo is None:
        ins.reg_info_memo = _reg_info(ins, processor)
    return ins.reg_info_memo


def _reg_info(ins: Instruction, processor: str) -> RegInfo:
    base, enc = split_mnemonic(ins.mnemonic)
    info = instr_info(base, processor)
    fam = info.family
    ops = ins.operands
    n_dst, dst_read = _destinations(ins, info, processor)
    dst, srcs = ops[:n_dst], ops[n_dst:]
    defs: set[Reg] = set()
    uses: set[Reg] = set()
    for op in dst:
        defs |= operand_regs(op)
    selects = _packed_selects(ins, base, len(srcs))
    for k, op in enumerate(srcs):
        regs = operand_regs(op)
        if selects is not None and op.count == 2 and op.kind in ("vgpr", "sgpr"):
            regs = {(kind, r) for kind, r in regs if r - op.index in selects[k]}
        uses |= regs
    if dst_read:
        for op in dst:
            uses |= operand_regs(op)
    defs |= info.implicit_defs
    uses |= info.implicit_uses
    if is_lds_dma(ins, processor) or (fam == "ds" and ins.modifier("gds") is not None):
        uses.add(M0)
    if base.startswith("s_movrel"):  # M0-indexed: any SGPR from the named one upward
        indexed = srcs[0] if base.startswith("s_movrels") else dst[0]
        regs = {("s", i) for i in range(indexed.index, _SGPR_FILE_END)} if indexed.kind == "sgpr" else set()
        (uses if base.startswith("s_movrels") else defs).update(regs)
    return RegInfo(base, fam, enc, tuple(dst), tuple(srcs), frozenset(defs), frozenset(uses))


_PACKED_PAIRS = ("v_pk_fma_f32", "v_pk_mul_f32", "v_pk_add_f32", "v_pk_mov_b32")


def _packed_selects(ins: Instruction, base: str, n: int) -> list[set[int]] | None:
    """For a packed FP32 op or `v_pk_mov_b32`, the dwords of each source pair it consumes: `op_sel` picks the low
    result's, `op_sel_hi` the high result's (CDNA3 ISA, VOP3P); `v_pk_mov_b32` takes its low dword
    from source 0 and its high one from source 1, `op_sel` picking each. The other dwords are read
    by nobody."""
    if base not in _PACKED_PAIRS:
        return None

    def flags(name: str, default: int) -> list[int]:
        v = ins.modifier(name)
        vals = [int(x) for x in v.strip("[]").split(",")] if v else []
        return vals + [default] * (n - len(vals))
    if base == "v_pk_mov_b32":
        return [{sel} for sel in flags("op_sel", 0)]
    return [{lo, hi} for lo, hi in zip(flags("op_sel", 0), flags("op_sel_hi", 1))]


def reads_destination(ins: Instruction, processor: str = "gfx942") -> bool:
    """Whether `ins` also reads its destination: an accumulate (`v_fmac`), a returning atomic, or a
    partial write (DPP, SDWA with UNUSED_PRESERVE, op_sel high half, d16 loads) that keeps part of
    the old value."""
    return _destinations(ins, instr_info(split_mnemonic(ins.mnemonic)[0], processor), processor)[1]


def _destinations(ins: Instruction, info: InstrInfo, processor: str = "gfx942") -> tuple[int, bool]:
    """(number of leading destination operands, whether the destination is also read): the table's
    operand roles, adjusted for the modifiers (an atomic returns only with sc0/glc; an LDS-DMA load
    has no VGPR destination; DPP/SDWA/op_sel may keep part of the old destination)."""
    if not ins.operands:
        return 0, False
    n, dst_read = info.n_dst, info.dst_read
    if info.memory == "atomic" and info.family in ("flat", "mubuf", "smem"):
        return (1, True) if is_returning_atomic(ins) else (0, False)
    if info.family in ("flat", "mubuf") and is_lds_dma(ins, processor):
        return 0, False
    if info.family in ("valu", "vopc", "mfma") and _partial_write(ins, info):
        return n, True
    return n, dst_read


def _partial_write(ins: Instruction, info: InstrInfo) -> bool:
    """SDWA with UNUSED_PRESERVE, DPP whose lanes may not all write (a row or bank mask, or without
    bound_ctrl a lane whose source lane is invalid or inactive keeps its value; CDNA3 ISA "DPP"),
    VOP3 op_sel writing the high half of a 16-bit result: the old destination value survives in part.
    (VOP3P op_sel selects source halves only.)"""
    if ins.mnemonic.endswith("_dpp"):
        full = all(int(ins.modifier(m) or "0xf", 0) == 0xf for m in ("row_mask", "bank_mask"))
        return not (full and ins.modifier("bound_ctrl") is not None)
    if ins.modifier("dst_unused") == "UNUSED_PRESERVE":
        return True
    op_sel = ins.modifier("op_sel")
    if op_sel and not info.packed:
        return op_sel.strip("[]").split(",")[-1].strip() == "1"
    return False


def def_use_all(instructions: list[Instruction], processor: str = "gfx942") -> list[RegInfo]:
    """`reg_info` for a straight instruction list, widening VGPR operands to the rest of the file
    inside `s_set_gpr_idx_on` ... `s_set_gpr_idx_off` windows (operands are M0-indexed there)."""
    out = []
    indexed = False
    for ins in instructions:
        info = reg_info(ins, processor)
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
