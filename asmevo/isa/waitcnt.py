"""Static `s_waitcnt` sufficiency for gfx9 / gfx942 kernels.

Counters (gfx9 has no vscnt): vmcnt counts MUBUF/MTBUF/global/scratch/flat loads, stores and
atomics, all completing in issue order; lgkmcnt counts LDS (in order) and SMEM, GDS, messages
and the LDS half of flat accesses (out of order); expcnt counts exports/GDS data locks, which
compute kernels do not depend on for register results.

`s_waitcnt cnt(N)` guarantees an in-order event has completed when at least N in-order events
on that counter were issued after it (only the N newest can still be pending); an out-of-order
event is guaranteed only by `cnt(0)`. The abstract state maps every register with a possibly
outstanding write to, per counter, the fewest in-order events issued after its producer on any
path, plus whether the producer is out of order; it is joined at CFG merges and iterated to a
fixed point over loops. A read of such a register, or a write to it (except an in-order write
on the same counter), is reported. LDS written by LDS-DMA loads (`buffer_load ... lds`,
`global_load_lds_*`) is tracked per load instruction, as the pseudo register ('lds', i + 1) of
the load at index i, and a DS load reads all of them (('lds', 0) names that read): a DS load is
reported once per LDS-DMA load that may still be pending, so a wait that leaves more of them in
flight gives more findings, even where the code already read LDS with some pending (double
buffering: the analysis does not know which LDS bytes a load writes). LDS accesses in flight are
('ldsa', 0), which `s_barrier` must not pass: other waves touch LDS after it (the workgroup
release LLVM emits for a fenced barrier waits for them).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import DisassemblyError
from ..target import processor
from .cfg import CFG, build_cfg
from .instruction import Instruction
from .regs import Reg, RegInfo, def_use_all, is_lds_dma
from .table import instr_info

LDS_MEMORY: Reg = ("lds", 0)
LDS_ACCESS: Reg = ("ldsa", 0)  # an LDS read, write or atomic in flight
_ENCODING = processor("gfx942").waitcnt
COUNTER_MAX = _ENCODING.maxima
_WAIT_RE = re.compile(r"^(vmcnt|expcnt|lgkmcnt)\((\d+)\)$")
_IMM_RE = re.compile(r"^(?:0x[0-9a-fA-F]+|\d+)$")

# (counter, register) -> (in-order events issued since the producer, producer is out of order)
State = dict[tuple[str, Reg], tuple[int, bool]]


@dataclass(frozen=True)
class WaitcntViolation:
    """An instruction reading or overwriting `register` while its producing load may be pending."""

    index: int
    pc: int | None
    register: str
    counter: str
    message: str


@dataclass(frozen=True)
class _Event:
    counter: str
    in_order: bool
    regs: frozenset[Reg]


def decode_waitcnt(ins: Instruction) -> dict[str, int]:
    """The counter limits an `s_waitcnt` sets; counters it does not wait on are absent. Read from
    the encoding when the instruction has one, else from the text (`vmcnt(N) expcnt(N) lgkmcnt(N)`,
    counters not named are not waited on, or one raw simm16). A bare `s_waitcnt` is not valid
    assembly (llvm-mc 19: "too few operands for instruction") and raises."""
    if ins.encoding:
        out = _ENCODING.decode(int.from_bytes(ins.encoding[:2], "little"))
    else:
        tokens = [*ins.modifiers, *(op.text for op in ins.operands)]
        if not tokens:
            raise DisassemblyError("s_waitcnt without operands (llvm-mc: too few operands for instruction)")
        out = {}
        for tok in tokens:
            m = _WAIT_RE.match(tok)
            if m:
                out[m.group(1)] = int(m.group(2))
            elif _IMM_RE.match(tok):
                out = _ENCODING.decode(int(tok, 0))
            else:
                raise DisassemblyError(f"unparsed s_waitcnt operand {tok!r}")
    return {k: v for k, v in out.items() if v < COUNTER_MAX[k]}


def events_of(ins: Instruction, info: RegInfo, processor: str = "gfx942") -> list[_Event]:
    """The counter events an instruction of `processor` issues (the table's counters; GDS makes an LDS
    op out of order and adds expcnt) and the registers each will write (LDS for LDS-DMA loads, plus
    the in-flight LDS access for LDS instructions)."""
    counters = instr_info(info.base, processor).counters
    if not counters:
        return []
    regs = frozenset(r for r in info.defs if r[0] in "vas")
    if info.family in ("mubuf", "flat"):
        regs = frozenset({LDS_MEMORY}) if is_lds_dma(ins, processor) else regs
        if instr_info(info.base, processor).memory == "cache":
            regs = frozenset()
        return [_Event(c, ordered, regs) for c, ordered in counters]
    if info.family == "ds":
        if ins.modifier("gds") is not None:
            return [_Event("lgkmcnt", False, regs), _Event("expcnt", False, frozenset())]
        return [_Event("lgkmcnt", True, regs | {LDS_ACCESS})]
    return [_Event(c, ordered, regs) for c, ordered in counters]


def _reads(info: RegInfo) -> frozenset[Reg]:
    """What an instruction reads, LDS (by a DS load) and the LDS accesses in flight (by s_barrier) included."""
    reads = set(info.uses)
    if info.family == "ds" and info.dst and info.base not in ("ds_swizzle_b32", "ds_permute_b32", "ds_bpermute_b32"):
        reads.add(LDS_MEMORY)
    if info.base == "s_barrier":
        reads.add(LDS_ACCESS)
    return frozenset(reads)


def _join(a: State, b: State) -> State:
    out = dict(a)
    for key, (k, ooo) in b.items():
        if key in out:
            k0, o0 = out[key]
            out[key] = (min(k0, k), o0 or ooo)
        else:
            out[key] = (k, ooo)
    return out


_Facts = tuple[list[_Event], frozenset[Reg], frozenset[Reg], "dict[str, int] | None"]


def _facts(ins: Instruction, info: RegInfo, processor: str) -> _Facts:
    """An instruction's counter events, reads, reads and writes, and wait limits (an `s_waitcnt`'s, else
    None); kept on the instruction unless `info` is widened (M0-indexed VGPRs), since edited candidates
    share most instructions with their parent."""
    memo = ins.waitcnt_memo
    if memo is not None and memo[0] == processor and info is ins.reg_info_memo:
        return memo[1]
    reads = _reads(info)
    facts = (events_of(ins, info, processor), reads, reads | info.defs,
             decode_waitcnt(ins) if info.base == "s_waitcnt" else None)
    if info is ins.reg_info_memo:
        ins.waitcnt_memo = (processor, facts)
    return facts


def _pending_regs(pending: dict) -> set[Reg]:
    """The registers of pending writes, with ('lds', 0) when an LDS-DMA load is one of them."""
    regs = {r for _, r in pending}
    return regs | {LDS_MEMORY} if any(r[0] == "lds" for r in regs) else regs


class _Path:
    """The analysis state along one block: each pending write keeps the count of in-order events its
    counter had issued when it was issued (a stamp), so an event costs O(1) instead of a pass over
    every pending register; `state()` gives the `State` (events since, capped) at the block's end."""

    def __init__(self, state: State):
        self.issued = dict.fromkeys(COUNTER_MAX, 0)
        self.pending = {key: (-k, ooo) for key, (k, ooo) in state.items()}
        self.regs = _pending_regs(self.pending)  # for a quick test

    def since(self, counter: str, stamp: int) -> int:
        return min(self.issued[counter] - stamp, COUNTER_MAX[counter])

    def state(self) -> State:
        return {key: (self.since(key[0], stamp), ooo) for key, (stamp, ooo) in self.pending.items()}


class _Analysis:
    def __init__(self, instructions: list[Instruction], cfg: CFG, processor: str = "gfx942"):
        self.ins = instructions
        self.cfg = cfg
        facts = [_facts(ins, info, processor) for ins, info in zip(instructions, def_use_all(instructions, processor))]
        self.events, self.reads, self.touched, limits = (list(column) for column in zip(*facts))
        self.limits = {i: lim for i, lim in enumerate(limits) if lim is not None}

    def step(self, i: int, path: _Path, report: list[WaitcntViolation] | None) -> None:
        limits = self.limits.get(i)
        if limits is not None:
            path.pending = {(c, r): (stamp, ooo) for (c, r), (stamp, ooo) in path.pending.items()
                            if c not in limits or not (limits[c] == 0 or (not ooo and path.since(c, stamp) >= limits[c]))}
            path.regs = _pending_regs(path.pending)
            return
        events = self.events[i]
        if report is not None and not path.regs.isdisjoint(self.touched[i]):
            self._check(i, events, path.pending, report)
        for ev in events:
            if ev.in_order:
                path.issued[ev.counter] += 1
        for ev in events:
            for r in ev.regs:
                if r == LDS_MEMORY:  # each LDS-DMA load is its own pseudo register
                    path.regs.add(r)
                    r = ("lds", i + 1)
                path.pending[(ev.counter, r)] = (path.issued[ev.counter], not ev.in_order)
                path.regs.add(r)

    def _check(self, i: int, events: list[_Event], pending: dict, report: list[WaitcntViolation]) -> None:
        reads = self.reads[i]
        in_order_same = {ev.counter for ev in events if ev.in_order}
        bad: dict[str, list[Reg]] = {}
        for r in self.touched[i]:
            for counter in COUNTER_MAX:
                entry = pending.get((counter, r))
                if entry is None:
                    continue
                overwrite = r != LDS_ACCESS and not (counter in in_order_same and not entry[1])
                if r in reads or overwrite:
                    bad.setdefault(counter, []).append(r)
        found = [(counter, _names(sorted(regs)), any(r in reads for r in regs)) for counter, regs in sorted(bad.items())]
        if LDS_MEMORY in reads:  # a DS load: one finding per LDS-DMA load that may be pending
            found += [(counter, [f"LDS (DMA load at {self._where(r[1] - 1)})"], True)
                      for counter, r in sorted(pending) if r[0] == "lds"]
        ins = self.ins[i]
        for counter, names, read in found:
            report.append(WaitcntViolation(
                i, ins.address, names[0], counter,
                f"waitcnt: '{ins.text()}' at {self._where(i)} {'reads' if read else 'overwrites'} {', '.join(names)} "
                f"while the {counter} operation writing it may be outstanding (missing s_waitcnt {counter})"))

    def _where(self, i: int) -> str:
        address = self.ins[i].address
        return f"0x{address:x}" if address is not None else f"#{i}"

    def _through(self, b: int, state: State, report: list[WaitcntViolation] | None) -> State:
        path = _Path(state)
        blk = self.cfg.blocks[b]
        for i in range(blk.start, blk.end):
            self.step(i, path, report)
        return path.state()

    def run(self) -> list[WaitcntViolation]:
        cfg = self.cfg
        order = cfg.reachable()
        live = set(order)
        out_state: dict[int, State] = {}
        in_state: dict[int, State] = {0: {}}
        work = list(order)
        while work:
            b = work.pop(0)
            state: State = {}
            for p in cfg.blocks[b].preds:
                if p in out_state:
                    state = _join(state, out_state[p])
            in_state[b] = state
            state = self._through(b, state, None)
            if out_state.get(b) != state:
                out_state[b] = state
                work.extend(s for s in cfg.blocks[b].succs if s in live and s not in work)
        report: list[WaitcntViolation] = []
        for b in sorted(live):
            self._through(b, in_state[b], report)
        return report


def _names(regs: list[Reg]) -> list[str]:
    """Compact names: consecutive registers of a file as ranges (v[4:7]), LDS accesses in flight by name."""
    out: list[str] = []
    run: list[Reg] = []
    for r in regs + [("", -2)]:
        if run and r[0] == run[-1][0] and r[1] == run[-1][1] + 1:
            run.append(r)
            continue
        if run:
            f, lo, hi = run[0][0], run[0][1], run[-1][1]
            out.append("LDS accesses" if f == "ldsa" else f"{f}{lo}" if lo == hi else f"{f}[{lo}:{hi}]")
        run = [r]
    return out


def check_waitcnt(instructions: list[Instruction], labels: dict[str, int] | None = None,
                  cfg: CFG | None = None, processor: str = "gfx942") -> list[WaitcntViolation]:
    """Every register access in one kernel (of `processor`) that an `s_waitcnt` does not cover."""
    if not instructions:
        return []
    return _Analysis(instructions, cfg or build_cfg(instructions, labels), processor).run()
