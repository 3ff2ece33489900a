"""A candidate's bench-shape trace without emulating the bench shape again.

Most edits keep a kernel's control flow: the candidate's CFG has the same blocks and edges as K0's
and its waves take the same paths. Then K0's traced sample of the bench shape is the candidate's too,
with the candidate's instructions in the blocks: `transplant` carries it over (global-memory traffic
follows each block's memory instructions in order). Whether the paths are the same is checked on a
launch both run whole and cheaply (the largest verify shape): every sampled wave's edge counts must
be equal (`same_paths`). When they are not, or the blocks' memory instructions differ, the candidate
is sampled itself.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..isa.cfg import build_cfg
from ..isa.instruction import Instruction
from ..isa.table import instr_info
from .launch import TracedLaunch


def _shape(instructions: list[Instruction]) -> list[tuple[int, ...]]:
    return [tuple(b.succs) for b in build_cfg(instructions).blocks]


def _edge_table(run: TracedLaunch) -> dict[tuple[int, int], np.ndarray]:
    return {e: run.counts[:, col] for col, e in enumerate(run.edges)}


def same_paths(k0: list[Instruction], k1: list[Instruction], run0: TracedLaunch, run1: TracedLaunch) -> bool:
    """Whether K1 has K0's CFG and every wave of the two runs (the same launch) took the same edges
    the same number of times."""
    if _shape(k0) != _shape(k1) or not np.array_equal(run0.wave_workgroup, run1.wave_workgroup):
        return False
    t0, t1 = _edge_table(run0), _edge_table(run1)
    return t0.keys() == t1.keys() and all(np.array_equal(t0[e], t1[e]) for e in t0)


def _memory_slots(instructions: list[Instruction], processor: str) -> dict[int, tuple[int, int]]:
    """Address -> (block, ordinal among the block's global-memory instructions) of `processor` code."""
    cfg = build_cfg(instructions)
    out = {}
    for b in cfg.blocks:
        k = 0
        for ins in instructions[b.start:b.end]:
            if instr_info(ins.mnemonic, processor).vmem:
                out[ins.address] = (b.index, k)
                k += 1
    return out


def transplant(run: TracedLaunch, k0: list[Instruction], k1: list[Instruction],
               processor: str = "gfx942") -> TracedLaunch | None:
    """K0's trace `run` with K1's instructions (same CFG and paths; both `processor` code); None when a
    block's memory instructions are not the same in number."""
    slots0, slots1 = _memory_slots(k0, processor), _memory_slots(k1, processor)
    if sorted(slots0.values()) != sorted(slots1.values()):
        return None
    address1 = {slot: pc for pc, slot in slots1.items()}
    memory = {address1[slots0[pc]]: stats for pc, stats in run.memory.items() if pc in slots0}
    return replace(run, memory=memory)
