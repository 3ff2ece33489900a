"""VGPR webs: which writes and reads of a VGPR carry one value, where that value is live, and
whether it may move to another register (register re-allocation and the widening operators rename
with this).

A VGPR write under a partial EXEC keeps the other lanes' old values, so a write *kills* the old
value only when no later read can see those lanes:

* it runs under the whole EXEC the wave started with (`exec_full`, from the EXEC value analysis of
  `asmevo.isa.exec_values`: structured if/else/loop masks restored), or
* every read its value reaches runs under the same EXEC (no EXEC write on the way: one *epoch*), so
  those reads see only lanes it wrote. Reads are followed until the next killing write (a greatest
  fixed point: a write stays killing while its own condition holds given the others).

Writes that also read their destination (accumulates, partial writes) never kill. Reaching
definitions under these kills give the webs (union-find: a read joins every write reaching it, a
non-killing write joins the writes it keeps alive). A web is *pinned*, never renamed on its own, when its
value may come from the wave's start (hardware-initialised or undefined) or something reads it across lanes
(DPP, readlane, permute, swizzle) (`stuck`: never renamed), or when it appears inside a multi-register operand
(`tupled`): such a web moves only with its *tuple group*, the webs that share a multi-register operand with it,
transitively, all shifted by one even distance (gfx90a+ VGPR tuples are 64-bit aligned), so every tuple keeps
its consecutive, aligned registers.
A web *occupies* the program points (before and after each instruction) where its value is live or
being written; a load's destination stays occupied until a wait that retires every load on its
counter. A web may move to register r iff the points it occupies are disjoint from r's.

Bodies with indirect control flow or register indexing (s_setpc, s_swappc, s_call, gpr-index mode,
movrel) raise `NotAnalysable`.
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache

from ..errors import AsmEvoError
from ..isa.instruction import Instruction, parse_instruction
from ..isa.operands import SPECIAL_PAIRS
from ..isa.regs import reads_destination
from ..isa.table import instr_info
from ..isa.waitcnt import decode_waitcnt
from .body import Body, BodyItem, make_item

_EXEC = SPECIAL_PAIRS["exec"]
_EXEC_REGS = frozenset({("s", _EXEC), ("s", _EXEC + 1)})
_INDIRECT = ("s_setpc", "s_swappc", "s_call", "s_set_gpr_idx", "v_movrel", "s_movrel", "s_cbranch_g_fork",
             "s_cbranch_i_fork", "s_cbranch_join", "s_rfe")
_CROSS_LANE = ("v_readlane", "v_permlane", "ds_swizzle", "ds_permute", "ds_bpermute")
ENTRY = -1


class NotAnalysable(AsmEvoError):
    """The body has control flow or register addressing the web analysis cannot follow."""


def cross_lane(ins: Instruction) -> bool:
    """Reads VGPR values of lanes other than its own (or of inactive lanes)."""
    return ins.mnemonic.endswith("_dpp") or ins.mnemonic.startswith(_CROSS_LANE)


def _async_counter(ins: Instruction, processor: str) -> str | None:
    """The counter whose wait retires this instruction's VGPR result, when it is a load (of `processor`)."""
    info = instr_info(ins.mnemonic, processor)
    if not info.is_load or info.family not in ("flat", "mubuf", "ds"):
        return None
    return "lgkmcnt" if info.family == "ds" else "vmcnt"


@dataclass(eq=False)
class Web:
    """One value of VGPR `reg` (`root`: its union-find representative): its writes and reads
    (instruction indices), whether it may hold what the register had at the wave's start (`entry`),
    whether it is pinned, and the program points it occupies (bit 2i: before instruction i, 2i+1:
    after it)."""

    reg: int
    root: int
    defs: set[int] = field(default_factory=set)
    uses: set[int] = field(default_factory=set)
    entry: bool = False
    stuck: bool = False
    tupled: bool = False
    occupied: int = 0

    @property
    def pinned(self) -> bool:
        """Never renamed on its own (see the module docstring)."""
        return self.stuck or self.tupled


class VgprWebs:
    """The webs of every VGPR of a body (see the module docstring)."""

    def __init__(self, body: Body):
        if body.opaque:
            raise NotAnalysable("the body holds raw words or directives")
        instrs = body.instructions
        bad = next((ins.mnemonic for ins in instrs if ins.mnemonic.startswith(_INDIRECT)), None)
        if bad is not None:
            raise NotAnalysable(f"{bad}: indirect control flow or register indexing")
        self.body = body
        cfg, infos = body.cfg, body.infos
        if cfg.indirect:
            raise NotAnalysable("indirect branch")
        n = len(instrs)
        self.n = n
        self.succ = [[i + 1] if i + 1 < cfg.blocks[cfg.block_of[i]].end else
                     [cfg.blocks[s].start for s in cfg.blocks[cfg.block_of[i]].succs] for i in range(n)]
        self.defs = [_vmask(info.defs) for info in infos]
        self.uses = [_vmask(info.uses) for info in infos]
        self.writes_exec = [bool(info.defs & _EXEC_REGS) for info in infos]
        self.reads_dst = [bool(self.defs[i]) and reads_destination(ins, body.processor)
                          for i, ins in enumerate(instrs)]
        self.cross = [self.uses[i] if cross_lane(ins) else 0 for i, ins in enumerate(instrs)]
        self.tuple_sites = {(i, r) for i, ins in enumerate(instrs) for op in ins.operands
                            if op.kind == "vgpr" and op.count > 1 for r in range(op.index, op.index + op.count)}
        self.exec_full = body.exec_full  # all False unless EXEC provably stays within the launch lanes
        self.kills = self._kills()
        self.live_before, self.live_after = self._liveness()
        self.webs: list[Web] = []
        self.def_web: dict[tuple[int, int], Web] = {}   # (instruction, reg) -> web written there
        self.use_web: dict[tuple[int, int], Web] = {}   # (instruction, reg) -> web read there
        self._waited: dict[int, int] = {}  # load -> points until the wait retiring it
        self._build_webs()

    # -- kills -------------------------------------------------------------------------------
    def _kills(self) -> list[int]:
        """Per instruction, the VGPRs whose old value it kills (bitmask)."""
        n = self.n
        full = [0 if self.reads_dst[i] else self.defs[i] for i in range(n)]
        always = [full[i] if self.exec_full[i] else 0 for i in range(n)]
        kills = list(full)
        while True:
            _, late = self._reach_reads(kills)
            new = [always[i] | (full[i] & ~late[i]) for i in range(n)]
            if new == kills:
                return kills
            kills = new

    def _reach_reads(self, kills: list[int]) -> tuple[list[int], list[int]]:
        """Per instruction, the VGPRs (bitmasks) with a read reachable from just after it before a
        killing write: under the same EXEC (`same`), or after an EXEC write or across lanes (`late`)."""
        n = self.n
        same_b, late_b = [0] * n, [0] * n
        same_a, late_a = [0] * n, [0] * n
        changed = True
        while changed:
            changed = False
            for i in range(n - 1, -1, -1):
                s = l = 0
                for j in self.succ[i]:
                    s |= same_b[j]
                    l |= late_b[j]
                same_a[i], late_a[i] = s, l
                s &= ~kills[i]
                l &= ~kills[i]
                if self.writes_exec[i]:
                    s, l = 0, l | s
                s |= self.uses[i]
                l |= self.cross[i]
                if s != same_b[i] or l != late_b[i]:
                    same_b[i], late_b[i] = s, l
                    changed = True
        return same_a, late_a

    def _liveness(self) -> tuple[list[int], list[int]]:
        n, kills = self.n, self.kills
        before, after = [0] * n, [0] * n
        changed = True
        while changed:
            changed = False
            for i in range(n - 1, -1, -1):
                out = 0
                for j in self.succ[i]:
                    out |= before[j]
                inn = self.uses[i] | (out & ~kills[i])
                if out != after[i] or inn != before[i]:
                    after[i], before[i] = out, inn
                    changed = True
        return before, after

    # -- webs --------------------------------------------------------------------------------
    def _build_webs(self) -> None:
        """Per VGPR, reaching writes solved over blocks (within a block they change only at the
        register's own writes and reads), then webs in the order of their first program point."""
        cfg, n = self.body.cfg, self.n
        events: dict[int, list[int]] = {}
        for i in range(n):
            for r in _bits(self.defs[i] | self.uses[i]):
                events.setdefault(r, []).append(i)
        preds: list[list[int]] = [[] for _ in cfg.blocks]
        for b in cfg.blocks:
            for s in b.succs:
                preds[s].append(b.index)
        for r in sorted(events):
            self._webs_of(r, events[r], preds)

    def _webs_of(self, r: int, events: list[int], preds: list[list[int]]) -> None:
        """The webs of VGPR `r`, read or written at instructions `events` (`preds`: each block's predecessors)."""
        cfg, bit = self.body.cfg, 1 << r
        by_block: dict[int, list[int]] = {}
        for i in events:
            by_block.setdefault(cfg.block_of[i], []).append(i)
        killing = {i for i in events if self.defs[i] & self.kills[i] & bit}

        def through(block: int, reach: frozenset[int]) -> frozenset[int]:
            for i in by_block.get(block, ()):
                if i in killing:
                    reach = frozenset({i})
                elif self.defs[i] & bit:
                    reach = reach | {i}
            return reach

        blocks = cfg.blocks
        entry = cfg.block_of[0]  # _webs_of runs only for a register some instruction names
        reach_in: list[frozenset[int]] = [frozenset()] * len(blocks)
        reach_out: list[frozenset[int]] = [frozenset()] * len(blocks)
        work, queued = deque(range(len(blocks))), [True] * len(blocks)
        while work:  # reaching writes of r (ENTRY at the start), each block again when a predecessor's changed
            b = work.popleft()
            queued[b] = False
            inn = frozenset({ENTRY}) if b == entry else frozenset()
            for p in preds[b]:
                inn |= reach_out[p]
            reach_in[b], out = inn, through(b, inn)
            if out != reach_out[b]:
                reach_out[b] = out
                for s in blocks[b].succs:
                    if not queued[s]:
                        queued[s] = True
                        work.append(s)

        parent: dict[int, int] = {}

        def find(x: int) -> int:
            parent.setdefault(x, x)
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        def union(xs) -> None:
            xs = [find(x) for x in xs]
            for x in xs[1:]:
                parent[x] = xs[0]

        for b, evs in by_block.items():
            reach = reach_in[b]
            for i in evs:
                if self.uses[i] & bit and reach:
                    union(reach)
                if self.defs[i] & bit:
                    find(i)
                    if i not in killing:
                        union([i, *reach])
                    reach = frozenset({i}) if i in killing else reach | {i}

        webs: dict[int, Web] = {}
        first: dict[int, int] = {}  # root -> its first touch: 4i + 0/1/2/3 (read, write, before, after i)

        def web(root: int, key: int) -> Web:
            if root not in webs:
                webs[root] = Web(r, root)
                first[root] = key
            else:
                first[root] = min(first[root], key)
            return webs[root]

        def occupy(reach: frozenset[int], lo: int, hi: int, live: bool) -> None:
            """Points lo..hi (inclusive; 2i before instruction i, 2i+1 after) hold the value `reach` when live."""
            if live and reach and lo <= hi:
                web(find(next(iter(reach))), 4 * (lo // 2) + 2 + lo % 2).occupied |= (1 << (hi + 1)) - (1 << lo)

        for b, blk in enumerate(blocks):
            if blk.start == blk.end:
                continue
            reach, lo = reach_in[b], 2 * blk.start
            live = bool(self.live_before[blk.start] & bit)
            for i in by_block.get(b, ()):
                occupy(reach, lo, 2 * i - 1, live)
                occupy(reach, 2 * i, 2 * i, bool(self.live_before[i] & bit))
                if self.uses[i] & bit and reach:
                    w = web(find(next(iter(reach))), 4 * i)
                    w.uses.add(i)
                    self.use_web[(i, r)] = w
                    w.stuck |= bool(self.cross[i] & bit)
                    w.tupled |= (i, r) in self.tuple_sites
                if self.defs[i] & bit:
                    w = web(find(i), 4 * i + 1)
                    w.defs.add(i)
                    self.def_web[(i, r)] = w
                    w.tupled |= (i, r) in self.tuple_sites
                    w.occupied |= 1 << (2 * i + 1)
                    reach = frozenset({i}) if i in killing else reach | {i}
                lo, live = 2 * i + 1, bool(self.live_after[i] & bit)
            occupy(reach, lo, 2 * blk.end - 1, live)
        for root in sorted(webs, key=first.__getitem__):
            w = webs[root]
            self.webs.append(w)
            w.entry = ENTRY in parent and find(ENTRY) == w.root
            w.stuck |= w.entry
            for d in list(w.defs):
                counter = _async_counter(self.body.instructions[d], self.body.processor)
                if counter is not None:
                    if d not in self._waited:
                        self._waited[d] = self._until_wait(d, counter)
                    w.occupied |= self._waited[d]

    def _until_wait(self, i: int, counter: str) -> int:
        """Points from just after instruction i until a wait that retires every load on `counter`."""
        instrs, mask, seen, work = self.body.instructions, 0, set(), list(self.succ[i])
        while work:
            j = work.pop()
            if j in seen:
                continue
            seen.add(j)
            mask |= 1 << (2 * j)
            if instrs[j].mnemonic == "s_waitcnt" and decode_waitcnt(instrs[j]).get(counter) == 0:
                continue
            mask |= 1 << (2 * j + 1)
            work.extend(self.succ[j])
        return mask

    # -- queries -----------------------------------------------------------------------------
    def occupancy(self, reg: int) -> int:
        """Points where VGPR `reg` holds a live value or is being written."""
        return _occupancy_table(self).get(reg, 0)

    def can_move(self, web: Web, reg: int, taken: dict[int, int] | None = None) -> bool:
        """Whether `web` may live in VGPR `reg` instead (given per-register occupancy `taken`)."""
        occ = (taken if taken is not None else _occupancy_table(self)).get(reg, 0)
        return not web.pinned and not web.occupied & occ

    def tuple_group(self, web: Web) -> list[Web] | None:
        """The webs that move with `web` (itself first): those sharing a multi-register operand with it,
        transitively; None when one of them is stuck or a register of such an operand carries no web."""
        group, work = {id(web): web}, [web]
        while work:
            w = work.pop()
            if w.stuck:
                return None
            for i in sorted((w.defs | w.uses) - {ENTRY}):
                ndst = len(self.body.infos[i].dst)
                for k, op in enumerate(self.body.instructions[i].operands):
                    table = self.def_web if k < ndst else self.use_web
                    if op.kind != "vgpr" or op.count == 1 or not op.index <= w.reg < op.index + op.count or \
                            table.get((i, w.reg)) is not w:
                        continue
                    for r in range(op.index, op.index + op.count):
                        other = table.get((i, r))
                        if other is None:
                            return None
                        if id(other) not in group:
                            group[id(other)] = other
                            work.append(other)
        return list(group.values())

    def shift_room(self, group: list[Web], limit: int) -> int | None:
        """The distance, smallest target first, that moves every web of `group` to a VGPR below `limit`
        the body never uses (an even one when a web is in a tuple); None when there is none."""
        lo, hi = min(w.reg for w in group), max(w.reg for w in group)
        table = _occupancy_table(self)
        step = 2 if any(w.tupled for w in group) else 1
        for base in range(lo % step, limit - (hi - lo), step):
            delta = base - lo
            if delta and not any(table.get(w.reg + delta, 0) for w in group):
                return delta
        return None

    def renamed(self, moves: dict[int, int]) -> Body:
        """The body with every web in `moves` (id(web) -> new VGPR) renamed; every other register
        keeps its name. A tuple operand's webs move together (`tuple_group`, one distance)."""
        by_id = {id(w): w for w in self.webs}
        touched = sorted({i for wid in moves for i in by_id[wid].defs | by_id[wid].uses if i != ENTRY})
        items: list[BodyItem] = list(self.body.items)
        for i in touched:
            items[self.body.pos[i]] = make_item(self._renamed_at(i, moves).text())
        return self.body.replace(items)

    def _renamed_at(self, i: int, moves: dict[int, int]) -> Instruction:
        """Instruction i with each VGPR operand spelling the registers its webs move to."""
        ins = self.body.instructions[i]
        ndst = len(self.body.infos[i].dst)
        ops = []
        for k, op in enumerate(ins.operands):
            old = list(range(op.index, op.index + op.count)) if op.kind == "vgpr" else []
            table = self.def_web if k < ndst else self.use_web
            new = [moves.get(id(w), r) if (w := table.get((i, r))) is not None else r for r in old]
            if new == old:
                ops.append(op.text)
            elif new != list(range(new[0], new[0] + op.count)):
                raise ValueError(f"{ins.text()}: the registers of {op.text} renamed apart")
            elif op.count == 1:
                ops.append(re.sub(rf"\bv{op.index}\b", f"v{new[0]}", op.text))
            else:
                ops.append(op.text.replace(f"v[{old[0]}:{old[-1]}]", f"v[{new[0]}:{new[-1]}]"))
        return parse_instruction(" ".join([ins.mnemonic, ", ".join(ops), *ins.modifiers]))


@lru_cache(maxsize=8)
def _occupancy_table(webs: VgprWebs) -> dict[int, int]:
    out: dict[int, int] = {}
    for w in webs.webs:
        out[w.reg] = out.get(w.reg, 0) | w.occupied
    return out


@lru_cache(maxsize=8)
def webs_of(body: Body) -> VgprWebs:
    """The (cached) web analysis of a body; raises NotAnalysable."""
    return VgprWebs(body)


def _vmask(regs) -> int:
    m = 0
    for kind, r in regs:
        if kind == "v":
            m |= 1 << r
    return m


def _bits(m: int):
    r = 0
    while m:
        if m & 1:
            yield r
        m >>= 1
        r += 1
