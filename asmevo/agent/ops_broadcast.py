"""Broadcast moves read through: hand-written wave reductions (AITer's topksoftmax; flatmm_fp8 has some too)
move a scalar into a VGPR (`v_mov_b32 vA, sB`, after `v_readlane_b32 sB, ...`) only to read it back in the
same block, as a VALU source or with `v_readlane_b32 sX, vA, 0`. Reading sB instead needs no move:

* a VALU read of vA becomes a read of sB: in place when vA is the first source of a VOP1/VOP2/VOPC
  (e32) instruction, else in the VOP3 (e64) form, which gfx9 allows one scalar value on the constant
  bus and no literal (checked, the operand order kept: no float operation is commuted);
* `v_readlane_b32 sX, vA, 0` becomes `s_mov_b32 sX, sB`, or goes when sX is sB: lane 0 holds sB when
  the move ran under the EXEC the wave started with (`asmevo.isa.exec_values`), which always holds
  lane 0 (a wave's work-items fill its lanes from lane 0; `asmevo.emu.dispatch.work_items`).

Every read of vA that follows in the block (before vA is written again) must be rewritable, neither
register is written in between (a `v_readlane` of vA's lane 0 into sB itself keeps sB), EXEC is not
written in between (each read sees lanes the move wrote), and nothing reads lanes of vA across lanes
(DPP, permute). The move goes when no later read on any path sees vA before a VALU instruction
rewrites all of it under the wave's starting EXEC. Bodies that read VGPRs through register indexing
are refused. Fewer VALU instructions: one per move and one per lane-0 read. Reading sB sooner after
the VALU instruction that wrote it may need wait states (gfx940: a VALU-written SGPR read by a VALU
instruction): the shortest `s_nop` before the first rewritten read that adds no static finding goes in.
"""
from __future__ import annotations

import re

from ..errors import UnsupportedInstruction
from ..isa.regs import operand_regs, reads_destination
from ..isa.table import EXEC, instr_info
from .body import Body, BodyItem, across_loop, make_item
from .pad import padded
from .ops_rename import vop3_ok
from .webs import cross_lane

_SGPR = re.compile(r"s(\d+)")
_INDEXED_READS = ("v_movrels", "v_movrelsd", "s_set_gpr_idx_mode")


def broadcast_move(body: Body, i: int) -> tuple[int, int] | None:
    """(A, B) when instruction i is `v_mov_b32_e32 vA, sB` of one plain SGPR."""
    ins = body.instructions[i]
    if ins.mnemonic != "v_mov_b32_e32" or ins.modifiers or len(ins.operands) != 2:
        return None
    dst, src = ins.operands
    m = _SGPR.fullmatch(src.text)
    if dst.kind != "vgpr" or dst.count != 1 or src.kind != "sgpr" or m is None:
        return None
    return dst.index, int(m.group(1))


def _indexed_reads(body: Body) -> bool:
    """Whether some instruction may read a VGPR through register indexing (gpr-index source modes, movrel,
    a mode change)."""
    for ins in body.instructions:
        if ins.mnemonic.startswith(_INDEXED_READS):
            return True
        if ins.mnemonic == "s_set_gpr_idx_on" and any(
                "SRC" in op.text for op in ins.operands if op.kind == "expr"):
            return True
    return False


def _indexed(body: Body) -> list[bool]:
    """Per instruction, whether it lies in an `s_set_gpr_idx_on` (destination mode) window, where the body's
    register facts widen its VGPRs to the rest of the file (`asmevo.isa.regs.def_use_all`)."""
    out, on = [], False
    for ins in body.instructions:
        on = on or ins.mnemonic == "s_set_gpr_idx_on"
        on = on and ins.mnemonic != "s_set_gpr_idx_off"
        out.append(on)
    return out


def _reads(body: Body, j: int, a: int, indexed: list[bool]) -> bool:
    """Whether instruction j may observe vA: a VGPR source operand holding it or, outside gpr-index windows,
    any read the register facts list (an indexed destination's kept lanes are no observation)."""
    if not indexed[j]:
        return ("v", a) in body.infos[j].uses
    return any(("v", a) in operand_regs(op) for op in body.infos[j].srcs)


def _vop3(mnemonic: str, processor: str) -> str | None:
    """The e64 spelling of an e32 or e64 mnemonic, when the instruction table has it."""
    if not mnemonic.endswith(("_e32", "_e64")):
        return None
    name = mnemonic[:-4] + "_e64"
    try:
        instr_info(name, processor)
    except UnsupportedInstruction:
        return None
    return name


def _read_through(body: Body, j: int, a: int, b: int) -> str | None:
    """The VALU instruction j with its reads of vA reading sB (module docstring), or None."""
    ins, info = body.instructions[j], body.infos[j]
    vname, sname = f"v{a}", f"s{b}"
    if info.family not in ("valu", "vopc") or cross_lane(ins) or ins.mnemonic.endswith("_sdwa"):
        return None
    if any(("v", a) in operand_regs(op) and op.text != vname for op in ins.operands):
        return None  # a modifier (-vA, |vA|) or a register tuple holding vA
    if any(op.text == vname for op in info.dst):
        return None
    reads = {k: sname for k, op in enumerate(ins.operands) if op.text == vname}
    first = next((k for k, op in enumerate(ins.operands) if op in info.srcs), None)
    if first is None:
        return None  # vA is read implicitly
    name = ins.mnemonic if ins.mnemonic.endswith("_e32") and set(reads) == {first} else _vop3(ins.mnemonic,
                                                                                              body.processor)
    if name is None or not vop3_ok(ins, reads):
        return None
    return " ".join([name, ", ".join(reads.get(k, op.text) for k, op in enumerate(ins.operands)), *ins.modifiers])


def _kills(body: Body, j: int, a: int, full: list[bool], indexed: list[bool]) -> bool:
    """Whether instruction j rewrites all of vA under the wave's starting EXEC."""
    ins, info = body.instructions[j], body.infos[j]
    return (("v", a) in info.defs and full[j] and not indexed[j] and info.family == "valu" and not cross_lane(ins)
            and not ins.mnemonic.startswith("v_writelane") and not reads_destination(ins, body.processor))


def _dead_after(body: Body, i: int, a: int, full: list[bool], indexed: list[bool]) -> bool:
    """Whether no read on any path after instruction i sees the value vA has there."""
    cfg = body.cfg
    x = cfg.block_of[i]
    work, seen = [(x, i + 1)], set()
    while work:
        x, k = work.pop()
        blk = cfg.blocks[x]
        for j in range(k, blk.end):
            if _reads(body, j, a, indexed):
                return False
            if _kills(body, j, a, full, indexed):
                break
        else:
            for s in blk.succs:
                if s not in seen:
                    seen.add(s)
                    work.append((s, cfg.blocks[s].start))
    return True


def broadcast_reads(body: Body, i: int) -> dict[int, str | None] | None:
    """For the broadcast move at i, the block's reads of vA rewritten to read sB (instruction index -> new
    text, None: deleted), when every condition of the module docstring holds; else None."""
    found = broadcast_move(body, i)
    if found is None or _indexed_reads(body):
        return None
    a, b = found
    full, indexed = body.exec_full, _indexed(body)
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    rewrites: dict[int, str | None] = {}
    stop = blk.end - 1  # the last instruction whose reads of vA are rewritten
    for j in range(i + 1, blk.end):
        ins, info = body.instructions[j], body.infos[j]
        if _reads(body, j, a, indexed):
            if indexed[j]:
                return None
            if ins.mnemonic == "v_readlane_b32":
                lane, dst = ins.operands[2], ins.operands[0].text
                if not full[i] or lane.kind != "imm" or lane.value != 0 or ins.operands[1].text != f"v{a}":
                    return None
                rewrites[j] = None if dst == f"s{b}" else f"s_mov_b32 {dst}, s{b}"
                if dst == f"s{b}":
                    continue  # writes sB with the value it holds
            else:
                rewrites[j] = _read_through(body, j, a, b)
                if rewrites[j] is None:
                    return None
        if ("v", a) in info.defs or ("s", b) in info.defs or not info.defs.isdisjoint(EXEC):
            stop = j
            break
    if not rewrites or not (_kills(body, stop, a, full, indexed) or _dead_after(body, stop, a, full, indexed)):
        return None
    return rewrites


def propagate_broadcast(body: Body, i: int) -> Body | None:
    """Read sB where the block reads vA after the broadcast move at i, and delete the move (module
    docstring); None unless every condition holds."""
    rewrites = broadcast_reads(body, i)
    if rewrites is None:
        return None
    items: list[BodyItem | None] = list(body.items)
    for j, new in rewrites.items():
        items[body.pos[j]] = None if new is None else make_item(new)
    items[body.pos[i]] = None
    first = body.pos[min(rewrites)]
    at = sum(1 for it in items[:first] if it is not None)
    reads = tuple(items[body.pos[j]] for j, new in rewrites.items() if new is not None)
    return padded(body, [it for it in items if it is not None], at, clear=reads)


def propagate_broadcasts(body: Body, i: int) -> Body | None:
    """`propagate_broadcast` at every broadcast move of instruction i's innermost loop (the whole body outside
    loops); None unless the one at i goes."""
    if propagate_broadcast(body, i) is None:
        return None
    return across_loop(body, i, lambda b, j: broadcast_move(b, j) is not None, propagate_broadcast)[0]
