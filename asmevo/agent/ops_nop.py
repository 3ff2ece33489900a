"""Hazard-NOP filling: an `s_nop N` gives N+1 wait states between a hazard's producer and consumer
(CDNA3 ISA guide, "Manually Inserted Wait States"); any other instruction gives one. Moving an
independent ALU instruction of the same block into the gap lets the nop shrink by one (or go), so
the wave issues the same work in one slot fewer. The hazard checker on the result is the oracle:
a move that creates or uncovers a hazard is refused."""
from __future__ import annotations

from collections import Counter

from ..isa.hazards import MAX_WAIT, check_hazards
from .body import Body, BodyItem, make_item
from .ops_sched import independent

_MOVABLE = ("valu", "vopc", "salu")
_TRIES = 4  # candidate fillers tried per nop
# `fill_block` steps per call: each step re-checks hazards near the block, so a long MFMA block full
# of `s_nop`s (Triton's int8 GEMM: minutes) would stall the search for one proposal.
_STEPS = 32


def _nop_count(body: Body, i: int) -> int | None:
    ins = body.instructions[i]
    if ins.mnemonic != "s_nop" or not ins.operands:
        return None
    return int(ins.operands[0].value)


def _movable(body: Body, j: int) -> bool:
    info, ins = body.infos[j], body.instructions[j]
    return info.family in _MOVABLE and not ins.is_branch and not info.base.startswith(
        ("s_setreg", "s_getreg", "s_set_gpr_idx", "s_movrel", "v_movrel", "s_cbranch", "s_setpc", "s_swappc",
         "s_getpc", "v_readlane", "v_readfirstlane", "v_writelane"))


def _fillers(body: Body, i: int) -> list[int]:
    """Instructions that can fill the nop at i, nearest first: a later instruction of
    the block moved up to just before the nop, or an earlier one moved down to just after it, when it
    is independent of every instruction it crosses and crosses only movable ALU instructions (no
    wait, memory op, barrier, mode write or lane access)."""
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    infos = body.infos

    out = []
    for j in range(i + 1, blk.end):  # later instruction -> before the nop (not the adjacent one)
        if j > i + 1 and _movable(body, j) and all(independent(infos[k], infos[j]) for k in range(i + 1, j)):
            out.append(j)
        if not _movable(body, j):  # crossing it would be a move past it
            break
    for j in range(i - 1, blk.start - 1, -1):  # earlier instruction -> after the nop
        if j < i - 1 and _movable(body, j) and all(independent(infos[k], infos[j]) for k in range(j + 1, i)):
            out.append(j)
        if not _movable(body, j):  # crossing it would be a move past it
            break
    out.sort(key=lambda j: abs(j - i))
    return out


def _moved(body: Body, i: int, j: int, n: int) -> Body:
    """The nop at i shrunk by one wait state and instruction j moved next to it (inside the gap)."""
    items: list[BodyItem] = list(body.items)
    filler, nop = items[body.pos[j]], body.pos[i]
    shrunk = [make_item(f"s_nop {n - 1}")] if n else []
    if j > i:
        del items[body.pos[j]]
        items[nop:nop + 1] = [filler] + shrunk
    else:
        items[nop:nop + 1] = shrunk + [filler]
        del items[body.pos[j]]
    return body.replace(items)


def _near(body: Body, b: int) -> set[int]:
    """Block b and the blocks whose consumers can be within MAX_WAIT instructions of its end (each
    instruction gives at least one wait state, so this over-approximates the hazard reach)."""
    cfg, out, work = body.cfg, {b}, [(s, 0) for s in body.cfg.blocks[b].succs]
    best: dict[int, int] = {}
    while work:
        x, dist = work.pop()
        if dist >= MAX_WAIT or best.get(x, MAX_WAIT) <= dist:
            continue
        best[x] = dist
        out.add(x)
        work += [(s, dist + cfg.blocks[x].end - cfg.blocks[x].start) for s in cfg.blocks[x].succs]
    return out


def _hazards(body: Body, b: int, lo: int, hi: int, near: set[int]) -> Counter:
    """Hazards whose consumer is in block b at index lo..hi-1, or among the first MAX_WAIT instructions of one
    of the blocks `near` (each instruction gives a wait state, so a later consumer sees no producer outside
    its own block)."""
    cfg = body.cfg
    consumers = [*range(lo, min(hi, cfg.blocks[b].end)),
                 *(k for x in sorted(near - {b})
                   for k in range(cfg.blocks[x].start, min(cfg.blocks[x].end, cfg.blocks[x].start + MAX_WAIT)))]
    return Counter(v.rule for v in check_hazards(body.instructions, cfg=cfg, xnack=body.xnack,
                                                  consumers=consumers, infos=body.infos,
                                                  processor=body.processor))


def fill_nop(body: Body, i: int) -> Body | None:
    """Shrink the `s_nop` at instruction i by one wait state (drop it when it gives one), when the
    hazard it covers is covered anyway or after moving the nearest independent ALU instruction of its
    block into the gap; None when that would add a hazard. Only hazards are re-checked, and only where
    they can change: a move stays inside its block and crosses no wait, memory operation or instruction
    it depends on (so the other static checks cannot change), and a hazard's producer is at most
    MAX_WAIT wait states before its consumer, so only consumers from the first changed instruction to
    MAX_WAIT past the last one, and in blocks that start within that reach, are checked. The gates
    re-run every check on what the search keeps."""
    n = _nop_count(body, i)
    if n is None:
        return None
    b = body.cfg.block_of[i]
    region = _near(body, b)
    fillers = _fillers(body, i)[:_TRIES]
    lo, hi = min([i, *fillers]), max([i, *fillers]) + MAX_WAIT + 1
    before = _hazards(body, b, lo, hi, region)
    items = list(body.items)
    items[body.pos[i]:body.pos[i] + 1] = [make_item(f"s_nop {n - 1}")] if n else []
    tries = [body.replace(items)]  # earlier moves may have covered the hazard already
    tries += [_moved(body, i, j, n) for j in fillers]
    for new in tries:
        shift = len(body.instructions) - len(new.instructions)  # 1 when the nop went
        if len(new.cfg.blocks) == len(body.cfg.blocks) and not _hazards(new, b, lo, hi - shift, region) - before:
            return new
    return None


def fill_block(body: Body, i: int) -> tuple[Body, int]:
    """`fill_nop` at the `s_nop`s of instruction i's block until none shrinks further (at most `_STEPS`
    tries); the result and the number of wait states saved."""
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    members = {id(body.instructions[j]) for j in range(blk.start, blk.end)}
    cur, filled, failed = body, 0, set()
    for _ in range(_STEPS):
        first = next(k for k, ins in enumerate(cur.instructions) if id(ins) in members)
        b = cur.cfg.blocks[cur.cfg.block_of[first]]
        nops = [j for j in range(b.start, b.end)
                if _nop_count(cur, j) is not None and id(cur.instructions[j]) not in failed]
        if not nops:
            break
        new = fill_nop(cur, nops[0])
        if new is None:
            failed.add(id(cur.instructions[nops[0]]))
        else:
            cur, filled = new, filled + 1
    return cur, filled


def fill_nops(body: Body, i: int) -> Body | None:
    """`fill_nop` at every `s_nop` of instruction i's block, as often as it applies (at least twice)."""
    cur, filled = fill_block(body, i)
    return cur if filled > 1 else None
