"""Hazard wait states for rearranged bodies: an `s_nop N` gives N+1 wait states (CDNA3 ISA guide, "Manually
Inserted Wait States"), so a move that brings a hazard's producer and consumer too close is repaired by the
shortest nop before the consumer. The static checks on the result are the oracle."""
from __future__ import annotations

from ..static_checks import StaticFinding
from .body import Body, BodyItem, make_item

_PADS = 5  # s_nop 0 .. 4: VALU rules need at most 5 wait states; longer waits are refused
_REPAIRS = 8  # nops `hazard_nops` inserts at most
BLOCK_REPAIRS = 64  # nops for a rewrite of a whole block (its elements interleaved, a path copied)


def padded(body: Body, items: list[BodyItem], at: int, clear: tuple[BodyItem, ...] = ()) -> Body | None:
    """The body of `items` (a rearrangement of `body`) with the shortest `s_nop` at item position `at` (none
    first) after which it has no static finding beyond `body`'s and none at an instruction of `clear`."""
    keep = {id(it) for it in clear}
    for n in range(-1, _PADS):
        new = body.replace(items if n < 0 else items[:at] + [make_item(f"s_nop {n}")] + items[at:])
        if new.no_worse(body) and not any(id(new.items[new.pos[f.index]]) in keep for f in new.static_findings):
            return new
    return None


def hazard_nops(body: Body, parent: Body) -> Body | None:
    """`body`, a rearrangement of `parent`, with the shortest `s_nop` before each instruction a hazard finding
    `parent` lacks names, until it has no static finding beyond `parent`'s (a count per rule); None when another
    kind of finding is new or that takes more than a few nops."""
    cur = body
    for _ in range(_REPAIRS + 1):
        if cur.no_worse(parent):
            return cur
        new = [f for f in cur.static_findings if cur.findings[(f.check, f.rule)] > parent.findings[(f.check, f.rule)]]
        if any(f.check != "hazard" for f in new):
            return None
        at = cur.pos[new[0].index]
        cur = padded(cur, list(cur.items), at, clear=(cur.items[at],))
        if cur is None:
            return None
    return None


def _sited(body: Body, f: StaticFinding) -> tuple[int, str, str]:
    """Finding `f` of `body` as (id of its instruction's item, check, rule)."""
    return id(body.items[body.pos[f.index]]), f.check, f.rule


def site_hazard_nops(body: Body, parent: Body, repairs: int = _REPAIRS) -> Body | None:
    """`body`, a reordering of `parent`'s items, with an `s_nop` of the wait states it lacks before the first
    instruction that has a hazard finding it did not have in `parent`, again until every finding is one `parent`
    had at the same instruction (a count per rule is not enough: shipped code with a known hazard would trade it for a
    new one, which the emulator reports; one static check per nop, as the finding names the wait states missing);
    None when a finding of another kind is new, a hazard lacks more than a few wait states, or more than a few nops
    are needed (`repairs`: a rewrite of a whole block may take more)."""
    known, cur = {_sited(parent, f) for f in parent.static_findings}, body
    for _ in range(repairs + 1):
        fresh = [f for f in cur.static_findings if _sited(cur, f) not in known]
        if not fresh:
            return cur
        if any(f.check != "hazard" or not 0 < f.missing <= _PADS for f in fresh):
            return None
        first = [f for f in fresh if f.index == fresh[0].index]  # a nop there may cover later ones too
        at = cur.pos[first[0].index]
        cur = cur.replace(cur.items[:at] + [make_item(f"s_nop {max(f.missing for f in first) - 1}")] + cur.items[at:])
    return None
