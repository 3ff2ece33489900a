"""Counted loops versioned on their masked region's index range. A stencil's tap loop (pooling, convolution)
runs a uniform trip count and guards each tap by a range check of an index that moves by a uniform step:

    L: v_cmp_gt_u32 M, B, I; s_and_saveexec_b64 S, M; ...tap...; s_or_b64 exec, exec, S
       s_add_i32 c, c, -1; s_cmp_lg_u32 c, 0; v_add_u32 I, s, I; s_cbranch_scc1 L

Every tap pays for the compare, the EXEC save and restore and the counter, though the window leaves the input
only at its borders. `version_counted_loop` tests once per U iterations whether U of them remain (c >= U, unsigned)
and every active lane's index stays in every range of the mask through them; if so it runs U copies of the body
without the mask, the save, the restore and the counter update, then subtracts U from the counter and branches back
as the loop did; otherwise it runs the original loop, which now loops on itself:

    L:     s_cmp_lt_u32 c, U; s_cbranch_scc1 Lslow
           s_cmp_gt_u32 s, LIM; s_cbranch_scc1 Lslow; s_mul_i32 t, s, U-1       (s uniform: 0 <= (U-1)s <= 2^31-1)
           v_add_u32 J, t, I                                                   (the index U-1 iterations on)
           each range compare at J (an upper bound) or at I (a lower bound), and J >= I in each order used; ANDed
           s_andn2_b64 T, exec, T; s_cbranch_scc1 Lslow
           U x [body without mask, save, restore, counter]; s_add_i32 c, c, -U; the compare; s_cbranch L; s_branch Lexit
    Lslow: the original body, its back edge to Lslow
    Lexit:

Exact: with 0 <= (U-1)s <= 2^31-1 and J >= I in an order, no index update of the U wraps in that order, so every
index lies between I and J; a range (one bound) that holds at both ends holds in between, so each save leaves EXEC
as it was and each restore has nothing to restore. Legal when the loop is one block ending in a branch back to its
start on `s_cmp_lg_u32 c, 0` (`s_cmp_eq_u32` and `s_cbranch_scc0`), c written only by `s_add_i32 c, c, -1` and read
only by it and the compare; one masked region, nothing else writing EXEC; the mask a signed or unsigned range compare
(or an AND of such) of one VGPR I against an SGPR or inline constant unwritten in the loop, read only by the save,
with every value the mask's instructions and the save write read only by them and dead after the loop; I written in
the loop only by `v_add_u32 I, s, I` after the compares (s an SGPR unwritten in the loop, or a constant); no other
instruction reading SCC; SCC dead at the loop's start. For predictions every wave passes the test and the trip
count is a multiple of U; the measured time decides (a wave whose window leaves the input runs the test once per
entry, then the loop as it was)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..isa.operands import Operand
from ..isa.regs import EXEC, SCC
from .body import Body, BodyItem, make_item
from .ops_regs import vgpr_limit
from .ops_rename import free_pairs_and_sgprs, free_vgprs, needs_literal

UNROLL = 4  # iterations per test: a 4x4 pooling window's row in one group. The test issues 11 instructions for one
            # unsigned bound and an SGPR step; the group drops five per iteration (the compare, the save, the
            # restore, the counter's add and compare) and three back branches
_RANGE = re.compile(r"v_cmp_(gt|lt|ge|le)_([iu])32$")
_INT_MAX = 2**31 - 1


@dataclass(frozen=True)
class Check:
    """A range compare of the index: its mnemonic's op and type, its operands' texts, the index's position among
    the two sources, and whether it bounds the index from above."""
    op: str
    order: str
    srcs: tuple[str, str]
    index_at: int
    upper: bool


@dataclass(frozen=True)
class CountedLoop:
    """A counted single-block loop with one masked region (module docstring): the block's instruction range,
    the counter's update and compare, the save, restore and the mask's instructions, the index's update."""
    start: int
    end: int
    counter: str
    decrement: int
    compare: int
    save: int
    restore: int
    mask: tuple[int, ...]
    checks: tuple[Check, ...]
    index: str
    update: int
    step: Operand


def _uniform(op: Operand, body: Body, lo: int, hi: int) -> bool:
    """An inline constant, or a single SGPR no instruction in [lo, hi) writes."""
    if op.kind == "imm":
        return not needs_literal(op)
    return op.kind == "sgpr" and op.count == 1 and not any(lo <= j < hi for j in body.writers(op))


def _check(body: Body, j: int, lo: int, hi: int) -> Check | None:
    """Instruction j as a range compare of a VGPR against a bound uniform in the loop [lo, hi), else None."""
    ins, info = body.instructions[j], body.infos[j]
    m = _RANGE.match(info.base)
    if m is None or ins.modifiers or len(ins.operands) != 3:
        return None
    a, b = ins.operands[1:]
    vgpr = lambda op: op.kind == "vgpr" and op.count == 1 and not (op.neg or op.abs)  # noqa: E731
    if vgpr(b) and _uniform(a, body, lo, hi):
        index_at, upper = 1, m.group(1) in ("gt", "ge")    # B > I: I below B
    elif vgpr(a) and _uniform(b, body, lo, hi):
        index_at, upper = 0, m.group(1) in ("lt", "le")    # I < B
    else:
        return None
    return Check(m.group(1), m.group(2), (a.text, b.text), index_at, upper)


def counted_loop(body: Body, i: int) -> CountedLoop | None:
    """The counted loop of instruction i's block (module docstring); None for any other block."""
    cfg, instrs, infos = body.cfg, body.instructions, body.infos
    b = cfg.block_of[i]
    blk = cfg.blocks[b]
    start, end = blk.start, blk.end - 1
    branch = instrs[end]
    _, labels, _ = body.index
    if branch.mnemonic not in ("s_cbranch_scc1", "s_cbranch_scc0") or labels.get(branch.label) != start:
        return None
    scc_writers = [j for j in range(start, end) if SCC in infos[j].defs]
    if not scc_writers or SCC in body.live_in[b]:
        return None
    k = scc_writers[-1]
    cmp_base = {"s_cbranch_scc1": "s_cmp_lg_u32", "s_cbranch_scc0": "s_cmp_eq_u32"}[branch.mnemonic]
    texts = [op.text for op in instrs[k].operands]
    if infos[k].base != cmp_base or "0" not in texts or instrs[k].operands[1 - texts.index("0")].kind != "sgpr":
        return None
    c = texts[1 - texts.index("0")]
    c_reg = ("s", int(c[1:]))
    dec = [j for j in range(start, end) if c_reg in infos[j].defs]
    decrements = (f"s_add_i32 {c}, {c}, -1", f"s_add_i32 {c}, -1, {c}")
    if (len(dec) != 1 or dec[0] > k or instrs[dec[0]].text() not in decrements
            or [j for j in range(start, end) if c_reg in infos[j].uses] != [dec[0], k]):
        return None
    if any(SCC in infos[j].uses for j in range(start, end)):
        return None
    exec_writers = [j for j in range(start, end) if infos[j].defs & EXEC]
    if len(exec_writers) != 2:
        return None
    save, restore = exec_writers
    s_ops, r_ops = instrs[save].operands, instrs[restore].operands
    if (instrs[save].mnemonic != "s_and_saveexec_b64" or instrs[restore].mnemonic != "s_or_b64"
            or [op.text for op in r_ops] not in (["exec", "exec", s_ops[0].text], ["exec", s_ops[0].text, "exec"])):
        return None
    mask, checks, need = [], [], set(infos[save].uses) - EXEC
    for j in reversed(range(start, save)):
        if not infos[j].defs & need:
            continue
        if infos[j].base == "s_and_b64":
            need = (need - infos[j].defs) | infos[j].uses
        elif (ck := _check(body, j, start, end)) is not None:
            checks.append(ck)
            need -= infos[j].defs
        else:
            return None
        mask.append(j)
    index = {ck.srcs[ck.index_at] for ck in checks}
    if need - EXEC or not checks or len(index) != 1:
        return None
    (ind,) = index
    i_reg = ("v", int(ind[1:]))
    updates = [j for j in range(start, end) if i_reg in infos[j].defs]
    if len(updates) != 1 or updates[0] < save or infos[updates[0]].base != "v_add_u32" or instrs[updates[0]].modifiers:
        return None
    u = updates[0]
    dst, *srcs = instrs[u].operands
    steps = [x for x, y in (srcs, srcs[::-1]) if y.text == ind and x.text != ind]
    if dst.text != ind or not steps or not (steps[0].kind == "imm" or _uniform(steps[0], body, start, end)):
        return None
    loop = CountedLoop(start, end, c, dec[0], k, save, restore, tuple(sorted(mask)), tuple(checks), ind, u, steps[0])
    return loop if _private(body, b, loop) else None


def _private(body: Body, b: int, loop: CountedLoop) -> bool:
    """Whether every register the mask's instructions and the save write (SCC aside) is read only by them (and
    the restore, for the save's pair) in the loop, and is dead after it and at its start."""
    infos = body.infos
    own = set(loop.mask) | {loop.save, loop.restore}
    written = set().union(*(infos[j].defs for j in (*loop.mask, loop.save))) - EXEC - {SCC}
    dead = body.live_in[b + 1] | body.live_in[b] if b + 1 < len(body.cfg.blocks) else body.live_in[b]
    return not written & dead and not any(
        infos[j].uses & written for j in range(loop.start, loop.end + 1) if j not in own)


def version_counted_loop(body: Body, i: int, unroll: int = UNROLL) -> Body | None:
    """Version the counted loop holding instruction i on its masked region's index range (module docstring)."""
    loop = counted_loop(body, i)
    if loop is None:
        return None
    instrs, step = body.instructions, loop.step
    if step.kind == "imm" and not 0 <= step.value * (unroll - 1) <= _INT_MAX:
        return None
    free = free_pairs_and_sgprs(body, 2, 0 if step.kind == "imm" else 1)
    vj = free_vgprs(body, [1])
    if free is None or vj is None or vj[0] >= vgpr_limit(body):
        return None
    (t, p), singles = free
    j = f"v{vj[0]}"
    branch = instrs[loop.end]
    slow, exit_ = f"{branch.label}_counted_slow", f"{branch.label}_counted_exit"
    _, labels, _ = body.index
    if slow in labels or exit_ in labels:
        return None
    test = [f"s_cmp_lt_u32 {loop.counter}, {unroll}", f"s_cbranch_scc1 {slow}"]
    if step.kind == "imm":
        test.append(f"v_add_u32_e32 {j}, {step.value * (unroll - 1)}, {loop.index}")
    else:
        r = singles[0]
        test += [f"s_cmp_gt_u32 {step.text}, {_INT_MAX // (unroll - 1)}", f"s_cbranch_scc1 {slow}",
                 f"s_mul_i32 {r}, {step.text}, {unroll - 1}", f"v_add_u32_e32 {j}, {r}, {loop.index}"]
    compares = []
    for ck in loop.checks:
        srcs = list(ck.srcs)
        srcs[ck.index_at] = j if ck.upper else loop.index
        compares.append(f"v_cmp_{ck.op}_{ck.order}32_e64 {{}}, {srcs[0]}, {srcs[1]}")
    orders = sorted({ck.order for ck in loop.checks})
    compares += [f"v_cmp_ge_{order}32_e64 {{}}, {j}, {loop.index}" for order in orders]
    test.append(compares[0].format(t))
    for text in compares[1:]:
        test += [text.format(p), f"s_and_b64 {t}, {t}, {p}"]
    test += [f"s_andn2_b64 {t}, exec, {t}", f"s_cbranch_scc1 {slow}"]
    dropped = {*loop.mask, loop.save, loop.restore, loop.decrement, loop.compare}
    lite = [body.items[body.pos[k]] for k in range(loop.start, loop.end) if k not in dropped]
    latch = [make_item(f"s_add_i32 {loop.counter}, {loop.counter}, {-unroll}"), body.items[body.pos[loop.compare]],
             body.items[body.pos[loop.end]], make_item(f"s_branch {exit_}")]
    original = [body.items[body.pos[k]] for k in range(loop.start, loop.end)]
    back = make_item(f"{branch.mnemonic} {slow}")
    head, tail = body.pos[loop.start], body.pos[loop.end] + 1
    fast = [*map(make_item, test), *lite * unroll, *latch]
    items = body.items
    new = body.replace([*items[:head], *fast, BodyItem(f"{slow}:", label=slow), *original, back,
                        BodyItem(f"{exit_}:", label=exit_), *items[tail:]])
    if not new.no_worse(body):
        return None
    return _described(new, loop.start, unroll, head, len(fast), len(original) + 2)


def _described(new: Body, start: int, unroll: int, head: int, fast: int, slow: int) -> Body:
    """`new` with its executions described for predictions (in the parent's instruction indices; `start` the
    loop's first): every wave passes the test, each group of `unroll` iterations running the test and the fast
    copies once, the original body (the `slow` items after the `fast` ones from item `head`) never."""
    for n, p in enumerate(new.pos):
        if head <= p < head + fast:
            new.counts[n] = ((start, 1.0 / unroll),)
        elif head + fast <= p < head + fast + slow:
            new.counts[n] = ()
    return new
