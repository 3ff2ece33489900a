"""Fold a uniform condition's all-or-nothing mask into the AND that reads it. Compiled code ANDs a lane mask
with a scalar condition by first turning SCC into a mask:

    s_cselect_b64 sX, -1, 0       <- C: sX = SCC ? ~0 : 0
    ...                           (nothing writes SCC or sX, nothing reads sX)
    s_and_b64 sY, Z, sX           <- A: sY = Z & sX, SCC = (sY != 0)

`s_cselect_b64 sY, Z, 0` at A (C deleted) writes the same sY (`s_cselect_b64 sX, 0, -1` gives
`s_cselect_b64 sY, 0, Z`; the b32 forms alike). s_cselect writes no SCC, so SCC must be dead after A, and
sX too (unless A overwrites it): one SALU instruction fewer. 3_Batched_matrix_multiplication's K loop
does this for the bounds check of each of its eight masked B elements, every iteration.
"""
from __future__ import annotations

from ..isa.regs import SCC, operand_regs
from .body import Body, make_item

_FORMS = {"s_cselect_b64": "s_and_b64", "s_cselect_b32": "s_and_b32"}


def all_or_nothing(body: Body, i: int) -> bool | None:
    """For `s_cselect_bN sX, -1, 0` at i: True (the mask when SCC); for `sX, 0, -1`: False; else None."""
    ins = body.instructions[i]
    if ins.mnemonic not in _FORMS or ins.modifiers or len(ins.operands) != 3:
        return None
    values = tuple(op.value if op.kind == "imm" else None for op in ins.operands[1:])
    return {(-1, 0): True, (0, -1): False}.get(values)


def fuse_select_and(body: Body, i: int) -> Body | None:
    """Fold the all-or-nothing `s_cselect` at i into the `s_and` that reads its mask (module docstring);
    None unless every condition there holds."""
    when = all_or_nothing(body, i)
    if when is None:
        return None
    ins, infos = body.instructions[i], body.infos
    x = operand_regs(ins.operands[0])
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    a = next((j for j in range(i + 1, blk.end) if x & infos[j].uses or x & infos[j].defs or SCC in infos[j].defs), None)
    if a is None or not x & infos[a].uses:
        return None
    and_ins = body.instructions[a]
    if and_ins.mnemonic != _FORMS[ins.mnemonic] or and_ins.modifiers or len(and_ins.operands) != 3:
        return None
    dst, s0, s1 = and_ins.operands
    texts = [s0.text, s1.text]
    mask = ins.operands[0].text
    if texts.count(mask) != 1:
        return None
    z = s1 if s0.text == mask else s0
    if x & operand_regs(z):
        return None
    live = body.live_after(a)
    if SCC in live or (x - operand_regs(dst)) & live:
        return None
    chosen = f"{z.text}, 0" if when else f"0, {z.text}"
    items = list(body.items)
    items[body.pos[a]] = make_item(f"\t{ins.mnemonic} {dst.text}, {chosen}")
    del items[body.pos[i]]
    return body.replace(items)


def fuse_select_ands(body: Body, i: int) -> Body | None:
    """`fuse_select_and` at every all-or-nothing `s_cselect` of instruction i's innermost loop (the whole body
    outside loops); None unless the one at i folds."""
    cfg = body.cfg
    loop = cfg.innermost_loop(cfg.block_of[i])
    blocks = sorted(loop.blocks) if loop else range(len(cfg.blocks))
    targets = [id(body.instructions[j]) for x in blocks for j in range(cfg.blocks[x].start, cfg.blocks[x].end)
               if j != i and all_or_nothing(body, j) is not None]
    cur = fuse_select_and(body, i)
    if cur is None:
        return None
    for target in targets:
        j = next((n for n, ins in enumerate(cur.instructions) if id(ins) == target), None)
        new = fuse_select_and(cur, j) if j is not None else None
        cur = new or cur
    return cur
