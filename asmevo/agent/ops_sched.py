"""Scheduling operators inside a basic block: hoist a load above independent instructions (waits it
crosses are relaxed so they do not start waiting for it), and move independent VALU/SALU work from
behind a wait to before it (interleaving it with the memory latency). Dependences: registers
(explicit and implicit: EXEC, VCC, SCC, M0), memory order (no load crosses a store, atomic, barrier
or cache control; a global load crosses `s_barrier` only where the workgroup has written no global
memory yet), and the static checks afterwards (hazard wait states, waitcnt coverage)."""
from __future__ import annotations

from ..isa.regs import RegInfo
from ..isa.table import instr_info
from .body import Body, BodyItem, make_item
from .ops_regs import vgpr_limit
from .ops_waitcnt import is_wait, relax_at
from .pad import hazard_nops
from .webs import NotAnalysable, webs_of

MEMORY = ("smem", "flat", "mubuf", "ds")
GLOBAL_READS = ("global_load", "buffer_load")  # vector loads from global memory (with `is_load`: into registers)
_EXEC_REGS = frozenset({("s", 126), ("s", 127)})
BARRIERS = ("s_barrier", "s_sethalt", "s_sleep", "s_setprio", "s_sendmsg", "s_icache_inv", "s_dcache_wb",
             "s_dcache_inv", "buffer_wbl2", "buffer_inv", "s_trap", "s_setreg_b32", "s_setreg_imm32_b32",
             "s_set_gpr_idx_on", "s_set_gpr_idx_off", "s_nop")


def is_load(info: RegInfo, processor: str) -> bool:
    """A memory read returning registers (no store, no atomic, no LDS DMA) of `processor`."""
    return info.family in MEMORY and bool(info.dst) and instr_info(info.base, processor).is_load


def scalar_load(info: RegInfo, processor: str) -> bool:
    """An `s_load_*` (scalar load from a 64-bit address: the kernarg segment's loads) of `processor`."""
    t = instr_info(info.base, processor)
    return t.family == "smem" and t.is_load and not t.segment


def writes_memory(info: RegInfo, processor: str) -> bool:
    return info.family in MEMORY and not is_load(info, processor)


def independent(a: RegInfo, b: RegInfo) -> bool:
    return not (a.defs & b.uses or a.uses & b.defs or a.defs & b.defs)


def _blocks(body: Body, i: int) -> tuple[int, int]:
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    return blk.start, blk.end


def no_global_write_before(body: Body, b: int) -> bool:
    """No instruction that may write memory other than LDS (a store, an atomic, an LDS DMA load, cache
    control) lies in block `b` or in a block from which `b` can be reached: no wave arrives at a
    barrier of `b` after writing global memory."""
    seen, todo = {b}, [b]
    while todo:
        for p in body.cfg.blocks[todo.pop()].preds:
            if p not in seen:
                seen.add(p)
                todo.append(p)
    for x in seen:
        blk = body.cfg.blocks[x]
        for k in range(blk.start, blk.end):
            info = body.infos[k]
            if info.base in ("buffer_wbl2", "buffer_inv") or writes_memory(info, body.processor) and info.family != "ds":
                return False
    return True


def _counter(info: RegInfo) -> str:
    return "vm" if info.family in ("flat", "mubuf") else "lgkm"


def hoist_load(body: Body, i: int) -> Body | None:
    """Move load instruction i as early in its block as dependences allow, keeping its order among
    the loads on the same counter (so in-order waits stay meaningful). A global or buffer load into
    registers also crosses `s_barrier`s when no wave of the workgroup can have written global memory
    before reaching them (`no_global_write_before`): the barrier then orders nothing it reads."""
    if not is_load(body.infos[i], body.processor):
        return None
    j = _hoist_target(body, i)
    if j == i:
        return None
    new = _move(body, i, j)
    return new if new.no_worse(body, full=False) else None


def hoist_load_renamed(body: Body, i: int) -> Body | None:
    """`hoist_load` after moving the load's value (its destination's web, `asmevo.agent.webs`; for a
    multi-register destination the webs of its tuple group, shifted together by an even distance) into
    VGPRs the body never uses below its VGPR limit (`vgpr_limit`: the waves per SIMD stay): earlier reads
    or writes of the old registers no longer hold the load back. A load whose registers are reused tile
    after tile (a K loop's staging loads, an LDS fragment read per MFMA) then issues with the tiles before it."""
    ins = body.instructions[i]
    if not is_load(body.infos[i], body.processor) or not ins.operands or ins.operands[0].kind != "vgpr" \
            or _hoist_target(body, i, renamed=True) == _hoist_target(body, i):
        return None
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    web = webs.def_web.get((i, ins.operands[0].index))
    group = webs.tuple_group(web) if web is not None else None
    delta = webs.shift_room(group, vgpr_limit(body)) if group is not None else None
    if delta is None:
        return None
    return hoist_load(webs.renamed({id(w): w.reg + delta for w in group}), i)


def hoist_loads(body: Body, i: int) -> Body | None:
    """`hoist_load_renamed`, else `hoist_load`, at every load of instruction i's block, first to last, the
    vector memory loads (the longer latency) before the LDS loads, so they take the free VGPRs first; a
    hazard the moves uncover gets its wait states (`hazard_nops`)."""
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    loads = sorted((k for k in range(blk.start, blk.end) if is_load(body.infos[k], body.processor)),
                   key=lambda k: (_counter(body.infos[k]) != "vm", k))
    loads = [body.items[body.pos[k]] for k in loads]
    cur = body
    for item in loads:  # followed by identity: relaxing a crossed wait may delete it
        k = next((k for k, p in enumerate(cur.pos) if cur.items[p] is item), None)
        if k is not None:
            cur = hoist_load_renamed(cur, k) or hoist_load(cur, k) or cur
    return None if cur is body else hazard_nops(cur, body)


def _hoist_target(body: Body, i: int, renamed: bool = False) -> int:
    """The earliest instruction of its block load i may move before (a global load passes LDS
    writes: another address space); with `renamed`, earlier reads and writes of its destination
    registers do not hold it (they will be another register's)."""
    infos, ins = body.infos, body.instructions
    info = infos[i]
    start, _ = _blocks(body, i)
    global_read = info.base.startswith(GLOBAL_READS)
    crosses_barriers = None  # decided at the first s_barrier on the way
    dst = info.defs if renamed else frozenset()
    j = i
    while j > start:
        prev = infos[j - 1]
        if prev.base == "s_barrier" and crosses_barriers is None:
            crosses_barriers = global_read and no_global_write_before(body, body.cfg.block_of[i])
        barrier = prev.base in BARRIERS and not (prev.base == "s_barrier" and crosses_barriers)
        store = writes_memory(prev, body.processor) and not (global_read and prev.family == "ds")
        clash = prev.defs & info.uses or (prev.uses | prev.defs) & (info.defs - dst)
        if ins[j - 1].is_branch or barrier or store or clash:
            break
        if is_load(prev, body.processor) and _counter(prev) == _counter(info):
            break
        j -= 1
    return j


def hoist_past_wait(body: Body, i: int) -> Body | None:
    """Move instruction i (VALU/SALU, not a memory op) above the nearest earlier waits in its block,
    when it neither reads nor writes anything a pending memory op touches (the oracle decides)."""
    infos, ins = body.infos, body.instructions
    info = infos[i]
    if info.family in MEMORY or info.family in ("sopp",) or ins[i].is_branch or info.base in BARRIERS:
        return None
    start, _ = _blocks(body, i)
    j = i
    crossed_wait = False
    while j > start:
        prev = ins[j - 1]
        if prev.mnemonic == "s_waitcnt":
            crossed_wait = True
            j -= 1
            continue
        if prev.is_branch or infos[j - 1].base in BARRIERS or not independent(infos[j - 1], info):
            break
        if crossed_wait and infos[j - 1].family in MEMORY:
            break
        j -= 1
    while j < i and ins[j].mnemonic != "s_waitcnt":
        j += 1
    if not crossed_wait or j >= i:
        return None
    new = _move(body, i, j, relax=False)
    return new if new.no_worse(body, full=False) else None


def _move(body: Body, i: int, j: int, relax: bool = True) -> Body:
    """Instruction i moved before instruction j (j < i); waits crossed are relaxed."""
    src, dst = body.pos[i], body.pos[j]
    items: list[BodyItem] = list(body.items)
    item = items.pop(src)
    items.insert(dst, item)
    cur = body.replace(items)
    if relax:
        budget = body.waitcnt_violations
        for p in range(src, dst, -1):
            if is_wait(cur.items[p]):
                cur = relax_at(cur, p, budget)
    return cur


def speculate_kernarg_load(body: Body, i: int) -> Body | None:
    """Move a scalar load from the kernarg segment (read-only, always mapped) from its block to the
    end of the dominating predecessor, so its latency overlaps the branch. Legal when the kernarg
    pointer is never rewritten before it, the block is a direct successor of that predecessor, the
    loaded registers are dead on the predecessor's other paths and not touched earlier in the block.
    The other paths get an `s_waitcnt lgkmcnt(0)` at their start, relaxed away where not needed."""
    info, ins, cfg = body.infos[i], body.instructions[i], body.cfg
    if body.kernarg is None or not scalar_load(info, body.processor) or len(ins.operands) < 2:
        return None
    base = ins.operands[1]
    pointer = {("s", body.kernarg), ("s", body.kernarg + 1)}
    if base.kind != "sgpr" or (base.index, base.count) != (body.kernarg, 2):
        return None
    if any(body.infos[j].defs & pointer for j in range(i)):
        return None
    b = cfg.block_of[i]
    dom = cfg.dominators()
    strict = [d for d in dom.get(b, ()) if d != b]
    if not strict:
        return None
    d = max(strict, key=lambda x: len(dom[x]))
    blk = cfg.blocks[b]
    if body.preload and d == 0:  # the compatibility preamble, which hardware skips
        return None
    if b not in cfg.blocks[d].succs or any(info.defs & body.live_in[s] for s in cfg.blocks[d].succs if s != b):
        return None
    if any((body.infos[j].uses | body.infos[j].defs) & info.defs or body.infos[j].defs & pointer
           for j in range(blk.start, i)):
        return None
    last = body.pos[cfg.blocks[d].end - 1]
    end = body.instructions[cfg.blocks[d].end - 1]
    at = last if end.is_branch or end.ends_program else last + 1
    items = list(body.items)
    item = items.pop(body.pos[i])
    items.insert(at, item)
    guards = []
    for s in cfg.blocks[d].succs:  # the other paths wait for the load before reusing its registers
        if s != b:
            guard = make_item("s_waitcnt lgkmcnt(0)")
            items.insert(items.index(body.items[body.pos[cfg.blocks[s].start]]), guard)
            guards.append(guard)
    new = body.replace(items)
    for guard in guards:
        new = relax_at(new, next(k for k, it in enumerate(new.items) if it is guard), body.waitcnt_violations)
    return new if new.no_worse(body, full=False) else None


def hoist_invariant(body: Body, i: int) -> Body | None:
    """Move a loop-invariant SALU instruction out of its innermost loop into the preheader: its
    sources are not written in the loop, its SGPR results are written only by it, are not live into
    the loop header or out of the loop, and SCC, if it writes it, is dead where it was and where it
    goes. (VALU is left alone: its result depends on EXEC and VGPR liveness is lane-partial.)"""
    info, cfg = body.infos[i], body.cfg
    if info.family != "salu" or info.uses & _EXEC_REGS or any(r[0] not in ("s", "scc") for r in info.defs):
        return None
    if info.base.startswith(("s_cbranch", "s_setpc", "s_swappc", "s_getpc", "s_set", "s_movrel", "s_cmov")):
        return None
    loop = cfg.innermost_loop(cfg.block_of[i])
    if loop is None:
        return None
    members = [j for x in loop.blocks for j in range(cfg.blocks[x].start, cfg.blocks[x].end)]
    if any(body.infos[j].defs & info.uses for j in members):
        return None
    if any(body.infos[j].defs & info.defs for j in members if j != i):
        return None
    p = cfg.preheader(loop)
    if p is None:
        return None
    pre = cfg.blocks[p]
    sgprs = {r for r in info.defs if r[0] == "s"}
    if sgprs & body.live_in[loop.header]:
        return None
    exits = {s for x in loop.blocks for s in cfg.blocks[x].succs if s not in loop.blocks}
    exits |= {s for s in pre.succs if s != loop.header}
    if any(sgprs & body.live_in[s] for s in exits):
        return None
    term = body.instructions[pre.end - 1]
    at_end = not (term.is_branch or term.ends_program)
    if ("scc", 0) in info.defs:
        if ("scc", 0) in body.live_after(i) or (not at_end and ("scc", 0) in body.infos[pre.end - 1].uses):
            return None
        if at_end and ("scc", 0) in body.live_out[pre.index]:
            return None
    last = body.pos[pre.end - 1]
    at = last + 1 if at_end else last
    items = list(body.items)
    item = items.pop(body.pos[i])
    items.insert(at if at <= body.pos[i] else at - 1, item)
    new = body.replace(items)
    return new if new.no_worse(body, full=False) else None
