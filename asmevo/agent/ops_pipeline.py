"""Loop software pipelining for the row loops of reductions (softmax, norms, sums): each iteration
loads one value (or a few), updates index, pointer and exit mask, waits for the load (`vmcnt(0)`), uses the
value and drops the finished lanes from EXEC, so every iteration stalls for the whole memory latency.

Rewritten, the next iteration's load is issued before the wait, into a second register, for the
lanes that continue (EXEC minus the exit mask, exactly the lanes that iteration would load for):

    preheader: ...; P = 0; LOAD D            L: A; save EXEC; EXEC &= ~M; LOAD D'; restore EXEC
                                                s_waitcnt vmcnt(1); B(D); EXIT; s_cbranch_execz X
                                                A; save EXEC; EXEC &= ~M; LOAD D; restore EXEC
                                                s_waitcnt vmcnt(1); B(D'); P |= EXEC & M; EXIT
                                                s_cbranch_execnz L
                                             X: s_waitcnt vmcnt(0); EXEC = P; D = D'; EXEC = 0

(A: the code between the loads and the wait, B: between wait and EXIT = `s_andn2_b64 exec, exec, M`;
with K loads each LOAD is K loads and the waits are `vmcnt(K)`.) Two iterations' loads are in flight, so an iteration waits about half the latency. The loop is unrolled twice so the
registers alternate without a copy; P collects the lanes whose last iteration ran the second copy,
and at the exit (where EXEC is empty) their last value moves from D' to D, so every register holds
what it held after the original loop. Legal when A does not touch D, neither B nor EXIT writes
the load's address registers or M, B does not write EXEC, and the loop holds no other memory
access or wait; the last prefetch runs with no lanes and is waited for at the exit. When B computes
M (argmax: the index update follows a select reading the old index), M's slice moves before the
wait first, renaming what B still reads the old value of."""
from __future__ import annotations

import re

from ..isa.instruction import Instruction
from ..isa.operands import Operand
from ..isa.table import instr_info
from ..isa.waitcnt import COUNTER_MAX, decode_waitcnt
from .body import Body, BodyItem, make_item
from .ops_rename import free_pairs, free_vgprs
from .ops_sched import is_load
from .ops_waitcnt import wait_text
from .webs import NotAnalysable, webs_of

_ALU = ("salu", "valu", "vopc")
DEEPEST = (8, 7, 6, 5)  # the depths pipeline_loop_deepest tries, deepest first (8 takes 17 free SGPR pairs)


def global_load(ins: Instruction, processor: str) -> bool:
    """A `global_load_*` of `processor` returning VGPRs (the loads this operator pipelines)."""
    info = instr_info(ins.mnemonic, processor)
    return info.segment == "global" and info.is_load and not info.lds_dma


def _vgprs(op: Operand) -> range | None:
    return range(op.index, op.index + op.count) if op.kind == "vgpr" else None


def _shifted(text: str, dst: range, new: int) -> str | None:
    """`text` with every VGPR operand inside `dst` moved to start at `new`; None when an operand
    only partly overlaps `dst`."""
    out, at = [], 0
    for m in re.finditer(r"\bv\[(\d+):(\d+)\]|\bv(\d+)\b", text):
        lo = int(m.group(1) if m.group(1) is not None else m.group(3))
        hi = int(m.group(2)) if m.group(1) is not None else lo
        if lo > dst[-1] or hi < dst[0]:
            continue
        if lo < dst[0] or hi > dst[-1]:
            return None
        lo, hi = lo - dst[0] + new, hi - dst[0] + new
        out += [text[at:m.start()], f"v[{lo}:{hi}]" if m.group(1) is not None else f"v{lo}"]
        at = m.end()
    return "".join(out) + text[at:]


def _renamed(text: str, moves: list[tuple[range, int]]) -> str | None:
    for dst, new in moves:
        text = _shifted(text, dst, new)
        if text is None:
            return None
    return text


def copy_text(ins: Instruction, moves: list[tuple[range, int]], later_loads: int) -> str | None:
    """`ins`'s text in a copy of its loop's body: its VGPRs moved by `moves` (`_renamed`) and, for a wait, its vmcnt
    raised by the `later_loads` loads of later iterations issued before it; None when either cannot be."""
    text = _renamed(ins.text(), moves)
    if text is None or ins.mnemonic != "s_waitcnt":
        return text
    limits = decode_waitcnt(ins)
    limits["vmcnt"] = limits.get("vmcnt", COUNTER_MAX["vmcnt"]) + later_loads
    return wait_text(limits) if limits["vmcnt"] < COUNTER_MAX["vmcnt"] else None


def _mask_before_wait(body: Body, w: int, b_part: range, loaded: set) -> Body | None:
    """The loop with the instructions computing its exit mask (the backward slice, within B, of B's
    last write of the mask EXIT reads) moved to just before the wait, when the slice reads none of
    the `loaded` registers nor anything B writes before it, and writes no EXEC. A register the slice
    writes that B reads or writes earlier is renamed to a fresh VGPR in the slice and copied back at
    its old place (`v_mov_b32`), so B still sees the old value before and the new one after."""
    instrs, infos = body.instructions, body.infos
    exit_uses = infos[b_part[-1] + 1].uses
    last = max(j for j in b_part if infos[j].defs & exit_uses)
    slice_, need = [last], set(infos[last].uses)
    for j in reversed(range(b_part[0], last)):
        if infos[j].defs & need:
            slice_.insert(0, j)
            need = (need - infos[j].defs) | infos[j].uses
    rest = [j for j in b_part if j not in slice_]
    renames: dict[tuple, int] = {}
    for j in slice_:
        if infos[j].uses & loaded or infos[j].defs & {("s", 126), ("s", 127)} or instrs[j].mnemonic == "s_nop" or any(
                infos[k].defs & infos[j].uses for k in rest if k < j):
            return None
        for r in infos[j].defs:
            if any(r in infos[k].uses | infos[k].defs for k in rest if k < j):
                if r[0] != "v":
                    return None
                renames[r] = -1
    free = free_vgprs(body, [1] * len(renames))
    if free is None or any(sum(r in infos[j].defs for j in slice_) > 1 for r in renames):
        return None
    renames = dict(zip(renames, free))
    moved, copies, active = [], {}, set()
    for j in slice_:  # destinations renamed; sources once an earlier slice instruction renamed them
        ops, ndst = [], len(infos[j].dst)
        for n, op in enumerate(instrs[j].operands):
            text = op.text
            for (_, r), new in renames.items():
                if n < ndst or r in active:
                    text = _shifted(text, range(r, r + 1), new)
            ops.append(text)
        active |= {r for (_, r) in renames if ("v", r) in infos[j].defs}
        moved.append(make_item(" ".join([instrs[j].mnemonic, ", ".join(ops), *instrs[j].modifiers])))
        copies[j] = [make_item(f"v_mov_b32_e32 v{r}, v{new}") for (_, r), new in renames.items()
                     if ("v", r) in infos[j].defs]
    items = body.items
    new_b = [it for j in b_part for it in ([items[body.pos[j]]] if j in rest else copies[j])]
    out = [*items[:body.pos[w]], *moved, items[body.pos[w]], *new_b, *items[body.pos[b_part[-1]] + 1:]]
    new = body.replace(out)
    return new if new.no_worse(body) else None


def _row_loop(body: Body, i: int) -> tuple[int, list[int], range, range, int] | None:
    """(block, leading loads, A part, B part, wait) of the single-block loop starting at instruction
    i with global loads, whose only wait is `s_waitcnt vmcnt(0)` and which ends `s_andn2_b64 exec,
    exec, M; s_cbranch_execnz` back to its start, everything else ALU; None otherwise."""
    instrs, infos, cfg = body.instructions, body.infos, body.cfg
    b = cfg.block_of[i]
    blk = cfg.blocks[b]
    _, labels, _ = body.index
    last, exit_ = instrs[blk.end - 1], instrs[blk.end - 2]
    waits = [j for j in range(blk.start, blk.end) if instrs[j].mnemonic == "s_waitcnt"]
    if (i != blk.start or last.mnemonic != "s_cbranch_execnz" or labels.get(last.label) != blk.start
            or exit_.mnemonic != "s_andn2_b64" or [op.text for op in exit_.operands[:2]] != ["exec", "exec"]
            or len(waits) != 1 or instrs[waits[0]].modifiers != ("vmcnt(0)",)):
        return None
    w = waits[0]
    loads = list(range(i, next((j for j in range(i, w) if not global_load(instrs[j], body.processor)), w)))
    a_part, b_part = range(loads[-1] + 1 if loads else i, w), range(w + 1, blk.end - 2)
    if not loads or any(not is_load(infos[j], body.processor) for j in loads) or any(
            (infos[j].family not in _ALU and instrs[j].mnemonic != "s_nop") or instrs[j].is_branch
            for j in (*a_part, *b_part)):
        return None
    return b, loads, a_part, b_part, w


def pipeline_loop(body: Body, i: int, mask_moved: bool = False) -> Body | None:
    """Pipeline the single-block loop that starts, at instruction i, with its only memory accesses:
    global loads waited for by the loop's only wait, `s_waitcnt vmcnt(0)`."""
    instrs, infos, cfg = body.instructions, body.infos, body.cfg
    shape = _row_loop(body, i)
    if shape is None:
        return None
    b, loads, a_part, b_part, w = shape
    blk = cfg.blocks[b]
    _, labels, _ = body.index
    last, exit_ = instrs[blk.end - 1], instrs[blk.end - 2]
    dsts = [_vgprs(infos[j].dst[0]) for j in loads]
    if None in dsts:  # a load into AGPRs
        return None
    loaded = {("v", r) for d in dsts for r in d}
    exec_ = {("s", 126), ("s", 127)}
    address = set().union(*(infos[j].uses for j in loads)) - exec_
    mask = set(infos[blk.end - 2].uses) - exec_
    if not mask_moved and any(infos[j].defs & mask for j in b_part) and not any(infos[j].defs & mask for j in a_part):
        early = _mask_before_wait(body, w, b_part, loaded)  # then pipeline that
        return _in_terms_of(pipeline_loop(early, i, mask_moved=True), early, body) if early is not None else None
    if (address & loaded or any((infos[j].uses | infos[j].defs) & loaded or infos[j].defs & exec_ for j in a_part)
            or any(infos[j].defs & (address | mask | exec_) for j in b_part)
            or infos[blk.end - 2].defs & address or b + 1 >= len(cfg.blocks)):
        return None
    preds = [p for p in blk.preds if p != b]
    if preds != [b - 1] or instrs[cfg.blocks[b - 1].end - 1].is_branch:
        return None
    seconds, pairs = free_vgprs(body, [len(d) for d in dsts]), free_pairs(body)
    exit_label = f"{last.label}_pipelined_exit"
    if seconds is None or len(pairs) < 3 or exit_label in labels:
        return None
    moves = list(zip(dsts, seconds))
    saved, late, fresh = pairs[:3]
    other_loads = [_renamed(instrs[j].text(), moves) for j in loads]
    uses_second = [_renamed(instrs[j].text(), moves) for j in b_part]
    if any(t is None for t in (*other_loads, *uses_second)):
        return None
    items = body.items
    m_text = exit_.operands[2].text
    origin: dict[int, int] = {}     # id(item) -> the instruction of `body` it copies

    def copied(j: int, text: str, fresh: bool = False) -> BodyItem:
        item = items[body.pos[j]] if text == instrs[j].text() and not fresh else make_item(text)
        origin[id(item)] = j
        return item

    def stage(prefetch: list[BodyItem], uses: list[BodyItem]) -> list[BodyItem]:
        return [*(items[body.pos[j]] for j in a_part), make_item(f"s_mov_b64 {saved}, exec"),
                make_item(f"s_andn2_b64 exec, exec, {m_text}"), *prefetch, make_item(f"s_mov_b64 exec, {saved}"),
                make_item(f"s_waitcnt vmcnt({len(loads)})"), *uses, items[body.pos[blk.end - 2]]]

    first_uses = [items[body.pos[j]] for j in b_part]
    second_uses = [copied(j, t) for j, t in zip(b_part, uses_second)]
    late_lanes = [make_item(f"s_and_b64 {fresh}, exec, {m_text}"), make_item(f"s_or_b64 {late}, {late}, {fresh}")]
    copies = [make_item(f"v_mov_b32_e32 v{r}, v{r - d[0] + new}") for d, new in moves for r in d]
    loop = [*stage([copied(j, t) for j, t in zip(loads, other_loads)], first_uses),
            make_item(f"s_cbranch_execz {exit_label}"),
            *stage([items[body.pos[j]] for j in loads], [*second_uses, *late_lanes]), items[body.pos[blk.end - 1]]]
    leave = [BodyItem(f"{exit_label}:", label=exit_label), make_item("s_waitcnt vmcnt(0)"),
             make_item(f"s_mov_b64 exec, {late}"), *copies, make_item("s_mov_b64 exec, 0")]
    head = body.pos[cfg.blocks[b - 1].end - 1] + 1
    prologue = [make_item(f"s_mov_b64 {late}, 0"), *(copied(j, instrs[j].text(), fresh=True) for j in loads)]
    new = body.replace([*items[:head], *prologue, *items[head:body.pos[i]], *loop, *leave,
                        *items[body.pos[blk.end - 1] + 1:]])
    if not new.no_worse(body):
        return None
    return described(new, _sections(head, prologue, body.pos[i] - head, loop, leave), 2, cfg.blocks[b - 1].end - 1, i,
                     origin)


def loop_parts(body: Body, i: int) -> tuple[int, range, range] | None:
    """(block, P, C) of the single-block loop starting at instruction i that leaves through
    `s_andn2_b64 exec, exec, M; s_cbranch_execnz` back to its start: P, before its first wait,
    holds ALU work and global loads; C, from that wait to the exit, ALU work, waits and global
    stores. None for any other loop."""
    instrs, infos, cfg = body.instructions, body.infos, body.cfg
    b = cfg.block_of[i]
    blk = cfg.blocks[b]
    _, labels, _ = body.index
    last, exit_ = instrs[blk.end - 1], instrs[blk.end - 2]
    if (i != blk.start or last.mnemonic != "s_cbranch_execnz" or labels.get(last.label) != blk.start
            or exit_.mnemonic != "s_andn2_b64" or [op.text for op in exit_.operands[:2]] != ["exec", "exec"]):
        return None
    w = next((j for j in range(blk.start, blk.end - 2) if instrs[j].mnemonic == "s_waitcnt"), None)
    if w is None:
        return None
    p_part, c_part = range(blk.start, w), range(w, blk.end - 2)
    exec_ = {("s", 126), ("s", 127)}

    def kind(j: int) -> str:
        if instrs[j].mnemonic in ("s_waitcnt", "s_nop"):
            return instrs[j].mnemonic
        if infos[j].defs & exec_ or instrs[j].is_branch:
            return "control"
        if infos[j].family in _ALU:
            return "alu"
        info = instr_info(instrs[j].mnemonic, body.processor)
        if info.segment == "global" and not info.lds_dma and info.memory in ("load", "store"):
            return info.memory
        return "other"

    if any(kind(j) not in ("alu", "load", "s_nop") for j in p_part) or not any(kind(j) == "load" for j in p_part):
        return None
    if any(kind(j) not in ("alu", "store", "s_waitcnt", "s_nop") for j in c_part):
        return None
    return b, p_part, c_part


def _state_into_p(body: Body, p_part: range, c_part: range, mask: set) -> Body | None:
    """The loop with the instructions of C that compute its exit mask from loop state alone (the
    mask's backward slice in C, none of it reading what the loads returned) moved to the end of P;
    C's reads of a moved register's old value read a snapshot taken before the move (a fresh VGPR,
    `v_mov_b32`). None when the slice depends on the loads or a snapshot is not possible."""
    instrs, infos = body.instructions, body.infos
    loaded = set().union(*(infos[j].defs for j in p_part if is_load(infos[j], body.processor)))
    tainted = set(loaded)
    for j in c_part:
        if infos[j].uses & tainted:
            tainted |= infos[j].defs
    moved: set[int] = set()
    need = set(mask)
    for j in reversed(c_part):
        if infos[j].defs & need and instrs[j].mnemonic not in ("s_waitcnt", "s_nop"):
            if infos[j].uses & tainted or infos[j].family not in _ALU:
                return None
            moved.add(j)
            need |= infos[j].uses
    if not moved:
        return None
    stay = [j for j in c_part if j not in moved]
    snapshots: dict[tuple, int] = {}
    for j in sorted(moved):  # a register a moved instruction writes, read by C before that write
        for r in infos[j].defs:
            if any(r in infos[k].uses for k in stay if k < j) and r not in snapshots:
                if r[0] != "v" or any(r in infos[k].defs for k in stay):
                    return None
                snapshots[r] = -1
    if any(infos[k].defs & infos[j].uses for j in moved for k in stay if k < j):
        return None
    fresh = free_vgprs(body, [1] * len(snapshots))
    if fresh is None:
        return None
    snapshots = dict(zip(snapshots, fresh))
    first_write = {r: min(j for j in moved if r in infos[j].defs) for r in snapshots}
    items = body.items
    copies = [make_item(f"v_mov_b32_e32 v{new}, v{r[1]}") for r, new in snapshots.items()]
    new_c = []
    for k in stay:
        text = instrs[k].text()
        for r, new in snapshots.items():
            if k < first_write[r] and r in infos[k].uses:
                text = _shifted(text, range(r[1], r[1] + 1), new)
        if text is None:
            return None
        new_c.append(items[body.pos[k]] if text == instrs[k].text() else make_item(text))
    out = [*items[:body.pos[p_part[-1]] + 1], *copies, *(items[body.pos[j]] for j in sorted(moved)), *new_c,
           *items[body.pos[c_part[-1]] + 1:]]
    new = body.replace(out)
    return new if new.no_worse(body) else None


def pipeline_loop_deep(body: Body, i: int, depth: int = 4) -> Body | None:
    """Software-pipeline the loop holding instruction i (`loop_parts`) `depth` deep: the part
    before its first wait (P: loads, address and index updates, the exit mask M) of iteration
    j + depth - 1 runs in iteration j, for exactly the lanes that will run it (EXEC minus the exit
    mask P has reached: an iteration's lanes are the entry lanes minus the accumulated mask), while
    the rest (C: waits, uses, stores) of iteration j runs as before. Registers P writes and C reads
    rotate through `depth` copies (the body is unrolled `depth` times); the exit mask of iteration j
    waits in its copy's SGPR pair (`depth` of them, rotating) until C leaves with it, so the loop
    leaves after the same iteration; a prologue runs the first `depth - 1` P parts; C's vmcnt waits allow the loads of the
    `depth - 1` later iterations issued before them (stores in between only make a wait stricter);
    values of rotating registers read after the loop move back at the exit.

    Legal when C writes nothing P reads before writing it (P's loop-carried state), no rotating
    register is part of that state, C reads no SGPR P writes, P's SGPRs other than M are dead after
    the loop (they run ahead), and the loop is entered only from a fall-through preheader."""
    instrs, infos, cfg = body.instructions, body.infos, body.cfg
    i = cfg.blocks[cfg.block_of[i]].start  # any instruction of the loop names it
    parts = loop_parts(body, i)
    if parts is None or depth < 2:
        return None
    b, p_part, c_part = parts
    blk = cfg.blocks[b]
    _, labels, _ = body.index
    last, exit_ = instrs[blk.end - 1], instrs[blk.end - 2]
    scc = ("scc", 0)
    mask = set(infos[blk.end - 2].uses) - {("s", 126), ("s", 127)}
    p_exposed, p_written = set(), set()
    for j in p_part:
        p_exposed |= infos[j].uses - p_written
        p_written |= infos[j].defs
    p_exposed -= {("s", 126), ("s", 127)}
    c_written, carried = set(), set()
    for j in c_part:
        carried |= (infos[j].uses - c_written) & p_written
        c_written |= infos[j].defs
    carried -= {scc}
    if not mask <= p_written and mask & c_written:  # the exit mask is computed after the wait: move it first
        early = _state_into_p(body, p_part, c_part, mask)
        return _in_terms_of(pipeline_loop_deep(early, i, depth), early, body) if early is not None else None
    if (not mask <= p_written or c_written & (p_exposed | mask) or carried & p_exposed
            or any(r[0] != "v" for r in carried) or infos[blk.end - 2].defs & p_exposed - mask):
        return None
    preds = [p for p in blk.preds if p != b]
    if preds != [b - 1] or instrs[cfg.blocks[b - 1].end - 1].is_branch or b + 1 >= len(cfg.blocks) or \
            scc in body.live_in[b] or ({x for x in p_written if x[0] == "s"} - mask - {scc}) & body.live_in[b + 1]:
        return None
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    after = cfg.blocks[b + 1].start
    vregs = sorted(r for _, r in carried)
    spans = register_spans(vregs)
    live_carried = any(webs.live_before[after] >> r & 1 for r in vregs)
    fresh = free_vgprs(body, [len(sp) for sp in spans] * (depth - 1))
    pairs = free_pairs(body)
    exit_label = f"{last.label}_deep_exit"
    if fresh is None or len(pairs) < 2 * depth + 1 or exit_label in labels:
        return None
    save, history, finished, temp = pairs[0], pairs[1:depth + 1], pairs[depth + 1:2 * depth], pairs[2 * depth]
    moves = [[]] + [list(zip(spans, fresh[n * len(spans):(n + 1) * len(spans)])) for n in range(depth - 1)]
    items = body.items
    m_text = exit_.operands[2].text
    origin: dict[int, int] = {}     # id(item) -> the instruction of `body` it copies

    def copy(part: range, c: int) -> list[BodyItem] | None:
        out = []
        for j in part:  # the loads of depth - 1 later iterations come before each wait
            text = copy_text(instrs[j], moves[c], (depth - 1) * loads)
            if text is None:
                return None
            out.append(items[body.pos[j]] if text == instrs[j].text() else make_item(text))
            origin[id(out[-1])] = j
        return out

    def remade(it: BodyItem) -> BodyItem:
        new = make_item(it.text)
        origin[id(new)] = origin[id(it)]
        return new

    loads = sum(1 for j in p_part if is_load(infos[j], body.processor))
    copies = [(copy(p_part, c), copy(c_part, c)) for c in range(depth)]
    if any(x is None for pc in copies for x in pc):
        return None
    masked = lambda c: [make_item(f"s_mov_b64 {save}, exec"), make_item(f"s_andn2_b64 exec, exec, {m_text}"),  # noqa: E731
                        *copies[c][0], make_item(f"s_mov_b64 exec, {save}")]
    track = lambda c: [make_item(f"s_and_b64 {temp}, exec, {history[c]}"),  # noqa: E731
                       make_item(f"s_or_b64 {finished[c - 1]}, {finished[c - 1]}, {temp}")] if live_carried and c else []
    fixup = [x for c in range(1, depth) for x in (make_item(f"s_mov_b64 exec, {finished[c - 1]}"), *(
        make_item(f"v_mov_b32_e32 v{r}, v{r - sp[0] + new}") for sp, new in moves[c] for r in sp))] + [
        make_item("s_mov_b64 exec, 0")] if live_carried else []
    prologue = [make_item(f"s_mov_b64 {finished[c]}, 0") for c in range(depth - 1) if live_carried]
    prologue += [remade(it) for it in copies[0][0]]
    for t in range(1, depth - 1):  # the exit masks of the first iterations, each in its copy's slot
        prologue += [make_item(f"s_mov_b64 {history[t - 1]}, {m_text}"), *masked(t)]
    loop: list[BodyItem] = []
    for c in range(depth):  # iteration j = c (mod depth) keeps M_(j+depth-2) in slot (c+depth-2) % depth
        loop += [make_item(f"s_mov_b64 {history[(c + depth - 2) % depth]}, {m_text}"), *masked((c + depth - 1) % depth),
                 *copies[c][1], *track(c), make_item(f"s_andn2_b64 exec, exec, {history[c]}"),
                 make_item(f"s_cbranch_execz {exit_label}") if c < depth - 1 else items[body.pos[blk.end - 1]]]
    leave = [BodyItem(f"{exit_label}:", label=exit_label), make_item("s_waitcnt vmcnt(0)"), *fixup]
    head = body.pos[cfg.blocks[b - 1].end - 1] + 1
    new = body.replace([*items[:head], *prologue, *items[head:body.pos[i]], *loop, *leave,
                        *items[body.pos[blk.end - 1] + 1:]])
    if not new.no_worse(body):
        return None
    return described(new, _sections(head, prologue, body.pos[i] - head, loop, leave), depth,
                     cfg.blocks[b - 1].end - 1, i, origin)


def register_spans(regs: list[int]) -> list[range]:
    """Consecutive runs of register numbers (each run renamed as one even-aligned tuple)."""
    out: list[range] = []
    for r in regs:
        if out and out[-1].stop == r:
            out[-1] = range(out[-1].start, r + 1)
        else:
            out.append(range(r, r + 1))
    return out


def _sections(head: int, prologue: list, between: int, loop: list, leave: list) -> tuple[list[range], range]:
    """(run once per entry, run once per unrolled group): the item positions of a pipelined loop's prologue
    (inserted at `head`) and exit, and of its unrolled body (`between` items after the prologue)."""
    loop_at = head + len(prologue) + between
    leave_at = loop_at + len(loop)
    return [range(head, head + len(prologue)), range(leave_at, leave_at + len(leave))], range(loop_at, leave_at)


def described(new: Body, sections: tuple[list[range], range], unroll: int, entry: int, start: int,
              origin: dict[int, int]) -> Body:
    """`new` with its executions described for predictions (`Body.counts`, `Body.traffic`, in the parent's
    instruction indices). Of `sections`' item positions, the first list's (prologue, exit) run once per entry to the
    loop, as often as the parent's instruction `entry` (the preheader's last); the range's (the unrolled or versioned
    body) once per `unroll` executions of the parent's loop head `start`. An item copying a parent instruction
    (`origin`) has that instruction's traffic."""
    once, looped = sections
    for n, p in enumerate(new.pos):
        if p in looped:
            new.counts[n] = ((start, 1.0 / unroll),)
        elif any(p in r for r in once):
            new.counts[n] = ((entry, 1.0),)
        j = origin.get(id(new.items[p]))
        if j is not None:
            new.traffic[n] = (j, 1.0)
    return new


def _in_terms_of(new: Body | None, early: Body, body: Body) -> Body | None:
    """`new`, described in terms of `early` (`body` with instructions moved, the same objects), described in terms
    of `body`'s instructions; a term naming an instruction `body` lacks goes."""
    if new is None:
        return None
    index = {id(ins): n for n, ins in enumerate(body.instructions)}
    at = lambda m: index.get(id(early.instructions[m]))  # noqa: E731
    counts = {n: tuple((at(m), c) for m, c in terms if at(m) is not None) for n, terms in new.counts.items()}
    new.counts = {n: terms for n, terms in counts.items() if terms}
    new.traffic = {n: (at(m), f) for n, (m, f) in new.traffic.items() if at(m) is not None}
    return new


def pipeline_loop_deepest(body: Body, i: int) -> Body | None:
    """`pipeline_loop_deep` at the deepest depth of DEEPEST the loop's free SGPR pairs, free VGPRs and
    vmcnt range allow. Where one wave's loop is its kernel's critical path (a few workgroups, each
    walking a long row), every iteration more in flight hides more of a load's latency; where waves
    per SIMD bound the kernel, the extra copies' registers may cost occupancy: the timing gate decides."""
    return next((new for depth in DEEPEST if (new := pipeline_loop_deep(body, i, depth)) is not None), None)
