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
`global_load_lds_*`) is tracked as the pseudo register ('lds', 0), read by DS loads; LDS
accesses in flight as ('ldsa', 0), which `s_barrier` must not pass: other waves touch LDS after
it (the workgroup release LLVM emits for a fenced barrier waits for them).
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


def _reads_lds(info: RegInfo) -> bool:
    return info.family == "ds" and bool(info.dst) and info.base not in (
        "ds_swizzle_b32", "ds_permute_b32", "ds_bpermute_b32")


def _join(a: State, b: State) -> State:
    out = dict(a)
    for key, (k, ooo) in b.items():
        if key in out:
            k0, o0 = out[key]
            out[key] = (min(k0, k), o0 or ooo)
        else:
            out[key] = (k, ooo)
    return out


class _Analysis:
    def __init__(self, instructions: list[Instruction], cfg: CFG, processor: str = "gfx942"):
        self.ins = instructions
        self.cfg = cfg
        self.infos = def_use_all(instructions, processor)
        self.events = [events_of(i, info, processor) for i, info in zip(instructions, self.infos)]

    def step(self, i: int, state: State, report: list[WaitcntViolation] | None) -> State:
        ins, info = self.ins[i], self.infos[i]
        if info.base == "s_waitcnt":
            limits = decode_waitcnt(ins)
            return {(c, r): (k, ooo) for (c, r), (k, ooo) in state.items()
                    if c not in limits or not (limits[c] == 0 or (not ooo and k >= limits[c]))}
        events = self.events[i]
        if report is not None and state:
            self._check(i, info, events, state, report)
        if not events:
            return state
        new = dict(state)
        for ev in events:
            if ev.in_order:
                cap = COUNTER_MAX[ev.counter]
                for key, (k, ooo) in list(new.items()):
                    if key[0] == ev.counter:
                        new[key] = (min(k + 1, cap), ooo)
        for ev in events:
            for r in ev.regs:
                new[(ev.counter, r)] = (0, not ev.in_order)
        return new

    def _check(self, i: int, info: RegInfo, events: list[_Event], state: State,
               report: list[WaitcntViolation]) -> None:
        reads = set(info.uses)
        if _reads_lds(info):
            reads.add(LDS_MEMORY)
        if info.base == "s_barrier":
            reads.add(LDS_ACCESS)
        in_order_same = {ev.counter for ev in events if ev.in_order}
        bad: dict[str, list[Reg]] = {}
        for (counter, r), (_, ooo) in state.items():
            overwrite = r in info.defs and not (counter in in_order_same and not ooo)
            if r in reads or (overwrite and r != LDS_ACCESS):
                bad.setdefault(counter, []).append(r)
        ins = self.ins[i]
        for counter, regs in sorted(bad.items()):
            regs.sort()
            names = _names(regs)
            where = f"0x{ins.address:x}" if ins.address is not None else f"#{i}"
            verb = "reads" if any(r in reads for r in regs) else "overwrites"
            report.append(WaitcntViolation(
                i, ins.address, names[0], counter,
                f"waitcnt: '{ins.text()}' at {where} {verb} {', '.join(names)} while the {counter} "
                f"operation writing it may be outstanding (missing s_waitcnt {counter})"))

    def run(self) -> list[WaitcntViolation]:
        cfg = self.cfg
        order = cfg.reachable()
        live = set(order)
        out_state: dict[int, State] = {}
        in_state: dict[int, State] = {0: {}}
        work = list(order)
        while work:
            b = work.pop(0)
            blk = cfg.blocks[b]
            preds = [out_state[p] for p in blk.preds if p in out_state]
            state: State = {}
            for s in preds:
                state = _join(state, s)
            in_state[b] = state
            for i in range(blk.start, blk.end):
                state = self.step(i, state, None)
            if out_state.get(b) != state:
                out_state[b] = state
                work.extend(s for s in blk.succs if s in live and s not in work)
        report: list[WaitcntViolation] = []
        for b in sorted(live):
            state = in_state[b]
            for i in range(cfg.blocks[b].start, cfg.blocks[b].end):
                state = self.step(i, state, report)
        return report


def _names(regs: list[Reg]) -> list[str]:
    """Compact names: consecutive registers of a file as ranges (v[4:7]), pseudo LDS as 'LDS'."""
    out: list[str] = []
    run: list[Reg] = []
    for r in regs + [("", -2)]:
        if run and r[0] == run[-1][0] and r[1] == run[-1][1] + 1:
            run.append(r)
            continue
        if run:
            f, lo, hi = run[0][0], run[0][1], run[-1][1]
            special = {"lds": "LDS (DMA)", "ldsa": "LDS accesses"}
            out.append(special[f] if f in special else f"{f}{lo}" if lo == hi else f"{f}[{lo}:{hi}]")
        run = [r]
    return out


def check_waitcnt(instructions: list[Instruction], labels: dict[str, int] | None = None,
                  cfg: CFG | None = None, processor: str = "gfx942") -> list[WaitcntViolation]:
    """Every register access in one kernel (of `processor`) that an `s_waitcnt` does not cover."""
    if not instructions:
        return []
    return _Analysis(instructions, cfg or build_cfg(instructions, labels), processor).run()
