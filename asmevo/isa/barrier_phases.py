"""Barrier phases: which `s_barrier` instances may separate two instructions of different waves.

A wave's *phase* at an instruction is the number of barriers it has passed. A workgroup's waves
leave their k-th barrier only when every wave still running has arrived at it, so an access a wave
makes in phase p happens before every access another wave makes in a phase above p, and accesses of
different waves can overlap in time only when their phases can be equal. An LDS access still in
flight when its wave reaches a barrier (no `s_waitcnt lgkmcnt(0)` in between) may complete after
the barrier, so it belongs to the following phases too.
"""
from __future__ import annotations

from .cfg import CFG
from .instruction import Instruction
from .waitcnt import decode_waitcnt


def barrier_phases(cfg: CFG, skip: frozenset[int] = frozenset()) -> list[frozenset[int]] | None:
    """Per instruction index, the phases a wave may be in when it runs it (barriers at indices in
    `skip` do not count); empty for unreachable code. None when a barrier lies on a cycle, so that
    phases are unbounded."""
    ins = cfg.instructions
    limit = sum(1 for k, i in enumerate(ins) if i.mnemonic == "s_barrier" and k not in skip)
    phases: list[frozenset[int]] = [frozenset()] * len(ins)
    block_in: dict[int, frozenset[int]] = {0: frozenset({0})}
    work = [0]
    while work:
        b = work.pop()
        current = block_in[b]
        blk = cfg.blocks[b]
        for k in range(blk.start, blk.end):
            phases[k] = current
            if ins[k].mnemonic == "s_barrier" and k not in skip:
                current = frozenset(p + 1 for p in current)
        if current and max(current) > limit:
            return None
        for s in blk.succs:
            merged = block_in.get(s, frozenset()) | current
            if merged != block_in.get(s):
                block_in[s] = merged
                work.append(s)
    return phases


def _successors(cfg: CFG, k: int) -> list[int]:
    blk = cfg.blocks[cfg.block_of[k]]
    return [k + 1] if k + 1 < blk.end else [cfg.blocks[s].start for s in blk.succs]


def _waits_lds(ins: Instruction) -> bool:
    return ins.mnemonic == "s_waitcnt" and decode_waitcnt(ins).get("lgkmcnt") == 0


def lds_phases(cfg: CFG, k: int, phases: list[frozenset[int]], skip: frozenset[int] = frozenset()) -> frozenset[int]:
    """The phases in which the LDS access at index k may take effect: its own, and those of every
    barrier a path reaches before an `s_waitcnt lgkmcnt(0)`."""
    ins = cfg.instructions
    extra: set[int] = {0}
    seen: set[tuple[int, int]] = set()
    work = [(s, 0) for s in _successors(cfg, k)]
    limit = len(ins)
    while work:
        j, passed = work.pop()
        if (j, passed) in seen or passed > limit:
            continue
        seen.add((j, passed))
        if _waits_lds(ins[j]) or ins[j].ends_program:
            continue
        if ins[j].mnemonic == "s_barrier" and j not in skip:
            passed += 1
            extra.add(passed)
        work += [(s, passed) for s in _successors(cfg, j)]
    return frozenset(p + e for p in phases[k] for e in extra)
