"""Cleanup operators: remove writes nobody reads and moves whose copy can be propagated.

Liveness (body.py) is conservative: a VGPR write never kills (it may cover only the active
lanes), SGPR and SCC writes do. Only side-effect-free ALU instructions are candidates."""
from __future__ import annotations

import re

from ..isa.regs import reads_destination
from .body import Body, make_item

_PURE_FAMILIES = ("salu", "valu", "vopc")
_SIDE_EFFECTS = re.compile(r"^s_(setreg|getreg|set_gpr_idx|movreld|movrels|cbranch|setpc|swappc|getpc|rfe|"
                           r"sendmsg|trap|bitset|cmov|setprio|sethalt)|^v_(cmpx_|readlane|writelane|movrel)|_saveexec_|"
                           r"_wrexec_")
_EXEC = {("s", 126), ("s", 127)}
_CROSS_LANE = re.compile(r"^v_(readlane|readfirstlane|writelane|mov_b32_dpp|permlane)|_dpp$|^ds_(permute|bpermute|swizzle)")


def _pure(body: Body, i: int) -> bool:
    info = body.infos[i]
    return (info.family in _PURE_FAMILIES and bool(info.defs) and not _SIDE_EFFECTS.search(info.base)
            and not (info.defs & _EXEC) and not body.instructions[i].mnemonic.endswith("_dpp"))


def remove_dead_write(body: Body, i: int) -> Body | None:
    """Delete instruction i when no register it writes can be read afterwards."""
    if not _pure(body, i) or body.infos[i].defs & body.live_after(i):
        return None
    items = list(body.items)
    del items[body.pos[i]]
    return body.replace(items)


def _single_reg(text: str) -> str | None:
    return text if re.fullmatch(r"[vs]\d+", text) else None


def propagate_move(body: Body, i: int) -> Body | None:
    """For `v_mov_b32 vA, vB` (or `s_mov_b32 sA, sB`): rewrite the reads of vA that follow in the
    same block (same EXEC, neither register redefined in between, no cross-lane readers) to read vB,
    then delete the move when vA is dead afterwards: nothing reads it later, or a later instruction of
    the block rewrites all of it under the same EXEC (every lane the move wrote)."""
    ins = body.instructions[i]
    if ins.mnemonic not in ("v_mov_b32_e32", "v_mov_b32", "s_mov_b32") or len(ins.operands) != 2 or ins.modifiers:
        return None
    dst, src = _single_reg(ins.operands[0].text), _single_reg(ins.operands[1].text)
    if dst is None or src is None or dst[0] != src[0] or dst == src:
        return None
    d_reg, s_reg = (dst[0], int(dst[1:])), (src[0], int(src[1:]))
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    items = list(body.items)
    rewrote = False
    last = i
    for j in range(i + 1, blk.end):
        info, other = body.infos[j], body.instructions[j]
        if d_reg in info.uses:
            if _CROSS_LANE.search(info.base) or d_reg in {r for op in info.dst for r in _regs(op.text)}:
                return None
            if not all(op.text != dst or op in info.srcs for op in other.operands):
                return None
            if any(d_reg in _regs(op.text) and op.text != dst for op in other.operands):
                return None
            text = ", ".join(src if (op in info.srcs and op.text == dst) else op.text for op in other.operands)
            new = f"{other.mnemonic} {text}" + (" " + " ".join(other.modifiers) if other.modifiers else "")
            items[body.pos[j]] = make_item(new)
            rewrote, last = True, j
        if d_reg in info.defs or s_reg in info.defs or info.defs & _EXEC:
            overwritten = (d_reg in info.defs and not info.defs & _EXEC
                           and not reads_destination(other, body.processor))
            break
    else:
        overwritten = False
    if not rewrote:
        return None
    cur = body.replace(items)
    if not overwritten and d_reg in cur.live_after(last):
        return None
    del items[body.pos[i]]
    return body.replace(items)


def _regs(text: str) -> set[tuple[str, int]]:
    m = re.fullmatch(r"([vs])(\d+)|([vs])\[(\d+):(\d+)\]", text.strip("-|"))
    if not m:
        return set()
    if m.group(1):
        return {(m.group(1), int(m.group(2)))}
    return {(m.group(3), k) for k in range(int(m.group(4)), int(m.group(5)) + 1)}

