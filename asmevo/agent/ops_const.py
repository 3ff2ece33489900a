"""Constant hoisting (and, in `fuse_constant_fma`, folding): clang rematerialises a scalar constant (`s_mov_b32 s8, 0x3fb8aa3b`,
`s_brev_b32 s0, -2`) in every block, and every unrolled copy, that needs it. One definition in an
unused SGPR, placed in the nearest block dominating every copy, replaces them all; each copy's
readers (up to the next write of its register, which must be in its block unless the register is
dead there) read the new SGPR. The new SGPR is written nowhere else, so it holds the constant on
every path from the definition.

A vector constant (`v_mov_b32 v8, 0x7f800000` before each `v_cndmask_b32_e64`, which as VOP3 takes
no literal) costs a VALU issue slot per copy; `hoist_vector_constant` writes it once at the wave's
start into an unused VGPR, read by every value web (`asmevo.agent.webs`) that only ever holds it."""
from __future__ import annotations

from ..isa.exec_bound import exec_within_launch
from ..isa.operands import Operand
from .body import Body, BodyItem, make_item
from .ops_rename import free_sgprs, free_vgprs, needs_literal, rename_scalar
from .webs import ENTRY, NotAnalysable, webs_of

# Single-SGPR constant definitions; none of them writes SCC, so one can go before a block's branch.
_CONSTANT_DEFS = ("s_mov_b32", "s_movk_i32", "s_brev_b32")


def constant_key(body: Body, i: int) -> str | None:
    """`mnemonic source` of a constant definition at instruction i, else None."""
    ins = body.instructions[i]
    if ins.mnemonic not in _CONSTANT_DEFS or len(ins.operands) != 2 or ins.modifiers:
        return None
    dst, src = ins.operands
    if dst.kind != "sgpr" or dst.count != 1 or src.kind not in ("imm", "float"):
        return None
    return f"{ins.mnemonic} {src.text}"


def hoist_constant(body: Body, i: int) -> Body | None:
    """Define the constant instruction i materialises once, in a fresh SGPR in the nearest block
    dominating all its copies, and delete the copies; None with fewer than two copies, when a copy's
    register cannot be renamed, or when the only common dominator is the entry block without a copy
    (a kernarg-preloading kernel's entry block is its compatibility preamble, skipped on hardware)."""
    key = constant_key(body, i)
    free = free_sgprs(body)
    if key is None or not free:
        return None
    cfg, dom = body.cfg, body.cfg.dominators()
    copies = [k for k in range(len(body.instructions)) if constant_key(body, k) == key and cfg.block_of[k] in dom]
    if len(copies) < 2:
        return None
    reg, cur = free[0], body
    for k in copies:  # renaming replaces instructions one for one: indices stay put
        cur = rename_scalar(cur, k, reg)
        if cur is None:
            return None
    blocks = {cfg.block_of[k] for k in copies}
    common = frozenset.intersection(*(dom[b] for b in blocks))
    home = max(common, key=lambda d: len(dom[d]))
    items: list[BodyItem] = list(cur.items)
    drop = {cur.pos[k] for k in copies}
    kept = next((k for k in copies if cfg.block_of[k] == home), None)
    if kept is not None:
        drop.discard(cur.pos[kept])
    elif home == cfg.entry.index:
        return None
    else:
        blk = cfg.blocks[home]
        last = blk.end - 1
        at = cur.pos[last] + (0 if cur.instructions[last].is_branch else 1)
        mnemonic, src = key.split(" ", 1)
        items.insert(at, make_item(f"{mnemonic} {reg}, {src}"))
        drop = {p + (p >= at) for p in drop}
    new = body.replace([it for n, it in enumerate(items) if n not in drop])
    return new if new.no_worse(body) else None


_MATERIALISE = {"v_not_b32_e32": lambda k: ~k, "v_bfrev_b32_e32": lambda k: int(f"{k:032b}"[::-1], 2)}


def vector_constant_key(body: Body, i: int) -> str | None:
    """The constant instruction i writes into one VGPR, else None: K of `v_mov_b32_e32 vD, K`, or the 32-bit
    value of `v_not_b32_e32`/`v_bfrev_b32_e32 vD, K` of an integer K (LLVM's way to build a constant
    without a literal: ~63 = 0xffffffc0, bfrev(1) = 0x80000000), as the literal a move would write."""
    ins = body.instructions[i]
    if ins.mnemonic not in ("v_mov_b32_e32", *_MATERIALISE) or ins.modifiers or len(ins.operands) != 2:
        return None
    dst, src = ins.operands
    if dst.kind != "vgpr" or dst.count != 1 or src.kind not in ("imm", "float"):
        return None
    if ins.mnemonic == "v_mov_b32_e32":
        return src.text
    if src.kind != "imm":
        return None
    return f"{_MATERIALISE[ins.mnemonic](int(src.value) & 0xFFFFFFFF) & 0xFFFFFFFF:#010x}"


def _mov_fmac(body: Body, i: int) -> tuple[int, Operand] | None:
    """(j, K1) when instruction i is `v_mov_b32_e32 vD, K0` and the next instruction of its block
    touching vD is `v_fmac_f32_e32 vD, K1, vX` with constant K1 and vX another VGPR."""
    if body.instructions[i].mnemonic != "v_mov_b32_e32" or vector_constant_key(body, i) is None:
        return None
    dst = body.instructions[i].operands[0]
    reg = ("v", dst.index)
    for j in range(i + 1, body.cfg.blocks[body.cfg.block_of[i]].end):
        if reg in body.infos[j].uses | body.infos[j].defs:
            fmac = body.instructions[j]
            if fmac.mnemonic != "v_fmac_f32_e32" or fmac.modifiers or len(fmac.operands) != 3:
                return None
            d, k1, x = fmac.operands
            if d.text != dst.text or k1.kind not in ("imm", "float") or x.kind != "vgpr" or x.count != 1 \
                    or x.index == dst.index:
                return None
            return j, k1
    return None


def fuse_constant_fma(body: Body, i: int) -> Body | None:
    """`v_mov_b32 vD, K0` + `v_fmac_f32 vD, K1, vX` (clang's first step of a polynomial with two
    literal coefficients) becomes `v_fmaak_f32 vD, K1', vX, K0`: one VALU instead of two, the same
    fused multiply-add. An inline K1 is used directly; a literal K1 (gfx9 allows one literal, and no
    SGPR beside it) is written once into an unused VGPR at the wave's start, shared by every such
    pair with that K1 - only when EXEC provably never leaves the launch's lanes
    (isa.exec_bound), so the VGPR holds K1 in every lane that can read it."""
    pair = _mov_fmac(body, i)
    if pair is None:
        return None
    k1 = pair[1]
    sites = [(i, pair[0])]
    items: list[BodyItem] = list(body.items)
    if needs_literal(k1):
        free = free_vgprs(body, [1])
        if free is None or not exec_within_launch(body.instructions, body.infos, body.cfg, body.start):
            return None
        reg = f"v{free[0]}"
        sites = [(m, p[0]) for m in range(len(body.instructions))
                 if (p := _mov_fmac(body, m)) is not None and p[1].text == k1.text]
        source = reg
    else:
        source = k1.text
    for m, j in sites:
        d, _, x = body.instructions[j].operands
        items[body.pos[j]] = make_item(f"v_fmaak_f32 {d.text}, {source}, {x.text}, {body.instructions[m].operands[1].text}")
    drop = {body.pos[m] for m, _ in sites}
    if needs_literal(k1):
        at = body.pos[body.start]
        items.insert(at, make_item(f"v_mov_b32_e32 {source}, {k1.text}"))
        drop = {p + (p >= at) for p in drop}
    new = body.replace([it for n, it in enumerate(items) if n not in drop])
    return new if new.no_worse(body) else None


def hoist_vector_constant(body: Body, i: int) -> Body | None:
    """Write the constant instruction i writes (`vector_constant_key`) once, at the wave's start, into an unused
    VGPR; every value web whose writes all write that constant (not pinned: no cross-lane or multi-register
    read, no value from the wave's start) is read from there and its writes go. Only when EXEC provably
    never leaves the launch's lanes (isa.exec_bound), so the VGPR holds the constant in every lane that
    can read it; None when nothing outside the entry block is saved."""
    key = vector_constant_key(body, i)
    free = free_vgprs(body, [1])
    if key is None or free is None or not exec_within_launch(body.instructions, body.infos, body.cfg, body.start):
        return None
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    chosen = [w for w in webs.webs if w.defs and not w.pinned and not w.entry and ENTRY not in w.defs
              and all(vector_constant_key(body, d) == key for d in w.defs)]
    writes = sorted(d for w in chosen for d in w.defs)
    entry = body.cfg.block_of[body.start]
    if all(body.cfg.block_of[d] == entry for d in writes):
        return None
    renamed = webs.renamed({id(w): free[0] for w in chosen})
    items: list[BodyItem] = list(renamed.items)
    at = renamed.pos[renamed.start]
    items.insert(at, make_item(f"v_mov_b32_e32 v{free[0]}, {key}"))
    drop = {renamed.pos[d] + (renamed.pos[d] >= at) for d in writes}
    new = body.replace([it for n, it in enumerate(items) if n not in drop])
    return new if new.no_worse(body) else None
