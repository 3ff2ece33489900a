"""Static LDS race freedom: accesses that different waves may make in the same barrier phase touch
disjoint bytes.

Phases come from `isa.barrier_phases`; the bytes each lane touches from per-lane known values
(`lane_values`), which must cover the address of every lane EXEC may enable there — so this proves
something only for LDS addresses that are functions of the work-item id, as reductions and
transposes through LDS usually compute them. The result holds for one block shape: the one given.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.barrier_phases import barrier_phases, lds_phases
from ..isa.cfg import build_cfg
from ..isa.instruction import Instruction
from ..isa.regs import is_lds_dma
from ..isa.table import instr_info
from .dispatch import MAX_LDS
from .ds import ds_footprint
from .lane_values import LaneState, LaneValues



def _touched(ins: Instruction, st: LaneState) -> tuple[np.ndarray, bool]:
    """Per wave, the LDS bytes the lanes EXEC may enable touch ([W, MAX_LDS] bool), and whether it writes."""
    idx, parts, writes = ds_footprint(ins)
    reg = ins.operands[idx].index
    maybe = ~st.exec_known()[1]
    if not st.usable(reg)[maybe].all():
        raise UnsupportedInstruction(ins.mnemonic, ins.address, "an LDS address not known per work-item")
    W = maybe.shape[0]
    out = np.zeros((W, MAX_LDS), bool)
    for w in range(W):
        base = st.v[reg][w][maybe[w]].astype(np.int64)
        for off, size in parts:
            for b in range(size):
                out[w, (base + off + b) % MAX_LDS] = True
    return out, writes


def _lds_memory(ins: Instruction) -> bool:
    info = instr_info(ins.mnemonic)
    return info.family == "ds" and bool(info.memory)


def lds_conflicts(instructions: list[Instruction], block: tuple[int, int, int],
                  skip: frozenset[int] = frozenset()) -> list[str]:
    """Why different waves of a `block`-shaped workgroup might access the same LDS bytes in the same
    phase, one of them writing, with the barriers at indices `skip` removed; [] proves they cannot."""
    cfg = build_cfg(instructions)
    phases = barrier_phases(cfg, skip)
    if phases is None:
        return ["a barrier lies on a cycle"]
    accesses = [k for k, x in enumerate(instructions)
                if _lds_memory(x) or is_lds_dma(x)]
    if not accesses:
        return []
    if any(is_lds_dma(instructions[k]) for k in accesses):
        return ["LDS DMA writes through M0"]
    try:
        states = LaneValues(instructions, block, cfg).before(set(accesses))
        touched = {}
        for k in accesses:
            if k in states:
                touched[k] = _touched(instructions[k], states[k])
    except UnsupportedInstruction as exc:
        return [str(exc)]
    found = []
    ks = sorted(touched)
    when = {k: lds_phases(cfg, k, phases, skip) for k in ks}
    for n, a in enumerate(ks):
        for b in ks[n:]:
            (ba, wa), (bb, wb) = touched[a], touched[b]
            if not (wa or wb) or not when[a] & when[b]:
                continue
            overlap = ba.astype(np.float32) @ bb.T.astype(np.float32)
            np.fill_diagonal(overlap, 0)
            if overlap.any():
                w, v = np.argwhere(overlap)[0]
                found.append(f"0x{instructions[a].address:x} (wave {w}) and 0x{instructions[b].address:x} "
                             f"(wave {v}) may touch the same LDS bytes in one phase")
    return found
