"""Full-wave versioning of a run of masked regions. Compiled elementwise code guards each of a lane's
elements by its own bounds mask,

    s_and_saveexec_b64 sA, m1       EXEC = E & m1, sA = E
    s_cbranch_execz .Lskip1         (taken when no lane is in m1)
    <element 1>
  .Lskip1:
    s_or_b64 exec, exec, sA         EXEC = E
    s_and_saveexec_b64 sB, m2
    ...

and lays the regions out wherever it likes (skip branches may jump backwards). When every lane of the wave
is in every mask, each save leaves EXEC = E, no skip branch is taken and each restore gives E back. The
versioned code tests that once, where the first region saves EXEC,

    s_and_b64 sT, m1, m2 ...        (each later mask ANDed in; one mask is read directly)
    s_andn2_b64 sT, exec, sT        SCC = some lane of E is outside a mask
    s_cbranch_scc1 .Lslow
    s_cbranch_execz .Lslow          (E = 0: the regions' scalar work must not run)
    <the path the wave takes when the test passes, as one block: saves, restores and branches gone,
     a save whose pair is read later kept as s_mov_b64 sA, exec>
  .Lslow:
    <the regions as they were>

The path is followed from the first save: a save sets EXEC to E and its pair to E, a restore from such a
pair sets EXEC to E, `s_cbranch_execz` falls through and `s_cbranch_execnz` and `s_branch` are taken. It
ends at the wave's `s_endpgm`, or where it meets a conditional branch, a write of EXEC that is no region's, a
save whose mask the path wrote and the test cannot compute, or a jump back to the first save's loop: the fast
path then branches there (in a loop, its latch), with SCC and the pairs the code there reads as the regions
would leave them. A mask the path writes before its save (compiled code computes each element's bounds mask
right before its region) is computed by the test: its backward slice over the path, scalar and vector ALU
instructions reading neither SCC nor a save's pair nor anything the path loads, runs again before the test with
every register it writes renamed to a fresh one (a new one per write; a VOPC's VCC becomes a VOP3 pair), and
on the fast path only the slice instructions something else there (or the code it joins) reads stay. On the
fast path EXEC is E where the slice ran and at the test alike, and nothing the slice reads is written in
between, so the test reads the values the saves would. Legal when no instruction reads the SCC a dropped save
or restore set, and the path visits no instruction twice.

`version_full_exec` converts the data-dependent if/elses after the first save to selects first
(`ops_ifconv`), so they do not end the path, and then widens and packs the one block: the elements'
accesses side by side (`widen_stores` / `widen_loads` under one EXEC), their arithmetic paired
(`pack_elements`, then `repack_elements` for the elements it left unpaired)."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..isa.operands import Operand, parse_operand
from ..isa.regs import EXEC, SCC, Reg, operand_regs
from .body import Body, BodyItem, make_item
from .ops_ifconv import diamond, if_convert
from .ops_elements import repack_elements
from .ops_interleave import pack_elements
from .ops_layout import fresh_label, labels_before
from .ops_pack import PACKED, pack_f32_chains
from .ops_rebase import row_offset
from .ops_rename import free_pairs, free_sgprs, free_vgprs, vop3_ok
from .ops_widen import global_address, is_store, offset_of, widen_loads, widen_stores
from .pad import BLOCK_REPAIRS, site_hazard_nops

MIN_REGIONS = 2      # one region's save, branch and restore cannot pay for the test's four instructions
MAX_COPIED = 1024    # instructions the fast path copies (code size; the instruction cache is not modelled)


@dataclass(frozen=True)
class FullPath:
    """The path a wave takes from a save when every lane is in every mask: `masks` the saves' masks (operand
    text, in order, once each), `kept` the instructions that stay, in order (with the `s_mov_b64` text a save
    becomes, or None to copy the instruction), `visited` every instruction on the path, `join` the instruction
    the path continues at in the code as it was (None: it ends with the wave's `s_endpgm`)."""

    masks: tuple[str, ...]
    kept: tuple[tuple[int, str | None], ...]
    visited: frozenset[int]
    join: int | None = None
    computed: tuple[tuple[str, tuple[int, ...]], ...] = ()   # masks the path computes: (mask, its slice)
    slices: tuple[int, ...] = ()    # the instructions of every slice, in path order


def _restore_of(body: Body, j: int, saved: set[str]) -> bool:
    """Instruction j is `s_or_b64 exec, exec, sX` with sX a pair holding the saved EXEC."""
    x = body.instructions[j]
    return (x.mnemonic == "s_or_b64" and [o.text for o in x.operands[:2]] == ["exec", "exec"]
            and x.operands[2].text in saved)


def full_path(body: Body, head: int, min_regions: int = MIN_REGIONS) -> FullPath | None:
    """The path from the save at `head` when every lane is in every mask (the module docstring), or None (also when
    fewer than `min_regions` regions are on it, or `head` is no save)."""
    ins, infos, labels = body.instructions, body.infos, body.index[1]
    if ins[head].mnemonic != "s_and_saveexec_b64":
        return None
    masks: list[str] = []
    computed: list[tuple[str, tuple[int, ...]]] = []
    kept: list[tuple[int, str | None]] = []
    saves: list[tuple[int, set[Reg]]] = []    # kept position of each save, its pair
    saved: set[str] = set()                  # pairs that hold E
    written: set[Reg] = set()
    visited: set[int] = set()
    scc_stale = False                        # SCC is what a dropped save or restore set
    j, join = head, None
    while True:
        if j in visited or j >= len(ins) or len(visited) > MAX_COPIED:
            return None
        x, info = ins[j], infos[j]
        if x.mnemonic == "s_and_saveexec_b64":
            dst, mask = x.operands
            written_mask = operand_regs(mask) & written
            sliced = mask_slice(body, kept, operand_regs(mask)) if written_mask else None
            if mask.kind not in ("sgpr", "special") or mask.text == "exec" or written_mask and sliced is None:
                join = j
                break
            visited.add(j)
            if sliced is not None:
                if (mask.text, sliced) not in computed:
                    computed.append((mask.text, sliced))
            elif mask.text not in masks:
                masks.append(mask.text)
            saves.append((len(kept), operand_regs(dst)))
            kept.append((j, f"s_mov_b64 {dst.text}, exec"))
            saved.add(dst.text)
            written |= operand_regs(dst)
            scc_stale = True
        elif _restore_of(body, j, saved):
            visited.add(j)
            scc_stale = True
        elif x.mnemonic == "s_cbranch_execz":
            visited.add(j)
        elif x.mnemonic in ("s_cbranch_execnz", "s_branch"):
            if x.label not in labels:
                return None
            visited.add(j)
            j = labels[x.label]
            if j <= head:        # back to the loop's head: the path ends, the loop goes on
                join = j
                break
            continue
        elif x.is_branch or EXEC & info.defs:
            join = j
            break
        elif scc_stale and SCC in info.uses:
            return None
        else:
            visited.add(j)
            kept.append((j, None))
            written |= info.defs
            saved -= {p for p in saved if operand_regs(parse_operand(p)) & info.defs}
            scc_stale = scc_stale and SCC not in info.defs
            if x.ends_program:
                break
            if not x.falls_through:
                return None
        j += 1
    live = body.live_before(join) if join is not None else frozenset()
    if len(saves) < min_regions or (scc_stale and SCC in live):
        return None
    # a save becomes s_mov_b64 only when a kept instruction after it, or the code it joins, reads its pair first
    for at, pair in saves:
        if not _read_later(infos, kept[at + 1:], live, pair):
            kept[at] = (kept[at][0], "")
    # the test computes the written masks: a slice's instruction stays only if the path or the code it joins reads it
    sliced = {i for _, s in computed for i in s}
    slices = tuple(i for i, text in kept if i in sliced and text is None)
    for at, (i, text) in reversed(list(enumerate(kept))):     # the last first: it may read an earlier one
        if i in sliced and text is None and not _read_later(infos, kept[at + 1:], live, infos[i].defs):
            kept[at] = (i, "")
    return FullPath(tuple(masks), tuple((i, t) for i, t in kept if t != ""), frozenset(visited), join, tuple(computed),
                    slices)


def mask_slice(body: Body, kept: list[tuple[int, str | None]], mask: set[Reg]) -> tuple[int, ...] | None:
    """The kept instructions (indices, in order) that compute `mask` from values the path has not written (its
    backward slice over `kept`), when the test can compute it before the first save: every one a scalar or vector
    ALU instruction without SCC among its reads (EXEC it may read: on the path it is the E the test sees), and
    no save's pair among the values it needs. None otherwise."""
    infos, ins = body.infos, body.instructions
    needed, sliced = set(mask), []
    for i, text in reversed(kept):
        if text is not None:
            if needed & _pair_of(text):
                return None
            continue
        info = infos[i]
        if not needed & info.defs:
            continue
        if info.family not in ("salu", "valu", "vopc") or SCC in info.uses or ins[i].is_branch:
            return None
        sliced.append(i)
        needed = (needed - info.defs) | (info.uses - EXEC)
    return tuple(reversed(sliced))


def _pair_of(text: str) -> set[Reg]:
    """The pair a kept save's `s_mov_b64 sA, exec` writes."""
    return operand_regs(parse_operand(text.split()[1].rstrip(",")))


def _read_later(infos: list, later: list[tuple[int, str | None]], live: frozenset, regs) -> bool:
    """Some register of `regs` is read by `later` before it is written, or live where the path joins and not
    written by `later`."""
    return any(_read_first(infos, later, r) or (r in live and not _written(infos, later, r)) for r in regs)


def _written(infos: list, later: list[tuple[int, str | None]], reg: Reg) -> bool:
    """Some instruction of `later` writes `reg` (a kept save's `s_mov_b64` included, a dropped one's "" not)."""
    return any(reg in (_pair_of(text) if text else infos[i].defs)
               for i, text in later if text != "")


def _read_first(infos: list, later: list[tuple[int, str | None]], reg: Reg) -> bool:
    """Some instruction of `later` reads `reg` before any writes it (a save's pair counts as a write; a dropped
    instruction, "", is skipped)."""
    for i, text in later:
        if text == "":
            continue
        if text is not None:
            if reg in _pair_of(text):
                return False
            continue
        if reg in infos[i].uses:
            return True
        if reg in infos[i].defs:
            return False
    return False


def _is_load(ins) -> bool:
    return ins.mnemonic.startswith("global_load")


class _Fresh:
    """Registers the body never touches, handed out per destination operand: VGPR ranges (sized up front), SGPR
    pairs and single SGPRs (disjoint from each other and from `temp`, the test's pair)."""

    def __init__(self, body: Body, vgpr_sizes: list[int], temp: str):
        self.vgprs = free_vgprs(body, vgpr_sizes)
        self.pairs = self._without(free_pairs(body), temp)
        self.singles = self._without(free_sgprs(body), temp)

    @staticmethod
    def _without(names: list[str], taken: str) -> list[str]:
        regs = operand_regs(parse_operand(taken))
        return [n for n in names if not operand_regs(parse_operand(n)) & regs]

    def take(self, op, mnemonic: str) -> str | None:
        """A fresh register for destination `op` of a `mnemonic` (VCC only as a compare's: it becomes VOP3)."""
        if op.kind == "vgpr":
            k = self.vgprs.pop(0)
            return f"v{k}" if op.count == 1 else f"v[{k}:{k + op.count - 1}]"
        if op.count == 2 and (op.kind == "sgpr" or op.text == "vcc" and mnemonic.startswith("v_cmp_")):
            return self.pair()
        if op.count == 1 and op.kind == "sgpr":
            return self.single()
        return None

    def pair(self) -> str | None:
        """A fresh SGPR pair (None when none is left)."""
        name = self.pairs.pop(0) if self.pairs else None
        self.singles = self._without(self.singles, name) if name else self.singles
        return name

    def single(self) -> str | None:
        """A fresh SGPR (None when none is left)."""
        name = self.singles.pop(0) if self.singles else None
        self.pairs = self._without(self.pairs, name) if name else self.pairs
        return name


def _computing(body: Body, path: FullPath, temp: str) -> tuple[list[str], list[str]] | None:
    """The instructions computing the path's written masks before the test (their slices in path order, each
    register they write renamed to a fresh one, a new name per write) and the fresh spelling of each mask; None
    when they cannot be renamed (a register read partly or as a destination, an implicit write other than SCC,
    a VOPC that needs a literal, too few free registers). `temp`: the test's pair."""
    if not path.computed:
        return [], []
    ins, infos = body.instructions, body.infos
    for i in path.slices:
        written = set().union(*map(operand_regs, infos[i].dst))
        read = set().union(*map(operand_regs, infos[i].srcs))
        if infos[i].defs - written - {SCC} or written & (infos[i].uses - read):
            return None     # an implicit write, or a destination read as such (a partial write, an accumulator)
    fresh = _Fresh(body, [op.count for i in path.slices for op in infos[i].dst if op.kind == "vgpr"], temp)
    if fresh.vgprs is None:
        return None
    groups = affine_checks(body, path.slices)
    summarized = {k: g for g in groups for k in g.compares}
    dropped = {k for g in groups for k in g.offsets}
    latest: dict[Reg, tuple[frozenset, str]] = {}    # a register the slices wrote -> (that operand's, its name)

    def spelled(op) -> str | None:
        regs = frozenset(operand_regs(op))
        found = {latest[r] for r in regs if r in latest}
        if not found:
            return op.text
        core = op.text.strip("-|")
        if len(found) > 1 or next(iter(found))[0] != regs or operand_regs(parse_operand(core)) != regs:
            return None    # read partly, across two writes, or spelled with a modifier not handled here
        return op.text.replace(core, next(iter(found))[1])

    texts, masks = [], [None] * len(path.computed)
    summaries: dict[int, str] = {}     # id of a group -> the pair its summary compare wrote
    done: dict[tuple, list[str]] = {}  # an operation emitted, with its sources' spelling -> the names it wrote
    for i in path.slices:
        x, info = ins[i], infos[i]
        if i in summarized:
            group = summarized[i]
            if id(group) not in summaries:
                bound, mask = fresh.single(), fresh.pair()
                if bound is None or mask is None:
                    return None
                texts += group.summary(bound, mask)
                summaries[id(group)] = mask
            dst = frozenset(operand_regs(info.dst[0]))
            latest.update((r, (dst, summaries[id(group)])) for r in dst)
        elif i not in dropped:
            if (info.uses - set().union(*map(operand_regs, x.operands))) & latest.keys():
                return None     # an implicit read of a renamed register
            srcs = [spelled(op) for op in info.srcs]
            if None in srcs:
                return None
            key = (x.mnemonic, *srcs, *x.modifiers)
            names = done.get(key) or [fresh.take(op, x.mnemonic) for op in info.dst]
            if None in names:
                return None
            for op, name in zip(info.dst, names):
                latest.update((r, (frozenset(operand_regs(op)), name)) for r in operand_regs(op))
            if key not in done:     # else the same operation of the same values: each test register is fresh
                done[key] = names
                mnemonic = x.mnemonic
                if mnemonic.startswith("v_cmp_") and mnemonic.endswith("_e32"):
                    if not vop3_ok(x, {}):
                        return None
                    mnemonic = mnemonic[:-4] + "_e64"
                texts.append(" ".join([mnemonic, ", ".join([*names, *srcs]), *x.modifiers]))
        for n, (mask, sliced) in enumerate(path.computed):
            if sliced[-1] == i:     # the mask as its slice leaves it (a later slice may write its registers again)
                masks[n] = spelled(parse_operand(mask))
    return (texts, masks) if None not in masks else None


_LESS_THAN = {"v_cmp_gt_i32": (0, 1), "v_cmp_lt_i32": (1, 0)}   # source positions of (N, Y) in "Y < N"


def less_than(body: Body, k: int) -> tuple[Operand, Operand] | None:
    """(N, Y) of instruction k when it is a signed compare `Y < N` of one VGPR Y and an SGPR or constant N, without
    modifiers; else None."""
    form = _LESS_THAN.get(body.infos[k].base)
    srcs = body.infos[k].srcs
    if form is None or body.instructions[k].modifiers or len(srcs) != 2 or any(o.neg or o.abs for o in srcs):
        return None
    n, y = srcs[form[0]], srcs[form[1]]
    return (n, y) if n.kind in ("sgpr", "imm") and y.kind == "vgpr" and y.count == 1 else None


@dataclass(frozen=True)
class AffineChecks:
    """Compares `Y < N` (signed) of one uniform N whose Y is X + c for one VGPR X and constants c >= 0 (a `v_add_u32`
    or `v_or_b32` of c and X, or X itself): `compares` and the `offsets` computing their Y (only those that nothing
    else reads), the texts of X and N and the largest c."""

    compares: tuple[int, ...]
    offsets: tuple[int, ...]
    x: str
    n: str
    most: int

    def summary(self, bound: str, mask: str) -> list[str]:
        return affine_summary(self.x, self.n, self.most, bound, mask)


def affine_summary(x: str, n: str, most: int, bound: str, mask: str) -> list[str]:
    """One compare (into `mask`, with SGPR `bound`) whose lanes pass every compare `X + c < N` or `X | c < N` with
    0 <= c <= most: X < N - most (no lane when that underflows). Such a lane has X + c <= X + most < N <= INT_MAX,
    so X + c does not wrap, and X | c <= X + c."""
    return [f"s_sub_i32 {bound}, {n}, {most}", f"s_cselect_b32 {bound}, 0x80000000, {bound}",
            f"v_cmp_gt_i32_e64 {mask}, {bound}, {x}"]


def affine_checks(body: Body, slices: tuple[int, ...]) -> list[AffineChecks]:
    """The groups of two or more affine range checks among the slice instructions `slices` (in path order) whose N
    no slice instruction writes and whose X none writes before it is read for them (so X holds its value at the
    test)."""
    ins, infos = body.instructions, body.infos
    written = set().union(*(infos[i].defs for i in slices)) if slices else set()
    found: dict[tuple[str, str], list[tuple[int, int | None, int]]] = {}
    for at, k in enumerate(slices):
        compared = less_than(body, k)
        if compared is None or operand_regs(compared[0]) & written:
            continue
        n, y = compared
        d = next((j for j in reversed(slices[:at]) if infos[j].defs & operand_regs(y)), None)
        x, c, _ = (y, 0, False) if d is None else row_offset(body, d)
        read_at = at if d is None else slices.index(d)
        if x is None or any(infos[j].defs & operand_regs(x) for j in slices[:read_at]):
            continue
        found.setdefault((x.text, n.text), []).append((k, d, c))
    groups = []
    for (x, n), members in found.items():
        if len(members) < 2:
            continue
        compares = tuple(k for k, _, _ in members)
        offsets = tuple(d for _, d, _ in members if d is not None and _only_compared(body, slices, d, compares))
        groups.append(AffineChecks(compares, offsets, x, n, max(c for _, _, c in members)))
    return groups


def _only_compared(body: Body, slices: tuple[int, ...], d: int, compares: tuple[int, ...]) -> bool:
    """Every slice instruction after d that reads what d writes, until it is written again, is one of `compares`."""
    defs = body.infos[d].defs
    for j in slices[slices.index(d) + 1:]:
        if body.infos[j].uses & defs and j not in compares:
            return False
        if body.infos[j].defs & defs:
            return True
    return True


def lanes_outside(masks: tuple[str, ...], temp: str) -> list[str]:
    """Lines setting SCC (and `temp`) when some lane of EXEC is outside one of `masks`."""
    masks = tuple(dict.fromkeys(masks))
    if len(masks) == 1:
        return [f"s_andn2_b64 {temp}, exec, {masks[0]}"]
    return [f"s_and_b64 {temp}, {masks[0]}, {masks[1]}", *(f"s_and_b64 {temp}, {temp}, {m}" for m in masks[2:]),
            f"s_andn2_b64 {temp}, exec, {temp}"]


def _test(masks: tuple[str, ...], temp: str, slow: str) -> list[str]:
    """The full-wave test: branch to `slow` unless EXEC is non-empty and inside every mask."""
    return [*lanes_outside(masks, temp), f"s_cbranch_scc1 {slow}", f"s_cbranch_execz {slow}"]


@dataclass(frozen=True)
class Versioned:
    """`body` with the regions from a save versioned along `path`: `test` its test's items, `copied` the fast path's
    copied items (id(item) -> the instruction of the body versioned it copies)."""

    body: Body
    test: list[BodyItem]
    copied: dict[int, int]
    path: FullPath


def versioned(body: Body, head: int) -> Versioned | None:
    """The body with the regions from the save at `head` versioned (the module docstring); None when they cannot
    be."""
    path = full_path(body, head)
    pairs = free_pairs(body)
    if path is None or not pairs:
        return None
    computing = _computing(body, path, pairs[0])
    if computing is None:
        return None
    texts, computed = computing
    slow = fresh_label(body, f".Lfull{head}", "slow")
    test = [make_item(t) for t in [*texts, *_test((*path.masks, *computed), pairs[0], slow)]]
    items, pos = body.items, body.pos
    fast = [make_item(text) if text else replace(items[pos[i]]) for i, text in path.kept]
    joined = []
    if path.join is not None:
        named = labels_before(body, path.join)
        target = named[0] if named else fresh_label(body, f".Lfull{head}", "join")
        fast.append(make_item(f"s_branch {target}"))
        joined = [] if named else [BodyItem(f"{target}:", label=target)]
    new_items = [*items[:pos[head]], *test, *fast, BodyItem(f"{slow}:", label=slow), *items[pos[head]:]]
    if joined:
        at = next(k for k, it in enumerate(new_items) if it is items[pos[path.join]])
        new_items[at:at] = joined
    new = site_hazard_nops(body.replace(new_items), body, repairs=BLOCK_REPAIRS)
    if new is None:
        return None
    return Versioned(new, test, {id(it): i for it, (i, _) in zip(fast, path.kept)}, path)


def version_full_exec(body: Body, head: int) -> Body | None:
    """Version the regions from the save at `head` (`versioned`), the data-dependent if/elses after it converted to
    selects first (`ops_ifconv`: on the fast path they would end it), then widen the fast path's adjacent accesses and
    pack its elements' arithmetic (`widen_loads` / `widen_stores` in one block, `_packed_fast_path`)."""
    base, origin = _if_converted(body, head)
    found = versioned(base, head)
    if found is None:
        return None
    new = found.body
    start = head + len(found.test)   # the fast path's first instruction
    for rewrite, wanted in ((widen_stores, is_store), (widen_loads, _is_load)):
        k = start
        while k < new.cfg.blocks[new.cfg.block_of[start]].end:
            if wanted(new.instructions[k]) and (wider := rewrite(new, k)) is not None:
                new = wider
            k += 1
    packable = [k for k in range(start, new.cfg.blocks[new.cfg.block_of[start]].end) if new.infos[k].base in PACKED]
    if packable:
        new = _packed_fast_path(new, start, packable[0])
    return _described(new, base, head, found, {i: origin[id(base.items[p])] for i, p in enumerate(base.pos)})


def _packed_fast_path(body: Body, start: int, first: int) -> Body:
    """`body` with the elements' arithmetic of the fast path from `start` packed: `pack_elements` at its first packable
    instruction `first` (else `pack_f32_chains`), then `repack_elements` for elements left unpaired where it finds
    any (`body` when nothing packs)."""
    packed = pack_elements(body, first) or pack_f32_chains(body, first)
    if packed is None:
        return body
    anchor = body.items[body.pos[start]]     # packing may put constants at the wave's start: indices move
    at = next((k for k, p in enumerate(packed.pos) if packed.items[p] is anchor), None)
    return (repack_elements(packed, at) if at is not None else None) or packed


def _if_converted(body: Body, head: int) -> tuple[Body, dict[int, int]]:
    """`body` with every if/else after instruction `head` converted (the last first: a converted one writes its
    registers for every lane, so an earlier one's values no longer seem to reach past it), and for each item the
    parent instruction it stands for (a converted if/else's, its save)."""
    origin = {id(body.items[p]): n for n, p in enumerate(body.pos)}
    cur = body
    for s in reversed([k for k in range(head + 1, len(body.instructions)) if diamond(body, k)]):
        new = if_convert(cur, s)
        if new is None:
            continue
        known = {id(it) for it in cur.items}
        origin.update({id(it): origin[id(cur.items[cur.pos[s]])] for it in new.items if id(it) not in known})
        cur = new
    return cur, origin


def _described(new: Body, base: Body, head: int, found: Versioned, of: dict[int, int]) -> Body:
    """`new` with its executions described for predictions (`Body.counts`, `Body.traffic`, in terms of the parent's
    instructions: `of` maps `base`'s, the body versioned, to them): the test runs as often as the save at `head`, the
    fast path's instructions as often too (every wave there passes the test, as where the launch fills whole waves;
    an access there touches the lines of the one it copies or, widened, of the copied one at its address and
    offset), and the instructions of the kept regions on the path only for the waves the test sends there."""
    path, test = found.path, found.test
    copied = {k: of[i] for k, i in found.copied.items()}
    tested = {id(it) for it in test}
    slow = {id(base.items[base.pos[i]]): of[i] for i in path.visited}
    start = next(n for n, p in enumerate(new.pos) if id(new.items[p]) in tested) + len(test)
    blk = new.cfg.blocks[new.cfg.block_of[start]]
    at = {_where(base.instructions[i]): of[i] for i in path.visited if _where(base.instructions[i])}
    for n, p in enumerate(new.pos):
        item = new.items[p]
        if id(item) in tested or blk.start <= n < blk.end:
            new.counts[n] = ((of[head], 1.0),)
            orig = copied.get(id(item), at.get(_where(item.ins)))
            if orig is not None and _where(item.ins):
                new.traffic[n] = (orig, 1.0)
        elif id(item) in slow:
            new.counts[n] = ((slow[id(item)], 1.0), (of[head], -1.0))
    return new


def _where(ins) -> tuple | None:
    """A global access's direction, address operands and offset (None for other instructions)."""
    if not ins.mnemonic.startswith(("global_load", "global_store")):
        return None
    return is_store(ins), *(op.text for op in global_address(ins)), offset_of(ins)


def full_exec_head(body: Body, i: int) -> bool:
    """Instruction i is a save `version_full_exec` may version (its path meets two regions, or an if/else it
    converts), and not in the kept regions of one it versioned."""
    if body.instructions[i].mnemonic != "s_and_saveexec_b64" or \
            any(re.fullmatch(r"\.Lfull\d+_slow\d+", name) for name in labels_before(body, i)):
        return False
    path = full_path(body, i, min_regions=1)   # an if/else it stops at goes on once converted
    return path is not None and (len(path.masks) + len(path.computed) >= MIN_REGIONS or path.join is not None
                                 and diamond(body, path.join) is not None)
