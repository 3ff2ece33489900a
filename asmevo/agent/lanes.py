"""Which writes a VGPR read may see, lane by lane.

A VGPR write under a partial EXEC leaves the other lanes' older values, so a read may see several
writes. Walking back from the read, a write *covers* it when EXEC at the read is certainly a subset
of EXEC at the write: every lane the read sees was written there (or later), so nothing older shows
through on that path. The subset is proved by a forward dataflow from the write over the masks
compiled code builds (LLVM `SILowerControlFlow`): an SGPR pair is *within* the write's EXEC when it
was saved from or compared under such an EXEC, or combined from such pairs; EXEC stays within it
while it is only narrowed (`s_and_saveexec`, `v_cmpx`, `s_and`/`s_andn2` of EXEC) or restored from
a pair within it (`s_or_b64 exec, exec, S`). Executing the write again restarts the facts (the read
sees its latest execution). Everything else that writes EXEC or a pair forgets what was known.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache

from ..isa.operands import SPECIAL_PAIRS
from ..isa.regs import reads_destination
from .body import Body
from .webs import ENTRY, webs_of

_EXEC = SPECIAL_PAIRS["exec"]
_EXEC_REGS = frozenset({("s", _EXEC), ("s", _EXEC + 1)})
_State = tuple[bool, frozenset]  # (EXEC within the write's EXEC, pairs within it)


def _pair(op) -> int | None:
    span = op.sgpr_range()
    return span[0] if span is not None and len(span) == 2 and span[0] % 2 == 0 else None


def _within(op, state: _State) -> bool:
    """Whether a 64-bit source operand is within the write's EXEC (the constant 0 is: the empty set)."""
    exec_within, pairs = state
    if op.kind == "imm":
        return op.value == 0
    p = _pair(op)
    return p is not None and (exec_within if p == _EXEC else p in pairs)


def _step(body: Body, k: int, state: _State) -> _State:
    """The facts after instruction k, given those before it."""
    ins, info = body.instructions[k], body.infos[k]
    exec_within, pairs = state
    m, ops = ins.mnemonic, ins.operands
    written = {r for kind, r in info.defs if kind == "s"}
    kept = frozenset(p for p in pairs if p not in written and p + 1 not in written)
    if not written:
        return exec_within, kept
    dst = _pair(ops[0]) if ops else None
    if m.startswith("v_cmp"):  # a compare writes 0 for the inactive lanes; v_cmpx narrows EXEC
        return exec_within, kept | ({dst} if exec_within and dst not in (None, _EXEC) else set())
    if m.endswith("_saveexec_b64") and len(ops) == 2:  # the pair keeps the old EXEC
        src = _within(ops[1], state)
        new_exec = {"s_and_saveexec_b64": exec_within or src, "s_andn2_saveexec_b64": src,
                    "s_or_saveexec_b64": exec_within and src}.get(m, False)
        return new_exec, kept | ({dst} if exec_within and dst is not None else set())
    if m in ("s_and_b64", "s_andn2_b64", "s_or_b64", "s_xor_b64") and len(ops) == 3:
        a, b = _within(ops[1], state), _within(ops[2], state)
        result = {"s_and_b64": a or b, "s_andn2_b64": a, "s_or_b64": a and b, "s_xor_b64": a and b}[m]
    elif m == "s_mov_b64" and len(ops) == 2:
        result = _within(ops[1], state)
    else:
        result = False
    if dst == _EXEC:
        return result, kept
    if info.defs & _EXEC_REGS:
        return False, kept
    return exec_within, kept | ({dst} if result and dst is not None else set())


class Lanes:
    """The question above for one body (`succ`: its instruction successors, `VgprWebs.succ`), each write's
    facts computed once."""

    def __init__(self, body: Body, succ: list[list[int]]):
        self.body, self.succ = body, succ
        self.preds: list[list[int]] = [[] for _ in succ]
        for i, ss in enumerate(succ):
            for s in ss:
                self.preds[s].append(i)
        self._within: dict[int, list[bool]] = {}

    def covers(self, w: int, r: int) -> bool:
        """Whether EXEC at read r is within EXEC at write w on every path from w to r (w restarting the facts)."""
        if w not in self._within:
            self._within[w] = self._exec_within_after(w)
        return self._within[w][r]

    def _exec_within_after(self, w: int) -> list[bool]:
        """Per instruction, whether EXEC before it is within EXEC at w on every path from w."""
        state_in: list[_State | None] = [None] * len(self.succ)
        fresh: _State = (True, frozenset())
        work = list(self.succ[w])
        for j in work:
            state_in[j] = fresh
        while work:
            j = work.pop()
            out = fresh if j == w else _step(self.body, j, state_in[j])
            for s in self.succ[j]:
                old = state_in[s]
                new = out if old is None else (old[0] and out[0], old[1] & out[1])
                if new != old:
                    state_in[s] = new
                    work.append(s)
        return [st is not None and st[0] for st in state_in]

    def walk_back(self, r: int, stops: Callable[[int], bool]) -> Iterator[int]:
        """The instructions on the paths reaching r (ENTRY: the wave's start), each once, met walking back from r;
        the walk goes on past one only when `stops` says no for it."""
        preds, seen, work = self.preds, set(), list(self.preds[r]) + ([ENTRY] if r == 0 else [])
        while work:
            j = work.pop()
            if j in seen:
                continue
            seen.add(j)
            yield j
            if j != ENTRY and not stops(j):
                work.extend(preds[j] + ([ENTRY] if j == 0 else []))

    def reaching_writes(self, r: int, reg: int) -> set[int]:
        """The writes of VGPR `reg` whose values a lane may see at instruction r (ENTRY: the wave's start):
        walking back from r, every write met, stopping at a whole-register write that covers r."""
        body = self.body
        writes = lambda j: ("v", reg) in body.infos[j].defs
        covering = lambda j: (writes(j) and not reads_destination(body.instructions[j], body.processor)
                              and self.covers(j, r))
        return {j for j in self.walk_back(r, covering) if j == ENTRY or writes(j)}


@lru_cache(maxsize=8)
def lanes_of(body: Body) -> Lanes:
    """The (cached, with each write's facts as they are computed) lane analysis of a body; raises NotAnalysable."""
    return Lanes(body, webs_of(body).succ)
