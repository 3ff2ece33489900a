"""The scheduling loop: groups of waves at one PC, lowest PC first; branches split groups, equal PCs
merge, s_barrier parks waves until every living wave of the batch waits; strictness checks around
each instruction."""
from __future__ import annotations

import numpy as np

from ..errors import EmulationError
from .checks import KIND, check_init, check_pending
from .ops import BARRIER, BRANCH, END, JUMP, Op
from .program import Program
from .state import Group, Machine
from .vskip import skipping, vector_pcs

class Stats:
    """Counters accumulated over the batches of one launch. A wide run (several launches in one
    batch) also counts per launch (`budgets`; `per_launch()` after the run)."""

    def __init__(self, budget: int, budgets: np.ndarray | None = None):
        self.budget = budget
        self.instructions = 0
        self.lane_instructions = 0
        self.pc_counts: dict[int, int] = {}
        self.stopped = False
        self.budgets = budgets
        # wide runs: executions of each (pc, group, EXEC version), and the group's waves and active
        # lanes per launch for each (group, EXEC version); counted per launch at the end
        self._steps: dict[tuple, int] = {}
        self._shares: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._running: np.ndarray | None = None  # per-launch instructions, once a budget is near

    def count(self, m: Machine, g: Group) -> bool:
        """Count a wide run's step; False (every launch tainted, the run stopped) when a launch
        would exceed its budget: each then runs alone, which finds the exact point."""
        share = (g, m.exec_version)
        if share not in self._shares:
            self._shares[share] = (g.counts, g.launch_lanes(m))
        if self.instructions + len(g) > self.budget:  # the least budget: some launch may be near its own
            if self._running is None:
                self._running = self.per_launch()[0]
            after = self._running + g.counts
            if (after > self.budgets).any():
                m.tainted.update(range(m.launches))
                self.stopped = True
                return False
            self._running = after
        key = (g.pc, g, m.exec_version)
        self._steps[key] = self._steps.get(key, 0) + 1
        m.current = g
        return True

    def per_launch(self) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]:
        """Wide runs: (instructions, active-lane instructions, per-PC executions) of each launch."""
        n = len(self.budgets)
        instructions, lanes = np.zeros(n, np.int64), np.zeros(n, np.int64)
        pcs: dict[int, np.ndarray] = {}
        for (pc, g, version), times in self._steps.items():
            waves, active = self._shares[(g, version)]
            instructions += times * waves
            lanes += times * active
            pcs[pc] = pcs[pc] + times * waves if pc in pcs else times * waves
        return instructions, lanes, pcs


def _group(m: Machine, pc: int, waves: np.ndarray) -> Group:
    """A group; in a wide run it knows how many waves of each launch it holds."""
    if m.launch_of_wave is None:
        return Group(pc, waves)
    return Group(pc, waves, np.bincount(m.launch_of_wave[waves], minlength=m.launches))


def _merge(m: Machine, groups: list[Group]) -> Group:
    waves = np.sort(np.concatenate([g.waves for g in groups]))
    return _group(m, groups[0].pc, waves)


def run_batch(m: Machine, prog: Program, stats: Stats) -> None:
    """Run every wave of machine `m` to s_endpgm (or until the budget is exhausted)."""
    groups = [_group(m, m.entry, np.arange(m.W))]
    parked: list[Group] = []
    ops = prog.ops
    pc_counts = stats.pc_counts
    checked = m.checked
    trace = m.trace
    starts = trace.block_of if trace is not None else None
    vector = vector_pcs(prog)  # None unless the kernel can set MODE.VSKIP (vskip.py)
    wide = m.launch_of_wave is not None
    while True:
        if not groups:
            if not parked:
                return
            _release(m, parked, ops)
            groups, parked = parked, []
        if len(groups) == 1:
            g = groups[0]
            pc = g.pc
        else:
            pc = min(g.pc for g in groups)
            same = [g for g in groups if g.pc == pc]
            if len(same) > 1:
                g = _merge(m, same)
                groups = [x for x in groups if x.pc != pc] + [g]
            else:
                g = same[0]
        op = ops.get(pc)
        if op is None:
            raise EmulationError(f"execution reached 0x{pc:x}, which holds no instruction")
        if vector is not None and pc in vector:
            skip = skipping(m, g)
            if skip.any():  # waves in VSKIP mode pass over the instruction: it is not issued for them
                if starts is not None and pc in starts:
                    trace.enter(g.waves[skip], starts[pc])
                groups.remove(g)
                groups.append(_group(m, op.next_pc, g.waves[skip]))
                if skip.all():
                    continue
                g = _group(m, pc, g.waves[~skip])
                groups.append(g)
        n = len(g)
        if wide and not stats.count(m, g):
            return
        if not wide and stats.instructions + n > stats.budget:
            m.find("budget", pc, g.waves, f"instruction budget of {stats.budget} wave-instructions exhausted "
                                          f"(runaway loop?)")
            stats.stopped = True
            return
        stats.instructions += n
        m.clock = stats.instructions
        if starts is not None and pc in starts:
            trace.enter(g.waves, starts[pc])
        stats.lane_instructions += g.exec_info(m)[2]
        pc_counts[pc] = pc_counts.get(pc, 0) + n
        if op.chk_reads:
            check_pending(m, g, op, op.chk_reads, False)
        if op.chk_writes:
            check_pending(m, g, op, op.chk_writes, True)
        if checked:
            check_init(m, g, op)
        res = op.fn(m, g)
        if op.counter:
            _issue(m, g, op)
        if checked:
            for i in op.s_writes:
                m.s_init[g.sel, i] = True
        kind = op.kind
        if kind == 0:
            g.pc = op.next_pc
        elif kind == BRANCH:
            if res is None:
                g.pc = op.target
            else:
                taken = np.asarray(res, bool)
                if taken.all():
                    g.pc = op.target
                elif not taken.any():
                    g.pc = op.next_pc
                else:
                    groups.remove(g)
                    groups.append(_group(m, op.target, g.waves[taken]))
                    groups.append(_group(m, op.next_pc, g.waves[~taken]))
        elif kind == JUMP:
            pcs = np.asarray(res, np.uint64)
            groups.remove(g)
            for target in np.unique(pcs):
                groups.append(_group(m, int(target), g.waves[pcs == target]))
        elif kind == END:
            groups.remove(g)
        elif kind == BARRIER:
            pending = m.lds_last_store[g.sel] > m.lds_retired[g.sel]
            if pending.any():
                m.find("waitcnt", pc, g.waves[pending],
                       "s_barrier with LDS stores not retired by s_waitcnt lgkmcnt (other waves may not see them)",
                       each=True)
            groups.remove(g)
            parked.append(g)


def _release(m: Machine, parked: list[Group], ops: dict[int, Op]) -> None:
    """All living waves wait at barriers: release them and start a new LDS epoch per workgroup."""
    for g in parked:
        g.pc = ops[g.pc].next_pc
    waves = np.concatenate([g.waves for g in parked])
    m.lds_epoch[np.unique(m.wg_of_wave[waves])] += 1


def _issue(m: Machine, g: Group, op: Op) -> None:
    """Count an issued memory operation and mark its destinations pending."""
    sel = g.sel
    c = op.counter
    if c in ("vm", "flat"):
        m.vm_issued[sel] += 1
    if c == "lds":
        m.lds_issued[sel] += 1
        if op.is_store:
            m.lds_last_store[sel] = m.lds_issued[sel]
    if c in ("smem", "flat"):
        m.smem_issued[sel] += 1
    if not op.loads:
        return
    kind = KIND[c]
    seq = {1: m.vm_issued, 2: m.lds_issued, 3: m.smem_issued}[kind][sel]
    for file, first, count in op.loads:
        for i in range(count):
            key = (file, first + i)
            if key not in m.pend:
                m.pend[key] = (np.zeros(m.W, np.int8), np.zeros(m.W, np.int64))
            k, s = m.pend[key]
            k[sel] = kind
            s[sel] = seq
