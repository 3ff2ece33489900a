"""Fold a uniform condition's all-or-nothing mask into the AND that reads it. Compiled code ANDs a lane mask
with a scalar condition by first turning SCC into a mask:

    s_cselect_b64 sX, -1, 0       <- C: sX = SCC ? ~0 : 0
    ...                           (nothing writes SCC or sX, nothing reads sX)
    s_and_b64 sY, Z, sX           <- A: sY = Z & sX, SCC = (sY != 0)

`s_cselect_b64 sY, Z, 0` at A (C deleted) writes the same sY (`s_cselect_b64 sX, 0, -1` gives
`s_cselect_b64 sY, 0, Z`; the b32 forms alike). s_cselect writes no SCC, so SCC must be dead after A, and
sX too (unless A overwrites it): one SALU instruction fewer. 3_Batched_matrix_multiplication's K loop
does this for the bounds check of each of its eight masked B elements, every iteration.

And a uniform branch on SCC that goes through an SGPR (LLVM's lowering of a branch on an i1):

    s_cselect_b32 sT, 1, 0        <- sT = SCC ? 1 : 0
    ...                           (nothing touches sT or SCC)
    s_cmp_lg_u32 sT, 1            <- SCC' = (sT != 1) = !SCC
    ...                           (nothing touches SCC, no branch)
    s_cbranch_scc1 L

is `s_cbranch_scc0 L` (each polarity of the select, the compare and the branch alike), when sT is dead after
the compare and, if SCC' differs from SCC, SCC is dead after the branch: two SALU instructions fewer.
vLLM's decode attention (stage 1) has 29 of them.

And a uniform branch through VCC on a mask that is all or nothing:

    s_cselect_b64 sX, -1, 0       <- or s_mov_b64 sX, -1 / 0
    ...                           (nothing writes sX or SCC)
    s_and_b64 vcc, exec, sX       <- VCC = EXEC & sX, SCC = (VCC != 0)
    s_cbranch_vccnz L

With EXEC the wave's starting EXEC (never empty), VCC != 0 exactly when sX is all ones, so the branch is
`s_cbranch_scc1 L` (the select's SCC, which is also the SCC the AND left), `s_branch L` or nothing for a
constant, and the AND goes, when VCC is dead after the branch (and SCC, unless the branch reads the select's
SCC unnegated): one SALU instruction fewer.
"""
from __future__ import annotations

from ..isa.regs import SCC, VCC, operand_regs
from .body import Body, across_loop, make_item

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
    if fuse_select_and(body, i) is None:
        return None
    return across_loop(body, i, lambda b, j: all_or_nothing(b, j) is not None, fuse_select_and)[0]


def _scc_roundtrip(body: Body, i: int) -> tuple[bool, int, int, str] | None:
    """For `s_cselect_b32 sT, a, b` at i ({a, b} = {0, 1}), then the block's next instruction touching sT or
    SCC being `s_cmp_{lg,eq}_u32 sT, c` (c in {0, 1}) at j, and the next one after it touching SCC (or
    branching) being `s_cbranch_scc{k}` at b: (whether SCC' equals SCC, j, b, the branch on SCC alone);
    else None."""
    ins, infos = body.instructions, body.infos
    sel = ins[i]
    if sel.mnemonic != "s_cselect_b32" or sel.modifiers:
        return None
    values = tuple(op.value if op.kind == "imm" else None for op in sel.operands[1:])
    if values not in ((1, 0), (0, 1)):
        return None
    t, end = operand_regs(sel.operands[0]), body.cfg.blocks[body.cfg.block_of[i]].end
    j = next((n for n in range(i + 1, end) if t & (infos[n].uses | infos[n].defs) or SCC in infos[n].defs), None)
    if j is None or ins[j].mnemonic not in ("s_cmp_lg_u32", "s_cmp_eq_u32") or ins[j].modifiers:
        return None
    cmp = ins[j]
    if cmp.operands[0].text != sel.operands[0].text or cmp.operands[1].kind != "imm" or cmp.operands[1].value not in (0, 1):
        return None
    b = next((n for n in range(j + 1, end) if SCC in infos[n].uses | infos[n].defs or ins[n].is_branch), None)
    if b is None or ins[b].mnemonic not in ("s_cbranch_scc0", "s_cbranch_scc1"):
        return None
    c, equal = cmp.operands[1].value, cmp.mnemonic == "s_cmp_eq_u32"
    scc_after = {scc: (values[0] if scc else values[1]) == c if equal else (values[0] if scc else values[1]) != c
                 for scc in (True, False)}
    same = scc_after[True]  # SCC' is SCC or its negation
    taken = int(ins[b].mnemonic[-1])
    return same, j, b, f"\ts_cbranch_scc{taken if same else 1 - taken} {ins[b].operands[0].text}"


def remove_scc_roundtrip(body: Body, i: int) -> Body | None:
    """Branch on SCC directly instead of through a select and a compare (module docstring), at the select at
    i; None unless every condition there holds."""
    found = _scc_roundtrip(body, i)
    if found is None:
        return None
    same, j, b, branch = found
    if operand_regs(body.instructions[i].operands[0]) & body.live_after(j) or (not same and SCC in body.live_after(b)):
        return None
    items = list(body.items)
    items[body.pos[b]] = make_item(branch)
    del items[body.pos[j]]
    del items[body.pos[i]]
    return body.replace(items)


def scc_roundtrip(body: Body, i: int) -> bool:
    """Whether instruction i starts a select-compare-branch round trip through an SGPR."""
    return _scc_roundtrip(body, i) is not None


def remove_scc_roundtrips(body: Body, i: int) -> Body | None:
    """`remove_scc_roundtrip` at every such round trip of instruction i's innermost loop (the whole body outside
    loops); None unless the one at i goes."""
    if remove_scc_roundtrip(body, i) is None:
        return None
    return across_loop(body, i, scc_roundtrip, remove_scc_roundtrip)[0]


_VCC_BRANCHES = {"s_cbranch_vccnz": True, "s_cbranch_vccz": False}  # branch taken when VCC != 0


def _mask_value(body: Body, a: int, x: frozenset) -> tuple[str, bool] | None:
    """What the SGPR pair x holds at instruction a, from its last write on the way back through blocks with a
    single predecessor: ("const", True/False) for `s_mov_b64 x, -1/0`, ("scc", when) for an all-or-nothing
    `s_cselect_b64` (`all_or_nothing`) with nothing writing SCC since; else None."""
    cfg, infos, instrs = body.cfg, body.infos, body.instructions
    b, last, seen, scc_written = cfg.block_of[a], a - 1, set(), False
    while True:
        for k in range(last, cfg.blocks[b].start - 1, -1):
            if x & infos[k].defs:
                ins = instrs[k]
                if len(ins.operands) < 2 or operand_regs(ins.operands[0]) != x or ins.modifiers:
                    return None
                src = ins.operands[1]
                if ins.mnemonic == "s_mov_b64" and src.kind == "imm" and src.value in (-1, 0):
                    return "const", src.value == -1
                when = all_or_nothing(body, k) if ins.mnemonic == "s_cselect_b64" else None
                return None if when is None or scc_written else ("scc", when)
            scc_written |= SCC in infos[k].defs
        preds = cfg.blocks[b].preds
        if len(preds) != 1 or preds[0] in seen or b in (0, cfg.block_of[body.start]):  # waves also start there
            return None
        seen.add(b)
        b, last = preds[0], cfg.blocks[preds[0]].end - 1


def vcc_mask_branch(body: Body, i: int) -> bool:
    """Whether instruction i is `s_and_b64 vcc, exec, sX` (either order) right before `s_cbranch_vcc(n)z`."""
    ins, instrs = body.instructions[i], body.instructions
    return (ins.mnemonic == "s_and_b64" and not ins.modifiers and len(ins.operands) == 3 and i + 1 < len(instrs)
            and instrs[i + 1].mnemonic in _VCC_BRANCHES and operand_regs(ins.operands[0]) == VCC
            and [op.text for op in ins.operands[1:]].count("exec") == 1)


def fold_vcc_branch(body: Body, i: int) -> Body | None:
    """Branch on the select's SCC (or not at all, or always, for a constant mask) instead of on VCC = EXEC & mask
    (module docstring), at the `s_and_b64` at i; None unless every condition there holds."""
    if not vcc_mask_branch(body, i) or not body.exec_full[i]:
        return None
    ins, branch = body.instructions[i], body.instructions[i + 1]
    x = next(operand_regs(op) for op in ins.operands[1:] if op.text != "exec")
    if x & VCC or len(x) != 2:
        return None
    value = _mask_value(body, i, x)
    live = body.live_after(i + 1)
    if value is None or VCC & live:
        return None
    kind, all_ones = value
    on_nonzero = _VCC_BRANCHES[branch.mnemonic]
    if kind == "const":
        if SCC in live:
            return None
        new = [make_item(f"s_branch {branch.label}")] if all_ones == on_nonzero else []
    else:
        if not all_ones and SCC in live:
            return None
        new = [make_item(f"s_cbranch_scc{int(all_ones == on_nonzero)} {branch.label}")]
    items = body.items
    return body.replace([*items[:body.pos[i]], *new, *items[body.pos[i + 1] + 1:]])
