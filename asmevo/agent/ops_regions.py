"""Masked regions with one mask merged. Compiled code guards each masked access with its own region, even
when several regions of a straight path use the same lane mask m (an unrolled loop's loads of one row):

    s_and_saveexec_b64 sA, m           <- G1: EXEC = E & m, sA = E
    s_cbranch_execz .Lj1
    R1
  .Lj1:
    s_or_b64 exec, exec, sA            <- EXEC = E again
    X                                  (straight-line code and whole regions of other masks)
    s_and_saveexec_b64 sB, m           <- G2: EXEC = E & m again
    s_cbranch_execz .Lj2
    R2
  .Lj2:
    s_or_b64 exec, exec, sB

R2 moves to the end of R1; G2, its skip branch and its restore go: two SALU instructions and a branch fewer.
Legal when m is not written from G1 to G2; EXEC at G2 is EXEC at G1 (X writes EXEC only in its whole
regions' saves and restores, R1 and R2 never); R2 neither reads nor writes a register X or G1's restore
writes, nor writes one they read (EXEC aside: R2 runs under E & m, as before); R2's memory accesses cross
no store, atomic or barrier of X, and a store of R2 crosses no memory access; both regions have the skip
branch or neither has (R2 runs with an empty EXEC exactly when it did); R2 reads neither sB nor SCC (G2 set
them), and neither is read after G2's restore. Waits of X that R2's memory accesses now precede are relaxed and
the waits re-checked here, as for the other reordering operators; the search runs the full static checks on the
proposals it tries."""
from __future__ import annotations

from ..isa.regs import EXEC, operand_regs
from .body import Body, across_loop
from .ops_default import masked_region
from .ops_sched import BARRIERS, MEMORY, writes_memory
from .ops_waitcnt import relax_at

_SCC = ("scc", 0)
_ORDERING = tuple(b for b in BARRIERS if b != "s_nop")  # a hazard nop orders nothing


def _mask(body: Body, g: int) -> frozenset:
    return operand_regs(body.instructions[g].operands[1])


def _skips(body: Body, region: tuple[int, int, int]) -> bool:
    return region[0] + 1 < len(body.instructions) and body.instructions[region[0] + 1].mnemonic == "s_cbranch_execz"


def _next_with_mask(body: Body, first: tuple[int, int, int]) -> tuple[tuple[int, int, int], list] | None:
    """The next region with `first`'s mask along the straight path of whole regions from its join, and the
    regions of other masks passed on the way."""
    mask, x, passed = _mask(body, first[0]), first[2], []
    while (region := masked_region(body, x)) is not None:
        if _mask(body, region[0]) == mask:
            return region, passed
        passed.append(region)
        x = region[2]
    return None


def merge_masked_region(body: Body, i: int) -> Body | None:
    """Merge the next region with the mask of the region whose `s_and_saveexec_b64` is instruction i into it
    (the module docstring's R2 into R1); None unless every condition there holds."""
    cfg, infos, ins = body.cfg, body.infos, body.instructions
    first = masked_region(body, cfg.block_of[i])
    if first is None or first[0] != i:
        return None
    found = _next_with_mask(body, first)
    if found is None:
        return None
    second, passed = found
    g2, then1, join1 = second[0], cfg.blocks[first[1]], cfg.blocks[first[2]]
    then2, restore2 = cfg.blocks[second[1]], cfg.blocks[second[2]].start
    if _skips(body, first) != _skips(body, second):
        return None
    if any(_mask(body, i) & infos[j].defs for j in range(i, g2)):
        return None
    crossed = range(join1.start, g2)
    restores = {join1.start} | {j for r in passed for j in (r[0], cfg.blocks[r[2]].start)}
    if any(infos[j].defs & EXEC for j in crossed if j not in restores):
        return None
    moved = range(then2.start, then2.end)
    if any(infos[j].defs & EXEC for j in [*range(then1.start, then1.end), *moved]):
        return None
    set_by_g2 = operand_regs(ins[g2].operands[0]) | {_SCC}
    if any(infos[j].uses & set_by_g2 or ins[j].is_branch for j in moved) or body.live_after(restore2) & set_by_g2:
        return None
    for j in moved:
        a = infos[j]
        if any((a.defs & (infos[k].uses | infos[k].defs) | a.uses & infos[k].defs) - EXEC for k in crossed):
            return None
    p = body.processor
    moves_memory = any(infos[j].family in MEMORY for j in moved)
    if moves_memory and any(writes_memory(infos[k], p) or infos[k].base in _ORDERING for k in crossed):
        return None
    if any(writes_memory(infos[j], p) for j in moved) and any(infos[k].family in MEMORY for k in crossed):
        return None

    pos = body.pos
    lo, hi = pos[then2.start], pos[then2.end - 1]
    if any(it.label for it in body.items[lo:hi + 1]):
        return None
    drop = {pos[g2], pos[restore2]} | ({pos[g2 + 1]} if _skips(body, second) else set())
    last1 = then1.end - 1
    at = pos[last1] + (0 if ins[last1].is_branch else 1)
    items = []
    for k, it in enumerate(body.items):
        if k == at:
            items.extend(body.items[lo:hi + 1])
        if k not in drop and not lo <= k <= hi:
            items.append(it)
    new = body.replace(items)
    crossed_waits = [body.items[pos[k]] for k in crossed if ins[k].mnemonic == "s_waitcnt"] if moves_memory else []
    for wait in crossed_waits:  # only moved memory accesses change what they wait for
        new = relax_at(new, next(n for n, it in enumerate(new.items) if it is wait), body.waitcnt_violations)
    return new if new.no_worse(body, full=False) else None


def _merge_all_into(body: Body, i: int) -> Body | None:
    """`merge_masked_region` at i until no region with its mask is left to merge."""
    g = body.items[body.pos[i]]
    cur, merged = body, False
    while True:
        at = next(n for n in range(len(cur.instructions)) if cur.items[cur.pos[n]] is g)
        new = merge_masked_region(cur, at)
        if new is None:
            return cur if merged else None
        cur, merged = new, True


def merge_masked_regions(body: Body, i: int) -> Body | None:
    """Every region of instruction i's innermost loop (the whole body outside loops) merged with the later
    regions of its mask, first to last; None unless at least one merges."""
    cur, merged = across_loop(body, i, lambda b, j: b.instructions[j].mnemonic == "s_and_saveexec_b64",
                              _merge_all_into)
    return cur if merged else None
