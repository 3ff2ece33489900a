"""A signed range check made one unsigned compare. Compiled code tests 0 <= x < n with two compares and an AND:

    v_cmp_lt_i32 A, -1, vX        <- A = (x >= 0)     (or 0 <= x, x > -1, x >= 0)
    v_cmp_gt_i32 B, sN, vX        <- B = (x < n)      (or x < n; n an SGPR or a constant >= 0)
    s_and_b64 D, A, B             <- D = A & B, SCC = (D != 0)

For every lane, 0 <= x < n is (u32)x < (u32)max(n, 0): a negative x is at least 2^31 unsigned, above any
max(n, 0); a non-negative x is below max(n, 0) exactly when it is below n. So `v_cmp_gt_u32 D, sM, vX` at
the AND's place does it all, with sM = max(n, 0) set once by `s_max_i32 sM, sN, 0` where sN is ready: after
sN's only write (a scalar load: after the first `s_waitcnt lgkmcnt(0)` that follows it in its block), or at
the wave's start when the body never writes sN (a constant n >= 0 is its own maximum; one beyond the inline
constants needs the VOPC form, so D must be VCC: VOP3 takes no literal on gfx9). Legal when EXEC and x
do not change from the first compare to the AND (inactive lanes get 0 in A, B and D alike); A and B are read
by nothing else (dead after the AND unless it overwrites them); SCC is dead after the AND (a compare writes
no SCC) and where `s_max_i32` goes; and the block setting sM dominates the AND. A VALU compare and a SALU
AND fewer where the check runs; 42_Max_Pooling_2D checks both window coordinates so, every tap."""
from __future__ import annotations

from ..isa.operands import Operand
from ..isa.regs import EXEC, SCC, operand_regs
from ..isa.waitcnt import decode_waitcnt
from .body import Body, across_loop, make_item
from .ops_rename import free_sgprs

# compare -> (operands swapped: a > b is b < a, strict: "<" rather than "<=")
_RELATIONS = {"v_cmp_lt_i32": (False, True), "v_cmp_gt_i32": (True, True),
              "v_cmp_le_i32": (False, False), "v_cmp_ge_i32": (True, False)}


def _int(op: Operand) -> int | None:
    return op.value if op.kind == "imm" and isinstance(op.value, int) else None


def _bound(body: Body, k: int) -> tuple[str, int, Operand | None] | None:
    """("lo", x, None) when compare k is x >= 0 of the single VGPR vX, ("hi", x, n) when it is x < n with n an
    SGPR or a constant >= 0; else None."""
    info, ins = body.infos[k], body.instructions[k]
    if ins.modifiers or len(info.srcs) != 2 or len(info.dst) != 1:
        return None
    if info.base not in _RELATIONS:
        return None
    swapped, strict = _RELATIONS[info.base]
    p, q = reversed(info.srcs) if swapped else info.srcs
    if q.kind == "vgpr" and q.count == 1 and _int(p) == (-1 if strict else 0):
        return "lo", q.index, None  # -1 < x, 0 <= x
    if strict and p.kind == "vgpr" and p.count == 1:
        value = _int(q)
        if q.kind == "sgpr" and q.count == 1 or value is not None and value >= 0:
            return "hi", p.index, q  # x < n
    return None


def _writer(body: Body, regs: set, before: int, stop: int) -> int | None:
    """The last instruction of [stop, before) in instruction `before`'s block writing one of `regs`."""
    return next((k for k in range(before - 1, stop - 1, -1) if regs & body.infos[k].defs), None)


def _max_site(body: Body, n: Operand, user: int) -> int | None:
    """Where `s_max_i32 sM, sN, 0` goes (insert before this instruction index) for the check at `user`; None
    when sN has several writes, is not ready by a wait there, the place does not dominate `user`, or SCC is
    live there."""
    writes = body.writers(n)
    if len(writes) > 1:
        return None
    if not writes:
        return None if SCC in body.live_in[body.cfg.block_of[body.start]] else body.start
    d = writes[0]
    blk = body.cfg.blocks[body.cfg.block_of[d]]
    if body.infos[d].family == "smem":
        at = next((k + 1 for k in range(d + 1, blk.end) if body.instructions[k].mnemonic == "s_waitcnt"
                   and decode_waitcnt(body.instructions[k]).get("lgkmcnt") == 0), None)
    else:
        at = d + 1
    if at is None or at >= blk.end or SCC in body.live_after(at - 1) or not body.dominates(at - 1, user):
        return None
    return at


def range_check(body: Body, i: int) -> tuple[int, int, int, Operand] | None:
    """For the `s_and_b64` at i ANDing two compares of one block that test 0 <= x < n: (the lower compare,
    the upper compare, x's VGPR, n); else None."""
    ins, info = body.instructions[i], body.infos[i]
    if ins.mnemonic != "s_and_b64" or ins.modifiers or len(info.srcs) != 2:
        return None
    start = body.cfg.blocks[body.cfg.block_of[i]].start
    found = {}
    for src in info.srcs:
        regs = operand_regs(src)
        if not (src.kind == "sgpr" and src.count == 2 or src.text == "vcc"):
            return None
        k = _writer(body, regs, i, start)
        if k is None or body.infos[k].defs & regs != regs or operand_regs(body.infos[k].dst[0]) != regs:
            return None
        bound = _bound(body, k) if body.infos[k].base.startswith("v_cmp_") else None
        if bound is None:
            return None
        found[bound[0]] = (k, bound[1], bound[2])
    if set(found) != {"lo", "hi"} or found["lo"][1] != found["hi"][1]:
        return None
    lo, hi, x = found["lo"][0], found["hi"][0], found["lo"][1]
    first = min(lo, hi)
    watched = EXEC | {("v", x)} | (operand_regs(found["hi"][2]) if found["hi"][2].kind == "sgpr" else set())
    if any(watched & body.infos[k].defs for k in range(first + 1, i)):
        return None
    return lo, hi, x, found["hi"][2]


def fuse_range_check(body: Body, i: int) -> Body | None:
    """Replace the range check ANDed at i (module docstring) by one unsigned compare; None unless every
    condition there holds."""
    found = range_check(body, i)
    if found is None:
        return None
    lo, hi, x, n = found
    infos = body.infos
    dst = body.instructions[i].operands[0]
    tested = operand_regs(infos[lo].dst[0]) | operand_regs(infos[hi].dst[0])
    if any(tested & infos[k].uses for k in range(min(lo, hi) + 1, i) if k not in (lo, hi)):
        return None
    live = body.live_after(i)
    if SCC in live or (tested - operand_regs(dst)) & live:
        return None
    bound, site = n.text, None  # a constant bound is its own maximum
    if n.kind == "sgpr":
        bound = _existing_max(body, n, i)
        if bound is None:
            site, free = _max_site(body, n, i), free_sgprs(body)
            if site is None or not free:
                return None
            bound = free[0]
    form = "e32" if dst.text == "vcc" else "e64"
    if form == "e64" and n.kind != "sgpr" and not 0 <= n.value <= 64:
        return None  # VOP3 takes no literal on gfx9: a bound outside the inline constants needs VOPC's VCC
    items = list(body.items)
    items[body.pos[i]] = make_item(f"\tv_cmp_gt_u32_{form} {dst.text}, {bound}, v{x}")
    for k in sorted((lo, hi), reverse=True):
        del items[body.pos[k]]
    if site is not None:  # the compares before it are deleted already
        at = body.pos[site] - sum(1 for k in (lo, hi) if k < site)
        items.insert(at, make_item(f"\ts_max_i32 {bound}, {n.text}, 0"))
    new = body.replace(items)
    return new if new.no_worse(body) else None


def _existing_max(body: Body, n: Operand, user: int) -> str | None:
    """An SGPR an earlier `fuse_range_check` set to max(n, 0) for a check that `user`'s can share: written only
    by that `s_max_i32`, whose block dominates `user`'s, with n written nowhere or only once, before it in its
    block (so every path to `user` reads the maximum of n's current value, as for a fresh one)."""
    block_of, n_writers = body.cfg.block_of, body.writers(n)
    if len(n_writers) > 1:
        return None
    for k, ins in enumerate(body.instructions):
        if ins.mnemonic != "s_max_i32" or [op.text for op in ins.operands[1:]] != [n.text, "0"]:
            continue
        if body.writers(ins.operands[0]) != [k] or n_writers and not (
                block_of[n_writers[0]] == block_of[k] and n_writers[0] < k):
            continue  # n's value at the maximum must be its value wherever the maximum's is read
        if body.dominates(k, user):
            return ins.operands[0].text
    return None


def fuse_range_checks(body: Body, i: int) -> Body | None:
    """`fuse_range_check` at every range check of instruction i's innermost loop (the whole body outside
    loops); None unless the one at i fuses."""
    if fuse_range_check(body, i) is None:
        return None
    return across_loop(body, i, lambda b, j: range_check(b, j) is not None, fuse_range_check)[0]
