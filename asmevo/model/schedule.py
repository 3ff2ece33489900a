"""One wave's in-order issue through a basic block, from the outstanding work it enters with.

`schedule_block` simulates issue slot by slot: an instruction starts when the wave is free, its
operands are ready, the counters an `s_waitcnt` names have retired far enough, and (for an MFMA)
the matrix core is free. `edge_schedules` schedules every block once per incoming CFG edge the
launch took, from the end state of that predecessor (scheduled from its own most-taken edge): a
wave is charged only for waits on work it issued on its way in (the merge-block fix, review #25),
and a block entered by a taken branch first waits for the fetch redirect (`costs.TAKEN_BRANCH_SLOTS`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..isa.cfg import CFG
from ..isa.instruction import Instruction
from ..isa.regs import reg_info
from ..isa.waitcnt import decode_waitcnt
from .costs import SLOT, TAKEN_BRANCH_SLOTS, Cost

ENTRY = -1
Reg = tuple[str, int]


@dataclass
class SlotCost:
    """One instruction in a block schedule: busy cycles, stall cycles before it, and why it stalled."""

    pc: int
    cls: str
    issue: float
    stall: float
    cause: str


@dataclass
class WaveState:
    """Outstanding work at a point of a wave's schedule, times relative to that point.

    `pending[counter]`: (retire time, class) per counted operation in issue order (vmcnt and
    in-order LDS retire in order: a later one never retires before an earlier one); `ready`: when
    each register's value can be read; `chain`: when an MFMA's accumulator result can feed the next
    MFMA as SrcC (back to back, CDNA3 hazard table / rocRoller XDLWrite94x: no wait states);
    `xdl_free`: when the matrix core is free; `valu_free`: when a VALU instruction may issue after an
    FP32/FP64 MFMA (`Cost.holds_valu`)."""

    pending: dict[str, list[tuple[float, str]]] = field(default_factory=lambda: {"vmcnt": [], "lgkmcnt": []})
    ready: dict[Reg, float] = field(default_factory=dict)
    chain: dict[Reg, float] = field(default_factory=dict)
    xdl_free: float = 0.0
    valu_free: float = 0.0

    def shifted(self, dt: float) -> "WaveState":
        """The same state seen `dt` cycles later (finished work dropped)."""
        return WaveState({k: [(t - dt, c) for t, c in v if t > dt] for k, v in self.pending.items()},
                         {r: t - dt for r, t in self.ready.items() if t > dt},
                         {r: t - dt for r, t in self.chain.items() if t > dt}, max(0.0, self.xdl_free - dt),
                         max(0.0, self.valu_free - dt))

    def drain(self) -> float:
        """Cycles until every counted operation has retired (stores included)."""
        return max((t for v in self.pending.values() for t, _ in v), default=0.0)


@dataclass
class BlockSchedule:
    slots: list[SlotCost]
    end: WaveState
    length: float  # cycles from the block's first issue until the wave may issue past it (or drains)


CostOf = Callable[[Instruction], Cost]


def _wait(st: WaveState, ins: Instruction, ready: float, cause: str) -> tuple[float, str]:
    for counter, limit in decode_waitcnt(ins).items():
        queue = st.pending.get(counter)
        if queue is None or len(queue) <= limit:
            continue
        keep = len(queue) - limit
        need, source = max(queue[:keep]) if counter == "vmcnt" else sorted(queue)[keep - 1]
        if need > ready:
            ready, cause = need, f"waitcnt {source}"
        st.pending[counter] = queue[keep:] if counter == "vmcnt" else sorted(queue)[keep:]
    return ready, cause


def schedule_block(instructions: list[Instruction], entry: WaveState | None, cost_of: CostOf,
                   ends_wave: bool = False, redirect: float = 0.0, processor: str = "gfx942") -> BlockSchedule:
    """Simulate one wave issuing `instructions` in order from `entry`, the first no earlier than
    `redirect` (the fetch redirect of the taken branch that led here). With `ends_wave` (the block
    ends in s_endpgm) the length includes draining the wave's outstanding stores: the kernel is not
    done until its writes are."""
    st = entry.shifted(0.0) if entry else WaveState()
    t = 0.0
    out: list[SlotCost] = []
    for ins in instructions:
        c = cost_of(ins)
        info = reg_info(ins, processor)
        start, cause = t, "dependency"
        chained = c.cls == "mfma"
        ready = 0.0
        for r in info.uses:
            when = st.chain.get(r, st.ready.get(r, 0.0)) if chained and r in info.defs else st.ready.get(r, 0.0)
            ready = max(ready, when)
        if not out and redirect > ready:
            ready, cause = redirect, "taken branch"
        if c.cls == "waitcnt":
            ready, cause = _wait(st, ins, ready, cause)
        if chained and st.xdl_free > ready:
            ready, cause = st.xdl_free, "matrix core busy"
        if c.cls in ("valu", "trans") and st.valu_free > ready:
            ready, cause = st.valu_free, "no VALU co-execution"
        at = max(t, ready)
        stall = at - start
        for counter in c.counters:
            queue = st.pending.setdefault(counter, [])
            done = at + c.latency
            if counter == "vmcnt" and queue:
                done = max(done, queue[-1][0])  # in-order retirement
            queue.append((done, c.cls))
        if chained:
            st.xdl_free = at + c.unit
            st.valu_free = max(st.valu_free, at + c.holds_valu)
            for r in info.defs:
                st.chain[r] = at + c.unit
        if not c.counters:  # counted results are the waitcnt's business
            for r in info.defs:
                st.ready[r] = at + c.latency
        t = at + c.issue
        out.append(SlotCost(ins.address or 0, c.cls, float(c.issue), stall, cause if stall else ""))
    length = t + max(0.0, st.drain() - t) if ends_wave else t
    return BlockSchedule(out, st.shifted(t), length)


def edge_schedules(cfg: CFG, edges: dict[tuple[int, int], int], cost_of: CostOf,
                   processor: str = "gfx942") -> dict[tuple[int, int], BlockSchedule]:
    """A schedule of block b per taken edge (p, b) (p = ENTRY for the kernel's entry), each from the
    end state of p scheduled from p's most-taken incoming edge; two passes in address order, so loop
    back edges carry their outstanding memory operations. `edges` maps an edge to how often it was
    taken."""
    ins = cfg.instructions
    incoming: dict[int, list[tuple[int, int]]] = {}
    for (p, b), n in edges.items():
        if n > 0:
            incoming.setdefault(b, []).append((n, p))
    ends: dict[int, WaveState] = {}
    out: dict[tuple[int, int], BlockSchedule] = {}
    entered: dict[tuple[int, int], WaveState | None] = {}  # the state each edge's schedule started from
    for _ in range(2):
        for blk in cfg.blocks:
            preds = sorted(incoming.get(blk.index, []), key=lambda t: (-t[0], t[1]))
            body = ins[blk.start:blk.end]
            ends_wave = body[-1].ends_program
            for _, p in preds:
                entry = ends.get(p) if p != ENTRY else None
                e = (p, blk.index)
                if e in out and entered[e] is entry:  # the second pass re-enters from the same state: same schedule
                    continue
                entered[e] = entry
                out[e] = schedule_block(body, entry, cost_of, ends_wave, _redirect(cfg, p, blk.start, cost_of),
                                        processor)
            if preds:
                ends[blk.index] = out[(preds[0][1], blk.index)].end
    return out


def _redirect(cfg: CFG, p: int, start: int, cost_of: CostOf) -> float:
    """The fetch redirect of entering the block at instruction `start` from block `p`: the taken
    branch's extra slots when `p` ends in a branch and `start` is not its fall-through, else 0."""
    if p == ENTRY:
        return 0.0
    pred = cfg.blocks[p]
    if pred.end == start or cost_of(cfg.instructions[pred.end - 1]).cls != "branch":
        return 0.0
    return SLOT * (TAKEN_BRANCH_SLOTS - 1)
