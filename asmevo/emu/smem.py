"""Scalar memory: s_load_dword*, s_buffer_load_dword*, s_store_dword*, s_buffer_store_dword*, s_memtime; cache
controls are no-ops. Stores write each wave's SGPRs (counted on lgkmcnt like loads)."""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.instruction import Instruction
from ..isa.table import instr_info
from .access import scalar_reader, sgpr_index
from .ops import Context, Op

U32, U64 = np.uint32, np.uint64


def compile_smem(ins: Instruction, ctx: Context) -> Op:
    name = ins.mnemonic
    if name in ("s_dcache_wb", "s_dcache_inv", "s_dcache_wb_vol", "s_dcache_inv_vol"):
        return Op(ins, lambda m, g: None)
    if name in ("s_memtime", "s_memrealtime"):
        d = sgpr_index(ins.operands[0])

        def clock(m, g):
            m.s64[g.sel, d // 2] = np.uint64(m.clock)
        return Op(ins, clock, loads=(("s", d, 2),), counter="smem")
    info = instr_info(name, ctx.processor)
    buffer = info.segment == "buffer"
    store = info.memory == "store"
    if info.memory not in ("load", "store") or info.segment == "scratch":
        raise UnsupportedInstruction(name, ins.address)
    n = info.access_bytes // 4 or None
    ops = ins.operands
    d = sgpr_index(ops[0])
    if n is None or d is None:
        raise UnsupportedInstruction(name, ins.address)
    base_idx = sgpr_index(ops[1])
    off_rd = scalar_reader(ops[2]) if len(ops) > 2 else (lambda m, g: np.uint32(0))
    imm = int(ins.modifier("offset") or "0", 0)
    size = 4 * n

    def fn(m, g):
        if buffer:
            desc = m.s[g.sel, base_idx:base_idx + 4]
            base = desc[:, 0].astype(U64) | ((desc[:, 1] & U32(0xFFFF)).astype(U64) << U64(32))
            limit = desc[:, 2].astype(np.int64)
        else:
            base = m.s64[g.sel, base_idx // 2]
        rel = np.asarray(off_rd(m, g), U64) + U64(imm)
        addr = (base + (rel & U64(0xFFFFFFFF))) & ~U64(3)
        off, ok = m.memory.locate(addr, size, m.launches_of(g))
        if buffer:
            ok &= (rel.astype(np.int64) + size) <= limit
        if not ok.all():
            bad = np.nonzero(~ok)[0]
            m.find("out_of_bounds", ins.address, g.waves[bad],
                   f"{name} {'writes' if store else 'reads'} outside every buffer")
        if store:
            m.memory.scatter(off[ok], size, m.s[g.sel, d:d + n][ok])
            return
        data = m.memory.gather(np.where(ok, off, 0), size)
        data[~ok] = 0
        m.s[g.sel, d:d + n] = data
        if d <= 126 < d + n or d <= 127 < d + n:
            m.exec_version += 1
    if store:
        return Op(ins, fn, counter="smem", is_store=True)
    return Op(ins, fn, loads=(("s", d, n),), counter="smem")
