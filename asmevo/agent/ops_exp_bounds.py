"""Versioning on expf's range guards. Compiled expf(x) (ROCm's device libraries) ends with two guards on its
argument x:

    v_cmp_ngt_f32 M1, LO, x            !(LO > x): x >= LO, or NaN (LO = -103.97: below it expf underflows to 0)
    v_cndmask_b32 r1, Z, e, M1         e where M1, else Z (0)
    v_cmp_nlt_f32 M2, HI, x            !(HI < x): x <= HI, or NaN (HI = 88.72: above it expf is +inf)
    v_cndmask_b32 r, I, r1, M2         r1 where M2, else I (+inf)

four VALU instructions that change nothing in a lane whose |x| <= H = min(-LO, HI), or whose x is NaN: there both
compares hold, so r1 = e and r = r1 whatever Z and I are (`v_cmp_nlt_f32 H, |x|` holds for exactly those lanes,
NaN included: an unordered compare is false and its negation true).

`version_exp_bounds` tests once per block, where the first guard's compare stands, that every active lane of
every guard passes: one `v_cmp_nlt_f32_e64 T, sH, |x|` per guard (H in a free SGPR), ANDed, and `s_andn2_b64 T,
exec, T` sets SCC when some lane fails; then the rest of the block runs with each select a move (`r1 = e`, `r = r1`;
none where the registers are one) and the compares gone, so every VGPR holds what the guards would leave in it;
otherwise the rest as it was (`versioning`). Legal when LO and HI are constants (literals, or SGPRs whose one
reaching definition is an `s_mov_b32` of one) with LO < 0 < HI; M1 and M2 are read by their select alone; x is a
VGPR and holds its value from the test to both compares; nothing writes EXEC from the test to the last guard; two
SGPR pairs and two SGPRs are free. For predictions every wave passes the test; the measured time decides.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ..isa.regs import EXEC, operand_regs
from .align import predecessors, reaching
from .body import Body, make_item
from .ops_canon import constant_bits
from .ops_rename import free_pairs_and_sgprs
from .versioning import Tail, versioned
from .webs import ENTRY, NotAnalysable, VgprWebs, webs_of


@dataclass(frozen=True)
class Guard:
    """One expf's range guards: its compares and selects, and the texts of x, e, r1 and r; `bound` is H =
    min(-LO, HI)."""

    cmp_lo: int
    select_lo: int
    cmp_hi: int
    select_hi: int
    x: str
    e: str
    r1: str
    r: str
    bound: float


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def _constant(webs: VgprWebs, k: int, text: str) -> float | None:
    """The f32 value operand `text` of instruction k holds: a constant, or an SGPR whose one reaching definition is
    an `s_mov_b32` of one."""
    body = webs.body
    op = next((o for o in body.infos[k].srcs if o.text == text), None)
    if op is None or op.neg or op.abs:
        return None
    if op.kind in ("imm", "float"):
        return _f32(constant_bits(op))
    defs = reaching(webs, predecessors(webs), k, "s", op.index) if op.kind == "sgpr" and op.count == 1 else set()
    d = next(iter(defs)) if len(defs) == 1 and ENTRY not in defs else None
    if d is None or body.infos[d].base != "s_mov_b32" or body.instructions[d].modifiers:
        return None
    src = body.instructions[d].operands[1]
    return _f32(constant_bits(src)) if src.kind in ("imm", "float") else None


def _select(body: Body, k: int) -> tuple[str, str, str] | None:
    """(destination, true value, mask) texts of `v_cndmask_b32 d, F, T, M` at k (d one VGPR, T unmodified)."""
    ins = body.instructions[k]
    if body.infos[k].base != "v_cndmask_b32" or ins.modifiers or len(ins.operands) != 4:
        return None
    d, t = ins.operands[0], ins.operands[2]
    return None if d.kind != "vgpr" or d.count != 1 or t.neg or t.abs else (d.text, t.text, ins.operands[3].text)


def _compare(webs: VgprWebs, sel: int, mask: str, base: str) -> tuple[int, str, float] | None:
    """(index, x, constant) of the compare `base M, C, x` writing select `sel`'s mask M, read by `sel` alone."""
    body = webs.body
    blk = body.cfg.blocks[body.cfg.block_of[sel]]
    regs = operand_regs(body.instructions[sel].operands[3])
    k = next((j for j in range(sel - 1, blk.start - 1, -1) if body.infos[j].defs & regs), None)
    ins = body.instructions[k] if k is not None else None
    if ins is None or body.infos[k].base != base or ins.modifiers or ins.operands[0].text != mask or \
            body.readers(k, blk.end) != [sel]:
        return None
    c, x = ins.operands[1], ins.operands[2]
    value = _constant(webs, k, c.text)
    if value is None or x.kind != "vgpr" or x.count != 1 or x.neg or x.abs:
        return None
    return k, x.text, value


def guard_at(body: Body, k: int, webs: VgprWebs | None = None) -> Guard | None:
    """The range guards whose second select is instruction k (module docstring), else None."""
    hi = _select(body, k)
    if hi is None:
        return None
    try:
        webs = webs or webs_of(body)
    except NotAnalysable:
        return None
    r, r1, mask_hi = hi
    blk = body.cfg.blocks[body.cfg.block_of[k]]
    r1_op = body.instructions[k].operands[2]
    lo = body.last_writer(r1_op, k, blk.start) if r1_op.kind == "vgpr" and r1_op.count == 1 else None
    low_sel = _select(body, lo) if lo is not None else None
    if low_sel is None or low_sel[0] != r1:
        return None
    _, e, mask_lo = low_sel
    low, high = _compare(webs, lo, mask_lo, "v_cmp_ngt_f32"), _compare(webs, k, mask_hi, "v_cmp_nlt_f32")
    if low is None or high is None or low[1] != high[1] or not low[2] < 0 < high[2]:
        return None
    first = min(low[0], high[0])
    x_regs = operand_regs(body.instructions[low[0]].operands[2])
    if any(body.infos[j].defs & x_regs for j in range(first, max(low[0], high[0]))) or \
            any(body.infos[j].defs & EXEC for j in range(first, k)):
        return None
    return Guard(low[0], lo, high[0], k, low[1], e, r1, r, min(-low[2], high[2]))


def version_exp_bounds(body: Body, i: int) -> Body | None:
    """Version the rest of instruction i's block on every lane passing each expf's range guards (module docstring);
    None when the block has no such guards or a condition fails."""
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    guards = [g for k in range(blk.start, blk.end) if (g := guard_at(body, k, webs)) is not None]
    if not guards:
        return None
    test = min(min(g.cmp_lo, g.cmp_hi) for g in guards)
    x_regs = lambda g: operand_regs(body.instructions[g.cmp_lo].operands[2])
    guards = [g for g in guards if not any(body.infos[j].defs & x_regs(g) for j in range(test, max(g.cmp_lo, g.cmp_hi)))]
    free = free_pairs_and_sgprs(body, 2, 2)
    last = max((g.select_hi for g in guards), default=test)
    if not guards or free is None or any(body.infos[j].defs & EXEC for j in range(test, last)):
        return None
    (acc, each), (bound, keep) = free
    limit = struct.unpack("<I", struct.pack("<f", min(g.bound for g in guards)))[0]
    lines = [f"s_mov_b32 {bound}, 0x{limit:08x}"]
    for n, g in enumerate(guards):
        lines += [f"v_cmp_nlt_f32_e64 {acc if n == 0 else each}, {bound}, |{g.x}|"] + \
                 ([f"s_and_b64 {acc}, {acc}, {each}"] if n else [])
    lines.append(f"s_andn2_b64 {acc}, exec, {acc}")
    moves = {}
    for g in guards:       # every VGPR as the guards leave it: r1 = e and r = r1 where both compares hold
        moves.update({g.select_lo: f"v_mov_b32_e32 {g.r1}, {g.e}" if g.r1 != g.e else None,
                      g.select_hi: f"v_mov_b32_e32 {g.r}, {g.r1}" if g.r != g.r1 else None,
                      g.cmp_lo: None, g.cmp_hi: None})
    fast = [(make_item(moves[j]) if j in moves else body.items[body.pos[j]], j)
            for j in range(test, blk.end) if moves.get(j, "") is not None]
    return versioned(body, [Tail(test, lambda slow: [*lines, f"s_cbranch_scc1 {slow}"], fast)], ".Lexp", keep)
