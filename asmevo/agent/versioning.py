"""Versioned block tails: the rest of a block from one of its instructions runs as a rewritten fast copy when a
test falls through, and as it was when the test branches away.

Layout of one tail (from instruction `start` to its block's end):

    <the block's items before start>
    s_cselect_b32 k, 1, 0              (SCC live at start: kept in the free SGPR k)
    <test>                             ends in a branch to .Lslow
    s_cmp_lg_u32 k, 0                  (SCC as the block had it)
    <the fast copy>
    s_branch .Ljoin                    (when the block can fall through)
  .Lslow:
    s_cmp_lg_u32 k, 0
    <the tail as it was>
  .Ljoin:

Labels inside a tail cannot occur (a label starts a block), so the copies need no relabelling; the branch that
ends the block is in both copies. `versioned` lays the tails out, repairs hazards the rewrite opened and describes
the executions for predictions as if every wave passed every test (the measured time decides).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from .body import Body, BodyItem, make_item
from .ops_widen import scc_dead_before
from .pad import BLOCK_REPAIRS, site_hazard_nops
from .webs import VgprWebs

_NO_FALL = ("s_branch", "s_endpgm", "s_setpc_b64")
_MEMORY = ("flat", "mubuf")    # instruction families of global (and buffer) accesses


@dataclass(frozen=True)
class Tail:
    """One tail to version: its first instruction `start`; `test(slow)` the test's lines, branching to label `slow`
    when the fast copy must not run; `fast` the fast copy's items (the body's own ones may be given: `versioned`
    copies them, since the tail as it was keeps those), each with the instruction of the parent it stands for (for
    predictions)."""

    start: int
    test: Callable[[str], list[str]]
    fast: list[tuple[BodyItem, int]]


@dataclass
class _Versioned:
    """The items with every tail versioned, and what the items stand for: `fast` (item id -> the parent instruction
    it stands for), `tests` (item id -> the tail's start, whose executions the test lines run), `slow` (ids of the
    tails as they were, which the fast path makes never run)."""

    items: list[BodyItem]
    fast: dict[int, int] = field(default_factory=dict)
    tests: dict[int, int] = field(default_factory=dict)
    slow: set[int] = field(default_factory=set)

    def describe(self, new: Body) -> Body:
        """`new` (the items as a body, possibly hazard-repaired: the same item objects) with its executions
        described for predictions (`Body.counts`) as if every wave passed every test: each test line as often as
        its tail's start, each fast item as its parent instruction (a memory access touching its lines: a fast
        copy accesses what its parent does), each slow one never."""
        for n, p in enumerate(new.pos):
            it = id(new.items[p])
            if it in self.tests:
                new.counts[n] = ((self.tests[it], 1.0),)
            elif it in self.fast:
                new.counts[n] = ((self.fast[it], 1.0),)
                if new.infos[n].family in _MEMORY:
                    new.traffic[n] = (self.fast[it], 1.0)
            elif it in self.slow:
                new.counts[n] = ()
        return new


def versioned(body: Body, tails: list[Tail], prefix: str, keep: str) -> Body | None:
    """`body` with each tail (at most one per block) versioned as the module docstring lays it out (labels
    `<prefix>_slowN` and `<prefix>_joinN`; `keep` a free SGPR that holds SCC across a test where it is live),
    hazard-repaired and described for predictions; None when no repair makes it pass the static checks."""
    items, pos, cfg = body.items, body.pos, body.cfg
    out = _Versioned([])
    labels: set[str] = set()
    done = 0
    for tail in sorted(tails, key=lambda t: t.start):
        blk = cfg.blocks[cfg.block_of[tail.start]]
        slow, join = (_label(body, prefix, kind, labels) for kind in ("slow", "join"))
        last = body.instructions[blk.end - 1]
        falls = last.mnemonic not in _NO_FALL
        held = not scc_dead_before(body, tail.start)
        test = ([make_item(f"s_cselect_b32 {keep}, 1, 0")] if held else []) + [make_item(x) for x in tail.test(slow)]
        fast_restore, slow_restore = ([make_item(f"s_cmp_lg_u32 {keep}, 0")] if held else [] for _ in range(2))
        fast = [(replace(it), j) for it, j in tail.fast]
        out.tests.update({id(it): tail.start for it in test + fast_restore})
        out.fast.update({id(it): j for it, j in fast})
        kept = items[pos[tail.start]:pos[blk.end - 1] + 1]
        out.slow.update(id(it) for it in slow_restore + kept)
        out.items += [*items[done:pos[tail.start]], *test, *fast_restore, *(it for it, _ in fast),
                      *([make_item(f"s_branch {join}")] if falls else []), BodyItem(f"{slow}:", label=slow),
                      *slow_restore, *kept, *([BodyItem(f"{join}:", label=join)] if falls else [])]
        done = pos[blk.end - 1] + 1
    out.items += items[done:]
    new = body.replace(out.items)
    if not new.no_worse(body):
        new = site_hazard_nops(new, body, repairs=BLOCK_REPAIRS)
    return None if new is None else out.describe(new)


def _label(body: Body, prefix: str, kind: str, taken: set[str]) -> str:
    """A label `<prefix>_<kind>N` neither the body nor this versioning uses yet."""
    n = 0
    while (name := f"{prefix}_{kind}{n}") in body.index[1] or name in taken:
        n += 1
    taken.add(name)
    return name


def dead_in_fast(webs: VgprWebs, ks, gone: set[int], rewritten: set[int]) -> set[int]:
    """`gone` and the instructions of `ks` (a fast copy's parent instructions) that a fast copy can drop too: VALU
    instructions writing one VGPR whose value only instructions gone or `rewritten` read (a rewritten one reads
    none of its parent's operands), to a fixpoint."""
    body, dead = webs.body, set(gone)
    changed = True
    while changed:
        changed = False
        for k in ks:
            info = body.infos[k]
            if k in dead or k in rewritten or not info.base.startswith("v_") or len(info.dst) != 1 or \
                    info.dst[0].kind != "vgpr" or info.defs != {("v", info.dst[0].index)}:
                continue
            web = webs.def_web.get((k, info.dst[0].index))
            if web is not None and set(web.defs) == {k} and set(web.uses) <= dead | rewritten:
                dead.add(k)
                changed = True
    return dead
