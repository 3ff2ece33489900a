"""Basic blocks, control-flow graph, dominators and natural loops of one kernel's instructions.

Branch targets come from `Instruction.target` (an address, as disassembly sets it) or from
`Instruction.label` resolved through a `labels` map (label -> instruction index). Instruction 0
is the entry. `s_endpgm*` ends a path; `s_setpc_b64` is an indirect jump whose successors are
unknown, so its block is recorded in `CFG.indirect` and given no successors (analyses that need
soundness there must treat it conservatively); calls (`s_swappc_b64`, `s_call_b64`) fall through.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import DisassemblyError, UnsupportedInstruction
from .instruction import Instruction

_UNSUPPORTED = frozenset({"s_cbranch_join", "s_cbranch_g_fork", "s_cbranch_i_fork", "s_rfe_b64",
                          "s_rfe_restore_b64"})


@dataclass
class Block:
    """Instructions `start` (inclusive) to `end` (exclusive) of the list."""

    index: int
    start: int
    end: int
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Loop:
    """A natural loop: its header block, all member blocks, and the latches (back-edge sources)."""

    header: int
    blocks: frozenset[int]
    latches: tuple[int, ...]


@dataclass
class CFG:
    instructions: list[Instruction]
    blocks: list[Block]
    indirect: list[int]
    block_of: list[int]

    @property
    def entry(self) -> Block:
        return self.blocks[0]

    def reachable(self) -> list[int]:
        """Block indices reachable from the entry, in reverse post-order."""
        seen: set[int] = set()
        order: list[int] = []
        stack: list[tuple[int, int]] = [(0, 0)]
        seen.add(0)
        while stack:
            b, i = stack.pop()
            succs = self.blocks[b].succs
            if i < len(succs):
                stack.append((b, i + 1))
                s = succs[i]
                if s not in seen:
                    seen.add(s)
                    stack.append((s, 0))
            else:
                order.append(b)
        return order[::-1]

    def reach(self, b: int, backward: bool = False) -> set[int]:
        """Blocks some path of one or more edges leads to from block b (backward: from which one leads to b)."""
        edges = (lambda k: self.blocks[k].preds) if backward else (lambda k: self.blocks[k].succs)
        seen: set[int] = set()
        work = list(edges(b))
        while work:
            k = work.pop()
            if k not in seen:
                seen.add(k)
                work.extend(edges(k))
        return seen

    def dominators(self) -> dict[int, frozenset[int]]:
        """Dominator sets of the reachable blocks."""
        rpo = self.reachable()
        live = set(rpo)
        dom: dict[int, frozenset[int]] = {b: frozenset(live) for b in rpo}
        dom[0] = frozenset({0})
        changed = True
        while changed:
            changed = False
            for b in rpo[1:]:
                preds = [p for p in self.blocks[b].preds if p in live]
                new = frozenset.intersection(*(dom[p] for p in preds)) | {b} if preds else frozenset({b})
                if new != dom[b]:
                    dom[b], changed = new, True
        return dom

    def back_edges(self) -> list[tuple[int, int]]:
        """Edges (latch, header) whose header dominates the latch."""
        dom = self.dominators()
        return [(b, s) for b in dom for s in self.blocks[b].succs if s in dom[b]]

    def loops(self) -> list[Loop]:
        """Natural loops, one per header (back edges to the same header merged)."""
        by_header: dict[int, list[int]] = {}
        for latch, header in self.back_edges():
            by_header.setdefault(header, []).append(latch)
        loops = []
        for header, latches in sorted(by_header.items()):
            body = {header}
            work = [l for l in latches if l != header]
            body.update(work)
            while work:
                for p in self.blocks[work.pop()].preds:
                    if p not in body:
                        body.add(p)
                        work.append(p)
            loops.append(Loop(header, frozenset(body), tuple(sorted(latches))))
        return loops

    def innermost_loop(self, b: int) -> Loop | None:
        """The smallest natural loop holding block b (None: it is in no loop)."""
        return min((lp for lp in self.loops() if b in lp.blocks), key=lambda lp: len(lp.blocks), default=None)

    def preheader(self, loop: Loop) -> int | None:
        """The one block outside `loop` that enters its header (None: several do, or none)."""
        outside = [p for p in self.blocks[loop.header].preds if p not in loop.blocks]
        return outside[0] if len(outside) == 1 else None


def build_cfg(instructions: list[Instruction], labels: dict[str, int] | None = None) -> CFG:
    """Split `instructions` into basic blocks and connect them."""
    if not instructions:
        raise DisassemblyError("cannot build a CFG of an empty instruction list")
    by_address = {ins.address: i for i, ins in enumerate(instructions) if ins.address is not None}
    targets: dict[int, int] = {}
    leaders = {0}
    for i, ins in enumerate(instructions):
        if ins.mnemonic in _UNSUPPORTED:
            raise UnsupportedInstruction(ins.mnemonic, ins.address, "control flow not modelled")
        if ins.is_branch:
            targets[i] = _resolve(ins, by_address, labels)
            leaders.add(targets[i])
        if ins.is_branch or ins.ends_program or ins.mnemonic == "s_setpc_b64":
            leaders.add(i + 1)
    starts = sorted(s for s in leaders if s < len(instructions))
    blocks = [Block(k, s, e) for k, (s, e) in enumerate(zip(starts, starts[1:] + [len(instructions)]))]
    block_of = [0] * len(instructions)
    for b in blocks:
        block_of[b.start:b.end] = [b.index] * (b.end - b.start)
    indirect = []
    for b in blocks:
        last = instructions[b.end - 1]
        succ: list[int] = []
        if last.is_branch:
            succ.append(block_of[targets[b.end - 1]])
        if last.mnemonic == "s_setpc_b64":
            indirect.append(b.index)
        elif last.falls_through and b.end < len(instructions):
            succ.append(block_of[b.end])
        for s in dict.fromkeys(succ):
            b.succs.append(s)
            blocks[s].preds.append(b.index)
    return CFG(instructions, blocks, indirect, block_of)


def _resolve(ins: Instruction, by_address: dict[int, int], labels: dict[str, int] | None) -> int:
    if ins.target is not None and ins.target in by_address:
        return by_address[ins.target]
    if ins.label is not None and labels is not None and ins.label in labels:
        return labels[ins.label]
    where = f"0x{ins.address:x}" if ins.address is not None else ins.text()
    raise DisassemblyError(f"branch at {where} jumps outside the analysed instructions")
