"""Masked regions chained. Compiled code restores EXEC after each masked region and saves it again at the next,
even when only scalar work lies between (a GEMM's unrolled K step guards each element's load with its own mask):

    s_and_saveexec_b64 sA, m1          <- G1: EXEC = E & m1, sA = E
    [s_cbranch_execz .Lj1]
    R1
  .Lj1:
    s_or_b64 exec, exec, sA            <- J1: EXEC = E again
    X                                  (scalar work, and vector work that can run before G1)
    s_and_saveexec_b64 sB, m2          <- G2: EXEC = E & m2, sB = E
    [s_cbranch_execz .Lj2]
    R2
  .Lj2:
    s_or_b64 exec, exec, sB            <- J2

Chained, G1 keeps E in one pair sF (sA, or a pair the body never uses when the chain writes sA), J1 goes and G2
becomes `s_and_b64 exec, sF, m2`, which sets the EXEC and SCC G2 set: one SALU instruction fewer per region after
the first. The last restore reads sF. X's vector instructions move before G1, where EXEC is E as at their old
place (they read no other lane and cross no s_waitcnt and no instruction writing a register they read or touching
one they write, EXEC aside); its scalar instructions, and its lane reads and writes (`v_readlane_b32`,
`v_writelane_b32`: they ignore EXEC), stay and now run under E & m1, so none may read or write EXEC. Checked
besides: no region writes EXEC; SCC is read after no restore that goes; a saved pair other than sF is read neither
in its region nor after its restore; sF is written nowhere from G1 to the last restore but by G1. A skip branch
keeps skipping its region: its label now heads X (scalar work, which runs whatever EXEC is) and the next EXEC
write. A region without its skip branch (as `remove_skip_branches` leaves it: G, R and J within one block) chains
alike."""
from __future__ import annotations

from typing import Iterator

from ..isa.operands import parse_operand
from ..isa.regs import EXEC, operand_regs
from ..isa.table import instr_info
from .body import Body, across_loop, make_item
from .ops_default import is_guard, masked_region, restores
from .ops_rename import free_pairs
from .webs import cross_lane

_SCC = ("scc", 0)
_MOVABLE = ("valu", "vopc")
# vector instructions that ignore EXEC (CDNA3 ISA: V_READLANE_B32 and V_WRITELANE_B32 read or write the one lane
# their lane select names whatever EXEC holds)
_EXEC_BLIND = ("v_readlane_b32", "v_writelane_b32")


def _saved(body: Body, g: int) -> frozenset:
    return operand_regs(body.instructions[g].operands[0])


def _region(body: Body, g: int) -> tuple[int, int, int] | None:
    """(G, the region's first instruction, its restore) for the masked region whose `s_and_saveexec_b64` is
    instruction g: a CFG region (`masked_region`, with or without its skip branch), or one within a block, whose
    skip branch `remove_skip_branch` took, up to the first `s_or_b64 exec, exec, sA` with no branch or branch
    target or write of EXEC or sA before it."""
    cfg, ins = body.cfg, body.instructions
    found = masked_region(body, cfg.block_of[g])
    if found is not None and found[0] == g:
        return g, cfg.blocks[found[1]].start, cfg.blocks[found[2]].start
    if not is_guard(ins[g]):
        return None
    saved = _saved(body, g)
    for r in _straight_after(body, g):
        if restores(ins[r], saved):
            return g, g + 1, r
        if body.infos[r].defs & (saved | EXEC):
            return None
    return None


def _straight_after(body: Body, k: int) -> Iterator[int]:
    """The instructions after k up to the first branch, end of the program or branch target (which starts a CFG
    block), excluded."""
    ins, cfg = body.instructions, body.cfg
    for j in range(k + 1, len(ins)):
        if cfg.blocks[cfg.block_of[j]].start == j or ins[j].is_branch or not ins[j].falls_through:
            return
        yield j


def _next_guard(body: Body, restore: int) -> int | None:
    """The first `s_and_saveexec_b64` after a restore along straight-line code."""
    return next((j for j in _straight_after(body, restore) if body.instructions[j].mnemonic == "s_and_saveexec_b64"),
                None)


def _movable(body: Body, j: int, crossed: list[int]) -> bool:
    """Vector instruction j of an X can run before G1, crossing the staying instructions `crossed`."""
    a, ins = body.infos[j], body.instructions[j]
    if a.family not in _MOVABLE or cross_lane(ins):
        return False
    for k in crossed:
        c = body.infos[k]
        if body.instructions[k].mnemonic == "s_waitcnt" or (a.defs & (c.uses | c.defs) | a.uses & c.defs) - EXEC:
            return False
    return True


def _between(body: Body, restore: int, g: int, staying: list[int]) -> tuple[list[int], list[int]] | None:
    """The X from a restore to the next guard g, split into its vector instructions, which move before G1, and
    its scalar ones, which stay; None when one of either kind cannot."""
    moved, stays = [], []
    for j in range(restore + 1, g):
        info, mnemonic = body.infos[j], body.instructions[j].mnemonic
        blind = mnemonic in _EXEC_BLIND
        if instr_info(mnemonic, body.processor).vector and not blind:
            if not _movable(body, j, staying + stays):
                return None
            moved.append(j)
        elif info.defs & EXEC or not blind and info.uses & EXEC:
            return None
        else:
            stays.append(j)
    return moved, stays


def _chain(body: Body, i: int) -> tuple[list[tuple[int, int, int]], list[int]] | None:
    """The longest run of masked regions from the one guarded at i that chains (at least two), and the vector
    instructions of the X's between them that move before G1."""
    infos = body.infos
    first = _region(body, i)
    if first is None:
        return None
    regions, moved, staying = [first], [], list(range(i, first[2] + 1))
    while True:
        _, start, restore = regions[-1]
        if any(infos[j].defs & EXEC for j in range(start, restore)):
            regions.pop()
            break
        g = _next_guard(body, restore)
        nxt = _region(body, g) if g is not None else None
        if nxt is None or _SCC in body.live_after(restore):
            break
        x = _between(body, restore, nxt[0], staying)
        if x is None:
            break
        regions.append(nxt)
        moved += x[0]
        staying += x[1] + list(range(nxt[0], nxt[2] + 1))
    return (regions, moved) if len(regions) > 1 else None


def _keeper(body: Body, regions: list[tuple[int, int, int]]) -> tuple[str, frozenset] | None:
    """sF (its text and registers): G1's saved pair when nothing of the chain but its guards writes it, else
    the lowest pair the body never uses."""
    g1, end = regions[0][0], regions[-1][2]
    guards = {g for g, _, _ in regions}
    sa = _saved(body, g1)
    if not any(body.infos[j].defs & sa for j in range(g1, end + 1) if j not in guards):
        return body.instructions[g1].operands[0].text, sa
    free = free_pairs(body)
    return (free[0], operand_regs(parse_operand(free[0]))) if free else None


def _first_unsafe_save(body: Body, regions: list[tuple[int, int, int]], sf: frozenset) -> int | None:
    """The first region whose saved pair, not sF, is read in the region or after its restore."""
    for n, (g, start, restore) in enumerate(regions):
        saved = _saved(body, g)
        if saved == sf:
            continue
        if any(saved & body.infos[j].uses for j in range(start, restore)) or saved & body.live_after(restore):
            return n
    return None


def chain_masked_regions(body: Body, i: int) -> Body | None:
    """Chain the run of masked regions from the one whose `s_and_saveexec_b64` is instruction i (the module
    docstring's rewrite); None unless at least two regions chain."""
    found = _chain(body, i)
    if found is None:
        return None
    regions, moved = found
    while True:
        kept = _keeper(body, regions)
        if kept is None:
            return None
        keeper, sf = kept
        bad = _first_unsafe_save(body, regions, sf)
        if bad is None:
            break
        regions = regions[:bad]
        if len(regions) < 2:
            return None
    ins, pos = body.instructions, body.pos
    moved = [j for j in moved if j < regions[-1][0]]
    texts: dict[int, str | None] = {}
    g1 = regions[0][0]
    texts[pos[g1]] = f"s_and_saveexec_b64 {keeper}, {ins[g1].operands[1].text}"
    for g, _, _ in regions[1:]:
        texts[pos[g]] = f"s_and_b64 exec, {keeper}, {ins[g].operands[1].text}"
    for _, _, restore in regions[:-1]:
        texts[pos[restore]] = None
    texts[pos[regions[-1][2]]] = f"s_or_b64 exec, exec, {keeper}"
    moved_at = {pos[j] for j in moved}
    items = []
    for k, it in enumerate(body.items):
        if k == pos[g1]:
            items.extend(body.items[m] for m in sorted(moved_at))
        if k in moved_at:
            continue
        if k in texts:
            if texts[k] is not None:
                items.append(make_item(texts[k]))
            continue
        items.append(it)
    new = body.replace(items)
    return new if new.no_worse(body, full=False) else None


def chain_all_masked_regions(body: Body, i: int) -> Body | None:
    """`chain_masked_regions` from every masked region of instruction i's innermost loop (the whole body outside
    loops), first to last; None unless at least one chain forms."""
    cur, chained = across_loop(body, i, lambda b, j: b.instructions[j].mnemonic == "s_and_saveexec_b64",
                               chain_masked_regions)
    return cur if chained else None
