"""Known alignment of an address: the trailing zero bits every lane's value of a register operand is
certain to have where an instruction reads it.

The definitions reaching the read (VGPRs: the web analysis, `asmevo.agent.webs`; SGPRs: scalar
reaching definitions, every scalar write kills) are evaluated through moves, shifts by constants,
adds, ORs, ANDs and multiplies; the result is the minimum over every definition that may reach. The
sources of alignment are constants and the pointer arguments a kernel loads from its kernarg
segment (`s_load* ..., s[kernarg], offset` at the byte offset of a `global_buffer` argument): a
launch passes the start of a device allocation there, aligned to `BUFFER_ALIGNMENT`
(`asmevo.device.base`; `launch_args` refuses any other). Anything else counts as unaligned (0).

A value carried around a loop (a read some of whose definitions depend on that read) is solved as
an optimistic fixpoint: every read on the cycle starts at the most alignment (64 bits) and is
re-evaluated from its definitions until nothing changes. The result holds for every definition,
given the results of its inputs (an induction over the execution: the value entering the loop and
every update keep that many zeros), so `p = base; loop: p += 0x1000` is as aligned as `base`, an
unaligned increment gives the increment's alignment and an unknown one 0.
"""
from __future__ import annotations

from functools import lru_cache

from ..device.base import BUFFER_ALIGNMENT
from ..isa.operands import Operand
from .body import Body
from .webs import ENTRY, VgprWebs

_CAP = 64
_POINTER_TZ = BUFFER_ALIGNMENT.bit_length() - 1
_ADD = ("v_add_u32", "v_add_co_u32", "v_add_i32", "v_add3_u32", "v_or_b32", "v_or3_b32", "v_cndmask_b32",
        "s_add_u32", "s_add_i32", "s_addc_u32", "s_or_b32", "s_or_b64", "s_cselect_b32", "s_cselect_b64")
_MOVE = ("v_mov_b32", "v_mov_b64", "v_readfirstlane_b32", "s_mov_b32", "s_mov_b64", "s_movk_i32")


def _tz_const(value: int, bits: int = _CAP) -> int:
    value &= (1 << bits) - 1
    return bits if value == 0 else (value & -value).bit_length() - 1


@lru_cache(maxsize=8)
def predecessors(webs: VgprWebs) -> list[list[int]]:
    """Each instruction's predecessors (`webs.succ` reversed), computed once per webs (callers only read it)."""
    preds: list[list[int]] = [[] for _ in webs.succ]
    for i, succ in enumerate(webs.succ):
        for j in succ:
            preds[j].append(i)
    return preds


def reaching(webs: VgprWebs, preds: list[list[int]], i: int, kind: str, reg: int) -> set[int]:
    """The definitions of 32-bit register `kind``reg` (v or s) whose values instruction i may read (ENTRY: the
    wave's start): VGPRs by their value web, SGPRs by walking back to the nearest writes (any write kills)."""
    if kind == "v":
        web = webs.use_web.get((i, reg))
        return set() if web is None else set(web.defs) | ({ENTRY} if web.entry else set())
    out, seen, work = set(), set(), list(preds[i])
    if i == 0:
        out.add(ENTRY)
    while work:  # instruction 0 is the entry (with kernarg preloading, the preamble reaches the
        j = work.pop()  # hardware's start with the values it preloads); others without
        if j in seen:   # predecessors are unreachable padding
            continue
        seen.add(j)
        if ("s", reg) in webs.body.infos[j].defs:
            out.add(j)
            continue
        if j == 0:
            out.add(ENTRY)
        work.extend(preds[j])
    return out


class Alignment:
    """Trailing-zero queries on one body (memoised)."""

    def __init__(self, body: Body, webs: VgprWebs):
        self.body, self.webs = body, webs
        self.preds = predecessors(webs)
        self._memo: dict[tuple[int, str, int], int] = {}  # solved
        self._guess: dict[tuple[int, str, int], int] = {}  # the fixpoint being solved: earlier rounds
        self._round: dict[tuple[int, str, int], int] | None = None  # this round (None: not solving)
        self._open: set[tuple[int, str, int]] = set()  # being evaluated (a read met again is on a cycle)

    def operand(self, i: int, op: Operand, depth: int = 0) -> int:
        """Known trailing zero bits of source operand `op` as instruction i reads it (a 32- or
        64-bit value: a pair is as aligned as its low dword, or 32 more than its high one when the
        low dword is zero)."""
        if op.kind == "imm":
            return _tz_const(int(op.value))
        kind = {"vgpr": "v", "sgpr": "s"}.get(op.kind)
        if kind is None or op.neg or op.abs:
            return 0
        low = self.register(i, kind, op.index, depth)
        if op.count == 2 and low >= 32:
            return min(_CAP, 32 + self.register(i, kind, op.index + 1, depth))
        return min(low, 32 * op.count)

    def register(self, i: int, kind: str, reg: int, depth: int = 0) -> int:
        """Known trailing zero bits of 32-bit register `kind``reg` as instruction i reads it."""
        key = (i, kind, reg)
        if key in self._memo:
            return self._memo[key]
        if self._round is not None:
            return self._evaluate(key, depth)
        done = False
        while not done:  # rounds until every read keeps its value (values only fall: min, +, max)
            self._round = {}
            self._evaluate(key, depth)
            done = all(self._guess.get(k) == v for k, v in self._round.items())
            self._guess.update(self._round)
        self._memo.update(self._round)
        self._round, self._guess = None, {}
        return self._memo[key]

    def _evaluate(self, key: tuple[int, str, int], depth: int) -> int:
        """One round's value of a read: the minimum over its definitions, a read met again while it is
        evaluated (a cycle) taking its value from the last round (the most alignment at first)."""
        if key in self._round:
            return self._round[key]
        if key in self._open:
            return self._guess.get(key, _CAP)
        self._open.add(key)
        i, kind, reg = key
        defs = self._reaching(i, kind, reg)
        value = 0 if not defs or depth > 24 else min(self._written(d, kind, reg, depth) for d in defs)
        self._open.discard(key)
        self._round[key] = value
        return value

    def _reaching(self, i: int, kind: str, reg: int) -> set[int]:
        return reaching(self.webs, self.preds, i, kind, reg)

    def _written(self, d: int, kind: str, reg: int, depth: int) -> int:
        """Trailing zeros of register `reg` as definition d writes it (ENTRY: the wave's start)."""
        if d == ENTRY:
            return 0
        ins, info = self.body.instructions[d], self.body.infos[d]
        if not info.dst or info.dst[0].kind not in ("vgpr", "sgpr"):
            return 0
        dst = info.dst[0]
        part = reg - dst.index
        if info.base.startswith("s_load") and len(info.srcs) >= 2:
            return self._kernarg(d, part)
        value = self._value(d, depth)
        if dst.count == 1:
            return min(value, 32)
        if part == 0:
            return min(value, 32)
        return max(0, value - 32 * part) if value >= 32 * part else 0

    def _kernarg(self, d: int, part: int) -> int:
        """A register an `s_load` from the kernarg segment writes: a pointer argument's low dword is
        aligned to the buffers' alignment."""
        info, body = self.body.infos[d], self.body
        base, offset = info.srcs[0], info.srcs[1]
        if body.kernarg is None or base.kind != "sgpr" or (base.index, base.count) != (body.kernarg, 2):
            return 0
        if offset.kind != "imm" or self._reaching(d, "s", body.kernarg) != {ENTRY} or \
                self._reaching(d, "s", body.kernarg + 1) != {ENTRY}:
            return 0
        byte = int(offset.value) + 4 * part
        return _POINTER_TZ if byte in body.buffers else 0

    def _value(self, d: int, depth: int) -> int:
        """Trailing zeros of the value definition d computes (its whole destination)."""
        info = self.body.infos[d]
        base = info.base
        src = [lambda k=k: self.operand(d, info.srcs[k], depth + 1) for k in range(len(info.srcs))]
        shift = lambda k: int(info.srcs[k].value) if info.srcs[k].kind == "imm" else 0
        if base in _MOVE:
            return src[0]()
        if base.startswith(_ADD):
            return min(f() for f in src)
        if base in ("v_lshlrev_b32", "v_lshlrev_b64"):
            return min(_CAP, src[1]() + shift(0))
        if base in ("s_lshl_b32", "s_lshl_b64"):
            return min(_CAP, src[0]() + shift(1))
        if base in ("v_lshl_add_u32", "v_lshl_add_u64", "v_lshl_or_b32"):
            return min(src[0]() + shift(1), src[2]())
        if base.startswith("s_lshl") and base.endswith("_add_u32"):  # s_lshlN_add_u32 d, a, b
            return min(src[0]() + int(base[6]), src[1]())
        if base in ("v_and_b32", "s_and_b32", "s_and_b64"):
            return max(src[0](), src[1]())
        if base == "v_and_or_b32":
            return min(max(src[0](), src[1]()), src[2]())
        if base in ("v_mul_lo_u32", "v_mul_u32_u24", "s_mul_i32"):
            return min(_CAP, src[0]() + src[1]())
        if base == "v_mad_u64_u32":
            return min(src[0]() + src[1](), src[2]())
        return 0
