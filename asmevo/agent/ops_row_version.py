"""Row loops versioned by their index: a row loop (softmax, the norms, reductions) runs one element per lane per
iteration and leaves a lane once its index passes the row's end:

    L: ...; v_add_u32 I, C, I; v_cmp_le_i32 X, N, I; s_or_b64 M, X, M; ...; s_andn2_b64 exec, exec, M
       s_cbranch_execnz L

(or a counter counting down to zero: `v_add_u32 I, -d, I; v_cmp_eq_u32 X, 0, I`). Every iteration pays for the
index update, the compare, the exit mask, the EXEC update and the branch, though a lane leaves only in its last one.

Rewritten, the loop first tests, once per U iterations, whether every active lane stays in the loop through
the next U - 1 of them (for a row, I + (U - 1) * C < N in true integers, so no index update wraps and no compare
holds; for a counter, I > (U - 1) * d unsigned) and has not left already (no lane of EXEC in M). If so it runs
U - 1 copies of the body without the index, compare, exit-mask and EXEC updates and branch (each would leave
M and EXEC as they were: a compare writes 0 for lanes outside EXEC), one add of (U - 1) * C to the index, and
then the original body once; otherwise only the original body, which branches back to the test:

    L:    s_sub_i32 r, N, (U-1)*C; s_cselect_b32 r, 0x80000000, r    (a signed overflow: no lane passes)
          v_cmp_lt_i32 T, I, r; s_andn2_b64 T, T, M; s_andn2_b64 T, exec, T; s_cbranch_scc1 Lslow
          v_add_u32 I, (U-1)*C, I; (U - 1) x [body without index, compare, exit mask, EXEC update, branch]
    Lslow: the original body; s_cbranch_execnz L

Legal when I is written only by its update and read only by it and the compare, the compare's result is read
only by the exit-mask OR (until it is written again), nothing reads the SCC that OR sets, N is not written in
the loop, and SCC is not live into it. Where the loop holds other scalar work the test also sends a wave with
an empty EXEC to the original body, so that work runs as often as before. In the copies every copy's loads (and
the instructions computing their addresses) come first, so U - 1 iterations' loads are in flight before the
first wait (`_staged`), where that keeps the kernel's waves per SIMD."""
from __future__ import annotations

from dataclasses import dataclass

from ..isa.regs import EXEC, SCC
from .body import Body, BodyItem, make_item
from .ops_pipeline import copy_text, described, loop_parts, register_spans
from .ops_regs import vgpr_limit
from .ops_rename import free_pairs, free_sgprs, free_vgprs
from .ops_sched import is_load

UNROLLS = (16, 8)  # iterations per test, widest first: the test costs six instructions, each copy saves five or
                   # more, and each staged copy's loads add to those in flight (and its registers to the wave's)
_ROW_EXITS = {"v_cmp_le_i32": 1, "v_cmp_ge_i32": 0}  # the index's operand position in a compare "I >= N"
_COUNTER_EXITS = ("v_cmp_eq_u32", "v_cmp_eq_i32")


@dataclass(frozen=True)
class RowExit:
    """A row loop's exit: the index update `update` (`v_add_u32 I, step, I`), the compare `test` of I against
    `bound` (N; "" for a counter tested against 0), the exit-mask OR `merge`; `index` and `mask` name I and M."""
    update: int
    test: int
    merge: int
    index: str
    bound: str
    step: int
    mask: str


def row_exit(body: Body, start: int, end: int) -> RowExit | None:
    """The exit of the loop body [start, end) whose `s_andn2_b64 exec, exec, M` is at `end`; None when it is not
    an index test this operator can version."""
    instrs, infos = body.instructions, body.infos
    m = set(infos[end].uses) - EXEC
    m_text = instrs[end].operands[2].text
    writes_m = [j for j in range(start, end) if infos[j].defs & m]
    if len(writes_m) != 1 or instrs[writes_m[0]].mnemonic != "s_or_b64":
        return None
    o = writes_m[0]
    srcs = [op.text for op in instrs[o].operands]
    x = set(infos[o].uses) - m
    cmps = [j for j in range(start, o) if infos[j].defs & x]
    if srcs[0] != m_text or m_text not in srcs[1:] or not x or not cmps or infos[cmps[-1]].defs != x:
        return None
    c = cmps[-1]
    base = infos[c].base
    ops = list(instrs[c].operands[-2:])
    texts = [op.text for op in ops]
    if base in _ROW_EXITS:
        at = _ROW_EXITS[base]
        if ops[1 - at].kind not in ("sgpr", "imm") or ops[1 - at].count != 1:  # N uniform: one SGPR or a constant
            return None
        bound = texts[1 - at]
    elif base in _COUNTER_EXITS and "0" in texts:
        at, bound = 1 - texts.index("0"), ""
    else:
        return None
    index = texts[at]
    i_reg = [r for r in infos[c].uses if r[0] == "v"]
    if len(i_reg) != 1 or ops[at].kind != "vgpr" or ops[at].count != 1:
        return None
    updates = [j for j in range(start, end) if i_reg[0] in infos[j].defs]
    if len(updates) != 1 or updates[0] > c or infos[updates[0]].base != "v_add_u32" or instrs[updates[0]].modifiers:
        return None
    u = updates[0]
    dst, *srcs = instrs[u].operands
    steps = [a.value for a, b in (srcs, srcs[::-1]) if a.kind == "imm" and b.text == index]
    if dst.text != index or not steps or (steps[0] <= 0 if bound else steps[0] >= 0):
        return None
    step = steps[0]
    if [j for j in range(start, end) if i_reg[0] in infos[j].uses] != [u, c]:
        return None
    bound_regs = set(infos[c].uses) - {i_reg[0]} - EXEC
    if any(infos[j].defs & bound_regs for j in range(start, end + 1)):
        return None
    return RowExit(u, c, o, index, bound, step, m_text)


def _reads_only_or(body: Body, start: int, end: int, c: int, o: int) -> bool:
    """Whether the compare's result and the OR's SCC are read by nothing but the OR, and nothing reads the result
    before the compare writes it."""
    infos = body.infos
    x = infos[c].defs
    for regs, at, reader in ((x, c, o), ({SCC}, o, None)):
        live = set()
        for j in range(start, end):
            if j != reader and infos[j].uses & regs and (j <= at or live):
                return False
            if j == at:
                live = set(regs)
            elif infos[j].defs & regs:
                live -= infos[j].defs
    return True


def version_row_loop(body: Body, i: int, unroll: int | None = None) -> Body | None:
    """Version the row loop holding instruction i (module docstring), `unroll` iterations per test; by default
    the widest of UNROLLS whose staged copies fit below the VGPRs that keep the kernel's waves per SIMD, else
    the narrowest with its copies unstaged."""
    cfg, instrs, infos = body.cfg, body.instructions, body.infos
    b = cfg.block_of[i]
    blk = cfg.blocks[b]
    if loop_parts(body, blk.start) is None:
        return None
    start, end = blk.start, blk.end - 2
    ex = row_exit(body, start, end)
    if ex is None or SCC in body.live_in[b] or not _reads_only_or(body, start, end, ex.test, ex.merge):
        return None
    slow = f"{instrs[blk.end - 1].label}_row_slow"
    _, labels, _ = body.index
    pairs = free_pairs(body)
    if not pairs or slow in labels:
        return None
    t = pairs[0]
    lo = int(t[2:t.index(":")])
    r = next((s for s in free_sgprs(body) if s not in (f"s{lo}", f"s{lo + 1}")), None)
    if r is None:
        return None
    items = body.items
    lite = [j for j in range(start, end) if j not in (ex.update, ex.test, ex.merge)]
    widths = (unroll,) if unroll else UNROLLS
    staged = next(((u, c) for u in widths if (c := _staged(body, lite, u - 1)) is not None), None)
    width, fast = staged or (widths[-1], [items[body.pos[j]] for j in lite] * (widths[-1] - 1))
    ahead = (width - 1) * ex.step
    if ex.bound:
        test = [f"s_sub_i32 {r}, {ex.bound}, {ahead}", f"s_cselect_b32 {r}, 0x80000000, {r}",
                f"v_cmp_lt_i32_e64 {t}, {ex.index}, {r}"]
    else:
        test = [f"s_mov_b32 {r}, {-ahead}", f"v_cmp_lt_u32_e64 {t}, {r}, {ex.index}"]
    test += [f"s_andn2_b64 {t}, {t}, {ex.mask}", f"s_andn2_b64 {t}, exec, {t}", f"s_cbranch_scc1 {slow}"]
    if any(infos[j].family == "salu" for j in range(start, end) if j != ex.merge):
        test.append(f"s_cbranch_execz {slow}")
    head = [make_item(text) for text in test] + [make_item(f"v_add_u32_e32 {ex.index}, {ahead}, {ex.index}")]
    original = [items[body.pos[j]] for j in range(start, blk.end)]
    at = body.pos[start]
    versioned = [*head, *fast, BodyItem(f"{slow}:", label=slow), *original]
    new = body.replace([*items[:at], *versioned, *items[body.pos[blk.end - 1] + 1:]])
    if not new.no_worse(body):
        return None
    # every wave passes the test at each group of `width` iterations (rows that span whole groups), so the test,
    # the index add, each fast copy and the original body run once per group
    return described(new, ([], range(at, at + len(versioned))), width, start, start, {})


def _staged(body: Body, lite: list[int], n: int) -> list[BodyItem] | None:
    """`n` copies of the loop body `lite` with every copy's loads (and the instructions computing their
    addresses) first, in order, then every copy's other work: the loads of all `n` iterations are in flight
    before the first wait. A register a load part writes and another part reads is renamed apart in each copy
    (fresh VGPRs), and each wait allows the loads of the later copies issued before it (stores in between only
    make it stricter). None when the parts cannot be so separated: the other work writes what the load part
    reads or writes, reads an SGPR it writes, or reads a register a later load-part instruction writes."""
    instrs, infos = body.instructions, body.infos
    w = next((j for j in lite if instrs[j].mnemonic == "s_waitcnt"), None)
    loads = [j for j in lite if is_load(infos[j], body.processor)]
    if w is None or not loads or any(j > w for j in loads):
        return None
    part, need = set(loads), set().union(*(infos[j].uses for j in loads))
    for j in reversed([j for j in lite if j < w]):
        if j not in part and infos[j].defs & need:
            part.add(j)
            need |= infos[j].uses
    p = [j for j in lite if j in part]
    c = [j for j in lite if j not in part]
    written, exposed = set(), set()
    for j in p:
        exposed |= infos[j].uses - written
        written |= infos[j].defs
    c_uses = set().union(*(infos[j].uses for j in c))
    c_defs = set().union(*(infos[j].defs for j in c))
    carried = c_uses & written
    if (c_defs & (exposed | (written - carried)) or carried & exposed or any(r[0] != "v" for r in carried)
            or any(infos[y].defs & (infos[x].uses | infos[x].defs) or infos[x].defs & infos[y].uses
                   for x in c if x < w for y in p if y > x)):
        return None
    regs = register_spans(sorted(r for _, r in carried))
    fresh = free_vgprs(body, [len(sp) for sp in regs] * n)
    if fresh is None or any(f + len(sp) > vgpr_limit(body) for f, sp in zip(fresh, regs * n)):
        return None
    per_load = len(loads)
    items = body.items

    def copy(part: list[int], k: int) -> list[BodyItem] | None:
        moves = list(zip(regs, fresh[k * len(regs):(k + 1) * len(regs)]))
        out = []
        for j in part:
            text = copy_text(instrs[j], moves, per_load * (n - 1 - k))
            if text is None:
                return None
            out.append(items[body.pos[j]] if text == instrs[j].text() else make_item(text))
        return out

    parts = [copy(p, k) for k in range(n)] + [copy(c, k) for k in range(n)]
    return None if any(x is None for x in parts) else [it for x in parts for it in x]
