"""A 64-bit product of two sign-extended 32-bit values made one `v_mad_i64_i32`. Compiled code multiplies
`(long)a * b` with b's sign extension held in an SGPR pair as a generic 64-bit multiply:

    v_ashrrev_i32 vH, 31, vA                  <- I1: a's high word (ah)
    v_mul_lo_u32 vP, sBH, vA                  <- I2: bh * al
    v_mul_lo_u32 vQ, sBL, vH                  <- I3: bl * ah
    v_mad_u64_u32 v[d:d+1], s[c:c+1], sBL, vA, Z   <- I4: al * bl + Z (unsigned, 64-bit)
    v_add3_u32 vd+1, vd+1, vQ, vP             <- I5: the cross terms into the high word

mod 2^64, al*bl + Z + ((ah*bl + al*bh) << 32) is sext(a) * sext(b) + Z whenever ah and bh are the high words of the
sign extensions, which `v_mad_i64_i32 v[d:d+1], s[c:c+1], sBL, vA, Z` computes alone (its low word is al*bl + Z's as
before; its carry-out SGPR pair differs, so that must be dead). A VGPR's high word is proved by a `v_ashrrev_i32 vH,
31, vA` of the same block (vA unchanged up to the multiply), an SGPR pair's by every block that writes either half
leaving `s_ashr_i32 sBH, sY, 31` and `s_mov_b32 sBL, sY` (or sBL is sY) as its last writes of them, sY unchanged
between, and every path from the start to the multiply passing such a block (or writing neither half, neither one
the hardware sets at launch: see `sign_extended_pair`). Operands and partial products may come in either order; all
five are in one block, where EXEC does not change and the sources do not change from I1 to the last of I2, I3, I4
(which read them). The values of I1, I2 and I3 feed only this multiply and reach their readers from where they are
computed (their webs, `asmevo.agent.webs`), and I4's high word only I5. Four VALU instructions fewer:
9_Tall_skinny's epilogue computes `(long)row * N` this way for each of its sixteen stores."""
from __future__ import annotations

from ..isa.operands import Operand
from ..isa.regs import EXEC, operand_regs
from .body import Body, across_loop, make_item
from .webs import NotAnalysable, webs_of


def _same(a: Operand, b: Operand) -> bool:
    return a.kind == b.kind and a.kind in ("vgpr", "sgpr") and a.count == 1 and a.index == b.index


def _mul_of(body: Body, k: int, x: Operand, y: Operand) -> bool:
    """Whether instruction k is `v_mul_lo_u32` of x and y, in either order."""
    info = body.infos[k]
    if info.base != "v_mul_lo_u32" or body.instructions[k].modifiers or len(info.srcs) != 2:
        return False
    s, t = info.srcs
    return _same(s, x) and _same(t, y) or _same(s, y) and _same(t, x)


def _pair_point(body: Body, b: int, low: Operand, high: Operand) -> int | None | bool:
    """In block b: False when it writes neither `low` nor `high`; the index after which they hold (Y,
    Y >> 31) for some Y, when its last writes of them are `s_mov_b32 low, Y` (or none, with `low` as Y) and
    `s_ashr_i32 high, Y, 31`, Y unchanged between; None otherwise (a write that breaks the pair)."""
    blk = body.cfg.blocks[b]
    writes = {key: max((k for k in range(blk.start, blk.end) if operand_regs(reg) & body.infos[k].defs), default=None)
              for key, reg in (("low", low), ("high", high))}
    wl, wh = writes["low"], writes["high"]
    if wl is None and wh is None:
        return False
    if wh is None:
        return None
    shift = body.infos[wh]
    if shift.base != "s_ashr_i32" or body.instructions[wh].modifiers or len(shift.srcs) != 2 \
            or shift.srcs[1].kind != "imm" or shift.srcs[1].value != 31 or shift.srcs[0].kind != "sgpr":
        return None
    y = shift.srcs[0]
    if _same(y, low):
        return wh if wl is None or wl < wh else None
    if wl is None or body.infos[wl].base != "s_mov_b32" or not _same(body.infos[wl].srcs[0], y) or _same(y, high):
        return None
    if any(operand_regs(y) & body.infos[j].defs for j in range(min(wl, wh), max(wl, wh) + 1)):
        return None
    return max(wl, wh)


def sign_extended_pair(body: Body, low: Operand, high: Operand, site: int) -> bool:
    """Whether SGPRs `high`:`low` hold the sign extension of `low` at instruction `site`: every block writing
    either leaves them a pair (`_pair_point`), and every path from the body's start to `site` passes such a
    pair or writes neither register, neither being one the hardware initialises at launch: on such a path the
    original multiplies values no launch defines (the strict emulator reports reading them), so any result
    refines it."""
    cfg = body.cfg
    points = {b.index: _pair_point(body, b.index, low, high) for b in cfg.blocks}
    if any(p is None for p in points.values()):
        return False
    target, seen, todo = cfg.block_of[site], set(), [cfg.block_of[body.start]]
    unwritten = False  # some path reaches site with neither register written
    while todo:
        b = todo.pop()
        if b in seen:
            continue
        seen.add(b)
        point = points[b]
        if b == target and (point is False or point > site):
            if any((operand_regs(low) | operand_regs(high)) & body.infos[k].defs
                   for k in range(cfg.blocks[b].start, site)):
                return False
            unwritten = True
        if point is False:
            todo.extend(cfg.blocks[b].succs)
    launch = body.launch_sgprs
    return not unwritten or launch is not None and min(low.index, high.index) >= launch


def _vgpr_high(body: Body, low: Operand, site: int) -> int | None:
    """The `v_ashrrev_i32 vH, 31, low` of site's block before it, with low unchanged from there to site."""
    start = body.cfg.blocks[body.cfg.block_of[site]].start
    for k in range(site - 1, start - 1, -1):
        info = body.infos[k]
        if info.base == "v_ashrrev_i32" and not body.instructions[k].modifiers and len(info.srcs) == 2 \
                and info.srcs[0].kind == "imm" and info.srcs[0].value == 31 and _same(info.srcs[1], low):
            return k
        if operand_regs(low) & info.defs:
            return None
    return None


def signed_multiply(body: Body, i: int) -> tuple[int, int, int, int] | None:
    """For the `v_mad_u64_u32` at i: (I1, I2, I3, I5) of the module docstring; else None."""
    ins, info = body.instructions[i], body.infos[i]
    if info.base != "v_mad_u64_u32" or ins.modifiers or len(info.srcs) != 3 or len(info.dst) != 2:
        return None
    x, y = info.srcs[:2]
    vec, sca = (x, y) if x.kind == "vgpr" else (y, x)
    if vec.kind != "vgpr" or vec.count != 1 or sca.kind != "sgpr" or sca.count != 1:
        return None
    d = info.dst[0]
    if d.kind != "vgpr" or d.count != 2:
        return None
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    i5 = next((k for k in range(i + 1, blk.end) if ("v", d.index + 1) in body.infos[k].uses | body.infos[k].defs), None)
    if i5 is None or body.infos[i5].base != "v_add3_u32" or body.instructions[i5].modifiers:
        return None
    dst5, srcs5 = body.infos[i5].dst[0], body.infos[i5].srcs
    if not (dst5.kind == "vgpr" and dst5.index == d.index + 1 and dst5.count == 1):
        return None
    others = [s for s in srcs5 if not (s.kind == "vgpr" and s.count == 1 and s.index == d.index + 1)]
    if len(others) != 2 or any(s.kind != "vgpr" or s.count != 1 for s in others):
        return None
    i1 = _vgpr_high(body, vec, i)
    if i1 is None:
        return None
    vh = body.infos[i1].dst[0]
    found: dict[str, int] = {}
    high = None
    for k in range(i1 + 1, i5):
        other = body.infos[k]
        if other.base != "v_mul_lo_u32" or not any(_same(other.dst[0], t) for t in others):
            continue
        if _mul_of(body, k, sca, vh):
            found.setdefault("Q", k)
        elif "P" not in found:
            h = next((t for t in other.srcs if t.kind == "sgpr" and t.count == 1), None)
            if h is not None and _mul_of(body, k, h, vec) and sign_extended_pair(body, sca, h, i):
                found["P"], high = k, h
    if set(found) != {"P", "Q"}:
        return None
    sources = operand_regs(vec) | operand_regs(sca) | operand_regs(high)
    if any(sources & body.infos[k].defs for k in range(i1 + 1, max(found["P"], found["Q"], i))) or \
            any(EXEC & body.infos[k].defs for k in range(i1 + 1, i5)):
        return None  # the sources are what the last of the three reading them reads; EXEC is one throughout
    if operand_regs(info.dst[1]) & body.live_after(i):
        return None  # v_mad_i64_i32's carry-out is not v_mad_u64_u32's
    return i1, found["P"], found["Q"], i5


def fuse_signed_multiply(body: Body, i: int) -> Body | None:
    """Make the generic 64-bit multiply of two sign-extended values at i one `v_mad_i64_i32` (module docstring);
    None unless every condition there holds."""
    found = signed_multiply(body, i)
    if found is None:
        return None
    i1, p, q, i5 = found
    gone = (i1, p, q)
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    for k in gone:  # a web may join several of them (I3 may overwrite I1's register)
        web = webs.def_web.get((k, body.infos[k].dst[0].index))
        if web is None or not web.defs <= set(gone) or not web.uses <= {*gone, i5}:
            return None
    reads = [(q, i1, body.infos[i1].dst[0].index)] + [(i5, k, body.infos[k].dst[0].index) for k in (p, q)]
    if any(webs.use_web.get((user, reg)) is not webs.def_web.get((k, reg)) for user, k, reg in reads):
        return None  # each value must reach its reader from the instruction that computes it
    text = body.items[body.pos[i]].text.replace("v_mad_u64_u32", "v_mad_i64_i32", 1)
    items = list(body.items)
    items[body.pos[i]] = make_item(text)
    for k in sorted([*gone, i5], reverse=True):
        del items[body.pos[k]]
    new = body.replace(items)
    return new if new.no_worse(body) else None


def fuse_signed_multiplies(body: Body, i: int) -> Body | None:
    """`fuse_signed_multiply` at every such multiply of instruction i's innermost loop (the whole body outside
    loops); None unless the one at i fuses."""
    if fuse_signed_multiply(body, i) is None:
        return None
    return across_loop(body, i, lambda b, j: signed_multiply(b, j) is not None, fuse_signed_multiply)[0]
