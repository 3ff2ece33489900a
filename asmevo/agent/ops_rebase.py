"""Rebased row addresses: a block's 64-bit addresses of several rows of one matrix, each from the previous one by
a uniform delta instead of a 64-bit multiply.

Compiled code addresses element (X + c, col) of a row-major matrix once per row offset c (GEMM epilogues: each
lane stores one column of several rows, X + c for constants c >= 0):

    v_add_u32 Y, c, X               (or v_or_b32 Y, c, X; or Y = X for c = 0)
    v_mad_i64_i32 T, C, N, Y, 0     T = sext(Y) * N, the row's element offset (C: an overflow pair nobody reads)
    v_lshl_add_u64 A, T, k, B       A = (T << k) + B, B the column's address

two VALU instructions and a 64-bit multiply per row. Where X + c does not wrap (X < 2^31 - c) and X | c is X + c
(X has none of c's bits), sext(Y) = sext(X) + c, so A_c = A_c' + ((c - c') * N << k) modulo 2^64: a uniform
64-bit delta from the row before (|sext(X) * N| < 2^62, so the multiply is exact either way).

`rebase_row_addresses` tests once, at the group's first instruction, that every active lane has X < 2^31 - cmax
(cmax the largest c) and X & m = 0 (m: the OR of the c's of the `v_or_b32` rows), with each distinct delta
(c - c') * N << k computed into an SGPR pair there; then the rest of the block runs with the first row's address
written to a fresh VGPR pair F instead of A, each later row's as `v_lshl_add_u64 F, F, 0, D` (D its delta), every
reader of a row's address reading F, and the later rows' multiplies (and the offsets only they read) gone;
otherwise the rest as it was (`versioning`). In a GEMM epilogue X is a tile's row, far below 2^31.

Legal when: N, X and B hold their values from the test to each row's read of them; each T is read by its
`v_lshl_add_u64` alone and each C by nobody; each row's address is read (whole) only before the next row's
`v_lshl_add_u64` and nowhere after; nothing writes EXEC from the test to the block's end; a VGPR pair (and a VGPR
when some row is a `v_or_b32`), two SGPR pairs plus one per distinct delta and two SGPRs are free.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..isa.operands import Operand, parse_operand
from ..isa.regs import EXEC, operand_regs
from .body import Body, make_item
from .ops_rename import free_pairs_and_sgprs, free_vgprs
from .versioning import Tail, dead_in_fast, versioned
from .webs import NotAnalysable, webs_of

MAX_DELTAS = 4     # distinct deltas (SGPR pairs) one group may use
_OFFSETS = ("v_add_u32", "v_or_b32")


def row_offset(body: Body, d: int) -> tuple[Operand | None, int, bool]:
    """(X, c, whether Y is X | c) of `v_add_u32 Y, c, X` or `v_or_b32 Y, c, X` at d (c a constant in [0, 2^31)),
    else (None, 0, False)."""
    srcs = body.infos[d].srcs
    if body.infos[d].base not in _OFFSETS or body.instructions[d].modifiers or len(srcs) != 2:
        return None, 0, False
    for c, x in (srcs, srcs[::-1]):
        if c.kind == "imm" and 0 <= c.value < 1 << 31 and x.kind == "vgpr" and x.count == 1 and not (x.neg or x.abs):
            return x, c.value, body.infos[d].base == "v_or_b32"
    return None, 0, False


@dataclass(frozen=True)
class Row:
    """One row's address: its offset instruction (None when Y is X: Y is no offset of a VGPR), multiply and `v_lshl_add_u64`, its c, whether
    Y is X | c, and the instructions reading its address."""

    offset: int | None
    mad: int
    add: int
    c: int
    ored: bool
    readers: tuple[int, ...]


@dataclass(frozen=True)
class RowGroup:
    """Rows of one X, N, shift k and column address B (operand texts), in order."""

    rows: tuple[Row, ...]
    x: str
    n: str
    shift: int
    b: str

    @property
    def start(self) -> int:
        """The group's first instruction, where the test stands."""
        return min(r.mad if r.offset is None else min(r.offset, r.mad) for r in self.rows)


def _row_at(body: Body, k: int) -> tuple[Row, tuple[str, str, int, str]] | None:
    """The row whose multiply is instruction k and its (X, N, k, B), else None."""
    ins, infos = body.instructions, body.infos
    blk = body.cfg.blocks[body.cfg.block_of[k]]
    srcs = infos[k].srcs
    if infos[k].base != "v_mad_i64_i32" or ins[k].modifiers or len(srcs) != 3 or srcs[2].text != "0":
        return None
    n, y = (srcs[0], srcs[1]) if srcs[1].kind == "vgpr" else (srcs[1], srcs[0])
    if n.kind not in ("sgpr", "imm") or n.count != 1 or y.kind != "vgpr" or y.count != 1 or y.neg or y.abs:
        return None
    users = body.readers(k, blk.end)
    add = users[0] if users is not None and len(users) == 1 else None
    a_srcs = infos[add].srcs if add is not None else ()
    if add is None or infos[add].base != "v_lshl_add_u64" or ins[add].modifiers or len(a_srcs) != 3 or \
            a_srcs[0].text != infos[k].dst[0].text or a_srcs[1].kind != "imm" or a_srcs[2].count != 2 or \
            operand_regs(a_srcs[2]) & infos[k].defs:
        return None
    readers = body.readers(add, blk.end)
    address = operand_regs(infos[add].dst[0])
    if readers is None or any(not any(operand_regs(o) == address for o in infos[j].srcs) for j in readers):
        return None
    d = body.last_writer(y, k, blk.start)
    x, c, ored = (None, 0, False) if d is None else row_offset(body, d)
    if x is None:       # Y itself is X
        x, d = y, None
    return Row(d, k, add, c, ored, tuple(readers)), (x.text, n.text, a_srcs[1].value, a_srcs[2].text)


def row_group(body: Body, i: int) -> RowGroup | None:
    """The group of two or more rows of instruction i's block whose first multiply is i (module docstring), else
    None (also when an earlier multiply of the block is a row of it)."""
    first = _row_at(body, i)
    if first is None:
        return None
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    found = [(k, r) for k in range(blk.start, blk.end) if (r := _row_at(body, k)) is not None and r[1] == first[1]]
    rows = [r for k, (r, _) in found if k >= i]
    if found[0][0] != i or len(rows) < 2 or len({r.c - p.c for p, r in zip(rows, rows[1:])}) > MAX_DELTAS:
        return None
    return RowGroup(tuple(rows), *first[1])


def _holds(body: Body, group: RowGroup) -> bool:
    """N, X and B hold their values from the test to each row's read of them, each row's address is read only
    before the next row's add, and nothing writes EXEC from the test to the block's end."""
    infos, start = body.infos, group.start
    regs = {t: operand_regs(parse_operand(t)) for t in (group.x, group.n, group.b)}
    for r in group.rows:
        reads = ((group.x, r.mad if r.offset is None else r.offset), (group.n, r.mad), (group.b, r.add))
        if any(infos[j].defs & regs[t] for t, at in reads for j in range(start, at)):
            return False
    end = body.cfg.blocks[body.cfg.block_of[start]].end
    return all(max(r.readers, default=r.add) < nxt.add for r, nxt in zip(group.rows, group.rows[1:])) and \
        not any(infos[j].defs & EXEC for j in range(start, end))


def rebase_row_addresses(body: Body, i: int) -> Body | None:
    """Version the rest of the block from the row group of the multiply at i on rebased addresses (module
    docstring); None when there is no such group or a condition fails."""
    group = row_group(body, i)
    if group is None or not _holds(body, group):
        return None
    rows = group.rows
    deltas = list(dict.fromkeys(r.c - p.c for p, r in zip(rows, rows[1:])))
    ored = 0
    for r in rows:
        ored |= r.c if r.ored else 0
    free = free_pairs_and_sgprs(body, 2 + len(deltas), 2)
    vgprs = free_vgprs(body, [2, 1] if ored else [2])
    if free is None or vgprs is None:
        return None
    (mask, other, *pairs), (limit, keep) = free
    f = f"v[{vgprs[0]}:{vgprs[0] + 1}]"
    lines = []
    for d, pair in zip(deltas, pairs):
        lo, hi = (f"s{k}" for k in map(int, pair[2:-1].split(":")))
        lines += [f"s_mul_i32 {lo}, {group.n}, {d}", f"s_mul_hi_i32 {hi}, {group.n}, {d}",
                  f"s_lshl_b64 {pair}, {pair}, {group.shift}"]
    most = max(r.c for r in rows)
    lines += [f"s_mov_b32 {limit}, 0x{(1 << 31) - most:x}" if most else f"s_mov_b32 {limit}, 0x7fffffff",
              f"v_cmp_{'gt' if most else 'ge'}_i32_e64 {mask}, {limit}, {group.x}"]
    if ored:
        lines += [f"v_and_b32_e32 v{vgprs[1]}, 0x{ored:x}, {group.x}", f"v_cmp_eq_u32_e64 {other}, 0, v{vgprs[1]}",
                  f"s_and_b64 {mask}, {mask}, {other}"]
    lines.append(f"s_andn2_b64 {mask}, exec, {mask}")
    delta_of = {r.add: pairs[deltas.index(r.c - p.c)] for p, r in zip(rows, rows[1:])}
    first = rows[0]
    moved = {first.add: f"v_lshl_add_u64 {f}, {body.infos[first.add].srcs[0].text}, {group.shift}, {group.b}",
             **{add: f"v_lshl_add_u64 {f}, {f}, 0, {pair}" for add, pair in delta_of.items()}}
    for r in rows:
        address = body.infos[r.add].dst[0].text
        for j in r.readers:
            moved[j] = _renamed(body, j, address, f)
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    start = group.start
    gone = dead_in_fast(webs, range(start, blk.end), {r.mad for r in rows[1:]}, {r.add for r in rows[1:]})
    fast = [(make_item(moved[j]) if j in moved else body.items[body.pos[j]], j)
            for j in range(start, blk.end) if j not in gone]
    return versioned(body, [Tail(start, lambda slow: [*lines, f"s_cbranch_scc1 {slow}"], fast)], ".Lrows", keep)


def _renamed(body: Body, j: int, address: str, f: str) -> str:
    """Instruction j's text with its source operand `address` spelled `f`."""
    ins = body.instructions[j]
    n_dst = len(body.infos[j].dst)
    ops = [o.text if n < n_dst or o.text != address else f for n, o in enumerate(ins.operands)]
    return " ".join([ins.mnemonic, ", ".join(ops), *ins.modifiers])
