"""Early kernarg loads: a scalar load from the kernarg segment issued late in the kernel (after a
loop, say) stalls its first reader for the whole SMEM latency. The segment is read-only and mapped
for the whole dispatch, so the same load can be issued in the entry block, next to the other kernarg
loads, where the entry's own `s_waitcnt lgkmcnt(0)` absorbs its latency. Its destination registers
are usually busy in between, so the load writes fresh SGPRs and the reads it reached read those.

Renaming is sound when every read of an original destination register reached by the load is
reached by no other definition of that register (reaching definitions over the CFG; SGPR writes are
whole-wave, so a write kills)."""
from __future__ import annotations

import re

from ..isa.instruction import Instruction
from .body import Body, BodyItem, make_item
from .ops_sched import scalar_load

_MAX_SGPR = 101  # s0..s101 are addressable on gfx9
_SREG = re.compile(r"\bs\[(\d+):(\d+)\]|\bs(\d+)\b")


def _reached_uses(body: Body, block: int, first: int, reg: tuple[str, int]) -> set[int]:
    """Instructions reading `reg` that its value at instruction `first` of `block` (or at the block's
    end, when `first` is past it) can reach: forward over the CFG, stopping at the next definition."""
    infos = body.infos
    out: set[int] = set()

    def stop(j: int) -> bool:
        if reg in infos[j].uses:
            out.add(j)
        return reg in infos[j].defs

    body.walk_forward(block, first, stop)
    return out


def _renamed_text(ins: Instruction, mapping: dict[int, int], sources_from: int = 0) -> str | None:
    """`ins` with the SGPR operands from index `sources_from` on renamed by `mapping` (index ->
    index; the destinations before it keep their registers); None if a register tuple straddles the
    mapped registers or would stop being contiguous."""
    def sub(m: re.Match) -> str:
        lo, hi = (int(m[1]), int(m[2])) if m[1] else (int(m[3]), int(m[3]))
        regs = range(lo, hi + 1)
        hit = [r in mapping for r in regs]
        if not any(hit):
            return m[0]
        if not all(hit) or any(mapping[r] != mapping[lo] + (r - lo) for r in regs):
            raise ValueError
        return f"s[{mapping[lo]}:{mapping[hi]}]" if m[1] else f"s{mapping[lo]}"

    try:
        ops = [op.text if n < sources_from else _SREG.sub(sub, op.text) for n, op in enumerate(ins.operands)]
    except ValueError:
        return None
    return " ".join([ins.mnemonic, ", ".join(ops), *ins.modifiers]).strip()


def _fresh_base(body: Body, count: int) -> int | None:
    """The lowest SGPR base, aligned as SMEM destinations need, of `count` registers nothing uses."""
    used = {r[1] for info in body.infos for r in info.defs | info.uses if r[0] == "s"}
    align = 2 if count == 2 else 4 if count > 2 else 1
    for base in range(0, _MAX_SGPR - count + 2, align):
        if not used.intersection(range(base, base + count)):
            return base
    return None


def hoist_kernarg_load(body: Body, i: int) -> Body | None:
    """Move the kernarg `s_load` at instruction i (outside the entry block) to the entry block, after
    its kernarg loads, writing fresh SGPRs; the reads it reached are renamed to them. An `s_nop 0`
    takes its place when it was a wait state some hazard needed."""
    info, ins, cfg = body.infos[i], body.instructions[i], body.cfg
    if body.kernarg is None or not scalar_load(info, body.processor) or len(ins.operands) < 2:
        return None
    base = ins.operands[1]
    pointer = {("s", body.kernarg), ("s", body.kernarg + 1)}
    if base.kind != "sgpr" or (base.index, base.count) != (body.kernarg, 2) or cfg.block_of[i] == 0:
        return None
    if cfg.blocks[0].preds or body.preload:  # a preloading kernel's entry block is a preamble hardware skips
        return None
    for reg in pointer:  # the load reads the dispatch's kernarg pointer, not a rewritten one
        if any(i in _reached_uses(body, cfg.block_of[j], j + 1, reg) for j, x in enumerate(body.infos) if reg in x.defs):
            return None
    dst = ins.operands[0]
    fresh = _fresh_base(body, dst.count)
    if dst.kind != "sgpr" or fresh is None:
        return None
    mapping = {dst.index + k: fresh + k for k in range(dst.count)}
    readers: set[int] = set()
    for r in mapping:
        reg = ("s", r)
        uses = _reached_uses(body, cfg.block_of[i], i + 1, reg)
        # other values of the register: the dispatch's (from the entry) and every other definition's
        sources = [(0, 0)] + [(cfg.block_of[j], j + 1) for j, x in enumerate(body.infos) if reg in x.defs and j != i]
        if any(_reached_uses(body, b, j, reg) & uses for b, j in sources):
            return None
        readers |= uses
    items: list[BodyItem] = list(body.items)
    for j in readers:  # a reader may redefine the register: its destinations keep their names
        text = _renamed_text(body.instructions[j], mapping, len(body.infos[j].dst))
        if text is None:
            return None
        items[body.pos[j]] = make_item(text)
    # the load itself: only its destination is renamed (it may overwrite its own base pointer)
    fresh_dst = f"s[{fresh}:{fresh + dst.count - 1}]" if dst.count > 1 else f"s{fresh}"
    items[body.pos[i]] = make_item(" ".join([ins.mnemonic, ", ".join([fresh_dst] + [op.text for op in ins.operands[1:]]),
                                             *ins.modifiers]))
    entry = cfg.blocks[0]
    loads = [j for j in range(entry.start, entry.end) if body.infos[j].family == "smem"]
    first = loads[-1] + 1 if loads else entry.start
    if any(body.infos[j].defs & pointer for j in range(entry.start, first)):
        return None
    at = body.pos[first] if first < entry.end else body.pos[first - 1] + 1
    moved = items[body.pos[i]]
    for hole in ([], [make_item("s_nop 0")]):  # the load may have been a hazard's wait state
        trial = items[:body.pos[i]] + hole + items[body.pos[i] + 1:]
        trial.insert(at, moved)
        new = body.replace(trial)
        if new.no_worse(body):
            return new
    return None
