"""SGPR renaming: compiled code often runs `v_cmp -> VCC`, `s_nop 1`, `v_cndmask ..., vcc` over and
over, and materialises every VOP3 constant in the same scalar temporary (`s_mov_b32 s8, K` before
each use: gfx9 VOP3 has no literal). Every pair reuses the same registers, so nothing can fill the
two wait states a VALU-written SGPR needs before a VALU reads it (gfx940; LLVM checkVALUHazards).
Giving each compare in a block its own unused SGPR pair (VOP3 encoding; scalar readers of the mask
read the new pair) and each scalar temporary its own unused SGPR makes the chains independent, and
`fill_nops` then interleaves them.

VOP3 rules on gfx9 are respected when re-encoding: no literal constant, at most one scalar value
read over the constant bus (the mask counts). The assembler and the static checks re-check."""
from __future__ import annotations

import re

from ..isa.instruction import Instruction
from ..isa.operands import Operand
from ..isa.regs import Reg
from ..target import processor
from .body import Body, BodyItem, make_item
from .ops_nop import fill_block

_MAX_PAIR = 100  # s[100:101] is the last pair below the gfx9 trap/flat-scratch/XNACK-mask registers
_INLINE_FLOATS = frozenset({0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, 0.159155})  # 1/(2 pi), 6 digits
_SELECTS = ("v_cndmask_b32_e32", "v_cndmask_b32_e64")


def _pair_regs(ins: Instruction) -> frozenset[Reg] | None:
    """The SGPR pair (VCC included) a VOPC/VOP3 `v_cmp` writes, or None (v_cmpx writes EXEC; SDWA and
    DPP forms are left alone)."""
    if not ins.mnemonic.startswith("v_cmp_") or not ins.mnemonic.endswith(("_e32", "_e64")) or not ins.operands:
        return None
    dst = ins.operands[0]
    if dst.kind == "special" and dst.text == "vcc":
        return frozenset({("s", 106), ("s", 107)})
    if dst.kind == "sgpr" and dst.count == 2:
        return frozenset({("s", dst.index), ("s", dst.index + 1)})
    return None


def needs_literal(op: Operand) -> bool:
    """An immediate operand that is no inline constant, so it takes the one literal slot."""
    if op.kind == "imm":
        return not -16 <= op.value <= 64
    return op.kind == "float" and round(op.value, 6) not in _INLINE_FLOATS


def vop3_ok(ins: Instruction, new: dict[int, str]) -> bool:
    """No literal and at most one scalar value over the constant bus among the sources of `ins` in VOP3 form,
    the operands at the positions of `new` reading the scalars it names instead."""
    scalars = set()
    for n, op in enumerate(ins.operands[1:], 1):
        if n in new:
            scalars.add(new[n])
        elif needs_literal(op):
            return False
        elif op.kind in ("sgpr", "special"):
            scalars.add(op.text.strip("|-"))
    return len(scalars) <= 1


def _renamed(ins: Instruction, old: str, new: str, is_def: bool) -> str | None:
    """`ins` in VOP3 form (compares and selects) with the mask operand `old` spelled `new`."""
    ops = [op.text for op in ins.operands]
    where = 0 if is_def else len(ops) - 1
    if ops[where] != old or not vop3_ok(ins, {where: new}):
        return None
    ops[where] = new
    mnemonic = ins.mnemonic[:-4] + "_e64" if ins.mnemonic.endswith("_e32") else ins.mnemonic
    return " ".join([mnemonic, ", ".join(ops), *ins.modifiers])


def _salu_renamed(ins: Instruction, old: str, new: str) -> str | None:
    """A scalar instruction reading the mask as an explicit source operand, reading `new` instead."""
    ops = [op.text for op in ins.operands]
    if old not in ops[1:] or ops[0] == old:
        return None
    return " ".join([ins.mnemonic, ", ".join(new if t == old else t for t in ops), *ins.modifiers])


def _used(body: Body) -> set[Reg]:
    used = set()
    for info in body.infos:
        used |= info.defs | info.uses
    return used


def free_sgprs(body: Body) -> list[str]:
    """SGPRs the body never reads or writes, lowest first."""
    used = _used(body)
    return [f"s{k}" for k in range(_MAX_PAIR + 2) if ("s", k) not in used]


def free_pairs(body: Body) -> list[str]:
    """Even-aligned SGPR pairs the body never reads or writes, lowest first."""
    used = _used(body)
    return [f"s[{k}:{k + 1}]" for k in range(0, _MAX_PAIR + 1, 2) if ("s", k) not in used and ("s", k + 1) not in used]


def free_pairs_and_sgprs(body: Body, pairs: int, singles: int) -> tuple[list[str], list[str]] | None:
    """`pairs` SGPR pairs and `singles` SGPRs apart from them that the body never reads or writes, lowest first;
    None when there are fewer."""
    found = free_pairs(body)[:pairs]
    taken = {f"s{k}" for p in found for k in map(int, p[2:-1].split(":"))}
    others = [s for s in free_sgprs(body) if s not in taken][:singles]
    return (found, others) if len(found) == pairs and len(others) == singles else None


def free_vgprs(body: Body, sizes: list[int]) -> list[int] | None:
    """Starts of VGPR ranges of the given sizes that the body never touches, lowest first (even
    when wider than one dword: gfx90a+ VGPR tuples are even-aligned) and within the processor's arch
    VGPRs (v0-v255; a unified file's other half holds the AGPRs); None when they do not fit."""
    taken = {r for kind, r in _used(body) if kind == "v"}
    top = processor(body.processor).arch_vgprs
    starts = []
    for size in sizes:
        step = 2 if size > 1 else 1
        k = next((k for k in range(0, top - size + 1, step) if not taken & set(range(k, k + size))), None)
        if k is None:
            return None
        starts.append(k)
        taken |= set(range(k, k + size))
    return starts


def _rewritten(body: Body, texts: dict[int, str | None], still_live: set[Reg], block: int) -> Body | None:
    """The body with instruction texts replaced (a renamed definition and its readers); None when
    a text could not be made, nothing but the definition changed, or a renamed register whose live
    range ran to the block's end (`still_live`) is read after it."""
    if still_live & body.live_out[block] or any(t is None for t in texts.values()) or len(texts) < 2:
        return None
    items: list[BodyItem] = list(body.items)
    for j, text in texts.items():
        items[body.pos[j]] = make_item(text)
    return body.replace(items)


def rename_mask(body: Body, i: int, new: str) -> Body | None:
    """Rename the mask compare i writes to the SGPR pair `new` over its live range in the block."""
    ins = body.instructions[i]
    regs = _pair_regs(ins)
    if regs is None or ins.operands[0].text == new:
        return None
    old = ins.operands[0].text
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    texts = {i: _renamed(ins, old, new, True)}
    end = blk.end
    for j in range(i + 1, blk.end):
        info = body.infos[j]
        if info.uses & regs:
            if info.defs & regs:
                return None
            if body.instructions[j].mnemonic in _SELECTS:
                texts[j] = _renamed(body.instructions[j], old, new, False)
            elif info.family == "salu":
                texts[j] = _salu_renamed(body.instructions[j], old, new)
            else:
                return None
        if info.defs & regs:
            if info.defs & regs != regs:
                return None
            end = j
            break
    return _rewritten(body, texts, regs if end == blk.end else set(), blk.index)


def _scalar_def(ins: Instruction, info) -> int | None:
    """The single SGPR a scalar ALU instruction writes (SCC aside), or None."""
    if info.family != "salu" or not ins.operands:
        return None
    dst = ins.operands[0]
    if dst.kind != "sgpr" or dst.count != 1 or {r for r in info.defs if r[0] == "s"} != {("s", dst.index)}:
        return None
    return dst.index


_NO_DEST = ("s_cmp", "s_bitcmp", "s_setreg")  # scalar instructions whose first operand is a source


def _reads_as(ins: Instruction, info, reg: int, new: str) -> str | None:
    """ALU instruction `ins` reading SGPR `reg` as `new`, when it reads `reg` only as whole
    single-SGPR source operands (a destination covering `reg` is left alone: it ends the range)."""
    if info.family not in ("salu", "valu", "vopc"):
        return None
    ops, found = [], False
    for n, op in enumerate(ins.operands):
        covers = op.sgpr_range()
        if covers is None or reg not in covers or n == 0 and not ins.mnemonic.startswith(_NO_DEST):
            ops.append(op.text)
        elif op.kind == "sgpr" and op.count == 1:
            ops.append(re.sub(rf"\bs{reg}\b", new, op.text))
            found = True
        else:
            return None
    return " ".join([ins.mnemonic, ", ".join(ops), *ins.modifiers]) if found else None


def rename_scalar(body: Body, i: int, new: str) -> Body | None:
    """Rename the SGPR the scalar instruction i writes (and does not read) to `new` over its live
    range in the block: up to the next write of the SGPR, which must be in the block unless the SGPR
    is dead at the block's end."""
    ins, info = body.instructions[i], body.infos[i]
    reg = _scalar_def(ins, info)
    if reg is None or ("s", reg) in info.uses:
        return None
    old = ("s", reg)
    ops = [op.text for op in ins.operands]
    texts = {i: " ".join([ins.mnemonic, ", ".join([new, *ops[1:]]), *ins.modifiers])}
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    end = blk.end
    for j in range(i + 1, blk.end):
        if old in body.infos[j].uses:
            texts[j] = _reads_as(body.instructions[j], body.infos[j], reg, new)
        if old in body.infos[j].defs:
            end = j
            break
    return _rewritten(body, texts, {old} if end == blk.end else set(), blk.index)


def rename_across_block(body: Body, i: int, rename, free: list[str]) -> Body:
    """Apply `rename` (mask or scalar renamer) with the next free register at every instruction of
    i's block it accepts; renaming replaces instructions one for one, so indices stay put."""
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    cur = body
    for j in range(blk.start, blk.end):
        new = rename(cur, j, free[0]) if free else None
        if new is not None:
            cur = new
            free.pop(0)
    return cur


def rename_sgprs(body: Body, i: int) -> Body | None:
    """Give every lane-mask compare of instruction i's block a fresh SGPR pair and every scalar
    temporary a fresh SGPR, then `fill_nops`; None unless some nop could shrink afterwards."""
    cur = rename_across_block(body, i, rename_mask, free_pairs(body))
    cur = rename_across_block(cur, i, rename_scalar, free_sgprs(cur))
    if cur is body:
        return None
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    filled, count = fill_block(cur, blk.start)  # renaming replaced instructions one for one
    return filled if count and filled.no_worse(body) else None
