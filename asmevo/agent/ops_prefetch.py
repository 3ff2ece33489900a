"""prefetch_loop_loads: a K loop's global loads issued one iteration ahead.

A GEMM-style K loop of one block loads its tiles at the top and waits for them before staging them
through LDS, so every iteration starts with a whole memory latency (vLLM's LoRA shrink after `hoist_loads`:
24 `global_load_ushort`s, then `s_waitcnt vmcnt(22)`, a 502-cycle stall by the model at its bench shape on MI300X). Its addresses are
loop-carried pointers, each advanced once per iteration by a constant (`v_lshl_add_u64 A, A, 0, S`, S an
SGPR pair set once by `s_mov_b64 S, K`), so the next iteration's load is this one's with its offset
moved by K. Rewritten, each load is issued in the iteration before, right after the last read of the
value it replaces, and once more (iteration 0's) at the end of the preheader:

    preheader: ...; LOAD_k R_k                        (the loop's first loads)
    loop:      ...; compare (SCC: another iteration follows) ...
               read of load k's value (R_k) ...
               s_mov_b64 E, exec; s_cselect_b64 exec, exec, 0; LOAD_k R_k, offset + K; s_mov_b64 exec, E
               ...; s_cbranch_scc1 loop

In the last iteration the prefetch runs with no lanes (no memory access; it still counts on vmcnt), so
no address beyond the loop's is read. Legal when: the loop is one block, its back edge a branch on SCC
whose last writer precedes every prefetch (neither `s_mov_b64` nor `s_cselect_b64` writes SCC); the loop
writes no EXEC and no memory but LDS; each address pair is written in the loop only by its advance, its
stride SGPR pair not in the loop and last in the preheader by an `s_mov_b64` of a constant, and every adjusted
offset fits the 13-bit signed field; each load writes one VGPR whose value (web, `asmevo.agent.webs`) it alone
writes and only the same iteration reads; its register R_k (the old one, else the lowest VGPR the body never
names, else the lowest other) holds no other value anywhere in the loop or in the preheader after the copy,
since the value now lives around the back edge. Prefetches with no `s_barrier` between them move down to the
last of them and share one EXEC save and restore; each offset is counted where its prefetch lands. The preheader falls through into the loop (or ends with `s_branch` to it), so its copies
run exactly when the loop does. Every `vmcnt` wait of the loop is then recounted: set to 0 and raised as
far as the waitcnt analysis allows (`ops_waitcnt.relax_at`); the static checks re-check the result.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..isa.instruction import Instruction
from ..isa.regs import EXEC, SCC
from ..isa.waitcnt import decode_waitcnt
from .body import Body, BodyItem, make_item
from .ops_pipeline import global_load
from .ops_rename import free_pairs
from .ops_sched import writes_memory
from .ops_waitcnt import relax_items, wait_text
from .webs import NotAnalysable, Web, webs_of

# A FLAT global instruction's 13-bit signed offset on gfx9 (LLVM AMDGPU `getNumFlatOffsetBits`: 13 for GFX9).
OFFSET_RANGE = range(-4096, 4096)
_CACHE_BITS = ("nt", "sc0", "sc1", "glc", "slc")
_BACK_EDGES = {"s_cbranch_scc1": "exec, 0", "s_cbranch_scc0": "0, exec"}  # s_cselect_b64 exec, <these>


@dataclass(frozen=True)
class _Load:
    index: int          # the load, in the loop block
    web: Web            # the value it writes
    offset: int         # its offset with its address at the iteration's start
    stride: int         # K, the address pair's advance per iteration
    advance: int        # index of the address pair's advance in the loop block


def _offset(ins: Instruction) -> int | None:
    """The load's immediate offset; None when it has a modifier other than the offset and cache bits."""
    off = 0
    for m in ins.modifiers:
        if m.startswith("offset:"):
            off = int(m.split(":", 1)[1], 0)
        elif m not in _CACHE_BITS:
            return None
    return off


def _stride(body: Body, pair: int, loop: range, pre: range) -> tuple[int, int] | None:
    """(index of the one write of VGPR pair `pair` in the loop's instructions `loop`, K) when that write is
    `v_lshl_add_u64 v[pair:pair+1], v[pair:pair+1], 0, S`, S is not written in the loop, and its last write
    in the preheader's instructions `pre` is `s_mov_b64 S, K` (the loop is entered from there only)."""
    regs = {("v", pair), ("v", pair + 1)}
    writes = [j for j in loop if body.infos[j].defs & regs]
    if len(writes) != 1:
        return None
    ins = body.instructions[writes[0]]
    ops = ins.operands
    if ins.mnemonic != "v_lshl_add_u64" or ins.modifiers or len(ops) != 4 or ops[0].text != ops[1].text \
            or ops[0].index != pair or ops[0].count != 2 or ops[2].kind != "imm" or ops[2].value != 0 \
            or ops[3].kind != "sgpr" or ops[3].count != 2:
        return None
    sregs = {("s", ops[3].index), ("s", ops[3].index + 1)}
    if any(body.infos[j].defs & sregs for j in loop):
        return None
    sets = [j for j in pre if body.infos[j].defs & sregs]
    mov = body.instructions[sets[-1]] if sets else None
    if mov is None or mov.mnemonic != "s_mov_b64" or mov.operands[0].text != ops[3].text or mov.operands[1].kind != "imm":
        return None
    return writes[0], mov.operands[1].value


def _points(lo: int, hi: int) -> int:
    """Program points of instructions lo..hi-1 (2i before instruction i, 2i+1 after)."""
    return (1 << 2 * hi) - (1 << 2 * lo) if hi > lo else 0


def prefetch_loop_loads(body: Body, i: int) -> Body | None:
    """Issue the global loads of instruction i's one-block loop one iteration ahead (module docstring);
    None unless every condition there holds."""
    cfg, infos, instrs = body.cfg, body.infos, body.instructions
    b = cfg.block_of[i]
    loop = cfg.innermost_loop(b)
    if loop is None or loop.blocks != frozenset({b}):
        return None
    blk = cfg.blocks[b]
    branch = instrs[blk.end - 1]
    pre = cfg.preheader(loop)
    if branch.mnemonic not in _BACK_EDGES or pre is None:
        return None
    pre_blk = cfg.blocks[pre]
    pre_last = instrs[pre_blk.end - 1]
    if pre_last.is_branch and pre_last.mnemonic != "s_branch" or pre_blk.end != blk.start and not pre_last.is_branch:
        return None
    scc_writes = [j for j in range(blk.start, blk.end - 1) if SCC in infos[j].defs]
    if not scc_writes:
        return None
    compare = scc_writes[-1]
    proc = body.processor
    if any(infos[j].defs & EXEC or writes_memory(infos[j], proc) and infos[j].family != "ds"
           for j in range(blk.start, blk.end)):
        return None
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    loads: list[_Load] = []
    for j in range(blk.start, blk.end):
        if not global_load(instrs[j], proc):
            continue
        ins = instrs[j]
        off = _offset(ins)
        if off is None or len(ins.operands) != 3 or ins.operands[2].text != "off" or ins.operands[0].count != 1 \
                or ins.operands[1].kind != "vgpr" or ins.operands[1].count != 2:
            return None
        stride = _stride(body, ins.operands[1].index, range(blk.start, blk.end), range(pre_blk.start, pre_blk.end))
        web = webs.def_web.get((j, ins.operands[0].index))
        if stride is None or web is None or web.pinned or web.defs != {j} or not web.uses \
                or not all(j < u < blk.end for u in web.uses):
            return None
        advance, k = stride
        loads.append(_Load(j, web, off + (k if j > advance else 0), k, advance))
    if not loads:
        return None
    # registers: the value lives around the back edge, and from the preheader copy on
    at_pre = pre_blk.end - (1 if pre_last.is_branch else 0)
    span = _points(blk.start, blk.end) | _points(at_pre, pre_blk.end)
    others: dict[int, int] = {}
    mine = {id(ld.web) for ld in loads}
    for w in webs.webs:
        if id(w) not in mine:
            others[w.reg] = others.get(w.reg, 0) | w.occupied
    taken: set[int] = set()
    regs: list[int] = []
    for ld in loads:
        choices = [ld.web.reg, *(r for r in range(256) if r not in others), *(r for r in range(256) if r in others)]
        reg = next((r for r in choices if r not in taken and not others.get(r, 0) & span), None)
        if reg is None:
            return None
        taken.add(reg)
        regs.append(reg)
    renamed = webs.renamed({id(ld.web): r for ld, r in zip(loads, regs) if r != ld.web.reg})
    return _rewrite(body, renamed, loads, regs, compare, blk.end - 1, pre_blk.end - 1)


def _rewrite(body: Body, renamed: Body, loads: list[_Load], regs: list[int], compare: int, back_edge: int,
             pre_last: int) -> Body | None:
    """`renamed` with each load moved to its prefetch point (masked to iterations that follow) and copied to
    the end of the preheader (whose last instruction is `pre_last`), then the loop's vmcnt waits recounted."""
    pairs = free_pairs(body)
    if not pairs:
        return None
    save, keep = pairs[0], _BACK_EDGES[renamed.instructions[back_edge].mnemonic]
    after_reads = [max(max(ld.web.uses), compare) + 1 for ld in loads]
    point = _merged(renamed, set(after_reads))
    groups: dict[int, list[str]] = {}
    first: list[str] = []
    for ld, reg, read in zip(loads, regs, after_reads):
        ins = renamed.instructions[ld.index]
        cache = [m for m in ins.modifiers if not m.startswith("offset:")]
        at = point[read]
        ahead = ld.offset + ld.stride - (ld.stride if at > ld.advance else 0)
        if ld.offset not in OFFSET_RANGE or ahead not in OFFSET_RANGE:
            return None
        text = f"{ins.mnemonic} v{reg}, {ins.operands[1].text}, off"
        first.append(" ".join([text, *([f"offset:{ld.offset}"] if ld.offset else []), *cache]))
        groups.setdefault(at, []).append(" ".join([text, *([f"offset:{ahead}"] if ahead else []), *cache]))
    dropped = {renamed.pos[ld.index] for ld in loads}
    before: dict[int, list[str]] = {}
    for at, lines in groups.items():
        before.setdefault(renamed.pos[at], []).extend(
            [f"s_mov_b64 {save}, exec", f"s_cselect_b64 exec, {keep}", *lines, f"s_mov_b64 exec, {save}"])
    pre_pos = renamed.pos[pre_last] + (0 if renamed.instructions[pre_last].is_branch else 1)
    before.setdefault(pre_pos, [])[:0] = first
    items: list[BodyItem] = []
    for p, item in enumerate(renamed.items):
        items.extend(make_item(t) for t in before.get(p, ()))
        if p not in dropped:
            items.append(item)
    return _recount(body, renamed.replace(items), renamed.items[renamed.pos[back_edge]])


def _merged(body: Body, points: set[int]) -> dict[int, int]:
    """Each prefetch point moved down to the next one when no `s_barrier` lies between (a few instructions
    later, one EXEC save and restore for all of them)."""
    out: dict[int, int] = {}
    run: list[int] = []
    ordered = sorted(points)
    for a, b in zip(ordered, ordered[1:] + [None]):
        run.append(a)
        if b is None or any(body.instructions[j].mnemonic == "s_barrier" for j in range(a, b)):
            out.update((p, a) for p in run)
            run = []
    return out


def _recount(parent: Body, body: Body, back_edge: BodyItem) -> Body | None:
    """Every vmcnt wait of the loop closed by the `back_edge` item set to 0, then raised as far as the
    waitcnt analysis allows, first to last."""
    end = next(j for j, p in enumerate(body.pos) if body.items[p] is back_edge)
    loop_block = body.cfg.blocks[body.cfg.block_of[end]]
    items = list(body.items)
    waits = []
    for j in range(loop_block.start, loop_block.end):
        limits = decode_waitcnt(body.instructions[j]) if body.instructions[j].mnemonic == "s_waitcnt" else {}
        if "vmcnt" in limits:
            items[body.pos[j]] = make_item(wait_text({**limits, "vmcnt": 0}))
            waits.append(items[body.pos[j]])
    cur = relax_items(body.replace(items), waits, parent.waitcnt_violations)
    return cur if cur.no_worse(parent) else None
