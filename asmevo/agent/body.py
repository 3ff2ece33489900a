"""A kernel body as an editable list of items, with the analyses rewrite operators need: register
def/use, CFG, liveness, and the static checks as an oracle on any rearrangement.

An instruction recovery kept as `.long` words (LLVM would not re-encode its bytes, e.g. gfx950's
scaled MFMAs with prefix bits no syntax sets) is an item with `raw` set: the analyses read the
instruction its comment names, and operators may move or copy the line but never rewrite it
(`keeps_raw`), so its bytes reach the candidate unchanged."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from ..errors import AsmEvoError
from ..isa.cfg import CFG, build_cfg
from ..isa.exec_values import launch_exec
from ..isa.instruction import Instruction
from ..isa.regs import Reg, RegInfo, def_use_all, operand_regs
from ..isa.waitcnt import check_waitcnt
from ..static_checks import StaticFinding, run_static_checks
from .edit import Edit, edit_between
from ..source import instruction_line, label_of, parse_line, raw_instruction, strip_comment
from .source import KernelSource


FLOAT_MODE_WRITERS = ("s_setreg_b32", "s_setreg_imm32_b32", "s_round_mode", "s_denorm_mode")


@dataclass(frozen=True)
class FloatMode:
    """The float mode waves start with (the kernel descriptor's COMPUTE_PGM_RSRC1): IEEE mode (float
    min/max quiet signalling NaNs) and the f32 denormal mode (3: kept on input and output; 0: flushed).
    The instructions in `FLOAT_MODE_WRITERS` change it at run time."""

    ieee: bool = False
    denorm32: int = 0


@dataclass(frozen=True)
class BodyItem:
    """One body line: an instruction (`ins` set; `raw` when the line is its `.long` words), a label
    definition (`label` set) or other text."""

    text: str
    ins: Instruction | None = None
    label: str = ""
    raw: bool = False


def item_of(line: str) -> BodyItem:
    """A body item from a source line: a label, a raw-words instruction (a `.long` line whose comment
    names a non-branch instruction), an instruction, or other text."""
    code = strip_comment(line)
    if (label := label_of(code)) is not None:
        return BodyItem(line, label=label)
    if (words := raw_instruction(line)) is not None and not (ins := parse_line(words)).is_branch:
        return BodyItem(line, ins, raw=True)
    if code and not code.startswith("."):
        return BodyItem(line, parse_line(code))
    return BodyItem(line)


def make_item(text: str) -> BodyItem:
    """An instruction item from instruction text (canonical spelling)."""
    return BodyItem(instruction_line(text), parse_line(text))


class Body:
    """An immutable arrangement of a kernel body's items and analyses of it. `processor` is the
    kernel's (its code object's target): every analysis reads that processor's instruction table,
    hazard rules and waits."""

    def __init__(self, items: list[BodyItem], offset: int, xnack: bool = True, kernarg: int | None = None,
                 preload: bool = False, buffers: frozenset[int] = frozenset(), processor: str = "gfx942",
                 float_mode: FloatMode = FloatMode(), launch_sgprs: int | None = None):
        self.items = items
        self.offset = offset
        self.xnack = xnack
        self.processor = processor
        self.kernarg = kernarg  # first SGPR of the kernarg segment pointer, when the kernel has one
        self.preload = preload  # kernarg preloading: hardware starts past the compatibility preamble
        self.buffers = buffers  # kernarg byte offsets of pointer arguments (global buffers)
        self.float_mode = float_mode
        self.launch_sgprs = launch_sgprs  # SGPRs the hardware initialises at wave launch (None: unknown)
        # Set by an operator on its result: instruction index -> (parent instruction index, factor):
        # its global-memory traffic is the parent instruction's times factor (for predictions only).
        self.traffic: dict[int, tuple[int, float]] = {}
        # instruction index -> terms (parent instruction index, coefficient): it runs the sum of each
        # coefficient times its parent instruction's executions (for predictions only).
        self.counts: dict[int, tuple[tuple[int, float], ...]] = {}

    @classmethod
    def of(cls, src: KernelSource, xnack: bool = True, kernarg: int | None = None, preload: bool = False,
           buffers: frozenset[int] = frozenset(), processor: str = "gfx942", float_mode: FloatMode = FloatMode(),
           launch_sgprs: int | None = None) -> "Body":
        lo, hi = src.body
        return cls([item_of(src.line(n)) for n in range(lo, hi + 1)], lo, xnack, kernarg, preload, buffers,
                   processor, float_mode, launch_sgprs)

    def replace(self, items: list[BodyItem]) -> "Body":
        return Body(items, self.offset, self.xnack, self.kernarg, self.preload, self.buffers, self.processor,
                    self.float_mode, self.launch_sgprs)

    def with_lines(self, lines: list[str]) -> "Body":
        """This body's kernel with the body lines `lines` (each read as `Body.of` reads a source line)."""
        return self.replace([item_of(line) for line in lines])

    @cached_property
    def start(self) -> int:
        """Index of the instruction waves start at: 0, or with kernarg preloading the target of the
        compatibility preamble's `s_branch` (LLVM's preamble loads the kernargs, then jumps over
        its padding to the 256-byte entry)."""
        if not self.preload:
            return 0
        instrs, labels, _ = self.index
        first = self.cfg.blocks[0]
        last = instrs[first.end - 1]
        if last.mnemonic != "s_branch" or last.label not in labels:
            raise AsmEvoError("kernarg-preloading kernel without its compatibility preamble's s_branch")
        return labels[last.label]

    @cached_property
    def opaque(self) -> bool:
        """Raw words or other directives make the body unsafe to rearrange."""
        return any(it.ins is None and not it.label and strip_comment(it.text).startswith(".") for it in self.items)

    @cached_property
    def index(self) -> tuple[list[Instruction], dict[str, int], list[int]]:
        """(instructions, label -> instruction index, item position of each instruction)."""
        instrs, labels, pos = [], {}, []
        for k, it in enumerate(self.items):
            if it.label:
                labels[it.label] = len(instrs)
            elif it.ins is not None:
                instrs.append(it.ins)
                pos.append(k)
        return instrs, labels, pos

    @property
    def instructions(self) -> list[Instruction]:
        return self.index[0]

    @property
    def pos(self) -> list[int]:
        return self.index[2]

    @cached_property
    def infos(self) -> list[RegInfo]:
        return def_use_all(self.instructions, self.processor)

    @cached_property
    def named_tops(self) -> dict[str, int]:
        """Per register kind ("v", "a", "s"), how many the body names: one past the highest."""
        tops: dict[str, int] = {}
        for info in self.infos:
            for kind, r in info.defs | info.uses:
                tops[kind] = max(tops.get(kind, 0), r + 1)
        return tops

    @cached_property
    def cfg(self) -> CFG:
        return build_cfg(self.instructions, self.index[1])

    @cached_property
    def waitcnt_violations(self) -> int:
        return len(check_waitcnt(self.instructions, cfg=self.cfg, processor=self.processor))

    @cached_property
    def exec_full(self) -> list[bool]:
        """Per instruction, whether EXEC certainly equals the EXEC the wave started with when it issues
        (`asmevo.isa.exec_values`)."""
        return launch_exec(self.instructions, self.infos, self.cfg, self.start)

    @cached_property
    def static_findings(self) -> list[StaticFinding]:
        return run_static_checks(self.instructions, labels=self.index[1], xnack=self.xnack, processor=self.processor,
                                 cfg=self.cfg)

    @cached_property
    def findings(self) -> Counter:
        return Counter((f.check, f.rule) for f in self.static_findings)

    @cached_property
    def raw_words(self) -> Counter:
        """The code of the raw-words instruction lines (with multiplicity)."""
        return Counter(strip_comment(it.text) for it in self.items if it.raw)

    def keeps_raw(self, parent: "Body") -> bool:
        """Every raw-words instruction line of `parent` is still here (moved or copied, not rewritten)."""
        return not parent.raw_words - self.raw_words

    def same_code(self, other: "Body") -> bool:
        """Same code ignoring comments."""
        return [strip_comment(x.text) for x in self.items] == [strip_comment(x.text) for x in other.items]

    def no_worse(self, parent: "Body", full: bool = True) -> bool:
        """No static finding beyond the parent's (waitcnt only when not `full`)."""
        if not full:
            return self.waitcnt_violations <= parent.waitcnt_violations
        return all(n <= parent.findings[k] for k, n in self.findings.items())

    def edit(self, parent: "Body", operator: str, note: str) -> Edit | None:
        """The edit turning `parent` into this arrangement (None when identical)."""
        return edit_between([it.text for it in parent.items], [it.text for it in self.items],
                            self.offset, operator, note)

    @property
    def live_out(self) -> list[frozenset[Reg]]:
        """Registers possibly read after each block."""
        return self.liveness[1]

    @property
    def live_in(self) -> list[frozenset[Reg]]:
        """Registers possibly read from each block's start on."""
        return self.liveness[0]

    @cached_property
    def liveness(self) -> tuple[list[frozenset[Reg]], list[frozenset[Reg]]]:
        """(live-in, live-out) per block. VGPR/AGPR writes never kill (they may cover only the
        active lanes); SGPR and SCC writes do."""
        cfg, infos = self.cfg, self.infos
        gen, kill = [], []
        for b in cfg.blocks:
            g: set[Reg] = set()
            k: set[Reg] = set()
            for i in range(b.end - 1, b.start - 1, -1):
                full = {r for r in infos[i].defs if r[0] in ("s", "scc")} - infos[i].uses
                g -= full
                k |= full
                g |= infos[i].uses
            gen.append(frozenset(g))
            kill.append(frozenset(k))
        live_in = [frozenset()] * len(cfg.blocks)
        live_out = [frozenset()] * len(cfg.blocks)
        changed = True
        while changed:
            changed = False
            for b in reversed(cfg.blocks):
                out = frozenset().union(*(live_in[s] for s in b.succs)) if b.succs else frozenset()
                inn = gen[b.index] | (out - kill[b.index])
                if out != live_out[b.index] or inn != live_in[b.index]:
                    live_out[b.index], live_in[b.index] = out, inn
                    changed = True
        return live_in, live_out

    def walk_forward(self, block: int, start: int, stop: Callable[[int], bool]) -> None:
        """Call `stop` on the instructions from index `start` of `block` on, along every CFG path
        (each successor block once); a path ends at the first instruction `stop` returns True for."""
        cfg = self.cfg
        seen: set[int] = set()
        work = [(block, start)]
        while work:
            b, first = work.pop()
            blk = cfg.blocks[b]
            if any(stop(j) for j in range(max(first, blk.start), blk.end)):
                continue
            for s in blk.succs:
                if s not in seen:
                    seen.add(s)
                    work.append((s, cfg.blocks[s].start))

    def live_before(self, i: int) -> frozenset[Reg]:
        """Registers possibly read from instruction i on."""
        info = self.infos[i]
        return (self.live_after(i) - {r for r in info.defs if r[0] in ("s", "scc")}) | info.uses

    def readers(self, k: int, end: int) -> list[int] | None:
        """The instructions of k+1..end-1 reading the registers instruction k writes, up to their next write; None
        when one may be read after k's block (live out of it, never written again before `end`)."""
        out, regs = self._reads(k, end)
        return None if regs & self.live_out[self.cfg.block_of[k]] else out

    def readers_in(self, k: int, end: int) -> list[int]:
        """`readers` without the look past `end`: the readers among k+1..end-1 alone."""
        return self._reads(k, end)[0]

    def _reads(self, k: int, end: int) -> tuple[list[int], set]:
        """(The readers of what instruction k writes among k+1..end-1, up to its next write; the registers still
        holding k's values at `end`.)"""
        regs, out = self.infos[k].defs, []
        for j in range(k + 1, end):
            info = self.infos[j]
            if info.uses & regs:
                out.append(j)
            regs = regs - info.defs
            if not regs:
                break
        return out, regs

    def writers(self, op) -> list[int]:
        """The instructions writing operand `op`'s registers."""
        regs = operand_regs(op)
        return [j for j, info in enumerate(self.infos) if info.defs & regs]

    def dominates(self, x: int, y: int) -> bool:
        """Whether instruction x runs before y on every path to y."""
        bx, by = self.cfg.block_of[x], self.cfg.block_of[y]
        return bx in self.cfg.dominators()[by] and (bx != by or x < y)

    def last_writer(self, op, before: int, start: int) -> int | None:
        """The last instruction of start..before-1 writing operand `op`'s registers."""
        regs = operand_regs(op)
        return next((j for j in range(before - 1, start - 1, -1) if self.infos[j].defs & regs), None)

    def live_after(self, i: int) -> frozenset[Reg]:
        """Registers possibly read after instruction i."""
        b = self.cfg.blocks[self.cfg.block_of[i]]
        live = set(self.live_out[b.index])
        for j in range(b.end - 1, i, -1):
            info = self.infos[j]
            live -= {r for r in info.defs if r[0] in ("s", "scc")} - info.uses
            live |= info.uses
        return frozenset(live)


def across_block(body: Body, i: int, apply: Callable[[Body, int], "Body | None"]) -> Body | None:
    """`apply` at every instruction of instruction i's block, first to last; where it applies, the instruction
    now at that index (the rewritten one, or the next after a deletion) is looked at again. None when it
    applied nowhere."""
    b = body.cfg.block_of[i]
    cur, k, changed = body, body.cfg.blocks[b].start, False
    while k < cur.cfg.blocks[b].end:
        new = apply(cur, k)
        if new is not None and len(new.cfg.blocks) == len(cur.cfg.blocks):
            cur, changed = new, True
            continue
        k += 1
    return cur if changed else None


def loop_header(body: Body, i: int) -> int | None:
    """The header block of instruction i's innermost loop (None outside loops)."""
    loop = body.cfg.innermost_loop(body.cfg.block_of[i])
    return loop.header if loop else None


def across_loop(body: Body, i: int, site: Callable[[Body, int], bool],
                apply: Callable[[Body, int], "Body | None"]) -> tuple[Body, int]:
    """`apply` at every `site` of instruction i's innermost loop (the whole body outside loops), first to last,
    each on the result so far: (the result, how many applied)."""
    cfg = body.cfg
    loop = cfg.innermost_loop(cfg.block_of[i])
    blocks = sorted(loop.blocks) if loop else range(len(cfg.blocks))
    targets = [id(body.instructions[j]) for x in blocks for j in range(cfg.blocks[x].start, cfg.blocks[x].end)
               if site(body, j)]
    cur, applied = body, 0
    for target in targets:
        j = next((n for n, ins in enumerate(cur.instructions) if id(ins) == target), None)
        new = apply(cur, j) if j is not None else None
        if new is not None:
            cur, applied = new, applied + 1
    return cur, applied
