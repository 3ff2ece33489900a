"""interleave_mfma: run a GEMM K loop's MFMA chain in the shadow of the next tile's load work.

Triton's K loop ends `MFMA chain; s_cbranch_scc0 exit; next tile's masks, addresses and global loads;
back edge`. The wave idles while each MFMA waits for the matrix core, and the loads start only after the
whole chain. The operator sinks the chain's tail (its MFMAs after the block's last `s_barrier`/`s_nop`,
and the `s_waitcnt`s between them) past the conditional branch into both successors: the exit path gets
a copy of the tail in a new block just before its target, the fall-through path gets the tail interleaved
with its own instructions, one MFMA about every matrix-core occupancy. Skip branches of the loop are
removed first (`remove_skip_branches`), so the load section is straight-line.

Legal when:

* the block ends in a conditional branch and nothing else reaches the exit target's code through the
  new block before it (an unconditional transfer precedes it; the branch's label is its only one);
* the fall-through block's other predecessors (a rotated loop's preheader jumping into it through its
  one label) get their own copy, as it was, of the code from there to the next unconditional transfer;
* what stays above (the tail's SALU/VALU work, e.g. the loop counter and its compare) is independent of
  every MFMA it overtakes, of the loads every wait it overtakes waits for, and writes no EXEC: the branch
  decides as before;
* in the fall-through block an MFMA is only moved below instructions independent of it in registers
  (EXEC aside) and other MFMAs never reorder; EXEC, which an MFMA reads, is the wave's starting EXEC
  both where the chain was and where each MFMA lands (`asmevo.isa.exec_values`: masked regions restored);
* a moved `s_waitcnt` crosses no instruction counted on a counter it waits on (its count keeps its
  meaning: no vmcnt/lgkmcnt recount is needed, no memory operation is reordered), none touching a register
  a load of the block still pending on those counters writes, and no `s_barrier` (the LDS reads it
  completes stay before the other waves may overwrite that LDS);
* every MFMA of the tail can co-execute with VALU work (not FP32/FP64 inputs: the AMD Matrix Instruction
  Calculator's `coexec` is false for them; the cycle model holds the VALU under them, review finding 11).

No register is renamed: an MFMA lands before the first instruction that overwrites one of its operands
(such a write may follow the MFMA at once; only an SrcC overwrite needs wait states, LLVM
checkMAIVALUHazards, and the hazard check re-verifies that). The result is re-checked (waitcnt and
hazard analyses: no finding beyond the parent's); the gates then verify it on the emulator.
"""
from __future__ import annotations

import copy
import dataclasses

from ..isa.exec_values import launch_exec
from ..isa.regs import EXEC
from ..isa.table import instr_info
from ..isa.waitcnt import decode_waitcnt
from ..model.costs import cost
from .body import Body, BodyItem, make_item
from .ops_branch import remove_skip_branches

_MEMORY = ("smem", "flat", "mubuf", "ds")
_TRANSFERS = ("s_branch", "s_endpgm", "s_setpc_b64")


def coexecutes(base: str) -> bool:
    """An MFMA whose inputs let independent VALU work issue while it runs: not FP32/FP64 inputs (AMD Matrix
    Instruction Calculator, `coexec`; xf32 co-executes)."""
    return not base.endswith(("_f32", "_f64")) or base.endswith("xf32")


def _counted(body: Body, j: int) -> set[str]:
    return {c for c, _ in instr_info(body.infos[j].base, body.processor).counters}


def _pending(body: Body, block_start: int, x: int) -> set:
    """Registers written by the block's loads still outstanding, on a counter wait x waits on, just before
    x: in-order events retire down to each earlier wait's count; an out-of-order one only at count 0."""
    ins, infos = body.instructions, body.infos
    out: set = set()
    for counter in decode_waitcnt(ins[x]):
        queue: list[tuple[frozenset, bool]] = []
        for j in range(block_start, x):
            if ins[j].mnemonic == "s_waitcnt" and counter in (waits := decode_waitcnt(ins[j])):
                cut = max(0, len(queue) - waits[counter])
                retired, kept = queue[:cut], queue[cut:]
                queue = [] if not waits[counter] else kept if all(ordered for _, ordered in retired) else queue
            else:
                ordered = dict(instr_info(infos[j].base, body.processor).counters).get(counter)
                if ordered is not None:
                    queue.append((infos[j].defs, ordered))
        out |= set().union(*(defs for defs, _ in queue))
    return out


def _conflicts(body: Body, p: int, x: int, block_start: int) -> bool:
    """Instruction x (moved down from the block starting at `block_start`) may not cross instruction p."""
    infos, ins = body.infos, body.instructions
    if ins[x].mnemonic == "s_waitcnt":
        waited = decode_waitcnt(ins[x]).keys()
        return bool(_counted(body, p) & waited or (infos[p].uses | infos[p].defs) & _pending(body, block_start, x)
                    or infos[p].base == "s_barrier")
    a, b = infos[p], infos[x]
    if a.family == "mfma":
        return True
    regs = (a.defs & b.uses) | (a.uses & b.defs) | (a.defs & b.defs)
    return bool(regs - EXEC)


def _groups(body: Body, moved: list[int]) -> list[list[int]]:
    """The moved instructions cut after each MFMA (waits travel with the MFMA after them; trailing waits
    with the last MFMA)."""
    groups: list[list[int]] = [[]]
    for j in moved:
        groups[-1].append(j)
        if body.infos[j].family == "mfma":
            groups.append([])
    tail = groups.pop()
    groups[-1].extend(tail)
    return groups


def _placements(body: Body, groups: list[list[int]], start: int, last: int, exec_ok: list[bool],
                block_start: int) -> list[int] | None:
    """Per group, the instruction of [start, last] of the fall-through block it is inserted before: each
    MFMA about one matrix-core occupancy after the previous one, never past its first conflict, in order,
    only where EXEC is the starting EXEC."""
    ins = body.instructions
    bounds = []
    limit = last
    for group in reversed(groups):
        for x in group:
            limit = next((p for p in range(start, limit + 1) if _conflicts(body, p, x, block_start)), limit)
        while limit >= start and not exec_ok[limit]:
            limit -= 1
        if limit < start:
            return None
        bounds.append(limit)
    bounds.reverse()
    out: list[int] = []
    for k, bound in enumerate(bounds):
        gap, p, filled = 0.0, start, 0.0
        if out:
            prev = cost(ins[next(j for j in groups[k - 1] if body.infos[j].family == "mfma")],
                        processor=body.processor)
            gap, p = prev.unit - prev.issue, out[-1]
        while p < bound and (filled < gap or not exec_ok[p]):
            filled += cost(ins[p], processor=body.processor).issue
            p += 1
        out.append(p)
    return out


MAX_ENTRY_COPY = 256  # instructions: a side entry's copy of the fall-through code (one-time prologue code)


def _side_entry_end(body: Body, fb) -> int | None:
    """For a fall-through block also entered by branches from elsewhere (a rotated loop's preheader): the
    first unconditional transfer from its start on (the code their copy holds, labels left out: the copy
    is entered only at its top), when the block is entered there only through its one label, not from
    itself, and the copy is at most MAX_ENTRY_COPY instructions; else None."""
    ins, labels = body.instructions, body.index[1]
    names = [name for name, at in labels.items() if at == fb.start]
    if len(names) != 1 or not any(it.label for it in body.items[:body.pos[fb.start]][-1:]) or fb.index in fb.preds:
        return None
    end = next((j for j in range(fb.end - 1, len(ins)) if ins[j].mnemonic in _TRANSFERS), None)
    if end is None or end - fb.start >= MAX_ENTRY_COPY:
        return None
    return end


def _side_entry(body: Body, fb, end: int, entry_label: str) -> list[BodyItem]:
    """A copy of the fall-through code as it was, from the block's start to its run's transfer `end`."""
    run = body.items[body.pos[fb.start]:body.pos[end] + 1]
    return [BodyItem(f"{entry_label}:", label=entry_label),
            *(dataclasses.replace(it, ins=copy.copy(it.ins)) for it in run if it.ins is not None)]


def _sunk(body: Body, i: int) -> Body | None:
    """`interleave_mfma` on a body whose skip branches are gone (instruction i in the chain's block)."""
    cfg, ins, infos = body.cfg, body.instructions, body.infos
    blk = cfg.blocks[cfg.block_of[i]]
    term = ins[blk.end - 1]
    labels = body.index[1]
    if not term.is_branch or term.mnemonic in _TRANSFERS or not term.mnemonic.startswith("s_cbranch_"):
        return None
    t, f = labels.get(term.label or ""), blk.end
    if t is None or f >= len(ins) or t == f or blk.start <= t < blk.end or t == 0:
        return None
    if ins[t - 1].mnemonic not in _TRANSFERS or [n for n, at in labels.items() if at == t] != [term.label]:
        return None
    fb = cfg.blocks[cfg.block_of[f]]
    side = [p for p in fb.preds if p != blk.index]
    side_end = _side_entry_end(body, fb) if side else None
    if fb.end - fb.start < 2 or (side and side_end is None):
        return None
    cut = max((j for j in range(blk.start, blk.end - 1) if infos[j].family == "sopp"
               and ins[j].mnemonic != "s_waitcnt"), default=blk.start - 1)
    first = next((j for j in range(cut + 1, blk.end) if infos[j].family == "mfma"), None)
    if first is None:
        return None
    tail = range(first, blk.end - 1)
    moved = [j for j in tail if infos[j].family == "mfma" or ins[j].mnemonic == "s_waitcnt"]
    mfmas = [j for j in moved if infos[j].family == "mfma"]
    if not all(coexecutes(infos[j].base) for j in mfmas):
        return None
    for s in tail:
        if s in moved:
            continue
        info = infos[s]
        if info.family in _MEMORY or info.family == "sopp" or ins[s].is_branch or info.defs & EXEC:
            return None
        if any((info.defs & infos[m].uses) | (info.uses & infos[m].defs) | (info.defs & infos[m].defs)
               for m in mfmas if m < s):
            return None
        if any((info.uses | info.defs) & _pending(body, blk.start, w) for w in moved if w < s and w not in mfmas):
            return None
    exec_ok = launch_exec(ins, infos, cfg, body.start)
    if not exec_ok[first]:
        return None
    groups = _groups(body, moved)
    where = _placements(body, groups, fb.start, fb.end - 1, exec_ok, blk.start)
    if where is None:
        return None
    exit_label, entry_label = f"{term.label}_mfma_exit", f"{term.label}_mfma_entry"
    if {exit_label, entry_label} & labels.keys():
        return None
    moved_pos = {body.pos[j] for j in moved}
    inserts: dict[int, list[BodyItem]] = {}
    for group, p in zip(groups, where):
        inserts.setdefault(body.pos[p], []).extend(body.items[body.pos[j]] for j in group)
    target_label = next(k for k in range(body.pos[t] - 1, -1, -1) if body.items[k].label == term.label)
    copies = [dataclasses.replace(body.items[body.pos[j]], ins=copy.copy(ins[j])) for j in moved]
    entry = _side_entry(body, fb, side_end, entry_label) if side else []
    f_label = next((it.label for it in reversed(body.items[:body.pos[fb.start]]) if it.label), None) if side else None
    items: list[BodyItem] = []
    for k, it in enumerate(body.items):
        if k in moved_pos:
            continue
        if k == body.pos[blk.end - 1]:
            it = make_item(f"{term.mnemonic} {exit_label}")
        elif side and it.ins is not None and it.ins.is_branch and it.ins.label == f_label:
            it = make_item(f"{it.ins.mnemonic} {entry_label}")
        if k == target_label:
            items += [*entry, BodyItem(f"{exit_label}:", label=exit_label), *copies]
        items += inserts.get(k, [])
        items.append(it)
    new = body.replace(items)
    if new.no_worse(body):
        return new
    # the copy sits one instruction (the branch) closer to the exit's first MFMA-result read: give it back
    at = next(k for k, it in enumerate(items) if it is copies[-1]) + 1
    padded = body.replace(items[:at] + [make_item("s_nop 0")] + items[at:])
    return padded if padded.no_worse(body) else None


def interleave_mfma(body: Body, i: int) -> Body | None:
    """Sink the MFMA chain ending instruction i's block past its conditional branch: a copy on the branch's
    target path, the chain interleaved with the fall-through path's (skip-branch-free) instructions."""
    if body.infos[i].family != "mfma":
        return None
    site = body.instructions[i]
    straight = remove_skip_branches(body, i) or body
    i = next(n for n, ins in enumerate(straight.instructions) if ins is site)
    new = _sunk(straight, i)
    return new if new is not None and new.no_worse(body) else None
