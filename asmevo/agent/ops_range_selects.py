"""Versioning on range masks that select. Compiled masked loads and stores often keep their lanes by selects
rather than EXEC: Triton's buffer accesses compare each element's index with the bound,

    v_cmp_gt_i32 M, N, Y               M: lanes whose element Y is in range (N uniform)
    v_cndmask_b32 off, OOB, off0, M    an out-of-range lane's offset points past the buffer (its load reads 0)
    ...
    v_cndmask_b32 x, -inf, x0, M       and its value is replaced by the padding value

three or four selects per element and chunk, every one of which picks its true value when the lane is in range,
as every lane is in all but a row's last chunk.

`version_range_selects` tests once per block, where its first such compare stands, that every active lane is in
every range mask of the block: the compares run there (into their own registers, so every later reader reads
the mask it read), are ANDed into a free SGPR pair, and `s_andn2_b64` with EXEC sets SCC when a lane is out. The
rest of the block then runs with each select `v_cndmask_b32 D, F, T, M` on such a mask as `v_mov_b32 D, T` (gone
when D is T), its reads of D read T instead where D is read whole in the block and nothing rewrites T first (the
move gone when those were all); when some lane is out it runs as it was. Exact: where M holds every active lane a
select writes T in each lane it writes, and EXEC does not change.

Compares of one index against one bound are tested by one compare where `asmevo.agent.range_summary` finds them
(95_CrossEntropyLoss's four of `s | (lane | c)` per iteration); the test then goes up to the first offset that only
they read, those offsets leave the fast path, and a mask of theirs still read there is EXEC's copy.

A range compare is a signed or unsigned `v_cmp_gt/ge N, Y` or `v_cmp_lt/le Y, N` (the lanes whose VGPR Y is
below the bound N, an SGPR or constant), without modifiers, whose mask a select of the block reads. Legal when:
between the test and each compare not summarised nothing writes what the compare reads or writes and nothing reads
its mask (the test writes it early); nothing writes EXEC from the test to the block's end; SGPR pairs and SGPRs (and
a VGPR per summary of s and X) are free. Layout as `asmevo.agent.versioning`."""
from __future__ import annotations

import re

from ..isa.regs import EXEC, operand_regs
from .body import Body, BodyItem, make_item
from .ops_rename import free_pairs_and_sgprs, free_vgprs
from .ops_version import lanes_outside
from .range_summary import Summary, affine_checks_of, range_summaries
from .versioning import Tail, versioned
from .webs import NotAnalysable, VgprWebs, cross_lane, webs_of

_RANGE = re.compile(r"v_cmp_(gt|lt|ge|le)_[iu]32(_e32|_e64)?$")


def _bound(op) -> bool:
    return (op.kind == "sgpr" and op.count == 1) or op.kind in ("imm", "float")


def range_compare(body: Body, k: int) -> bool:
    """Instruction k tests that a VGPR is below a uniform bound: `v_cmp_gt/ge N, Y` or `v_cmp_lt/le Y, N` (see the
    module docstring; the other way round it tests that Y is out of range, which the lanes seldom all are)."""
    ins = body.instructions[k]
    m = _RANGE.match(ins.mnemonic)
    if m is None or ins.modifiers or len(ins.operands) != 3:
        return False
    a, b = ins.operands[1:]
    single = lambda op: op.kind == "vgpr" and op.count == 1 and not (op.neg or op.abs)
    return single(b) and _bound(a) if m.group(1) in ("gt", "ge") else single(a) and _bound(b)


def _mask_select(body: Body, j: int, mask: frozenset) -> bool:
    """Instruction j is `v_cndmask_b32 D, F, T, M` reading mask M (registers `mask`) as its selector only."""
    ins = body.instructions[j]
    if body.infos[j].base != "v_cndmask_b32" or ins.modifiers or len(ins.operands) != 4:
        return False
    d, f, t, m = ins.operands
    return operand_regs(m) == mask and not any(operand_regs(x) & mask for x in (f, t)) and \
        d.kind == "vgpr" and d.count == 1 and not (t.neg or t.abs)


def _selects(body: Body, k: int, end: int) -> list[int]:
    """The selects on compare k's mask among the readers of that mask up to `end`."""
    mask = frozenset(body.infos[k].defs)
    return [j for j in body.readers_in(k, end) if _mask_select(body, j, mask)]


def _early_ok(body: Body, test: int, k: int) -> bool:
    """Compare k may run at `test`: nothing between writes what it reads or writes, or reads its mask."""
    info = body.infos[k]
    return not any(body.infos[j].defs & (info.uses | info.defs) or body.infos[j].uses & info.defs
                   for j in range(test, k))


def _forwarded(body: Body, webs: VgprWebs, sel: int, end: int, operands: dict[int, list[str]],
               selects: set[int]) -> bool:
    """Rewrite (in `operands`: instruction -> its operand texts) every read of the select's D in sel+1..end-1 to
    read its T, when D's value is read there alone, each time as a whole operand of an instruction that is none of
    the `selects`, reads no other lane and not its destination implicitly, and T's register is not written from
    the select to the read; False (nothing rewritten) otherwise."""
    d, _, t, _ = body.instructions[sel].operands
    web = webs.def_web.get((sel, d.index))
    if t.kind != "vgpr" or t.count != 1 or web is None or web.defs != {sel} or not web.uses or \
            any(not sel < u < end for u in web.uses):
        return False
    for u in web.uses:
        ins, ndst = body.instructions[u], len(body.infos[u].dst)
        if u in selects or cross_lane(ins) or webs.reads_dst[u] or \
                any(x.kind == "vgpr" and x.index <= d.index < x.index + x.count and x.text != d.text
                    for x in ins.operands[ndst:]) or \
                any(body.infos[j].defs & operand_regs(t) for j in range(sel + 1, u)):
            return False
    for u in web.uses:
        ndst = len(body.infos[u].dst)
        ops = operands.setdefault(u, [x.text for x in body.instructions[u].operands])
        operands[u] = [t.text if n >= ndst and o == d.text else o for n, o in enumerate(ops)]
    return True


def _item(body: Body, j: int, operands: list[str]) -> BodyItem:
    ins = body.instructions[j]
    return make_item(" ".join([ins.mnemonic, ", ".join(operands), *ins.modifiers]))


def _only_read_by(webs: VgprWebs, body: Body, d: int, readers: set[int]) -> bool:
    """The value instruction d writes (into its one VGPR) is read by `readers` alone."""
    web = webs.def_web.get((d, body.instructions[d].operands[0].index))
    return web is not None and web.uses <= readers


def _plan(body: Body, webs: VgprWebs, compares: list[int]) -> tuple[int, list[Summary], set[int]]:
    """(Where the test goes, the summaries of `compares` it tests, the offsets only those read) for a block's range
    compares: the test goes to the first such offset after the block's last wait before the first compare when
    the summaries all hold there, else to the first compare (and the offsets before it stay)."""
    first = compares[0]
    waited = max((j + 1 for j in range(body.cfg.blocks[body.cfg.block_of[first]].start, first)
                  if body.infos[j].base == "s_waitcnt"), default=0)
    checks = affine_checks_of(body, compares)
    summaries = range_summaries(body, checks, first)
    summarised = {ch.k for sm in summaries for ch in sm.checks}
    drops = {ch.offset for sm in summaries for ch in sm.checks if ch.offset is not None and ch.offset >= waited
             and _only_read_by(webs, body, ch.offset, summarised)}
    at = min([first, *drops])
    if at < first and range_summaries(body, checks, at) != summaries:
        return first, summaries, {d for d in drops if d > first}
    return at, summaries, drops


def version_range_selects(body: Body, i: int) -> Body | None:
    """Version the rest of instruction i's block on every active lane being in every range mask its selects read
    (see the module docstring); None when the block has none or a condition fails."""
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    compares = [k for k in range(blk.start, blk.end) if range_compare(body, k) and _selects(body, k, blk.end)]
    if not compares:
        return None
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    test, summaries, drops = _plan(body, webs, compares)
    summarised = {ch.k for sm in summaries for ch in sm.checks}
    compares = [k for k in compares if k in summarised or _early_ok(body, test, k)]
    if not compares or any(body.infos[j].defs & EXEC for j in range(test, blk.end)):
        return None
    joins = sum(sm.checks[0].join is not None for sm in summaries)
    free = free_pairs_and_sgprs(body, 1 + len(summaries), 1 + len(summaries))
    vgprs = free_vgprs(body, [1] * joins)
    if free is None or vgprs is None:
        return None
    (acc, *pairs), (keep, *bounds) = free
    lines = [body.instructions[k].text() for k in compares if k not in summarised]
    masks = [body.instructions[k].operands[0].text for k in compares if k not in summarised]
    ws = iter(vgprs)
    for sm, mask, bound in zip(summaries, pairs, bounds):
        lines += sm.lines(f"v{next(ws)}" if sm.checks[0].join else None, bound, mask)
        masks.append(mask)
    lines += lanes_outside(tuple(masks), acc)
    selects = {sel for k in compares for sel in _selects(body, k, blk.end)}
    gone, operands, moves = set(compares) | drops, {}, {}
    for k in summarised:    # in the fast path a range mask holds every active lane: EXEC (a compare writes 0 in others)
        readers = body.readers(k, blk.end)
        if readers is None or set(readers) - selects:
            moves[k] = make_item(f"s_mov_b64 {body.instructions[k].operands[0].text}, exec")
    for sel in sorted(selects):
        d, _, t, _ = body.instructions[sel].operands
        if d.text == t.text or _forwarded(body, webs, sel, blk.end, operands, selects):
            gone.add(sel)
        else:
            moves[sel] = make_item(f"v_mov_b32_e32 {d.text}, {t.text}")
    fast = [(moves[j] if j in moves else _item(body, j, operands[j]) if j in operands else body.items[body.pos[j]], j)
            for j in range(test, blk.end) if j not in gone or j in moves]
    return versioned(body, [Tail(test, lambda slow: [*lines, f"s_cbranch_scc1 {slow}"], fast)], ".Lrange", keep)
