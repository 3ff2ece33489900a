"""VGPR index mode (gfx9 `s_set_gpr_idx_on` ... `s_set_gpr_idx_off`).

While the mode is on, a VALU instruction adds the index M0[7:0] to the VGPR number of every operand that
M0[15:12] enables (bit 0-2: src0-src2, bit 3: the vector destination); SGPRs and constants are unaffected.
The mode's extent is static: the instructions after an `s_set_gpr_idx_on` up to the next
`s_set_gpr_idx_off` in address order (a branch or memory instruction inside is unsupported). Their index
and mode are dynamic: per group, the waves are split by (index, mode) and each part runs a variant of the
instruction compiled with renumbered operands (cached). An indexed operand beyond the kernel's
architectural VGPRs is a `vgpr_index` finding and the instruction does not run for those waves.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.instruction import Instruction
from ..isa.table import instr_info
from .checks import check_init, check_pending
from .ops import Op
from .state import M0, Group, Machine

_SAFE_SALU = ("s_nop", "s_set_gpr_idx_mode", "s_set_gpr_idx_idx")


def index_mode_addresses(instructions: list[Instruction]) -> list[Instruction]:
    """The instructions executed in VGPR index mode (between s_set_gpr_idx_on and _off, address order)."""
    out, on = [], False
    for ins in instructions:
        n = ins.mnemonic
        if n == "s_set_gpr_idx_on":
            on = True
        elif n == "s_set_gpr_idx_off":
            on = False
        elif on:
            out.append(ins)
    return out


class IndexedOp:
    """The executable form of one instruction in VGPR index mode."""

    def __init__(self, ins: Instruction, compile_op: Callable[[Instruction], Op], tracked: set):
        self.ins = ins
        self.compile_op = compile_op
        self.tracked = tracked
        self.ndst = instr_info(ins.mnemonic).n_dst
        self.variants: dict[int, Op] = {}

    def variant(self, idx: int, mode: int) -> Op:
        """The instruction with index `idx` applied to the operands `mode` enables."""
        key = idx | mode << 8
        if key not in self.variants:
            ops = list(self.ins.operands)
            for pos, o in enumerate(ops):
                slot = 3 if pos < self.ndst else pos - self.ndst
                if slot < 4 and mode >> slot & 1 and o.kind in ("vgpr", "agpr"):
                    if o.kind == "agpr":
                        raise UnsupportedInstruction(self.ins.mnemonic, self.ins.address, "indexed AGPR operand")
                    r = o.index + idx
                    ops[pos] = replace(o, index=r, text=f"v{r}" if o.count == 1 else f"v[{r}:{r + o.count - 1}]")
            op = self.compile_op(replace(self.ins, operands=tuple(ops)))
            op.chk_reads = [r for r in op.reads if r in self.tracked]
            op.chk_writes = [r for r in op.writes if r in self.tracked]
            self.variants[key] = op
        return self.variants[key]

    def __call__(self, m: Machine, g: Group) -> None:
        m0 = m.s[g.sel, M0]
        keys = (m0 & np.uint32(0xFF)) | ((m0 >> np.uint32(12)) & np.uint32(0xF)) << np.uint32(8)
        uniq = np.unique(keys)
        for key in uniq:
            part = g if len(uniq) == 1 else Group(g.pc, g.waves[keys == key])
            op = self.variant(int(key) & 0xFF, int(key) >> 8)
            top = max((i for f, i in op.reads + op.writes if f == "v"), default=-1)
            if top >= m.v.shape[0]:
                m.find("vgpr_index", self.ins.address, part.waves,
                       f"{self.ins.mnemonic} in VGPR index mode (M0 index {int(key) & 0xFF}) addresses v{top}, "
                       f"beyond the kernel's {m.v.shape[0]} VGPRs")
                continue
            if op.chk_reads:
                check_pending(m, part, op, op.chk_reads, False)
            if op.chk_writes:
                check_pending(m, part, op, op.chk_writes, True)
            if m.checked:
                check_init(m, part, op)
            op.fn(m, part)
            if m.checked:
                for f, i in op.writes:
                    if f == "s":
                        m.s_init[part.sel, i] = True


def index_mode_op(op: Op, compile_op: Callable[[Instruction], Op], tracked: set) -> Op:
    """Replace `op` (inside an index-mode region) by its indexed form; non-VALU instructions other than
    SALU without control flow are unsupported there."""
    ins = op.ins
    n = ins.mnemonic
    family = instr_info(n).family
    if family in ("valu", "vopc", "mfma"):
        return Op(ins, IndexedOp(ins, compile_op, tracked), next_pc=op.next_pc)
    if n.startswith(_SAFE_SALU) or (family in ("salu", "sopp", "smem") and op.kind == 0 and not op.counter):
        return op
    err = UnsupportedInstruction(n, ins.address, "in VGPR index mode")

    def fail(m, g, err=err):
        raise err
    return Op(ins, fail, next_pc=op.next_pc)
