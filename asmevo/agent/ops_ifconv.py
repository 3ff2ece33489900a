"""If-conversion of a data-dependent if/else of vector work. Compiled code branches on a per-lane condition M so,

    s_and_saveexec_b64 sS, M         EXEC = E & M, sS = E
    s_xor_b64 sS, exec, sS           sS = E & ~M (the else lanes)
    s_cbranch_execz .Lelse
    <then>
  .Lelse:
    s_andn2_saveexec_b64 sR, sS      sR = E & M, EXEC = E & ~M
    [s_cbranch_execz .Lend]
    <else>
  [.Lend:]
    s_or_b64 exec, exec, sR          EXEC = E

and a wave whose lanes disagree runs both sides. Converted, both sides run under E and a select per result
keeps each lane's own side:

    s_mov_b64 sC, M
    <then, each VGPR it writes renamed to a fresh one>
    <else, likewise>
    v_cndmask_b32_e64 vR, <else's vR or vR>, <then's vR or vR>, sC     for each vR either side writes that is
                                                                          read later

Each lane computes what it computed before, plus the other side's values, which only the selects read. Legal
when both sides are straight-line vector ALU work of single VGPRs (no memory access, no cross-lane read, no
EXEC access, no branch), their scalar writes (SGPRs, VCC, SCC: they run now whether or not a lane takes the side)
are read neither by the other side nor after the diamond, no side reads sS, sR or the SCC the diamond set
before writing them, nothing reads them after it, and the code the diamond replaces holds no label another
branch targets. The diamond is followed through its branches (a compiler may lay either side out of line):
laid out in place, the converted code replaces it; out of line, it jumps to where the restore continues and
the code no path reaches any more goes. With no lane disagreeing the converted code runs the side the wave would
have skipped: the timing model decides at the bench shape whether that pays. A run of converted diamonds is one
straight path for `version_full_exec` and `pack_elements`."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..isa.operands import parse_operand
from ..isa.regs import EXEC, SCC, operand_regs, reads_destination
from .body import Body, BodyItem, make_item
from .ops_layout import fresh_label, labels_before
from .ops_rename import free_pairs, free_vgprs
from .pad import BLOCK_REPAIRS, site_hazard_nops
from .webs import NotAnalysable, webs_of

_FAMILIES = ("valu", "vopc", "salu")
_CROSS_LANE = ("v_readlane", "v_readfirstlane", "v_writelane", "v_permlane", "v_mov_b32_dpp", "ds_swizzle")


@dataclass(frozen=True)
class Diamond:
    """An if/else (the module docstring), followed as a wave whose lanes disagree runs it (skip branches
    not taken, `s_cbranch_execnz` and `s_branch` taken, so the compiler's layout does not matter): `then` and
    `other` the two sides' instructions, `control` the saves, skips and jumps, `join` the restore; `cond` the
    condition's operand text."""

    then: tuple[int, ...]
    other: tuple[int, ...]
    control: tuple[int, ...]
    join: int
    cond: str


def _side(body: Body, k: int, stop, control: list[int]) -> tuple[list[int], int] | None:
    """The instructions from k up to the first one `stop` accepts (appended to `control` with the branches passed)."""
    ins, labels, out, seen = body.instructions, body.index[1], [], set()
    while k < len(ins) and k not in seen:
        seen.add(k)
        x = ins[k]
        if stop(x):
            control.append(k)
            return out, k
        if x.mnemonic in ("s_cbranch_execnz", "s_branch"):
            if x.label not in labels:
                return None
            control.append(k)
            k = labels[x.label]
            continue
        if x.mnemonic == "s_cbranch_execz":
            control.append(k)
        elif x.is_branch or not x.falls_through or EXEC & body.infos[k].defs:
            return None
        else:
            out.append(k)
        k += 1
    return None


def diamond(body: Body, s: int) -> Diamond | None:
    """The if/else whose save is instruction s, or None."""
    ins = body.instructions
    if s + 2 >= len(ins) or ins[s].mnemonic != "s_and_saveexec_b64" or ins[s + 1].mnemonic != "s_xor_b64":
        return None
    saved, cond = (op.text for op in ins[s].operands)
    if [op.text for op in ins[s + 1].operands] != [saved, "exec", saved]:
        return None
    control = [s, s + 1]
    then = _side(body, s + 2, lambda x: x.mnemonic == "s_andn2_saveexec_b64" and x.operands[1].text == saved, control)
    if then is None:
        return None
    reopened = ins[then[1]].operands[0].text
    other = _side(body, then[1] + 1, lambda x: x.mnemonic == "s_or_b64" and [op.text for op in x.operands] ==
                  ["exec", "exec", reopened], control)
    if other is None:
        return None
    return Diamond(tuple(then[0]), tuple(other[0]), tuple(control), other[1], cond)


def _side_ok(body: Body, side: tuple[int, ...]) -> bool:
    """The side is straight-line vector and scalar ALU work of single VGPRs: no memory access, cross-lane read,
    EXEC access or branch (its `s_nop`s aside)."""
    for k in side:
        x, info = body.instructions[k], body.infos[k]
        if x.mnemonic == "s_nop":
            continue
        if info.family not in _FAMILIES or x.is_branch or x.mnemonic.startswith(_CROSS_LANE) or \
                "dpp" in " ".join(x.modifiers) or EXEC & info.defs or any(op.text == "exec" for op in x.operands):
            return False
        if any(op.kind == "vgpr" and op.count != 1 for op in x.operands):
            return False
    return True


def _read_unwritten(body: Body, side: tuple[int, ...], regs: set) -> bool:
    """Some instruction of `side` reads a register of `regs` the side has not written before it."""
    written: set = set()
    for k in side:
        if (regs - written) & body.infos[k].uses:
            return True
        written |= body.infos[k].defs
    return False


def _scalar_defs(body: Body, side: tuple[int, ...]) -> set:
    return {r for k in side for r in body.infos[k].defs if r[0] in ("s", "scc")}


def if_convert(body: Body, s: int) -> Body | None:
    """The if/else at instruction s converted to both sides and selects (the module docstring), or None."""
    d = diamond(body, s)
    if d is None or d.join + 1 >= len(body.instructions) or not d.then or not d.other or \
            not _side_ok(body, d.then) or not _side_ok(body, d.other):
        return None
    ins, infos = body.instructions, body.infos
    reopen = next(k for k in d.control if ins[k].mnemonic == "s_andn2_saveexec_b64")
    inside = {*d.then, *d.other, *d.control}
    in_place = inside == set(range(s, d.join + 1))
    removed = body.items[body.pos[s]:body.pos[d.join if in_place else s + 1] + 1]
    targeted = {x.label for k, x in enumerate(ins) if x.is_branch and (k not in inside or not in_place)}
    if any(it.label in targeted for it in removed if it.label):
        return None
    after = body.live_after(d.join)
    else_lanes, then_lanes = operand_regs(ins[s].operands[0]), operand_regs(ins[reopen].operands[0])
    cond_regs = operand_regs(parse_operand(d.cond))
    then_s, other_s = _scalar_defs(body, d.then), _scalar_defs(body, d.other)
    other_reads = {r for k in d.other for r in infos[k].uses}
    # the saved masks and SCC are no longer written: no side may read one the diamond had set
    if (else_lanes | then_lanes | {SCC} | then_s | other_s) & after or then_s & other_reads or \
            _read_unwritten(body, d.then, else_lanes | {SCC}) or \
            _read_unwritten(body, d.other, else_lanes | then_lanes | {SCC}):
        return None
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    written = [sorted({r for k in side for kind, r in infos[k].defs if kind == "v"}) for side in (d.then, d.other)]
    fresh = free_vgprs(body, [1] * (len(written[0]) + len(written[1])))
    pairs = [p for p in free_pairs(body) if not operand_regs(parse_operand(p)) & cond_regs]
    if fresh is None or not pairs:
        return None
    maps = [dict(zip(written[0], fresh[:len(written[0])])), dict(zip(written[1], fresh[len(written[0]):]))]
    cond = pairs[0]
    lines = [f"s_mov_b64 {cond}, {d.cond}"]
    for side, rename in zip((d.then, d.other), maps):
        texts = _renamed(body, side, rename)
        if texts is None:
            return None
        lines += texts
    for r in sorted(set(written[0]) | set(written[1])):
        last = [max((k for k in side if ("v", r) in infos[k].defs), default=None) for side in (d.then, d.other)]
        webs_out = [webs.def_web.get((k, r)) for k in last if k is not None]
        if any(w is None or w.uses - inside for w in webs_out):   # read after the diamond
            lines.append(f"v_cndmask_b32_e64 v{r}, v{maps[1].get(r, r)}, v{maps[0].get(r, r)}, {cond}")
    items, pos = body.items, body.pos
    if in_place:   # laid out in place: the converted code replaces it
        new = body.replace([*items[:pos[s]], *(make_item(t) for t in lines), *items[pos[d.join] + 1:]])
    else:                                     # out of line: it jumps to where the restore continues
        named = labels_before(body, d.join + 1) if d.join + 1 < len(ins) else []
        target = named[0] if named else fresh_label(body, f".Lifc{s}", "join")
        lines.append(f"s_branch {target}")
        after_join = [] if named else [BodyItem(f"{target}:", label=target)]
        new = _without_orphans(body.replace([*items[:pos[s]], *(make_item(t) for t in lines),
                                             *items[pos[s + 2]:pos[d.join + 1]], *after_join,
                                             *items[pos[d.join + 1]:]]), body)
    return site_hazard_nops(new, body, repairs=BLOCK_REPAIRS)


def _unreachable(body: Body) -> set[int]:
    """Item positions of the blocks no path from the wave's start reaches, with their labels."""
    cfg = body.cfg
    seen, work = set(), [cfg.block_of[0], cfg.block_of[body.start]]
    while work:
        b = work.pop()
        if b not in seen:
            seen.add(b)
            work.extend(cfg.blocks[b].succs)
    dead: set[int] = set()
    for blk in cfg.blocks:
        if blk.index not in seen:
            first = body.pos[blk.start - 1] + 1 if blk.start else 0
            dead.update(range(first, body.pos[blk.end - 1] + 1))
    return dead


def _without_orphans(new: Body, old: Body) -> Body:
    """`new` without the code no path reaches any more that one reached in `old` (an out-of-line if/else's code once
    its entry jumps past it); code no path reached before (padding) stays."""
    before = {id(old.items[p]) for p in _unreachable(old)}
    gone = {p for p in _unreachable(new) if id(new.items[p]) not in before}
    return new.replace([it for p, it in enumerate(new.items) if p not in gone]) if gone else new


def _renamed(body: Body, side: tuple[int, ...], rename: dict[int, int]) -> list[str] | None:
    """The side's instructions with each VGPR it writes renamed, and each read of one after the side wrote it;
    None when an instruction reads its destination before the side wrote it (`v_fmac`: its fresh register
    would be read unset)."""
    out, defined = [], set()
    for k in side:
        x, info = body.instructions[k], body.infos[k]
        ndst = len(info.dst)
        dsts = {r for kind, r in info.defs if kind == "v"}
        if reads_destination(x, body.processor) and dsts - defined:
            return None
        ops = []
        for n, op in enumerate(x.operands):
            if op.kind == "vgpr" and op.index in rename and (n < ndst or op.index in defined):
                ops.append(re.sub(rf"\bv{op.index}\b", f"v{rename[op.index]}", op.text))
            else:
                ops.append(op.text)
        defined |= dsts
        out.append(" ".join([x.mnemonic, ", ".join(ops), *x.modifiers]))
    return out
