"""One compare for several range checks of one index. A Triton row loop checks each of its chunks' elements
against the row's length N, each element's index Y built from one lane index X, the loop's uniform start s and
the chunk's constant c:

    v_or_b32 Z, 0x100, X        (once, before the loop: Z = X | c)
    v_or_b32 Y, s, Z            (in the loop: Y = s | X | c)
    v_cmp_gt_i32 M, N, Y        (M: Y < N)

Every such check of one W = s | X (or W = s + X, or W = X alone) and one N passes where W < N - cmax, cmax the
largest c of them (signed; no lane passes when N - cmax underflows). Each Y is W | c or W + c (mod 2^32) with
0 <= c <= cmax, and as integers W | c <= W + c when W >= 0; when W < 0, W | c is negative too and at most W + c
once both are read signed. So Y <= W + cmax < N, and W + c cannot wrap since it stays below N <= INT_MAX.

`range_summaries` finds such groups among a block's range compares, with the checks' values valid where the
summary runs; `version_range_selects` tests the summary in their place."""
from __future__ import annotations

from dataclasses import dataclass

from ..isa.operands import Operand
from ..isa.regs import EXEC, operand_regs
from .body import Body
from .ops_rebase import row_offset
from .ops_version import affine_summary, less_than

_JOINS = {"v_or_b32": "or", "v_add_u32": "add"}


@dataclass(frozen=True)
class Check:
    """Compare k tests Y < N with Y = W | c or W + c, W = s <join> X (X alone when `join` is None); `offset` the
    block's instruction writing Y (None when Y is X) and `reads` the registers it reads, which must hold their
    values where the summary runs."""

    k: int
    offset: int | None
    join: str | None
    s: str | None
    x: str
    n: Operand
    c: int
    reads: tuple[Operand, ...]

    @property
    def key(self) -> tuple:
        return self.join, self.s, self.x, self.n.text


def _single_vgpr(op: Operand) -> bool:
    return op.kind == "vgpr" and op.count == 1 and not (op.neg or op.abs)


def _steady(body: Body, regs: set, d: int, k: int) -> bool:
    """No path from instruction d to compare k's block writes `regs` (writes before d in its block aside)."""
    cfg = body.cfg
    bd, bk = cfg.block_of[d], cfg.block_of[k]
    between = cfg.reach(bd) & (cfg.reach(bk, backward=True) | {bk})
    return not any(info.defs & regs and (cfg.block_of[w] == bd and w > d or
                                         cfg.block_of[w] != bd and cfg.block_of[w] in between)
                   for w, info in enumerate(body.infos))


def _invariant_offset(body: Body, z: Operand, k: int, join: str) -> tuple[Operand, int] | None:
    """(X, c) when VGPR z holds X <join> c in every lane compare k's block runs: an offset writing it in another
    block runs before k on every path, and no path from there to k's block writes z, X or EXEC."""
    for dz in body.writers(z):
        if body.cfg.block_of[dz] != body.cfg.block_of[k] and body.dominates(dz, k):
            x, c, ored = row_offset(body, dz)
            if x is not None and ored == (join == "or") and \
                    _steady(body, operand_regs(z) | operand_regs(x) | EXEC, dz, k):
                return x, c
    return None


def affine_check(body: Body, k: int) -> Check | None:
    """Compare k as a `Check` (see the module docstring), or None."""
    compared = less_than(body, k)
    if compared is None:
        return None
    n, y = compared
    d = body.last_writer(y, k, body.cfg.blocks[body.cfg.block_of[k]].start)
    if d is None:
        return Check(k, None, None, None, y.text, n, 0, (y,))
    x, c, _ = row_offset(body, d)
    if x is not None:
        return Check(k, d, None, None, x.text, n, c, (x,))
    join, dsrcs = _JOINS.get(body.infos[d].base), body.infos[d].srcs
    if join is None or body.instructions[d].modifiers or len(dsrcs) != 2 or body.infos[d].defs != operand_regs(y):
        return None
    for s, z in (dsrcs, dsrcs[::-1]):
        if s.kind == "sgpr" and s.count == 1 and not (s.neg or s.abs) and _single_vgpr(z):
            x, c = _invariant_offset(body, z, k, join) or (z, 0)
            return Check(k, d, join, s.text, x.text, n, c, (s, z, x))
    return None


def _holds(body: Body, check: Check, at: int) -> bool:
    """The check's values hold at instruction `at` of its block (where the summary runs): nothing between `at` and
    the offset writes what the offset reads or EXEC, or waits (a load's value may arrive there), and nothing from
    `at` to the compare writes N."""
    first = check.k if check.offset is None else check.offset
    regs = set().union(EXEC, *map(operand_regs, check.reads))
    return not any(body.infos[j].defs & regs or body.infos[j].base == "s_waitcnt"
                   for j in range(min(at, first), max(at, first))) and \
        not any(body.infos[j].defs & operand_regs(check.n) for j in range(at, check.k))


@dataclass(frozen=True)
class Summary:
    """A group of checks of one W and N, tested by one compare."""

    checks: tuple[Check, ...]

    def lines(self, w: str | None, bound: str, mask: str) -> list[str]:
        """W into VGPR `w` (when it joins s and X), then the one compare, into `mask` (`bound` an SGPR)."""
        ch = self.checks[0]
        join = [] if ch.join is None else [f"v_{ch.join}_{'b32' if ch.join == 'or' else 'u32'}_e32 {w}, {ch.s}, {ch.x}"]
        return join + affine_summary(w or ch.x, ch.n.text, max(c.c for c in self.checks), bound, mask)


def affine_checks_of(body: Body, compares: list[int]) -> list[Check]:
    """The `Check`s among `compares`."""
    return [ch for k in compares if (ch := affine_check(body, k)) is not None]


def range_summaries(body: Body, checks: list[Check], at: int) -> list[Summary]:
    """The groups of two or more of `checks` that one summary at instruction `at` can test."""
    groups: dict[tuple, list[Check]] = {}
    for check in checks:
        if _holds(body, check, at):
            groups.setdefault(check.key, []).append(check)
    return [Summary(tuple(g)) for g in groups.values() if len(g) > 1]
