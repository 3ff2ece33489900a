"""VSKIP mode (CDNA3 ISA guide: S_SETVSKIP, and the MODE register's VSKIP field, bit 28).

While a wave's MODE.VSKIP is set, its vector instructions are not issued: "no VOP*/M*BUF/MIMG/DS/FLAT
instructions are issued", and a skipped memory instruction does not count on vmcnt/lgkmcnt. Scalar
instructions (SALU, SMEM, program control, s_waitcnt) run as usual. `s_setvskip S0, S1` sets
VSKIP = S0[S1[4:0]]; `s_setreg` of HW_REG_MODE writes the bit too, since it is part of MODE.

The executor asks `vector_pcs` once per batch: None when no instruction of the kernel can set VSKIP (MODE
starts with it clear), else the addresses of the vector instructions, where `skipping` says which waves
of a group pass over the instruction instead of executing it.
"""
from __future__ import annotations

import re
import weakref

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.instruction import Instruction
from ..isa.table import instr_info

VSKIP_BIT = 28  # MODE[28] (CDNA3 ISA guide, MODE register fields)
_SETS_MODE = re.compile(r"hwreg\((HW_REG_MODE|1)(?:,\s*(\d+),\s*(\d+))?\)")
_PCS: "weakref.WeakKeyDictionary[object, frozenset[int] | None]" = weakref.WeakKeyDictionary()


def sets_vskip(ins: Instruction) -> bool:
    """Whether `ins` can set MODE.VSKIP: s_setvskip, or an s_setreg whose MODE field covers bit 28."""
    if ins.mnemonic == "s_setvskip":
        return True
    if ins.mnemonic not in ("s_setreg_b32", "s_setreg_imm32_b32"):
        return False
    for o in ins.operands:
        mm = _SETS_MODE.match(o.text)
        if mm:
            off, size = int(mm.group(2) or 0), int(mm.group(3) or 32)
            return off <= VSKIP_BIT < off + size
    return False


def vector_pcs(prog) -> frozenset[int] | None:
    """Addresses of `prog`'s vector instructions when some instruction can set VSKIP, else None (cached)."""
    if prog not in _PCS:
        if any(sets_vskip(ins) for ins in prog.instructions if not ins.is_data):
            _PCS[prog] = frozenset(pc for pc, op in prog.ops.items() if _vector(op.ins, prog.processor))
        else:
            _PCS[prog] = None
    return _PCS[prog]


def _vector(ins: Instruction, processor: str) -> bool:
    if ins.is_data:
        return False
    try:
        return instr_info(ins.mnemonic, processor).vector
    except UnsupportedInstruction:  # one the table does not know raises when executed, skipped or not
        return False


def skipping(m, g) -> np.ndarray:
    """bool [G]: which waves of group `g` are in VSKIP mode."""
    return (m.mode[g.sel] >> np.uint32(VSKIP_BIT)) & np.uint32(1) != 0


def set_vskip(m, g, bit: np.ndarray) -> None:
    """Set (bit 1) or clear (bit 0) MODE.VSKIP of each wave of `g`."""
    keep = m.mode[g.sel] & np.uint32(~(1 << VSKIP_BIT) & 0xFFFFFFFF)
    m.mode[g.sel] = keep | (np.asarray(bit, np.uint32) << np.uint32(VSKIP_BIT))
