"""Versioning on exp2's range selects. With denormal f32 results kept, compiled code computes exp2(x) as

    v_cmp_gt_f32 M, -126.0, x          M: lanes whose exp2(x) would be a denormal
    v_cndmask_b32 a, 0, 64.0, M
    v_add_f32 x2, x, a                 scaled into the range v_exp_f32 returns normal results for
    v_exp_f32 e, x2
    v_cndmask_b32 b, 0, -64, M
    v_ldexp_f32 r, e, b                scaled back

five VALU instructions around every `v_exp_f32` (ROCm's device libraries: the generic exp2 expansion has to
handle denormals without DAZ) that change nothing in a lane whose M is clear: there a = b = 0, and

* `v_exp_f32(x + 0)` is `v_exp_f32(x)`: with f32 denormals kept (the kernel's float mode, FP_DENORM 3, never
  changed at run time) `x + 0` is x bit for bit but for -0 (+0 then; exp2 of either is 1 exactly) and a
  signalling NaN (quieted; `v_exp_f32` quiets it either way);
* `v_ldexp_f32(e, 0)` is e: no denormal is flushed, and a NaN e from `v_exp_f32` is quiet already.

`version_zero_selects` tests once per block, where the first such compare stands, that no lane has M set for
any group of the block (each compare again, into fresh SGPR pairs, ORed; `s_and_b64` with EXEC sets SCC), and
then runs the rest of the block with each group as one `v_exp_f32 r, x` (at the ldexp, when x still holds its
value there; else `v_exp_f32 e, x` where the exp was and the ldexp a move `r = e`); when some lane has M set the
rest of the block runs as it was. Only the selects' false operand (the inline 0), M and the readers are part of
the pattern: whatever M tests and the selects' other values, the fast path computes what the block computes.

Legal when: the kernel keeps f32 denormals and nothing writes the float mode; each select's false value is the
inline 0 and M is read by the two selects alone, a by the add, x2 by the exp, e and b by the ldexp (value webs);
x holds its value from the add to the exp; a group's compare reads nothing written between the test and the
compare, and VOP3 encodes it (no literal, one constant-bus read); nothing writes EXEC from the test to the
block's end; two SGPR pairs and an SGPR are free (SCC live at the test is kept in that SGPR, `s_cselect_b32`,
and set again on both paths). Layout: the test and `s_cbranch_scc1 .Lslow`, the fast rest of the block (its
last branch kept, then `s_branch .Ljoin` when the block can fall through), `.Lslow:` the rest as it was,
`.Ljoin:`."""
from __future__ import annotations

from dataclasses import dataclass

from ..isa.regs import EXEC, operand_regs
from .body import FLOAT_MODE_WRITERS, Body, make_item
from .ops_rename import free_pairs_and_sgprs, vop3_ok
from .versioning import Tail, versioned
from .webs import NotAnalysable, VgprWebs, webs_of

KEPT_DENORMALS = 3    # FP_DENORM: f32 denormals kept on input and output


@dataclass(frozen=True)
class Group:
    """One exp2 expansion: the instruction indices of its compare, selects, add, exp and ldexp, the unscaled
    argument x, the result r, the exp's destination e, and whether x still holds its value at the ldexp (`late`:
    the fast path computes `v_exp_f32 r, x` there; else `v_exp_f32 e, x` where the exp was, and the ldexp
    becomes `v_mov_b32 r, e`)."""

    cmp: int
    select_a: int
    add: int
    exp: int
    select_b: int
    ldexp: int
    x: str
    r: str
    e: str
    late: bool


def _single_vgpr(op) -> bool:
    return op.kind == "vgpr" and op.count == 1 and not (op.neg or op.abs)


def _only_reader(webs: VgprWebs, k: int, reader: int) -> bool:
    """The VGPR instruction k writes holds a value (`webs`) written there alone and read by `reader` alone."""
    web = webs.def_web.get((k, webs.body.instructions[k].operands[0].index))
    return web is not None and web.defs == {k} and web.uses == {reader}


def _zero_select(body: Body, k: int) -> str | None:
    """The mask operand text of `v_cndmask_b32 d, 0, T, M` at k, else None."""
    ins = body.instructions[k]
    if body.infos[k].base != "v_cndmask_b32" or ins.modifiers or len(ins.operands) != 4 or \
            not _single_vgpr(ins.operands[0]):
        return None
    src0 = ins.operands[1]
    return ins.operands[3].text if src0.kind == "imm" and src0.value == 0 and not src0.neg else None


def group_at(body: Body, k: int) -> Group | None:
    """The exp2 expansion around the `v_exp_f32` at k (see the module docstring), else None."""
    instrs, infos = body.instructions, body.infos
    blk = body.cfg.blocks[body.cfg.block_of[k]]
    exp = instrs[k]
    if exp.mnemonic != "v_exp_f32_e32" or exp.modifiers or not _single_vgpr(exp.operands[1]):
        return None
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    add = body.last_writer(exp.operands[1], k, blk.start)
    if add is None or infos[add].base != "v_add_f32" or instrs[add].modifiers or not _only_reader(webs, add, k):
        return None
    srcs = instrs[add].operands[1:]
    if not all(_single_vgpr(s) for s in srcs):
        return None
    for n in (0, 1):
        a = body.last_writer(srcs[n], add, blk.start)
        mask = _zero_select(body, a) if a is not None else None
        if mask is not None and _only_reader(webs, a, add):
            x = srcs[1 - n]
            break
    else:
        return None
    if body.last_writer(x, k, add + 1) is not None:
        return None
    web = webs.def_web.get((k, exp.operands[0].index))
    if web is None or web.defs != {k} or len(web.uses) != 1:
        return None
    (ldexp,) = web.uses
    lins = instrs[ldexp]
    if infos[ldexp].base != "v_ldexp_f32" or body.cfg.block_of[ldexp] != body.cfg.block_of[k] or ldexp < k:
        return None
    if lins.modifiers or lins.operands[1].text != exp.operands[0].text or not _single_vgpr(lins.operands[2]):
        return None
    b = body.last_writer(lins.operands[2], ldexp, blk.start)
    if b is None or _zero_select(body, b) != mask or not _only_reader(webs, b, ldexp):
        return None
    mask_regs = operand_regs(instrs[a].operands[3])
    cmp = next((j for j in range(a - 1, blk.start - 1, -1) if infos[j].defs & mask_regs), None)
    if cmp is None or not instrs[cmp].mnemonic.startswith("v_cmp_") or instrs[cmp].modifiers or \
            sorted(body.readers(cmp, blk.end) or []) != sorted([a, b]):
        return None
    if not _single_vgpr(lins.operands[0]) or any(infos[j].defs & operand_regs(x) for j in range(add + 1, k)):
        return None
    late = body.last_writer(x, ldexp, add + 1) in (None, k)    # x still holds its value at the ldexp
    return Group(cmp, a, add, k, b, ldexp, x.text, lins.operands[0].text, exp.operands[0].text, late)


def _test_compare(body: Body, g: Group, pair: str) -> str | None:
    """Group g's compare in VOP3 form writing `pair`, when VOP3 encodes it."""
    ins = body.instructions[g.cmp]
    if not vop3_ok(ins, {}):
        return None
    mnemonic = ins.mnemonic[:-4] + "_e64" if ins.mnemonic.endswith("_e32") else ins.mnemonic
    return f"{mnemonic} {', '.join([pair, *(op.text for op in ins.operands[1:])])}"


def version_zero_selects(body: Body, i: int) -> Body | None:
    """Version the rest of instruction i's block on no lane needing exp2's range scaling (see the module
    docstring); None when the block has no such expansion or one condition fails."""
    if body.float_mode.denorm32 != KEPT_DENORMALS or any(ins.mnemonic in FLOAT_MODE_WRITERS
                                                         for ins in body.instructions):
        return None
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    groups = [g for k in range(blk.start, blk.end) if (g := group_at(body, k)) is not None]
    if not groups:
        return None
    test = min(g.cmp for g in groups)
    groups = [g for g in groups if _test_compare(body, g, "vcc") is not None and
              not any(body.infos[j].defs & body.infos[g.cmp].uses for j in range(test, g.cmp))]
    free = free_pairs_and_sgprs(body, 2, 1)
    if not groups or free is None or any(body.infos[j].defs & EXEC for j in range(test, blk.end)):
        return None
    (acc, each), (keep,) = free
    lines = []
    for n, g in enumerate(groups):
        lines += [_test_compare(body, g, acc if n == 0 else each)] + ([f"s_or_b64 {acc}, {acc}, {each}"] if n else [])
    lines.append(f"s_and_b64 {acc}, {acc}, exec")
    gone = {j for g in groups for j in (g.cmp, g.select_a, g.add, g.select_b, *([g.exp] if g.late else []))}
    exps = {}
    for g in groups:
        exps.update({g.ldexp: f"v_exp_f32_e32 {g.r}, {g.x}"} if g.late else
                    {g.exp: f"v_exp_f32_e32 {g.e}, {g.x}", g.ldexp: f"v_mov_b32_e32 {g.r}, {g.e}"})
    fast = [(make_item(exps[j]) if j in exps else body.items[body.pos[j]], j)
            for j in range(test, blk.end) if j not in gone]
    return versioned(body, [Tail(test, lambda slow: [*lines, f"s_cbranch_scc1 {slow}"], fast)], ".Lzero", keep)
