"""Block layout: make a branch's taken successor its fall-through (LLVM's MachineBlockPlacement does this
from branch probabilities; here the search offers it where the profile of the bench shape takes the branch),
and unroll a one-block loop twice so only every other iteration takes its back edge.

A taken branch redirects instruction fetch and a branch that falls through does not (`model.costs`,
TAKEN_BRANCH_SLOTS), so a path that takes a branch on almost every wave is faster laid out straight. The
moved code is the target's run: its instructions up to the first one that cannot fall through
(`s_branch`, `s_endpgm`, `s_setpc_b64`), labels included, so every edge inside it and every edge into it
through a label is unchanged; the edge into it by fall-through gets an `s_branch`, a conditional branch
is inverted to reach its old fall-through (now through a label), and an `s_branch` whose target run now
follows it goes. A run that is a lone `s_endpgm` is copied instead of moved (the same item, so a
prediction splits its count between the copies). A conditional branch directly followed by an `s_branch`
can also trade targets with it (inverted), so the branch the profile takes is the one that issues alone.
Either operator describes its new `s_branch` to predictions (`Body.counts`: as often as the edge it now takes ran
in the parent), since a block the parent lacks has no count of its own."""
from __future__ import annotations

from .body import Body, BodyItem, make_item

INVERSE = {"s_cbranch_scc0": "s_cbranch_scc1", "s_cbranch_scc1": "s_cbranch_scc0",
           "s_cbranch_vccz": "s_cbranch_vccnz", "s_cbranch_vccnz": "s_cbranch_vccz",
           "s_cbranch_execz": "s_cbranch_execnz", "s_cbranch_execnz": "s_cbranch_execz"}
MAX_UNROLLED = 128  # instructions of a loop unroll_loop copies (code size; the instruction cache is not modelled)


def run_end(body: Body, t: int) -> int | None:
    """The last instruction of the run starting at instruction t: the first from t on that cannot fall
    through (None: the body ends first)."""
    return next((k for k in range(t, len(body.instructions)) if not body.instructions[k].falls_through), None)


def placeable(body: Body, i: int) -> bool:
    """Instruction i is an `s_branch` or an invertible conditional branch to a label whose run could follow
    it: not already next, not holding i or the wave's first instruction."""
    ins = body.instructions[i]
    if not ins.is_branch or (ins.mnemonic != "s_branch" and ins.mnemonic not in INVERSE):
        return False
    t = body.index[1].get(ins.label)
    if t is None or t == i + 1 or t <= body.start:
        return False
    e = run_end(body, t)
    return e is not None and not t <= i <= e


def fresh_label(body: Body, base: str, suffix: str = "ft") -> str:
    labels, n = body.index[1], 0
    while f"{base}_{suffix}{n}" in labels:
        n += 1
    return f"{base}_{suffix}{n}"


def labels_before(body: Body, j: int) -> list[str]:
    """The labels right before instruction j."""
    items, pos = body.items, body.pos
    return [it.label for it in items[(pos[j - 1] + 1 if j else 0):pos[j]] if it.label]


def _label_after(body: Body, i: int, base: str, suffix: str) -> tuple[str, list[BodyItem]]:
    """A label at instruction i + 1: an existing one (no items to add), or a fresh one and its label item."""
    labelled = labels_before(body, i + 1) if i + 1 < len(body.pos) else []
    if labelled:
        return labelled[0], []
    name = fresh_label(body, base, suffix)
    return name, [BodyItem(f"{name}:", label=name)]


def fall_through_branch(body: Body, i: int) -> Body | None:
    """Lay out the target run of the branch at instruction i right after it (see the module docstring)."""
    if not placeable(body, i):
        return None
    ins, items, pos = body.instructions[i], body.items, body.pos
    t = body.index[1][ins.label]
    e = run_end(body, t)
    lone_end = t == e and body.instructions[t].ends_program
    run = [items[pos[t]]] if lone_end else items[pos[t - 1] + 1:pos[e] + 1]
    after: list[BodyItem] = []
    if ins.mnemonic == "s_branch":
        head: list[BodyItem] = []
    else:
        resume, after = _label_after(body, i, ins.label, "ft")
        head = [make_item(f"{INVERSE[ins.mnemonic]} {resume}")]
    placed = [*head, *run, *after]
    if lone_end:
        new = [*items[:pos[i]], *placed, *items[pos[i] + 1:]]
    else:
        gap = [make_item(f"s_branch {ins.label}")] if body.instructions[t - 1].falls_through else []
        lo, hi = pos[t - 1] + 1, pos[e] + 1
        if i < t:
            new = [*items[:pos[i]], *placed, *items[pos[i] + 1:lo], *gap, *items[hi:]]
        else:
            new = [*items[:lo], *gap, *items[hi:pos[i]], *placed, *items[pos[i] + 1:]]
    result = body.replace(_without_branches_to_next(new))
    if not result.no_worse(body, full=False):
        return None
    if not lone_end and gap:
        _describe_gap(result, gap[0], body, t)
    return result


def _describe_gap(new: Body, gap: BodyItem, body: Body, t: int) -> None:
    """Describe (`Body.counts`) the `s_branch` that now closes the run before instruction t of `body`: it runs as
    often as that run fell through into t, t's count less the branches taken into it (when each one's taken count
    follows from the profile's counts, `_taken`). A conditional branch before it leaves it a block of its own,
    which a prediction would otherwise count as never running."""
    labels = set(labels_before(body, t))
    taken = [_taken(body, k) for k, x in enumerate(body.instructions) if x.is_branch and x.label in labels]
    if None in taken:
        return
    n = next((n for n, p in enumerate(new.pos) if new.items[p] is gap), None)
    if n is not None:
        new.counts[n] = ((t, 1.0), *((k, -c) for terms in taken for k, c in terms))


def _taken(body: Body, k: int) -> tuple[tuple[int, float], ...] | None:
    """How often the branch at instruction k is taken, in the counts of `body`'s instructions: an `s_branch` every
    time, a conditional branch as often as it runs less its fall-through's count (when no label lets anything else
    in there); None otherwise."""
    if body.instructions[k].mnemonic == "s_branch":
        return ((k, 1.0),)
    if k + 1 >= len(body.instructions) or labels_before(body, k + 1):
        return None
    return (k, 1.0), (k + 1, -1.0)


def branch_pair(body: Body, i: int) -> bool:
    """Instruction i is an invertible conditional branch to a label, followed directly by an `s_branch` to a
    label with no label between them (so nothing else jumps to the `s_branch`)."""
    instrs, items, pos = body.instructions, body.items, body.pos
    if instrs[i].mnemonic not in INVERSE or not instrs[i].label or i + 1 >= len(instrs):
        return False
    nxt = instrs[i + 1]
    return nxt.mnemonic == "s_branch" and bool(nxt.label) and not any(
        it.label for it in items[pos[i] + 1:pos[i + 1]])


def swap_branch_pair(body: Body, i: int) -> Body | None:
    """`s_cbranch_C L1; s_branch L2` becomes `s_cbranch_notC L2; s_branch L1` (the `s_branch` goes when L1
    follows it): the same two edges, the conditional branch now taking the one the `s_branch` took. A loop
    latch laid out as `s_cbranch_scc0 exit; s_branch header` issues one branch per iteration instead of two."""
    if not branch_pair(body, i):
        return None
    cond, jump = body.instructions[i], body.instructions[i + 1]
    items, pos = list(body.items), body.pos
    items[pos[i]] = make_item(f"{INVERSE[cond.mnemonic]} {jump.label}")
    items[pos[i + 1]] = jump_item = make_item(f"s_branch {cond.label}")
    result = body.replace(_without_branches_to_next(items))
    if not result.no_worse(body, full=False):
        return None
    n = next((n for n, p in enumerate(result.pos) if result.items[p] is jump_item), None)
    if n is not None:   # it runs as often as the old conditional branch was taken
        result.counts[n] = _taken(body, i)
    return result


def _without_branches_to_next(items: list[BodyItem]) -> list[BodyItem]:
    """`items` without the `s_branch L` that only labels separate from `L:` (a move can leave one: the
    branch falls through to its target anyway, and taking it would cost a fetch redirect)."""
    out: list[BodyItem] = []
    for k, it in enumerate(items):
        ins = it.ins
        if ins is not None and ins.mnemonic == "s_branch" and ins.label:
            following = []
            for nxt in items[k + 1:]:
                if nxt.ins is not None:
                    break
                if nxt.label:
                    following.append(nxt.label)
            if ins.label in following:
                continue
        out.append(it)
    return out


def loop_latch(body: Body, i: int) -> bool:
    """Instruction i is an invertible conditional branch back to the start of its own block (a one-block loop)
    of at most MAX_UNROLLED instructions, not the wave's first."""
    ins = body.instructions[i]
    if ins.mnemonic not in INVERSE:
        return False
    t = body.index[1].get(ins.label)
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    return t is not None and t == blk.start and t > body.start and i - t < MAX_UNROLLED


def unroll_loop(body: Body, i: int) -> Body | None:
    """Unroll the one-block loop whose back edge is the branch at i twice: the first copy leaves through the
    inverted branch to the loop's exit and falls through into the second, which branches back. Every iteration
    runs the same instructions in the same order; the back edge is taken every other iteration."""
    if not loop_latch(body, i):
        return None
    ins, items, pos = body.instructions[i], body.items, body.pos
    t = body.index[1][ins.label]
    leave, exit_label = _label_after(body, i, ins.label, "unrolled_exit")
    copy = [it for it in items[pos[t]:pos[i]] if not it.label]  # an unreferenced label stays single
    new = [*items[:pos[i]], make_item(f"{INVERSE[ins.mnemonic]} {leave}"), *copy, items[pos[i]], *exit_label,
           *items[pos[i] + 1:]]
    result = body.replace(new)
    return result if result.no_worse(body, full=False) else None
