"""Widening adjacent global loads and stores: K = 4, 3 or 2 `global_load_dword`/`global_store_dword`
at offsets o, o+4, ... of one address become one `dwordx4` (`dwordx3`, `dwordx2`) for the lanes that
perform all K, so a wave moves one contiguous piece of 4K bytes per lane in one instruction instead
of K strided dwords (up to K times fewer cache lines per instruction).

The accesses this takes are masked ones, the form LLVM and Triton emit for per-element bounds
checks: each sits alone in a region

    s_and_saveexec_b64 S_k, M_k ; [s_cbranch_exec(n)z] ; ACCESS_k ; ... s_or_b64 exec, exec, S_k

entered with the whole EXEC the wave started with. With F = M_0 & ... & M_(K-1):

* bounds and values: the wide access runs for the lanes in F only, and reads or writes in each
  such lane exactly the bytes the K narrow accesses would have (same address registers, nothing in
  between writes them, writes memory, or is a barrier); each narrow access still runs, for the
  lanes of M_k outside F (the region's mask becomes M_k & ~F, for stores `exec &= ~F` around the
  store), so every other lane behaves as before;
* alignment: the wide access's address (the first narrow one's) is a multiple of its size (of 4 for
  `dwordx3`, whose size is no power of two: for a dword or wider access the hardware ignores the
  address's two low bits, LLVM SIISelLowering::allowsMisalignedMemoryAccessesImpl, so a multi-dword
  access needs dword alignment, which the narrow accesses already have). When
  `asmevo.agent.align` proves it (a pointer argument plus multiples of the size, through loops
  too) nothing is added; when it proves the opposite (a known residue) the operator refuses;
  otherwise F also takes only the lanes whose address is such a multiple, checked where F is
  computed (`v_and_b32` of the vector address's low dword, `v_cmp_eq_u32` with the offset's
  residue; a scalar base must be proved aligned): e.g. the rows of a row-major matrix start
  wherever rows x cols puts them, and the other lanes keep their narrow accesses. A run of K
  therefore need not start at a multiple of the size relative to the address (89_cumsum's -8..4);
* loads: each narrow destination's value (its web, `asmevo.agent.webs`) moves to a fresh register
  of a fresh aligned tuple the wide load writes; the wide load issues after every other write of
  those values and before any read. Masks computed after the first region are recomputed before it
  into fresh registers (their compare and its operands, which must be unchanged there);
* stores: each stored value moves to a fresh register that keeps it until the wide store, which
  follows the last narrow store in its region with EXEC = F (F is taken within the wave's EXEC).

Accesses under one EXEC in one block (one masked region after `merge_masked_regions`, a versioned fast
path) need no F: loads become one wide load where the first was, stores one where the last was.

The regions must run one after another (every path to a later region's entries passes an earlier
one's). Inside a loop everything above is reasoned on one iteration: the flow graph of the innermost
loop holding the accesses with the edges into its header removed, paths starting at the header; the
regions, the point F is computed at and the wide load's point must lie in that loop and on no cycle
of that graph (not in a nested loop), so all of them run once per iteration, in order. F, the masks
and the alignment check are recomputed in every iteration before any read (no fresh SGPR is live
into a loop header; the fresh VGPRs of the recomputation are written under the whole EXEC right
before their one read); a narrow value read in a later iteration sees it after both writes.
SCC must be dead where a mask operation is inserted. Everything is re-checked by the static checks
(`no_worse`) and every gate.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..isa.cfg import Loop
from ..isa.instruction import Instruction
from ..isa.operands import Operand
from ..isa.regs import operand_regs
from ..isa.table import instr_info
from .align import Alignment
from .body import Body, BodyItem, across_loop, loop_header, make_item
from .ops_rename import free_pairs, free_vgprs, needs_literal
from .ops_waitcnt import recount_vmem
from .webs import NotAnalysable, VgprWebs, cross_lane, webs_of

_WIDER = {("global_load_dword", 2): "global_load_dwordx2", ("global_load_dword", 3): "global_load_dwordx3",
          ("global_load_dword", 4): "global_load_dwordx4", ("global_store_dword", 2): "global_store_dwordx2",
          ("global_store_dword", 3): "global_store_dwordx3", ("global_store_dword", 4): "global_store_dwordx4"}
_EXEC = frozenset({("s", 126), ("s", 127)})
_SCC = ("scc", 0)


def offset_of(ins: Instruction) -> int:
    value = ins.modifier("offset")
    return int(value, 0) if value else 0


def is_store(ins: Instruction) -> bool:
    return ins.mnemonic.startswith("global_store")


def global_address(ins: Instruction) -> tuple[Operand, Operand]:
    """(vaddr, saddr) of a global access."""
    ops = ins.operands
    return (ops[0], ops[2]) if is_store(ins) else (ops[1], ops[2])


def _key(ins: Instruction) -> tuple:
    vaddr, saddr = global_address(ins)
    return ins.mnemonic, vaddr.text, saddr.text, tuple(m for m in ins.modifiers if not m.startswith("offset:"))


def alignment_of(wide: str, processor: str) -> int:
    """The alignment a wide access's address needs: its size, or a dword's when that is no power of two."""
    size = instr_info(wide, processor).access_bytes
    return size if size & (size - 1) == 0 else 4


def group(body: Body, i: int, block_only: bool = False) -> tuple[list[int], str] | None:
    """The accesses widened with instruction i (in offset order) and the wide mnemonic: the largest
    run of K accesses of the same kind, address operands and modifiers at consecutive offsets in the
    innermost loop of i (or outside every loop, with i; in i's block when `block_only`) that contains i,
    the one starting at a multiple of the wide access's alignment (relative to the address) first."""
    instrs = body.instructions
    ins = instrs[i]
    if not any(ins.mnemonic == m for m, _ in _WIDER) or len(ins.operands) < 3:
        return None
    loop = loop_header(body, i)
    block = body.cfg.blocks[body.cfg.block_of[i]]
    span = range(block.start, block.end) if block_only else range(len(instrs))
    same = [j for j in span if instrs[j].mnemonic == ins.mnemonic and len(instrs[j].operands) >= 3
            and _key(instrs[j]) == _key(ins) and loop_header(body, j) == loop]
    by_offset: dict[int, int] = {}
    for j in same:
        if offset_of(instrs[j]) in by_offset:
            return None  # two accesses at one offset: which pair up is ambiguous
        by_offset[offset_of(instrs[j])] = j
    width = instr_info(ins.mnemonic, body.processor).access_bytes
    for k in (4, 3, 2):
        wide = _WIDER.get((ins.mnemonic, k))
        if wide is None:
            continue
        size = alignment_of(wide, body.processor)
        aligned = offset_of(ins) - (offset_of(ins) % size)
        for start in [aligned, *(offset_of(ins) - n * width for n in range(k - 1, -1, -1))]:
            run = [by_offset.get(start + n * width) for n in range(k)]
            if None not in run:
                return run, wide
    return None


@dataclass(frozen=True)
class Region:
    """An access alone under `s_and_saveexec_b64 saved, mask` until EXEC is restored from `saved`:
    `saves`, the saveexec instructions entering it (compilers duplicate the entry along paths that
    meet inside); `members`, the instructions in between."""

    saves: tuple[int, ...]
    mask: Operand
    saved: Operand
    members: frozenset[int]


def _restores(ins: Instruction, saved: str) -> bool:
    ops = [op.text for op in ins.operands]
    return (ins.mnemonic == "s_or_b64" and ops[0] == "exec" and sorted(ops[1:]) == sorted(["exec", saved])) or \
        (ins.mnemonic == "s_mov_b64" and ops == ["exec", saved])


def _members(body: Body, webs: VgprWebs, a: int) -> frozenset[int] | None:
    """What saveexec a masks: every instruction until a restore of the saved EXEC or the program's
    end (None when the region is large)."""
    instrs, ins = body.instructions, body.instructions[a]
    saved = ins.operands[0]
    members, work = set(), list(webs.succ[a])
    while work:
        k = work.pop()
        if k in members or _restores(instrs[k], saved.text):
            continue
        members.add(k)
        if len(members) > 64:
            return None
        if not instrs[k].ends_program:
            work.extend(webs.succ[k])
    return frozenset(members)


def region_of(body: Body, webs: VgprWebs, j: int) -> Region | None:
    """The masked region instruction j lies in: the `s_and_saveexec_b64`s (run with the wave's whole
    EXEC, all with the same operands) whose masked instructions include j, and the smallest of them."""
    instrs = body.instructions
    found = []
    for a, ins in enumerate(instrs):
        if ins.mnemonic == "s_and_saveexec_b64" and webs.exec_full[a] and len(ins.operands) == 2:
            members = _members(body, webs, a)
            if members is not None and j in members:
                found.append((len(members), a, members))
    if not found:
        return None
    found.sort()
    texts = {tuple(op.text for op in instrs[a].operands) for _, a, _ in found}
    if len(texts) != 1:
        return None
    _, a, members = found[0]
    return Region(tuple(x for _, x, _ in found), instrs[a].operands[1], instrs[a].operands[0],
                  frozenset().union(*(m for _, _, m in found)))


class Flow:
    """Instruction-level reachability and dominance of a body, within one iteration of `loop` (the
    edges into its header removed, paths start there), or of the whole body (`loop` None)."""

    def __init__(self, body: Body, webs: VgprWebs, loop: Loop | None = None):
        self.body = body
        self.header = None if loop is None else body.cfg.blocks[loop.header].start
        self.scope = None if loop is None else loop.blocks
        self.succ = [[j for j in s if j != self.header] for s in webs.succ]
        self.preds: list[list[int]] = [[] for _ in body.instructions]
        for i, s in enumerate(self.succ):
            for j in s:
                self.preds[j].append(i)
        self.dom = body.cfg.dominators()

    def _reach(self, start: int, edges: list[list[int]], stop: int | None = None) -> set[int]:
        seen, work = set(), list(edges[start])
        while work:
            k = work.pop()
            if k not in seen:
                seen.add(k)
                if k != stop:
                    work.extend(edges[k])
        return seen

    def reach(self, x: int) -> set[int]:
        """Instructions some path from x reaches (x only if in a loop)."""
        return self._reach(x, self.succ)

    def reaches(self, x: int, y: int) -> bool:
        return y in self._reach(x, self.succ)

    def between(self, x: int, y: int, stop: int | None = None) -> set[int]:
        """Instructions on some path from x to y (both excluded) that passes no `stop` between."""
        return (self._reach(x, self.succ, stop) & self._reach(y, self.preds, stop)) - {x, y}

    def dominates(self, x: int, y: int) -> bool:
        bx, by = self.body.cfg.block_of[x], self.body.cfg.block_of[y]
        return bx in self.dom.get(by, ()) and (bx != by or x <= y)

    def looped(self, x: int) -> bool:
        """Whether x may run more than once in the iteration: on a cycle of the flow graph, or outside
        the loop."""
        return (self.scope is not None and self.body.cfg.block_of[x] not in self.scope) or x in self.reach(x)

    def passes(self, xs: tuple[int, ...], y: int, start: int | None = None) -> bool:
        """Whether every path to y from `start` (by default the entry, or the loop's header) passes one of `xs`."""
        seen, work = set(xs), [start if start is not None else self.header or 0]
        while work:
            k = work.pop()
            if k == y:
                return False
            if k not in seen:
                seen.add(k)
                work.extend(self.succ[k])
        return True

    def common_dominator(self, xs) -> int:
        """The latest instruction dominating every one of `xs` (a block's first instruction at worst)."""
        cfg = self.body.cfg
        common = frozenset.intersection(*(self.dom[cfg.block_of[x]] for x in xs))
        b = max(common, key=lambda k: len(self.dom[k]))
        inside = [x for x in xs if cfg.block_of[x] == b]
        return min(inside) if inside else cfg.blocks[b].end - 1


def _writes_memory(body: Body, k: int) -> bool:
    info = instr_info(body.instructions[k].mnemonic, body.processor)
    return (info.family in ("flat", "mubuf") and not info.is_load) or body.instructions[k].mnemonic in (
        "s_barrier", "buffer_wbl2", "s_dcache_wb") or info.memory == "atomic"


def _touches_global(body: Body, k: int) -> bool:
    info = instr_info(body.instructions[k].mnemonic, body.processor)
    return info.family in ("flat", "mubuf") or body.instructions[k].mnemonic == "s_barrier"


def scc_dead_before(body: Body, k: int) -> bool:
    """SCC may be written right before instruction k: k does not read it, and it is dead after k or k writes it."""
    info = body.infos[k]
    if _SCC in info.uses:
        return False
    return _SCC not in body.live_after(k) or _SCC in info.defs


def _alignment(body: Body, webs: VgprWebs, accesses: list[int], size: int) -> bool | None:
    """Whether the wide access needs its address checked per lane (False: proved aligned); None
    when it is known misaligned or cannot be checked (a scalar base not proved aligned)."""
    ins = body.instructions[accesses[0]]
    vaddr, saddr = global_address(ins)
    need = size.bit_length() - 1
    al = Alignment(body, webs)
    if saddr.text != "off" and al.operand(accesses[0], saddr) < need:
        return None
    if al.operand(accesses[0], vaddr) >= need:
        return None if offset_of(ins) % size else False
    return True


def _lane_check(narrow: Instruction, size: int, temp: list[int], pair: list[str]) -> list[str]:
    """Instructions setting pair[0] to the lanes whose wide access address (the narrow group's first)
    is a multiple of `size`: the vector address's low dword plus the offset (a scalar base is aligned);
    none when no registers were taken for a check (alignment proved)."""
    if not pair:
        return []
    vaddr, _ = global_address(narrow)
    return [f"v_and_b32_e32 v{temp[0]}, {size - 1}, v{vaddr.index}",
            f"v_cmp_eq_u32_e64 {pair[0]}, {-offset_of(narrow) & (size - 1)}, v{temp[0]}"]


def _dead_at_loop_entries(body: Body, pairs: list[str]) -> bool:
    """No register of the SGPR `pairs` is live into a loop header (none carries a value around)."""
    regs = {("s", int(p[2:].split(":")[0]) + k) for p in pairs for k in (0, 1)}
    return not any(regs & body.live_in[loop.header] for loop in body.cfg.loops())


def _checked(body: Body, i: int, want_store: bool):
    """(webs, flow, accesses, wide mnemonic, regions, regions in execution order, the instruction F
    is computed before, whether alignment is checked per lane) when the group at i can widen, else None."""
    if want_store != is_store(body.instructions[i]):
        return None
    found = group(body, i)
    if found is None:
        return None
    accesses, wide = found
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    flow = Flow(body, webs, body.cfg.innermost_loop(body.cfg.block_of[accesses[0]]))
    regions = [region_of(body, webs, j) for j in accesses]
    if None in regions or any(flow.looped(j) for j in accesses) or \
            any(not flow.passes(r.saves, j) or flow.looped(x) for r, j in zip(regions, accesses) for x in r.saves):
        return None
    saves = [set(r.saves) for r in regions]
    if any(x & y for n, x in enumerate(saves) for y in saves[n + 1:]):
        return None
    # the regions run one after another: each one's entries are passed on every path to the next's
    order = sorted(range(len(regions)), key=lambda k: sum(flow.passes(regions[m].saves, regions[k].saves[0])
                                                          for m in range(len(regions)) if m != k))
    if any(not all(flow.passes(regions[m].saves, x) for x in regions[k].saves)
           for n, k in enumerate(order) for m in order[:n]):
        return None
    for r, j in zip(regions, accesses):  # nothing but the access (and, for a store, its value) under the mask
        rest = [k for k in r.members if k != j]
        if any(body.infos[k].defs & _EXEC or _touches_global(body, k) for k in rest):
            return None
        if any(not (body.instructions[k].ends_program or body.instructions[k].mnemonic == "s_branch")
               for k in rest if flow.dominates(j, k)):
            return None
        if not want_store and any(not body.instructions[k].is_branch for k in rest):
            return None
    check = _alignment(body, webs, accesses, alignment_of(wide, body.processor))
    if check is None:
        return None
    first = flow.common_dominator([x for r in regions for x in r.saves])
    while first >= 0 and not webs.exec_full[first]:
        first = first - 1 if first and body.cfg.block_of[first - 1] == body.cfg.block_of[first] else -1
    if first < 0 or flow.looped(first) or (want_store and not _stable(body, flow, accesses, accesses)):
        return None
    return webs, flow, accesses, wide, regions, [regions[k] for k in order], first, check


def _stable(body: Body, flow: Flow, points: list[int], accesses: list[int]) -> bool:
    """Between any two of `points` nothing writes the group's address registers, and nothing but
    the group accesses memory a load of it could read (any store, atomic or barrier) or, for
    stores, touches global memory at all."""
    store = is_store(body.instructions[accesses[0]])
    vaddr, saddr = global_address(body.instructions[accesses[0]])
    address = operand_regs(vaddr) | operand_regs(saddr)
    span = set().union(*(flow.between(x, y) for x in points for y in points if x != y))
    return not any(body.infos[k].defs & address or k not in accesses and (
        _touches_global(body, k) if store else _writes_memory(body, k)) for k in span)


def _address_kept(body: Body, flow: Flow, first: int, points: list[int], accesses: list[int]) -> bool:
    """Nothing from `first` (included) to any of `points` writes the group's address registers."""
    vaddr, saddr = global_address(body.instructions[accesses[0]])
    address = operand_regs(vaddr) | operand_regs(saddr)
    return not any(body.infos[k].defs & address for x in points for k in flow.between(first, x) | {first})


def _copy_mask(body: Body, flow: Flow, at: int, mask: Operand, until: int, fresh_pairs: list[str],
               fresh_v: list[int]) -> tuple[list[str], str] | None:
    """Instructions recomputing `mask` (as it is at instruction `until`) at instruction `at` into
    fresh registers, and the register holding it; None unless it is one VALU compare whose operands
    are unchanged at `at` or each computed by one VALU instruction from such operands."""
    webs = webs_of(body)

    def last_writer(regs: set, until: int) -> int | None:
        """The write of `regs` whose value `until` reads when it happens after `at` (-1: none after
        `at`; None: not one write dominating `until`)."""
        writers = [k for k in flow.between(at, until) | {at} if body.infos[k].defs & regs]
        if not writers:
            return -1
        last = [w for w in writers if flow.dominates(w, until) and not any(x in flow.between(w, until) for x in writers)]
        return last[0] if len(last) == 1 and webs.exec_full[last[0]] else None

    cmp_ = last_writer(operand_regs(mask), until)
    if cmp_ == -1:
        return [], mask.text
    if cmp_ is None or not body.instructions[cmp_].mnemonic.startswith("v_cmp_") or \
            body.instructions[cmp_].mnemonic.startswith("v_cmpx"):
        return None
    out, renames = [], {}
    cins = body.instructions[cmp_]
    for op in body.infos[cmp_].srcs:
        if op.kind not in ("vgpr", "sgpr") or last_writer(operand_regs(op), cmp_) == -1:
            continue
        f = last_writer(operand_regs(op), cmp_)
        if f is None or op.kind != "vgpr" or op.count != 1 or not fresh_v:
            return None
        fins, finfo = body.instructions[f], body.infos[f]
        if finfo.family != "valu" or cross_lane(fins) or finfo.defs - {("v", op.index)} or len(fins.operands) < 2 or \
                any(last_writer(operand_regs(x), f) != -1 for x in finfo.srcs if x.kind in ("vgpr", "sgpr")):
            return None
        new = fresh_v.pop(0)
        renames[op.text] = f"v{new}"
        out.append(" ".join([fins.mnemonic, ", ".join([f"v{new}", *(o.text for o in fins.operands[1:])]),
                             *fins.modifiers]))
    if not fresh_pairs:
        return None
    dst = fresh_pairs.pop(0)
    srcs = [renames.get(o.text, o.text) for o in cins.operands[1:]]
    if any(needs_literal(o) for o in cins.operands[1:]) or sum(o.kind == "sgpr" or o.kind == "special"
                                                               for o in cins.operands[1:]) > 1:
        return None
    mnemonic = cins.mnemonic[:-4] + "_e64" if cins.mnemonic.endswith("_e32") else cins.mnemonic
    out.append(" ".join([mnemonic, ", ".join([dst, *srcs]), *cins.modifiers]))
    return out, dst


def _one_exec_group(body: Body, i: int, stores: bool) -> tuple[list[int], str, VgprWebs] | None:
    """(accesses, wide mnemonic, webs) for the loads (`stores`: stores) grouped with access i in its block, when
    nothing from the first to the last writes EXEC or their address, or writes memory (for stores: touches
    global memory or is a barrier), and their alignment is proved."""
    found = group(body, i, block_only=True)
    if found is None or is_store(body.instructions[i]) != stores:
        return None
    accesses, wide = found
    first, last = min(accesses), max(accesses)
    vaddr, saddr = global_address(body.instructions[first])
    held = operand_regs(vaddr) | operand_regs(saddr) | _EXEC
    seen = _touches_global if stores else _writes_memory
    if any(body.infos[k].defs & held or k not in accesses and seen(body, k) for k in range(first, last + 1)):
        return None
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    if _alignment(body, webs, accesses, alignment_of(wide, body.processor)) is not False:
        return None
    return accesses, wide, webs


def _joined(body: Body, webs: VgprWebs, values: list, accesses: list[int], at: int, wide: str) -> Body | None:
    """`body` with the group's `values` (webs, in offset order) moved to a fresh tuple, one wide access at access
    `at` and the group's others gone; every vmcnt wait lowered by the accesses gone, then relaxed."""
    fresh = free_vgprs(body, [len(accesses)])
    if fresh is None:
        return None
    moved = webs.renamed({id(w): fresh[0] + k for k, w in enumerate(values)})
    text = _wide_text(body.instructions[accesses[0]], wide, f"v[{fresh[0]}:{fresh[0] + len(accesses) - 1}]")
    gone = {moved.pos[j] for j in accesses if j != at}
    items = [make_item(text) if p == moved.pos[at] else it for p, it in enumerate(moved.items) if p not in gone]
    new = recount_vmem(moved, items, len(accesses) - 1, body.waitcnt_violations)
    return _described(new, body, accesses, text) if new.no_worse(body) else None


def _in_one_block(body: Body, i: int) -> Body | None:
    """The loads grouped with load i as one wide load where the first of them was, when they run one after
    another in one block with nothing between that writes EXEC, their address or memory (so the same lanes
    run them, as after `merge_masked_regions`), their alignment is proved, and no value they load is read
    or written between that first load and its own. Every vmcnt wait is lowered by the K-1 loads gone,
    then raised as far as the waitcnt analysis allows."""
    found = _one_exec_group(body, i, stores=False)
    if found is None:
        return None
    accesses, wide, webs = found
    first = min(accesses)
    targets = [webs.def_web.get((j, body.infos[j].dst[0].index)) for j in accesses]
    if body.infos[first].dst[0].count != 1 or None in targets or any(w.pinned for w in targets) or \
            len(set(map(id, targets))) != len(targets) or \
            any(first < k < j for w, j in zip(targets, accesses) for k in w.defs | w.uses):
        return None
    return _joined(body, webs, targets, accesses, first, wide)


def widen_loads(body: Body, i: int) -> Body | None:
    """Widen the narrow global loads grouped with load i (see the module docstring)."""
    if (joined := _in_one_block(body, i)) is not None:
        return joined
    found = _checked(body, i, want_store=False)
    if found is None:
        return None
    webs, flow, accesses, wide, regions, ordered, first, check = found
    if any(len(r.saves) != 1 for r in regions):
        return None
    chain = [r.saves[0] for r in ordered]
    instrs = body.instructions
    targets = [webs.def_web.get((j, body.infos[j].dst[0].index)) for j in accesses]
    if body.infos[accesses[0]].dst[0].count != 1 or None in targets or any(w.pinned for w in targets) or \
            len(set(map(id, targets))) != len(targets):
        return None
    inits = [d for w, j in zip(targets, accesses) for d in w.defs if d != j]
    if any(d in accesses for d in inits):
        return None
    # the wide load goes before the earliest region entry that follows every other write of the values
    point = next((a for a in chain if all(flow.dominates(d, a) and not flow.reaches(a, d) for d in inits)), None)
    if point is None or not _stable(body, flow, [*accesses, point], accesses) or \
            (check and not _address_kept(body, flow, first, [*accesses, point], accesses)):
        return None
    for w, r, j in zip(targets, regions, accesses):  # each read sees the value before both writes or after both
        late = flow.reach(point) | flow.reach(j)
        if any(u in late and not (flow.dominates(r.saves[0], u) and flow.dominates(point, u) and u not in r.members)
               for u in w.uses):
            return None
    pairs = free_pairs(body)
    fixed = 4 if check else 3  # F, EXEC saved, a region's new mask[, the per-lane check's lanes]
    fresh_v = free_vgprs(body, [len(accesses), 1, 1, 1, 1, *([1] if check else [])])
    if fresh_v is None or len(pairs) < fixed + len(accesses) or not all(
            scc_dead_before(body, k) for k in {first, point, *chain}):
        return None
    quad, temps, check_v = fresh_v[0], fresh_v[1:5], fresh_v[5:]  # check_v, check_pair: empty when proved
    fmask, saved, spare, *check_pair = pairs[:fixed]
    free_masks = pairs[fixed:]
    prologue, masks = [], []
    for r in regions:
        copied = _copy_mask(body, flow, first, r.mask, r.saves[0], free_masks, temps)
        if copied is None:
            return None
        prologue += copied[0]
        masks.append(copied[1])
    size = alignment_of(wide, body.processor)
    prologue += [*_lane_check(instrs[accesses[0]], size, check_v, check_pair),
                 f"s_and_b64 {fmask}, {masks[0]}, {masks[1]}", *(f"s_and_b64 {fmask}, {fmask}, {m}" for m in masks[2:]),
                 *(f"s_and_b64 {fmask}, {fmask}, {x}" for x in check_pair)]
    moved = webs.renamed({id(w): quad + k for k, w in enumerate(targets)})
    load = _wide_text(instrs[accesses[0]], wide, f"v[{quad}:{quad + len(accesses) - 1}]")
    before: dict[int, list[str]] = {first: prologue}
    before.setdefault(point, []).extend([f"s_and_saveexec_b64 {saved}, {fmask}", load, f"s_mov_b64 exec, {saved}"])
    replace: dict[int, str] = {}
    for r in regions:
        before.setdefault(r.saves[0], []).append(f"s_andn2_b64 {spare}, {r.mask.text}, {fmask}")
        replace[r.saves[0]] = f"s_and_saveexec_b64 {r.saved.text}, {spare}"
    new = _splice(moved, before, replace, {})
    if not new.no_worse(body) or not _dead_at_loop_entries(new, pairs[:fixed + len(regions)]):
        return None
    return _described(new, body, accesses, load)


def widen_all_loads(body: Body, i: int) -> Body | None:
    """`widen_loads` at every global dword load of instruction i's innermost loop (the whole body outside
    loops); None unless the group at i widens."""
    if widen_loads(body, i) is None:
        return None
    return across_loop(body, i, lambda b, j: b.instructions[j].mnemonic == "global_load_dword", widen_loads)[0]


def _stores_in_one_block(body: Body, i: int) -> Body | None:
    """The stores grouped with store i as one wide store where the last of them was, when they run in one block
    with nothing between the first and the last that writes EXEC or their address, touches global memory or is
    a barrier (so the same lanes store the same bytes, later, with no access able to tell), their alignment is
    proved, and each stored value is written before its own store only. Every vmcnt wait is lowered by the
    K-1 stores gone, then raised as far as the waitcnt analysis allows."""
    data = body.instructions[i].operands[1]
    found = _one_exec_group(body, i, stores=True) if data.kind == "vgpr" and data.count == 1 else None
    if found is None:
        return None
    accesses, wide, webs = found
    last = max(accesses)
    values = [webs.use_web.get((j, body.instructions[j].operands[1].index)) for j in accesses]
    if None in values or any(w.pinned for w in values) or len(set(map(id, values))) != len(values) or \
            any(d >= j for w, j in zip(values, accesses) for d in w.defs):
        return None
    return _joined(body, webs, values, accesses, last, wide)


def widen_stores(body: Body, i: int) -> Body | None:
    """Widen the masked narrow global stores grouped with store i (see the module docstring); stores in one
    block under one EXEC become one wide store without a mask (`_stores_in_one_block`)."""
    if (joined := _stores_in_one_block(body, i)) is not None:
        return joined
    found = _checked(body, i, want_store=True)
    if found is None:
        return None
    webs, flow, accesses, wide, regions, ordered, first, check = found
    instrs = body.instructions
    data = instrs[accesses[0]].operands[1]
    if data.kind != "vgpr" or data.count != 1:
        return None
    values = [webs.use_web.get((j, instrs[j].operands[1].index)) for j in accesses]
    if None in values or any(w.pinned for w in values) or len(set(map(id, values))) != len(values) or \
            any(not (w.defs | w.uses) <= r.members for w, r in zip(values, regions)):
        return None
    for r in regions:  # every mask as it is at its region's entries, already at `first`
        if any(body.infos[k].defs & operand_regs(r.mask) for x in r.saves for k in flow.between(first, x) | {first}):
            return None
    if check and not _address_kept(body, flow, first, accesses, accesses):
        return None
    end = accesses[regions.index(ordered[-1])]
    if not all(scc_dead_before(body, k) for k in (first, *accesses)) or not scc_dead_before(body, end + 1):
        return None
    pairs = free_pairs(body)
    fixed = 2 if check else 1  # F[, the per-lane check's lanes]
    fresh_v = free_vgprs(body, [len(accesses), *([1] if check else [])])
    labels = body.index[1]
    skips = [f".Lwiden_store_{accesses[0]}_{k}" for k in range(len(accesses))]
    if fresh_v is None or len(pairs) < fixed or any(x in labels for x in skips):
        return None
    (quad, *check_v), (fmask, *check_pair) = fresh_v, pairs[:fixed]  # check_*: empty when proved
    moved = webs.renamed({id(w): quad + k for k, w in enumerate(values)})
    masks = [r.mask.text for r in regions]
    size = alignment_of(wide, body.processor)
    store = _wide_text(instrs[accesses[0]], wide, f"v[{quad}:{quad + len(accesses) - 1}]")
    before = {first: [*_lane_check(instrs[accesses[0]], size, check_v, check_pair),
                      f"s_and_b64 {fmask}, {masks[0]}, {masks[1]}",
                      *(f"s_and_b64 {fmask}, {fmask}, {m}" for m in masks[2:]),
                      *(f"s_and_b64 {fmask}, {fmask}, {x}" for x in check_pair),
                      f"s_and_b64 {fmask}, {fmask}, exec"]}  # within the wave's EXEC, whatever the masks hold
    after: dict[int, list[str]] = {}
    for k, j in enumerate(accesses):  # the narrow store keeps the lanes outside F (skipped when none)
        before.setdefault(j, []).extend([f"s_andn2_b64 exec, exec, {fmask}", f"s_cbranch_execz {skips[k]}"])
        after[j] = [f"{skips[k]}:"]
    after[end] += [f"s_mov_b64 exec, {fmask}", store]
    new = _splice(moved, before, {}, after)
    if not new.no_worse(body) or not _dead_at_loop_entries(new, pairs[:fixed]):
        return None
    return _described(new, body, accesses, store)


def _described(new: Body, body: Body, accesses: list[int], wide: str) -> Body:
    """`new` with its traffic described for predictions: the wide access touches the lines of the
    group's first access; the narrow ones, left with the lanes outside F, none (every lane in bounds
    and, where checked, aligned)."""
    instrs = new.instructions
    narrow = [n for n, ins in enumerate(instrs) if ins.mnemonic == body.instructions[accesses[0]].mnemonic
              and _key(ins)[1:] == _key(body.instructions[accesses[0]])[1:]]
    by_offset = {offset_of(body.instructions[j]): j for j in accesses}
    new.traffic = {n: (by_offset[offset_of(instrs[n])], 0.0) for n in narrow if offset_of(instrs[n]) in by_offset}
    new.traffic.update({n: (accesses[0], 1.0) for n, ins in enumerate(instrs) if ins.text() == make_item(wide).ins.text()})
    return new


def _wide_text(narrow: Instruction, wide: str, data: str) -> str:
    """The wide access at the narrow group's first address, with `data` as its register tuple."""
    vaddr, saddr = global_address(narrow)
    operands = f"{data}, {vaddr.text}, {saddr.text}" if not is_store(narrow) else f"{vaddr.text}, {data}, {saddr.text}"
    offset = offset_of(narrow)
    return " ".join([wide, operands, *([f"offset:{offset}"] if offset else []),
                     *(m for m in narrow.modifiers if not m.startswith("offset:"))])


def _splice(body: Body, before: dict[int, list[str]], replace: dict[int, str], after: dict[int, list[str]]) -> Body:
    """`body` with text inserted before/after instructions (by index; `name:` lines are labels) and
    some instructions replaced."""
    def item(text: str) -> BodyItem:
        return BodyItem(text, label=text[:-1]) if text.endswith(":") else make_item(text)

    items: list[BodyItem] = []
    at = {p: n for n, p in enumerate(body.pos)}
    for k, it in enumerate(body.items):
        n = at.get(k)
        if n is not None:
            items += [item(t) for t in before.get(n, [])]
            items.append(make_item(replace[n]) if n in replace else it)
            items += [item(t) for t in after.get(n, [])]
        else:
            items.append(it)
    return body.replace(items)
