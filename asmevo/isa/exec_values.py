"""Where EXEC is certainly the EXEC the wave started with: a forward dataflow over the values EXEC
takes, following the structured control flow compilers emit (LLVM `SILowerControlFlow`):

* if:   `s_and_saveexec_b64 S, M` saves EXEC in S and narrows it;
* else: `s_xor_b64 C, exec, S` leaves in C the saved lanes EXEC lacks, and
        `s_andn2_saveexec_b64 B, C` swaps to them (B keeps the lanes it leaves);
* end:  `s_or_b64 exec, exec, P` restores EXEC when P together with EXEC is a known EXEC value;
* loop: `s_mov_b64 M, 0`, `s_or_b64 M, vcc, M` (a compare result, so within EXEC) and
        `s_andn2_b64 exec, exec, M` keep "M together with EXEC is the loop's entry EXEC", so the
        `s_or_b64 exec, exec, M` after the loop restores it.

Each EXEC value gets an identity (the wave's start, or the instruction or block creating it). Facts:
a pair *holds* a value; a pair *completes* an EXEC value to another (pair | that EXEC = the other); a
pair lies *within* an EXEC value or *outside* it. Facts name identities, so they survive nested
regions; where edges with different EXEC identities meet, the block gets its own identity and keeps
the facts every incoming edge has about its own EXEC. `s_or_b64 exec, exec, P` with P holding the
starting EXEC also restores it when EXEC never leaves the launch's lanes (`exec_bound`). Any other
write of EXEC makes it an unknown value; any other write of a pair forgets what was known of it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .cfg import CFG
from .exec_bound import exec_within_launch
from .operands import SPECIAL_PAIRS
from .regs import RegInfo

START = "start"
_EXEC = SPECIAL_PAIRS["exec"]


@dataclass(frozen=True)
class _State:
    cur: object
    holds: frozenset = frozenset()      # (pair, value id): the pair equals that EXEC value
    completes: frozenset = frozenset()  # (pair, exec id, value id): pair | EXEC(exec id) = value
    within: frozenset = frozenset()     # (pair, exec id): pair is a subset of that EXEC value
    outside: frozenset = frozenset()    # (pair, exec id): pair and that EXEC value are disjoint

    def held(self, pair) -> object | None:
        return next((v for p, v in self.holds if p == pair), None)

    def completion(self, pair, exec_id) -> object | None:
        return next((v for p, e, v in self.completes if p == pair and e == exec_id), None)


def _pair(op) -> int | str | None:
    if op.text == "exec":
        return "exec"
    span = op.sgpr_range()
    return span[0] if span is not None and len(span) == 2 else None


def _forget(st: _State, written: set[int]) -> _State:
    hit = lambda p: isinstance(p, int) and (p in written or p + 1 in written)  # noqa: E731
    return _State(st.cur, frozenset(x for x in st.holds if not hit(x[0])),
                  frozenset(x for x in st.completes if not hit(x[0])),
                  frozenset(x for x in st.within if not hit(x[0])), frozenset(x for x in st.outside if not hit(x[0])))


def _step(k: int, info: RegInfo, pre: _State, bounded: bool) -> _State:
    """The state after instruction k."""
    base, cur, new = info.base, pre.cur, ("i", k)
    dst = _pair(info.dst[0]) if info.dst else None
    srcs = [_pair(op) for op in info.srcs]
    st = _forget(pre, {r for kind, r in info.defs if kind == "s" and r not in (_EXEC, _EXEC + 1)})
    holds, completes, within, outside = set(st.holds), set(st.completes), set(st.within), set(st.outside)
    exec_id = cur
    if base == "s_and_saveexec_b64" and isinstance(dst, int):
        holds.add((dst, cur))
        completes.add((dst, new, cur))
        exec_id = new
    elif base == "s_andn2_saveexec_b64" and isinstance(dst, int) and isinstance(srcs[0], int):
        target = pre.completion(srcs[0], cur)
        holds.add((dst, cur))
        if target is not None and (srcs[0], cur) in pre.outside:  # EXEC becomes C: the other lanes
            completes.add((dst, new, target))
            outside.add((dst, new))
        exec_id = new
    elif ("s", _EXEC) in info.defs:
        other = [s for s in srcs if s != "exec"]
        exec_id = new
        if base == "s_or_b64" and "exec" in srcs and len(other) == 1 and isinstance(other[0], int):
            p = other[0]
            if pre.completion(p, cur) is not None:
                exec_id = pre.completion(p, cur)
            elif pre.held(p) == START and bounded:
                exec_id = START
        elif base == "s_mov_b64" and isinstance(srcs[0], int) and pre.held(srcs[0]) is not None:
            exec_id = pre.held(srcs[0])
        elif base == "s_andn2_b64" and srcs[:1] == ["exec"] and isinstance(srcs[1], int):
            target = pre.completion(srcs[1], cur)
            if target is not None:
                completes.add((srcs[1], new, target))
    elif isinstance(dst, int):
        if base == "s_mov_b64" and srcs[0] == "exec":
            holds.add((dst, cur))
        elif base == "s_mov_b64" and info.srcs[0].kind == "imm" and info.srcs[0].value == 0:
            completes.add((dst, cur, cur))
            within.add((dst, cur))
            outside.add((dst, cur))
        elif base == "s_mov_b64" and isinstance(srcs[0], int):
            q = srcs[0]
            holds |= {(dst, v) for p, v in pre.holds if p == q}
            completes |= {(dst, e, v) for p, e, v in pre.completes if p == q}
            within |= {(dst, e) for p, e in pre.within if p == q}
            outside |= {(dst, e) for p, e in pre.outside if p == q}
        elif base == "s_or_b64" and dst in srcs and len(srcs) == 2:
            v = srcs[1] if srcs[0] == dst else srcs[0]
            target = pre.completion(dst, cur)
            if target is not None and (v, cur) in pre.within:  # adding lanes of EXEC keeps pair | EXEC
                completes.add((dst, cur, target))
        elif base == "s_xor_b64" and "exec" in srcs and len(srcs) == 2:
            s = srcs[1] if srcs[0] == "exec" else srcs[0]
            held = pre.held(s)
            if isinstance(s, int) and held is not None and pre.completion(s, cur) == held:
                completes.add((dst, cur, held))   # the saved lanes EXEC lacks
                outside.add((dst, cur))
        elif base.startswith("v_cmp_") and not base.startswith("v_cmpx"):
            within.add((dst, cur))  # a compare writes 0 for inactive lanes
    return _State(exec_id, frozenset(holds), frozenset(completes), frozenset(within), frozenset(outside))


def _meet(states: list[_State], block: int) -> _State:
    ids = {s.cur for s in states}
    if len(ids) == 1:
        cur = states[0].cur
        inter = lambda attr: frozenset.intersection(*(getattr(s, attr) for s in states))  # noqa: E731
        return _State(cur, inter("holds"), inter("completes"), inter("within"), inter("outside"))
    here = ("b", block)

    def rekey(s: _State) -> tuple[set, set, set, set]:
        return ({x for x in s.holds}, {(p, here if e == s.cur else e, v) for p, e, v in s.completes},
                {(p, here if e == s.cur else e) for p, e in s.within},
                {(p, here if e == s.cur else e) for p, e in s.outside})

    parts = [rekey(s) for s in states]
    inter = [frozenset(set.intersection(*(p[n] for p in parts))) for n in range(4)]
    return _State(here, *inter)


def launch_exec(instructions, infos: list[RegInfo], cfg: CFG, start: int = 0) -> list[bool]:
    """Per instruction: EXEC certainly equals the EXEC the wave started with when it issues (the wave
    starts at instruction 0; with kernarg preloading also at `start`, with the same registers)."""
    bounded = exec_within_launch(instructions, infos, cfg, start)
    out_state: dict[int, _State] = {}
    entry = _State(START)
    order = cfg.reachable()
    for _ in range(4 * len(cfg.blocks) + 8):
        changed = False
        for b in order:
            blk = cfg.blocks[b]
            incoming = [out_state[p] for p in blk.preds if p in out_state]
            if b == 0:
                incoming.append(entry)
            if not incoming:
                continue
            st = _meet(incoming, b)
            for k in range(blk.start, blk.end):
                st = _step(k, infos[k], st, bounded)
            if out_state.get(b) != st:
                out_state[b], changed = st, True
        if not changed:
            break
    else:
        return [False] * len(instructions)
    result = [False] * len(instructions)
    for b in order:
        blk = cfg.blocks[b]
        incoming = [out_state[p] for p in blk.preds if p in out_state] + ([entry] if b == 0 else [])
        if not incoming:
            continue
        st = _meet(incoming, b)
        for k in range(blk.start, blk.end):
            result[k] = st.cur == START
            st = _step(k, infos[k], st, bounded)
    return result
