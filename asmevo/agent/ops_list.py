"""list_schedule: reorder a basic block's instructions so the wave issues independent work while a result
it needs is still in flight (a conversion's, a transcendental's or an MFMA's latency), as a compiler's list
scheduler does. With one wave per SIMD (the AITer GEMMs' 512 VGPRs) no other wave hides such a stall.

The block's instructions (its final branch stays last, its `s_nop`s go: the hazard pass below re-derives
the wait states the new order needs) form a dependence graph:

* registers, explicit and implicit (EXEC, VCC, SCC, M0): read after write, write after read, write after
  write keep their order, so every instruction reads the values it read before and the block leaves
  every register as it did;
* memory operations, `s_waitcnt`s and MFMAs each keep their relative order (no counter's count changes
  meaning, no access is reordered, the matrix core runs the same sequence);
* an instruction touching a register some load of the kernel writes stays on its side of every
  `s_waitcnt` (it never reads or writes such a register while the load may still be writing it);
* a fence (a barrier, a mode or priority write, `s_getpc`, M0-indexing windows, any other SOPP) keeps
  every instruction on its side.

The scheduler issues, slot by slot, the ready instruction that can start earliest under the cycle
model's latencies (`asmevo.model.costs`, from the instruction table's LLVM gfx940 latencies), waits last,
ties to the longest latency path to the block's end, then to the original order. The result must be
shorter by the model's own block schedule (`asmevo.model.schedule.schedule_block`), after the shortest
`s_nop`s that leave no static finding the parent lacks at the same instruction (`pad.site_hazard_nops`);
the gates then verify it on the emulator.
"""
from __future__ import annotations

from ..model.costs import Cost, cost
from ..model.schedule import schedule_block
from .body import FLOAT_MODE_WRITERS, Body
from .ops_sched import MEMORY, is_load
from .pad import site_hazard_nops

_FENCE_SALU = ("s_getpc", "s_setreg", "s_getreg", "s_set_gpr_idx", "s_movrel", "s_cbranch", "s_setvskip",
               "s_setpc", "s_swappc", "s_call") + FLOAT_MODE_WRITERS
_MAX_BLOCK = 2000  # instructions: larger blocks are left alone (the graph is quadratic at worst)


def kind_of(body: Body, k: int) -> str:
    """'fence', 'wait', 'memory', 'mfma' or 'alu' for instruction k."""
    info = body.infos[k]
    if info.base == "s_waitcnt":
        return "wait"
    if info.family == "sopp" or info.base.startswith(_FENCE_SALU):
        return "fence"
    if info.family in MEMORY:
        return "memory"
    return "mfma" if info.family == "mfma" else "alu"


def _loaded(body: Body) -> frozenset:
    """Registers some load of the kernel writes (their values arrive behind a counter)."""
    out: set = set()
    for info in body.infos:
        if is_load(info, body.processor):
            out |= info.defs
    return frozenset(out)


def dependences(body: Body, ks: list[int], kinds: list[str]) -> list[set[int]]:
    """Predecessors (positions in `ks`) of each instruction of `ks` (instruction indices, in order; `kinds`
    their `kind_of`s)."""
    infos, loaded = body.infos, _loaded(body)
    preds: list[set[int]] = [set() for _ in ks]
    last_def: dict = {}
    readers: dict = {}
    last_of: dict[str, int] = {}
    last_fence, waits, since_fence = None, [], []
    for n, k in enumerate(ks):
        info, kind = infos[k], kinds[n]
        for r in info.uses:
            if r in last_def:
                preds[n].add(last_def[r])
        for r in info.defs:
            if r in last_def:
                preds[n].add(last_def[r])
            preds[n].update(readers.get(r, ()))
        if kind == "fence":
            preds[n].update(since_fence)
            since_fence = []
        elif last_fence is not None:
            preds[n].add(last_fence)
        ordered = "memory" if kind in ("memory", "wait") else kind
        if ordered in ("memory", "mfma") and ordered in last_of:
            preds[n].add(last_of[ordered])
        if kind == "wait":
            preds[n].update(m for m in range(n) if kinds[m] not in ("memory", "wait") and
                            (infos[ks[m]].uses | infos[ks[m]].defs) & loaded)
            waits.append(n)
        elif (info.uses | info.defs) & loaded:
            preds[n].update(waits)
        for r in info.uses:
            readers.setdefault(r, set()).add(n)
        for r in info.defs:
            last_def[r] = n
            readers[r] = set()
        if kind == "fence":
            last_fence = n
        else:
            since_fence.append(n)
        if ordered in ("memory", "mfma"):
            last_of[ordered] = n
    for n in range(len(ks)):
        preds[n].discard(n)
    return preds


def _order(body: Body, ks: list[int], kinds: list[str], preds: list[set[int]], costs: list[Cost]) -> list[int]:
    """A list schedule of `ks` (positions) honouring `preds`."""
    infos, size = body.infos, len(ks)
    succs: list[list[int]] = [[] for _ in ks]
    for n, ps in enumerate(preds):
        for p in ps:
            succs[p].append(n)
    height = [0.0] * size
    for n in reversed(range(size)):
        height[n] = costs[n].latency + max((height[s] for s in succs[n]), default=0.0)
    waiting = [len(ps) for ps in preds]
    ready_set = {n for n in range(size) if not waiting[n]}
    ready_at: dict = {}
    t, xdl_free, order = 0.0, 0.0, []
    while ready_set:
        def start(n: int) -> float:
            c = costs[n]
            at = max([t] + [ready_at.get(r, 0.0) for r in infos[ks[n]].uses])
            return max(at, xdl_free) if c.cls == "mfma" else at
        n = min(ready_set, key=lambda n: (start(n), kinds[n] == "wait", -height[n], n))
        at, c = start(n), costs[n]
        ready_set.discard(n)
        order.append(n)
        if not c.counters:
            for r in infos[ks[n]].defs:
                ready_at[r] = at + c.latency
        if c.cls == "mfma":
            xdl_free = at + c.unit
        t = at + c.issue
        for s in succs[n]:
            waiting[s] -= 1
            if not waiting[s]:
                ready_set.add(s)
    return order


def _block_length(body: Body, start: int) -> float:
    """The model's schedule length of the block starting at instruction `start`, entered idle."""
    blk = body.cfg.blocks[body.cfg.block_of[start]]
    return schedule_block(body.instructions[blk.start:blk.end], None,
                          lambda ins: cost(ins, processor=body.processor), processor=body.processor).length


def list_schedule(body: Body, i: int) -> Body | None:
    """Instruction i's block list-scheduled (see the module docstring); None when the order does not change,
    needs hazard wait states a few nops cannot give, or the model's schedule of the block is not shorter."""
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    instrs, pos = body.instructions, body.pos
    end = blk.end - 1 if kind_of(body, blk.end - 1) == "fence" else blk.end
    ks = [k for k in range(blk.start, end) if instrs[k].mnemonic != "s_nop"]
    if len(ks) < 3 or end - blk.start > _MAX_BLOCK:
        return None
    lo, hi = pos[blk.start], pos[end - 1] + 1
    if any(it.label for it in body.items[lo:hi]):
        return None
    costs = [cost(instrs[k], processor=body.processor) for k in ks]
    kinds = [kind_of(body, k) for k in ks]
    new_ks = [ks[n] for n in _order(body, ks, kinds, dependences(body, ks, kinds), costs)]
    if new_ks == list(range(blk.start, end)):
        return None
    others = [it for it in body.items[lo:hi] if it.ins is None]
    reordered = body.replace(body.items[:lo] + others + [body.items[pos[k]] for k in new_ks] + body.items[hi:])
    before = _block_length(body, blk.start)
    if _block_length(reordered, blk.start) >= before:  # nops only lengthen it: skip the static checks
        return None
    new = site_hazard_nops(reordered, body)
    return new if new is not None and _block_length(new, blk.start) < before else None


def list_schedules(body: Body, i: int) -> Body | None:
    """`list_schedule` at every block of the body, first to last (each where the model's schedule of the
    block gets shorter); None when no block does."""
    cur, k = body, 0
    while k < len(cur.cfg.blocks):
        new = list_schedule(cur, cur.cfg.blocks[k].start)
        if new is not None and len(new.cfg.blocks) == len(cur.cfg.blocks):
            cur = new
        k += 1
    return None if cur is body else cur
