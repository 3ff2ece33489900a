"""Possible one bits of a 32-bit register operand where an instruction reads it: a mask every lane's value is
certain to stay within (a lane offset built from the workitem id by ANDs and ORs with constants is below a power
of two).

The definitions reaching the read (`align.reaching`) are evaluated through moves, ANDs, ORs, shifts and bit-field
extracts by constants and selects; the result is the OR over every definition that may reach. Anything else, a
value the wave starts with, or a value carried around a loop (met again while it is evaluated) may have every bit
set.
"""
from __future__ import annotations

from ..isa.operands import Operand
from .align import predecessors, reaching
from .body import Body
from .webs import ENTRY, VgprWebs

ALL = 0xFFFFFFFF
_MOVE = ("v_mov_b32", "s_mov_b32", "v_readfirstlane_b32")
_AND = ("v_and_b32", "s_and_b32")
_OR = ("v_or_b32", "s_or_b32", "v_or3_b32", "v_cndmask_b32", "s_cselect_b32")


class PossibleOnes:
    """Possible-ones queries on one body (memoised)."""

    def __init__(self, body: Body, webs: VgprWebs):
        self.body, self.webs = body, webs
        self.preds = predecessors(webs)
        self._memo: dict[tuple[int, str, int], int] = {}
        self._open: set[tuple[int, str, int]] = set()

    def operand(self, i: int, op: Operand) -> int:
        """The bits source operand `op` of instruction i may have set (a 32-bit register or a constant)."""
        if op.kind == "imm" and not (op.neg or op.abs):
            return int(op.value) & ALL
        kind = {"vgpr": "v", "sgpr": "s"}.get(op.kind)
        if kind is None or op.count != 1 or op.neg or op.abs:
            return ALL
        return self.register(i, kind, op.index)

    def register(self, i: int, kind: str, reg: int) -> int:
        """The bits register `kind``reg` may have set where instruction i reads it."""
        key = (i, kind, reg)
        if key in self._memo:
            return self._memo[key]
        if key in self._open:
            return ALL
        self._open.add(key)
        defs = reaching(self.webs, self.preds, i, kind, reg)
        value = ALL if not defs or ENTRY in defs else 0
        for d in defs - {ENTRY}:
            value |= self._written(d, reg)
            if value == ALL:
                break
        self._open.discard(key)
        self._memo[key] = value
        return value

    def _written(self, d: int, reg: int) -> int:
        """The bits definition d may write into register `reg`."""
        ins, info = self.body.instructions[d], self.body.infos[d]
        if ins.modifiers or not info.dst or info.dst[0].count != 1 or info.dst[0].index != reg:
            return ALL
        base, srcs = info.base, info.srcs
        src = lambda k: self.operand(d, srcs[k])
        shift = lambda k: int(srcs[k].value) & 31 if srcs[k].kind == "imm" else None
        if base in _MOVE:
            return src(0)
        if base in _AND:
            return src(0) & src(1)
        if base in _OR:
            return src(0) | src(1) | (src(2) if base == "v_or3_b32" else 0)
        if base == "v_and_or_b32":
            return (src(0) & src(1)) | src(2)
        if base in ("v_lshlrev_b32", "v_lshrrev_b32") and shift(0) is not None:
            return (src(1) << shift(0)) & ALL if base == "v_lshlrev_b32" else src(1) >> shift(0)
        if base in ("s_lshl_b32", "s_lshr_b32") and shift(1) is not None:
            return (src(0) << shift(1)) & ALL if base == "s_lshl_b32" else src(0) >> shift(1)
        if base == "v_bfe_u32" and shift(1) is not None and shift(2) is not None:
            return (src(0) >> shift(1)) & ((1 << shift(2)) - 1)
        return ALL
