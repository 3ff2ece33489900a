"""Interleaving two copies of one computation, so packing can pair them. A lane's elements are computed by
the same instruction sequence one after another (an unrolled elementwise kernel, or the regions
`version_full_exec` puts in one block): a run A, then a run B of the same shape (the same mnemonics,
modifiers and constants; registers free), paired instruction by instruction as the longest common
subsequence of shapes (a compiler schedules two copies a little differently). Packed FP32
(`pack_f32_chains`) pairs an op of A with its twin in B only when nothing between them stops the second
moving up, and A's later ops do.

`interleave_elements` first gives the block's compare masks and scalar temporaries registers of their own
(`rename_sgprs`' renamings), lets each `v_div_scale` write a fresh pair that is copied to VCC right before
its `v_div_fmas`, and drops the waits whose removal leaves no read of an outstanding result (the waitcnt
analysis decides). It then renames B's values that share a VGPR with anything else in the range to VGPRs
free wherever they live (below the count that keeps the waves per SIMD; value webs, `asmevo.agent.webs`)
and orders the range a_0, b_0, a_1, b_1, ... as far as the dependences allow: the dependence graph of
`list_schedule` (registers explicit and implicit, memory order, waits, fences), topologically sorted by
that preferred rank, so every instruction reads the value it read before. Hazard wait states are
re-derived (`pad.site_hazard_nops`). `pack_elements` interleaves and then packs the block; it is the
proposal the search predicts, since interleaving alone issues the same instructions."""
from __future__ import annotations

import heapq
from collections import Counter

from ..isa.operands import Operand
from ..isa.regs import VCC
from .body import Body, make_item
from .ops_list import dependences, kind_of
from .ops_pack import pack_f32_chains
from .ops_regs import vgpr_limit
from .ops_rename import rename_across_block, rename_mask, free_pairs, free_sgprs, rename_scalar
from .pad import BLOCK_REPAIRS, site_hazard_nops
from .webs import ENTRY, NotAnalysable, webs_of

MIN_LENGTH = 6      # instructions per copy: shorter runs are left to the ordinary packing window
PREFIX = 3          # instructions a later copy's start must match one by one
MAX_LENGTH = 400    # instructions per copy searched (the pairing is quadratic in it)
MATCHED = 0.75      # the share of a copy's instructions that must pair with the other's
MAX_TRIES = 400     # instructions tried in turn for the start of a copy (the shape counts keep each try cheap)
SKIPPED = ("s_nop", "s_waitcnt")   # neither part of a copy nor of an element's chain


def _shape(op: Operand) -> tuple:
    return (op.kind, op.count) if op.kind in ("vgpr", "sgpr", "agpr") else (op.kind, op.text)


def common_subsequence(xs: list[int], ys: list[int]) -> list[tuple[int, int]]:
    """The longest common subsequence of the key lists `xs` and `ys`, as (position in xs, position in ys) pairs in
    order."""
    n, m = len(xs), len(ys)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below, x = table[i], table[i + 1], xs[i]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if x == ys[j] else max(below[j], row[j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if xs[i] == ys[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def shape_key(body: Body, k: int) -> tuple:
    x = body.instructions[k]
    return x.mnemonic, x.modifiers, tuple(_shape(op) for op in x.operands)


def copies(body: Body, a: int) -> tuple[list[int], list[int], list[tuple[int, int]]] | None:
    """(A, B, pairs): the run A from instruction a up to the nearest later instruction b of a's block that
    starts a run of the same shape (its first PREFIX instructions match A's one by one), the run B of
    as many instructions from b, and their instructions paired by shape (the longest common subsequence:
    a compiler may schedule two copies a little differently), when at least MATCHED of the shorter pair up
    (`s_nop`s and `s_waitcnt`s skipped); None when there is no such b."""
    blk = body.cfg.blocks[body.cfg.block_of[a]]
    ks = [k for k in range(a, blk.end) if body.instructions[k].mnemonic not in SKIPPED]
    if not ks or ks[0] != a:
        return None
    index: dict[tuple, int] = {}
    keys = [index.setdefault(shape_key(body, k), len(index)) for k in ks]
    for start in range(MIN_LENGTH, min(len(ks) - MIN_LENGTH + 1, MAX_LENGTH + 1)):
        if keys[start:start + PREFIX] != keys[:PREFIX]:
            continue
        first, second = keys[:start], keys[start:2 * start]
        least = MATCHED * min(len(first), len(second))
        if sum((Counter(first) & Counter(second)).values()) < least:   # no common subsequence can be long enough
            continue
        pairs = common_subsequence(first, second)
        if len(pairs) >= least:
            return ks[:start], ks[start:2 * start], [(ks[x], ks[start + y]) for x, y in pairs]
    return None


def _renamed_apart(body: Body, first: list[int], second: list[int], span: range) -> Body | None:
    """`body` with every value the `second` run writes that shares a VGPR with an instruction of `span` outside
    that run moved to a VGPR that instruction does not touch and that is free wherever the value lives (below
    `vgpr_limit`); a value in a register tuple moves with its tuple group, all by one even distance (`webs`);
    None when one cannot move."""
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    others = set(span) - set(second)
    touched = {r for k in others for kind, r in body.infos[k].uses | body.infos[k].defs if kind == "v"}
    moving = {id(w): w for k in second for (i, r), w in webs.def_web.items() if i == k and r in touched}
    limit = vgpr_limit(body)
    occupied = {r: webs.occupancy(r) for r in range(limit) if r not in touched}
    moves: dict[int, int] = {}
    for w in sorted(moving.values(), key=lambda w: not w.tupled):   # tuples first: they need aligned runs
        if id(w) in moves:
            continue
        group = webs.tuple_group(w) if w.tupled else [w]
        if group is None or w.stuck or any(ENTRY in m.defs for m in group):
            return None
        distances = [r - w.reg for r in occupied if not w.tupled or (r - w.reg) % 2 == 0]
        d = next((d for d in distances if all(m.reg + d in occupied and not occupied[m.reg + d] & m.occupied
                                              for m in group)), None)
        if d is None:
            return None
        for m in group:
            occupied[m.reg + d] |= m.occupied
            moves[id(m)] = m.reg + d
    return webs.renamed(moves) if moves else body


def _without_idle_waits(body: Body, lo: int, hi: int) -> Body:
    """`body` without the waits of instructions lo..hi-1 whose removal adds no waitcnt violation."""
    cur, k = body, lo
    while k < hi:
        if cur.instructions[k].mnemonic == "s_waitcnt":
            items = list(cur.items)
            del items[cur.pos[k]]
            trial = cur.replace(items)
            if trial.waitcnt_violations <= body.waitcnt_violations:
                cur, hi = trial, hi - 1
                continue
        k += 1
    return cur


def _vcc_freed(body: Body, a: int) -> Body | None:
    """`body` with each `v_div_scale` from instruction a to its block's end that writes VCC for the one
    `v_div_fmas` reading it next writing a fresh SGPR pair instead, copied to VCC right before that
    `v_div_fmas` (so a second copy's division need not wait for the first's to end); None when no pair is free."""
    blk = body.cfg.blocks[body.cfg.block_of[a]]
    ins, infos = body.instructions, body.infos
    moves: dict[int, str] = {}      # v_div_fmas -> the pair to copy
    renamed: dict[int, str] = {}    # v_div_scale -> its text writing that pair
    pairs = free_pairs(body)
    for j in range(a, blk.end):
        if not ins[j].mnemonic.startswith("v_div_scale") or ins[j].operands[1].text != "vcc":
            continue
        touch = [k for k in range(j + 1, blk.end) if VCC & (infos[k].uses | infos[k].defs)]
        if not touch or not ins[touch[0]].mnemonic.startswith("v_div_fmas") or VCC <= infos[touch[0]].defs:
            continue
        after = touch[1] if len(touch) > 1 else None
        if (after is None and VCC & body.live_out[blk.index]) or \
                (after is not None and (VCC & infos[after].uses or not VCC <= infos[after].defs)):
            continue
        if not pairs:
            return None
        pair = pairs.pop(0)
        ops = [o.text for o in ins[j].operands]
        renamed[j] = " ".join([ins[j].mnemonic, ", ".join([ops[0], pair, *ops[2:]]), *ins[j].modifiers])
        moves[touch[0]] = pair
    items = []
    at = {p: n for n, p in enumerate(body.pos)}
    for p, it in enumerate(body.items):
        n = at.get(p)
        if n in moves:
            items.append(make_item(f"s_mov_b64 vcc, {moves[n]}"))
        items.append(make_item(renamed[n]) if n in renamed else it)
    return body.replace(items)


def prepared_block(body: Body, a: int) -> Body | None:
    """Instruction a's block with its compares' masks and scalar temporaries in registers of their own
    (`rename_sgprs`' renamings), its divisions' VCC freed and the idle waits from a on gone; instruction a
    keeps its index."""
    cur = rename_across_block(body, a, rename_mask, free_pairs(body))
    cur = rename_across_block(cur, a, rename_scalar, free_sgprs(cur))
    cur = _vcc_freed(cur, a)
    if cur is None:
        return None
    return _without_idle_waits(cur, a + 1, cur.cfg.blocks[cur.cfg.block_of[a]].end)


def _interleaved(cur: Body, a: int) -> tuple[Body, int] | None:
    """The two copies from instruction a of a prepared body ordered pairwise, the `s_nop`s of their range gone,
    and the index after that range; None when there are none or the order cannot change."""
    found = copies(cur, a)
    return None if found is None else ordered_pairwise(cur, *found)


def ordered_pairwise(cur: Body, first: list[int], second: list[int], pairs: list[tuple[int, int]]) -> tuple[Body, int] | None:
    """The range from the earliest to the last instruction of the runs `first` and `second` ordered pairwise (`pairs`:
    twins, in order), `second`'s values renamed apart and the range's `s_nop`s gone, and the index after the range;
    None when the range holds a label or a fence, a value cannot move, or the order cannot change."""
    lo, hi = min(first[0], second[0]), max(first[-1], second[-1]) + 1
    if any(it.label for it in cur.items[cur.pos[lo]:cur.pos[hi - 1] + 1]):
        return None
    cur = _renamed_apart(cur, first, second, range(lo, hi))
    if cur is None:
        return None
    ks = [k for k in range(lo, hi) if cur.instructions[k].mnemonic != "s_nop"]
    kinds = [kind_of(cur, k) for k in ks]
    if "fence" in kinds:
        return None
    # the preferred rank: a_j at 2j, its twin b_j at 2j + 1, anything else right after its predecessor
    twin = {x: 2.0 * j for j, (x, _) in enumerate(pairs)} | {y: 2.0 * j + 1 for j, (_, y) in enumerate(pairs)}
    rank, last = [], -1.0
    for k in ks:
        last = twin.get(k, last + 1e-3)
        rank.append(last)
    order = _topological(dependences(cur, ks, kinds), rank)
    if order == list(range(len(ks))):
        return None
    p = cur.pos
    kept = [it for it in cur.items[p[lo]:p[hi - 1] + 1] if it.ins is None]
    new = cur.replace(cur.items[:p[lo]] + kept + [cur.items[p[ks[m]]] for m in order] + cur.items[p[hi - 1] + 1:])
    return new, lo + len(ks)


def interleave_elements(body: Body, a: int) -> Body | None:
    """Order two copies of one computation from instruction a (or one of the next MAX_TRIES instructions of its
    block, `copies`) pairwise, then the next two from where they end, and so on (the module docstring); None when
    none can change order."""
    end = body.cfg.blocks[body.cfg.block_of[a]].end
    start = next((k for k in range(a, min(end, a + MAX_TRIES)) if copies(body, k) is not None), None)
    if start is None:
        return None
    cur = prepared_block(body, start)
    if cur is None:
        return None
    k, tries, mixed = start, 0, False
    while k < cur.cfg.blocks[cur.cfg.block_of[start]].end and tries < MAX_TRIES:
        found = _interleaved(cur, k)
        if found is None:
            k, tries = k + 1, tries + 1
        else:
            (cur, k), tries, mixed = found, 0, True
    if not mixed:
        return None
    new = site_hazard_nops(cur, body, repairs=BLOCK_REPAIRS)
    if new is None or new.waitcnt_violations > body.waitcnt_violations:
        return None
    return new


def _topological(preds: list[set[int]], rank: list[float]) -> list[int]:
    """The positions in dependence order, the lowest rank among the ready ones first."""
    waiting = [len(p) for p in preds]
    succs: list[list[int]] = [[] for _ in preds]
    for n, ps in enumerate(preds):
        for q in ps:
            succs[q].append(n)
    ready = [(rank[n], n) for n in range(len(preds)) if not waiting[n]]
    heapq.heapify(ready)
    order = []
    while ready:
        _, n = heapq.heappop(ready)
        order.append(n)
        for s in succs[n]:
            waiting[s] -= 1
            if not waiting[s]:
                heapq.heappush(ready, (rank[s], s))
    return order


def pack_elements(body: Body, a: int) -> Body | None:
    """`interleave_elements` at instruction a, then `pack_f32_chains` over its block; None unless something
    packs."""
    mixed = interleave_elements(body, a)
    if mixed is None:
        return None
    return pack_f32_chains(mixed, a)
