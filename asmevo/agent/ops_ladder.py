"""Guard-ladder versioning. Triton unrolls a uniform row mask into a ladder of rungs: rung r tests row
B + k_r against the bound L and skips its work when the row is out of range,

    s_add_i32 t, B, k_r        (absent when the rung compares B itself: k_r = 0)
    s_cmp_ge_i32 t, L
    s_cbranch_scc1 Z_r         <- out of range
    <rung r's work>

where Z_r either zeroes what the rung loads out of line and rejoins the ladder (the last rung's work then
ends with `s_branch J`), or is the next rung's guard (the defaults were set before; the ladder ends at J =
the last rung's Z). Instructions between a guard's three that touch neither t nor SCC run either way and
count as work. When B + kmax (kmax the largest k_r, every k_r >= 0) neither overflows nor reaches L,
every rung falls through and the work runs in order with no test between. The versioned ladder tests that
once and keeps the ladder for the other launches:

    s_add_i32 t, B, kmax       SCC = signed overflow (CDNA3 ISA S_ADD_I32)
    s_cbranch_scc1 .Lslow
    s_cmp_lt_i32 t, L
    s_cbranch_scc0 .Lslow
    <every rung's work, in order>
    s_branch J                 (the last work instruction when the ladder ends with it)
  .Lslow:
    <the ladder as it was>

Each k_r lies in [0, kmax], so B + k_r <= B + kmax < L without overflow, and each rung's test fails exactly
as in the ladder. Legal when B and L are not written on the ladder, no work reads t or SCC or branches
(but the final `s_branch J`), and t and SCC are dead where the ladder starts and at J (the fast path
leaves them as the check set them). vLLM's prefill attention guards its K and V row loads so, one
ladder of each form (31 and 28 rungs): three scalar instructions per load in its hottest loop."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..isa.operands import Operand
from ..isa.regs import SCC, Reg, operand_regs
from .body import Body, BodyItem, make_item
from .ops_layout import fresh_label, labels_before

# the check is four instructions, two rungs' guards five or six: fewer rungs cannot pay (whether more do, the skip form
# adding a taken `s_branch`, is the search's prediction to say)
MIN_RUNGS = 3
MAX_COPIED = 512     # instructions the fast path copies (code size; the instruction cache is not modelled)


@dataclass(frozen=True)
class Ladder:
    """The rungs from a guard: `work` are the instructions that run when
    every rung is in range (guards' interleaved instructions included, in order), `end` the index after
    the ladder's last instruction and `join` the label the ladder continues at (`jumps`: the last work
    instruction is the `s_branch` to it; else the code reaches it by falling through); `widest` is the
    branch of a rung with k = kmax (it skips whenever any rung does)."""

    base: Operand
    bound: Operand
    temp: Operand
    kmax: int
    rungs: int
    work: tuple[int, ...]
    end: int
    join: str
    jumps: bool
    widest: int


@dataclass(frozen=True)
class _Guard:
    k: int
    base: Operand
    temp: Operand | None
    bound: Operand
    target: str
    branch: int
    interleaved: tuple[int, ...]


def _imm(op: Operand) -> int | None:
    return op.value if op.kind == "imm" and isinstance(op.value, int) else None


def _next_touch(body: Body, j: int, regs: set[Reg]) -> tuple[int, tuple[int, ...]] | None:
    """The first instruction after j that reads or writes `regs` or SCC or branches, and the ones before
    it (None past a label or the end)."""
    ins, infos, passed = body.instructions, body.infos, []
    for m in range(j + 1, len(ins)):
        if labels_before(body, m):
            return None
        if ins[m].is_branch or not ins[m].falls_through or (regs | {SCC}) & (infos[m].uses | infos[m].defs):
            return m, tuple(passed)
        passed.append(m)
    return None


def _guard(body: Body, j: int) -> _Guard | None:
    """The guard starting at instruction j: `s_add_i32 t, B, k` (k >= 0) then `s_cmp_ge_i32 t, L`, or
    `s_cmp_ge_i32 B, L` alone (k = 0), then `s_cbranch_scc1 Z`; instructions between them that touch
    neither t nor SCC are interleaved work."""
    ins, k, base, temp, interleaved = body.instructions, 0, None, None, ()
    if ins[j].mnemonic == "s_add_i32":
        dst, src0, src1 = ins[j].operands
        if _imm(src1) is None or _imm(src1) < 0 or src0.kind != "sgpr" or dst.kind != "sgpr" \
                or dst.index == src0.index:
            return None
        found = _next_touch(body, j, operand_regs(dst))
        if found is None:
            return None
        k, base, temp, (j, interleaved) = _imm(src1), src0, dst, found
    if ins[j].mnemonic != "s_cmp_ge_i32":
        return None
    x, bound = ins[j].operands
    if x.kind != "sgpr" or bound.kind != "sgpr" and _imm(bound) is None:
        return None
    if temp is not None and x.index != temp.index:
        return None
    found = _next_touch(body, j, operand_regs(temp) if temp is not None else set())
    if found is None or ins[found[0]].mnemonic != "s_cbranch_scc1":
        return None
    return _Guard(k, x if base is None else base, temp, bound, ins[found[0]].label, found[0], interleaved + found[1])


def _same_ladder(g: _Guard, base: Operand, bound: Operand, temp: Operand | None) -> bool:
    return (g.temp is not None and g.base.index == base.index and g.bound.text == bound.text
            and (temp is None or g.temp.index == temp.index))


def ladder(body: Body, head: int) -> Ladder | None:
    """The ladder whose first guard starts at instruction `head` (see the module docstring), or None."""
    first = _guard(body, head)
    if first is None:
        return None
    base, bound, temp = first.base, first.bound, first.temp
    ks, work, target, j, ins = [first.k], list(first.interleaved), first.target, first.branch + 1, body.instructions
    widest = first.branch
    while j < len(ins):
        g = _guard(body, j) if ins[j].mnemonic == "s_add_i32" else None
        if g is not None and _same_ladder(g, base, bound, temp):
            temp = g.temp
            widest = g.branch if g.k >= max(ks) else widest
            ks.append(g.k)
            work.extend(g.interleaved)
            target, j = g.target, g.branch + 1
            continue
        if target in labels_before(body, j):
            end, join, jumps = j, target, False
            break
        if ins[j].mnemonic == "s_branch":
            work.append(j)
            end, join, jumps = j + 1, ins[j].label, True
            break
        if ins[j].is_branch or not ins[j].falls_through:
            return None
        work.append(j)
        j += 1
    else:
        return None
    if temp is None or len(ks) < MIN_RUNGS or len(work) > MAX_COPIED:
        return None
    return Ladder(base, bound, temp, max(ks), len(ks), tuple(work), end, join, jumps, widest)


def version_guard_ladder(body: Body, head: int) -> Body | None:
    """Test the whole ladder starting at instruction `head` once and run its work unguarded when every rung
    is in range (see the module docstring)."""
    lad = ladder(body, head)
    if lad is None or lad.join not in body.index[1]:
        return None
    infos = body.infos
    fixed = operand_regs(lad.base) | operand_regs(lad.bound)
    temp = operand_regs(lad.temp)
    if any(fixed & infos[i].defs for i in range(head, lad.end)):
        return None
    if any((temp | {SCC}) & infos[i].uses for i in lad.work):
        return None
    join = body.index[1][lad.join]
    if (temp | {SCC}) & (body.live_before(head) | body.live_before(join)):
        return None
    slow = fresh_label(body, lad.join, "slow")
    check = [make_item(f"s_add_i32 {lad.temp.text}, {lad.base.text}, {lad.kmax}"),
             make_item(f"s_cbranch_scc1 {slow}"),
             make_item(f"s_cmp_lt_i32 {lad.temp.text}, {lad.bound.text}"),
             make_item(f"s_cbranch_scc0 {slow}")]
    items, pos = body.items, body.pos
    fast = [items[pos[i]] for i in lad.work] + ([] if lad.jumps else [make_item(f"s_branch {lad.join}")])
    new = [*items[:pos[head]], *check, *fast, BodyItem(f"{slow}:", label=slow), *items[pos[head]:]]
    result = body.replace(new)
    if not result.no_worse(body):
        return None
    result.counts = _counts(body, head, lad, len(check), len(fast))
    return result


def _counts(body: Body, head: int, lad: Ladder, checks: int, fast: int) -> dict[int, tuple[tuple[int, float], ...]]:
    """The versioned ladder's executions in terms of the parent's (`Body.counts`): the check runs as often as
    the head; the fast path as often as the widest rung fell through (its branch's count minus its taken
    ones: the widest rung's next instruction is reached from it alone); each kept rung instruction its
    count minus the fast path's. Empty when the widest rung's next instruction has a label."""
    w = lad.widest
    if w + 1 >= len(body.instructions) or labels_before(body, w + 1):
        return {}
    in_range = ((head, 1.0), (w, -1.0), (w + 1, 1.0))
    out = {head + n: ((head, 1.0),) for n in range(checks)}
    out.update({head + checks + n: in_range for n in range(fast)})
    out.update({i + checks + fast: ((i, 1.0), *((p, -c) for p, c in in_range)) for i in range(head, lad.end)})
    return out


def ladder_head(body: Body, i: int) -> bool:
    """Instruction i starts the guard of a ladder `version_guard_ladder` can version, and is not the kept
    ladder of one it versioned already (only launches out of range reach that one)."""
    return (ladder(body, i) is not None
            and not any(re.fullmatch(r".+_slow\d+", name) for name in labels_before(body, i)))
