"""Copies that change nothing: compiled MFMA loops often copy the accumulator out of the AGPRs
(`v_accvgpr_read vY, aX`) and back (`v_accvgpr_write aX, vY`) on every iteration, a register allocator's
artifact of ~2 VALU instructions per accumulator register per iteration.

A copy `d <- s` is redundant when, on every path reaching it, the last instruction writing d or s was a
copy between them (either direction) whose EXEC covers this one's (`lanes.Lanes.covers`: every lane it
writes was copied there), with the wave's start never reached first. Then d already holds s in every lane
it writes: deleting it changes no register. Once its copies back are gone, the copy out may be dead; it goes
too. A deletion can bring a hazard's producer closer to its consumer (a VALU write feeding an MFMA, an MFMA
result read by VALU): the hazard check re-runs on the result, which gets the shortest `s_nop` that restores
the wait states, or is refused."""
from __future__ import annotations

from ..isa.regs import operand_regs
from .body import Body
from .lanes import Lanes, lanes_of
from .pad import padded
from .webs import ENTRY, NotAnalysable, webs_of

_COPIES = ("v_accvgpr_write_b32", "v_accvgpr_read_b32")


def accumulator_copy(body: Body, i: int) -> tuple[tuple[str, int], tuple[str, int]] | None:
    """(destination, source) of an accumulator copy between two single registers."""
    ins = body.instructions[i]
    if body.infos[i].base not in _COPIES or ins.modifiers or len(ins.operands) != 2:
        return None
    d, s = (operand_regs(op) for op in ins.operands)
    if len(d) != 1 or len(s) != 1:
        return None
    (dr,), (sr,) = d, s
    return (dr, sr) if dr[0] in "va" and sr[0] in "va" else None


def _holds(body: Body, lanes: Lanes, i: int, d: tuple[str, int], s: tuple[str, int]) -> bool:
    """Whether d equals s in every lane of EXEC at i, on every path reaching i (see the module docstring)."""
    pair = {d, s}
    for j in lanes.walk_back(i, lambda j: j == i or bool(pair & body.infos[j].defs)):
        if j == ENTRY:
            return False
        if j == i or not pair & body.infos[j].defs:
            continue  # i itself: the paths around a loop back to it are the ones already walked
        c = accumulator_copy(body, j)
        if c is None or set(c) != pair or not lanes.covers(j, i):
            return False
    return True


def remove_redundant_copies(body: Body, i: int) -> Body | None:
    """Delete the accumulator copy at i and the redundant copies next to it in its block (a run of them, as
    compiled code writes all of an accumulator's registers in a row), then the copies out that fed only
    them; None unless at least the one at i is redundant."""
    try:
        lanes = lanes_of(body)
    except NotAnalysable:
        return None
    c = accumulator_copy(body, i)
    if c is None or not _holds(body, lanes, i, *c):
        return None
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    run = [i]
    for j in [*range(i + 1, blk.end), *range(i - 1, blk.start - 1, -1)]:
        cj = accumulator_copy(body, j)
        if cj is not None and _holds(body, lanes, j, *cj):
            run.append(j)
    gone = {body.pos[j] for j in run}
    items = [it for k, it in enumerate(body.items) if k not in gone]
    at = min(gone)  # items before the first deleted one keep their positions
    new = padded(body, items, at)
    if new is None:
        return None
    return _without_dead_copies(new)


def _without_dead_copies(body: Body) -> Body:
    """`body` without the accumulator copies whose destination nothing reads any more: for a VGPR by the
    webs' liveness (a write under the launch's full EXEC kills), for an AGPR by the body's (none kills)."""
    vgpr_live = webs_of(body).live_after

    def live(j: int, reg: tuple[str, int]) -> bool:
        return bool((vgpr_live[j] >> reg[1]) & 1) if reg[0] == "v" else reg in body.live_after(j)

    dead = {body.pos[j] for j in range(len(body.instructions))
            if (c := accumulator_copy(body, j)) is not None and not live(j, c[0])}
    if not dead:
        return body
    new = body.replace([it for k, it in enumerate(body.items) if k not in dead])
    return new if new.no_worse(body) else body
