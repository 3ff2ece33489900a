"""Coalescing vector copies: a register allocator that has to deliver a value in a register tuple (a packed
operand, a 64-bit pair) or to break a cycle of register reuse often computes it in one VGPR and copies it to
another (`v_mov_b32 vA, vB`), one VALU issue per copy.

When B's value dies at the copy (nothing reads it afterwards), the value the copy starts can live in B itself:
its web (`asmevo.agent.webs`: every write and read of that one value of A) is renamed to B, and the copy, now
`v_mov_b32 vB, vB`, changes nothing and goes. The web analysis decides legality: the web may move to B only if B
is free wherever the value lives, so B's own value must be dead after the copy; other untupled values in B until
the copied value's last read move to registers free wherever they live (below the occupancy limit). A value read
inside a register tuple moves with its tuple group, all by the one distance B - A (even, keeping 64-bit
alignment); a value that may come from the wave's start or is read across lanes stays where it is. The copy's
value is what its reads see: the web analysis lets a copy under a partial EXEC start a web of its own only when
every read it reaches runs under that EXEC, so those reads see only lanes it wrote, where B holds the same value."""
from __future__ import annotations

from ..isa.instruction import Instruction
from .body import Body
from .ops_regs import vgpr_limit
from .pad import hazard_nops
from .webs import ENTRY, NotAnalysable, VgprWebs, Web, webs_of

_MOVES = ("v_mov_b32", "v_mov_b32_e32", "v_mov_b32_e64")
_PAIR_COPY = ("op_sel:[0,1]",)   # v_pk_mov_b32 vD, vS, vS op_sel:[0,1]: D.lo = S.lo, D.hi = S.hi


def _copied(ins: Instruction) -> list[tuple[int, int]] | None:
    """The (A, B) register pairs `v_mov_b32 vA, vB` or `v_pk_mov_b32 v[A:A+1], v[B:B+1], v[B:B+1] op_sel:[0,1]`
    copies (A may be B)."""
    ops = ins.operands
    if ins.mnemonic in _MOVES and not ins.modifiers and len(ops) == 2:
        d, s = ops
        if d.kind == s.kind == "vgpr" and d.count == s.count == 1 and not (s.neg or s.abs):
            return [(d.index, s.index)]
    if ins.mnemonic == "v_pk_mov_b32" and tuple(ins.modifiers) == _PAIR_COPY and len(ops) == 3:
        d, s, t = ops
        if d.kind == s.kind == "vgpr" and d.count == 2 and s.text == t.text and not (s.neg or s.abs):
            return [(d.index, s.index), (d.index + 1, s.index + 1)]
    return None


def vector_copy(body: Body, i: int) -> list[tuple[int, int]] | None:
    """The (A, B) register pairs of a plain copy between different VGPRs: `v_mov_b32 vA, vB`, or the two halves of a
    64-bit `v_pk_mov_b32 v[A:A+1], v[B:B+1], v[B:B+1] op_sel:[0,1]`."""
    pairs = _copied(body.instructions[i])
    return pairs if pairs and pairs[0][0] != pairs[0][1] else None


def _changes_nothing(ins: Instruction) -> bool:
    """A copy of registers onto themselves."""
    pairs = _copied(ins)
    return bool(pairs) and all(a == b for a, b in pairs)


class _Plan:
    """Registers being reassigned: `taken` (register -> points occupied under the plan), `moves` (id(web) -> new
    register)."""

    def __init__(self, webs: VgprWebs, limit: int):
        self.webs, self.limit = webs, limit
        self.taken = {r: webs.occupancy(r) for r in range(limit)}
        self.moves: dict[int, int] = {}

    def _fixed(self, w: Web) -> bool:
        """`w` may hold the wave's start value or is already moved."""
        return w.entry or ENTRY in w.defs or id(w) in self.moves

    def place(self, web: Web, distance: int) -> bool:
        """Move `web` and its tuple group by `distance`, first moving the untupled values in their way to free
        registers; False (the plan unchanged) when that cannot be done."""
        group = self.webs.tuple_group(web) if web.tupled else [web]
        if group is None or web.stuck or distance % 2 and web.tupled:
            return False
        if any(self._fixed(m) for m in group):
            return False
        if any(not 0 <= m.reg + distance < self.limit for m in group):
            return False
        members = {id(m) for m in group}
        blockers = {id(w): w for m in group for w in self.webs.webs
                    if w.reg == m.reg + distance and id(w) not in members and w.occupied & m.occupied}
        if any(w.pinned or self._fixed(w) for w in blockers.values()):
            return False
        saved = dict(self.taken), dict(self.moves)
        for w in [*group, *blockers.values()]:
            self.taken[w.reg] &= ~w.occupied
        for m in group:
            if self.taken[m.reg + distance] & m.occupied:
                break
            self.taken[m.reg + distance] |= m.occupied
            self.moves[id(m)] = m.reg + distance
        else:
            for w in blockers.values():
                free = next((r for r in range(self.limit) if not self.taken[r] & w.occupied), None)
                if free is None:
                    break
                self.taken[free] |= w.occupied
                self.moves[id(w)] = free
            else:
                return True
        self.taken, self.moves = saved
        return False


def coalesce_copies(body: Body, i: int) -> Body | None:
    """Rename the value each copy of instruction i's block starts into the copy's source register, where that
    fits (see the module docstring), and delete the copies that became `v_mov_b32 vB, vB`; None unless the one at
    i goes."""
    if vector_copy(body, i) is None:
        return None
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    plan = _Plan(webs, vgpr_limit(body))
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    for j in [i, *range(blk.start, blk.end)]:
        for a, b in vector_copy(body, j) or ():
            web = webs.def_web.get((j, a))
            if web is not None and id(web) not in plan.moves and not plan.place(web, b - a) and j == i:
                return None
    try:
        renamed = webs.renamed(plan.moves)
    except ValueError:
        return None
    items = [it for it in renamed.items if it.ins is None or it.raw or not _changes_nothing(it.ins)]
    if len(items) == len(renamed.items):
        return None
    return hazard_nops(body.replace(items), body)


