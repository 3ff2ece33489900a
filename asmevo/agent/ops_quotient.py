"""Uniform quotients: an integer division by a uniform divisor versioned on every lane's quotient being one value.

Compiled code divides a 32-bit unsigned X by a uniform D with a reciprocal R of D, estimated once
(LLVM's AMDGPU 32-bit division expansion):

    v_cvt_f32_u32 f, D; v_rcp(_iflag)_f32 f, f; v_mul_f32 f, 0x4f7ffffe, f; v_cvt_u32_f32 e, f
    s_sub n, 0, D; v_mul_lo_u32 t, n, e; v_mul_hi_u32 t, e, t; v_add_u32 R, e, t

and then, per division, eleven VALU instructions (the *core*), exact for every X and every D != 0:

    Q0 = mulhi(X, R); X1 = X - Q0 * D
    D <= X1: Q2 = Q0 + 1, X2 = X1 - D (else Q0, X1)
    D <= X2: Q = Q2 + 1 (else Q2)

Where X is S | v, a uniform S and a lane value v whose possible one bits (`ones.PossibleOnes`) are below a power
of two C, every lane's X lies in [W, W + C - 1] for W = S & -C. When W mod D <= D - C they all have the quotient
q = W / D. Signed division takes X = |S | v| (`(x + g) ^ g` with g = S >> 31, or `max(-x, x)`), which is S | v
when S >= 0.

`version_uniform_quotients` computes q and W mod D once, in scalar ALU (the core on W, R read from the first
active lane), at the start of the block that dominates every core and every instruction reading S for one:

    v_readfirstlane_b32 r, R; s_and_b32 w, S, -C; s_mul_hi_u32 q, w, r; s_mul_i32 t, q, D; s_sub_u32 w, w, t
    2x (w >= D: q + 1, w - D); q = -1 when D < C, w > D - C or (signed) S < 0
    s_cmp_eq_u32 q, -1; s_cbranch_scc1 .Lslow

and runs that block and each later block holding a core as a fast copy, each core one `v_mov_b32 Q, q`, when q is
not -1 (the other blocks test that again: `s_cmp_eq_u32 q, -1`), else as they were (`versioning`). A signed
division then fixes the sign, `Qs = (Q ^ sg) - sg` with sg = (x >> 31) ^ U for a uniform U (the divisor's sign);
x >= 0 where the fast copy runs, so Qs is one `v_mov_b32` of (q ^ U) - U, computed with the test. In the fast
copies a value only the dropped instructions read goes too (the dividend's absolute value and sign). 35_GroupNorm's
output pass divides each of a lane's four elements' index by the channel size to load the channel's weight and bias:
its four versioned blocks issue 27 VALU instructions per iteration on the fast path, 89 as they were.

Legal when: the reciprocal is that sequence, in one block with no EXEC or D write inside it; no path from it to
the test writes D or R, and every path to the test passes it; EXEC at the test is within EXEC at the reciprocal (so
the first active lane holds R, a value of uniform operands); every core (with its sign fix) is in one block with no
EXEC or D write inside it and its values but the result are read inside it alone; every path from the test to an
instruction that reads S, D or U for a core (or to a core) passes no write of them, and every path from the entry to
one passes the test; each value of the dividend's and the sign's chains is written, on every path from the test to
its reader, after the test. Every wave is predicted to pass the test (for predictions); the measured time decides.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..isa.operands import Operand
from ..isa.regs import EXEC
from .align import predecessors, reaching
from .body import Body, make_item
from .lanes import lanes_of
from .ones import PossibleOnes
from .ops_widen import Flow
from .ops_rename import free_sgprs
from .versioning import Tail, dead_in_fast, versioned
from .webs import ENTRY, NotAnalysable, VgprWebs, webs_of

MAX_WINDOW = 1 << 30
_RECIPROCAL_SCALE = "0x4f7ffffe"    # 2^32 - 512 as an f32: the estimate stays below 2^32 / D


@dataclass(frozen=True)
class Core:
    """One division core: its instructions (`parts`, the first the mulhi, the last writing Q), the quotient `q`,
    the divisor `d` and reciprocal `r` operand texts, the uniform part `s` of the dividend, its window C, whether X
    is |x| (`signed`), the instructions that read S for the dividend's chain, each value of that chain (reader,
    writer) that must be written after the test, and the reciprocal's last instruction. The fast copy writes
    register `dst` at instruction `out` (Q at the core's last; with a signed division's sign fix, its result at
    the fix's subtraction, (q ^ U) - U for the uniform sign `u` read by `u_readers`) and drops `gone`."""

    parts: tuple[int, ...]
    q: str
    d: str
    r: str
    s: str
    window: int
    signed: bool
    s_readers: tuple[int, ...]
    chain: tuple[tuple[int, int], ...]
    reciprocal: int
    out: int
    dst: str
    gone: tuple[int, ...]
    u: str | None = None
    u_readers: tuple[int, ...] = ()


class _Match:
    """Pattern queries on one body's value webs."""

    def __init__(self, body: Body, webs: VgprWebs):
        self.body, self.webs = body, webs
        self.preds = predecessors(webs)
        self.ones = PossibleOnes(body, webs)

    def srcs(self, k: int, *bases: str) -> list[str] | None:
        """Instruction k's source operand texts when its base is one of `bases` and it has no modifiers."""
        ins, info = self.body.instructions[k], self.body.infos[k]
        if info.base not in bases or ins.modifiers or any(op.neg or op.abs for op in info.srcs):
            return None
        return [op.text for op in info.srcs]

    def dst(self, k: int) -> str:
        return self.body.instructions[k].operands[0].text

    def def_of(self, k: int, text: str) -> int | None:
        """The one instruction whose value of single VGPR `text` instruction k reads."""
        op = self.operand(k, text)
        if op is None or op.kind != "vgpr" or op.count != 1:
            return None
        web = self.webs.use_web.get((k, op.index))
        return next(iter(web.defs)) if web is not None and not web.entry and len(web.defs) == 1 else None

    def scalar_def_of(self, k: int, text: str) -> int | None:
        """The one instruction whose value of single SGPR `text` instruction k reads."""
        op = self.operand(k, text)
        if op is None or op.kind != "sgpr" or op.count != 1:
            return None
        defs = reaching(self.webs, self.preds, k, "s", op.index)
        return next(iter(defs)) if len(defs) == 1 and ENTRY not in defs else None

    def read_by(self, k: int) -> frozenset[int] | None:
        """The instructions reading the VGPR value instruction k writes (it alone)."""
        op = self.body.instructions[k].operands[0]
        web = self.webs.def_web.get((k, op.index)) if op.kind == "vgpr" and op.count == 1 else None
        return None if web is None or set(web.defs) != {k} else frozenset(web.uses)

    def operand(self, k: int, text: str) -> Operand | None:
        """Instruction k's source operand written `text`."""
        return next((op for op in self.body.infos[k].srcs if op.text == text), None)

    def one_of(self, ks, *bases: str) -> int | None:
        """The one instruction of `ks` whose base is one of `bases`."""
        found = [k for k in ks if self.body.infos[k].base in bases]
        return found[0] if len(found) == 1 else None


def _is_sgpr(text: str) -> bool:
    return text.startswith("s") and text[1:].isdigit()


def _quiet(body: Body, lo: int, hi: int, regs) -> bool:
    """Nothing in lo..hi writes EXEC or any of `regs`, and it is one block."""
    cfg = body.cfg
    if cfg.block_of[lo] != cfg.block_of[hi]:
        return False
    return not any(body.infos[j].defs & (EXEC | regs) for j in range(lo, hi + 1))


def _sregs(body: Body, *texts: str) -> frozenset:
    return frozenset(("s", int(t[1:])) for t in texts if _is_sgpr(t))


def _core(m: _Match, k0: int) -> tuple[list[int], dict[str, str]] | None:
    """The core whose mulhi is k0 (any operand order): its instructions in order Q0, P, X1, Q1, C1, Q2, T, X2, Q3,
    C2, Q and its texts X, R, D, Q."""
    mh = m.srcs(k0, "v_mul_hi_u32")
    used = m.read_by(k0) if mh is not None else None
    if used is None or len(used) != 3:
        return None
    q0 = m.dst(k0)
    k1, k3, k5 = (m.one_of(used, b) for b in ("v_mul_lo_u32", "v_add_u32", "v_cndmask_b32"))
    if None in (k1, k3, k5):
        return None
    lo = m.srcs(k1, "v_mul_lo_u32") or []
    d = next((t for t in lo if t != q0), "") if q0 in lo else ""
    if not _is_sgpr(d) or m.read_by(k1) is None or len(m.read_by(k1)) != 1:
        return None
    (k2,) = m.read_by(k1)
    p = m.dst(k1)
    for x in (t for t in mh if t != q0):
        if m.srcs(k2, "v_sub_u32") == [x, p] or m.srcs(k2, "v_subrev_u32") == [p, x]:
            break
    else:
        return None
    r = mh[1] if mh[0] == x else mh[0]
    x1, q1 = m.dst(k2), m.dst(k3)
    if m.webs.use_web.get((k2, m.operand(k2, x).index)) is not m.webs.use_web.get((k0, m.operand(k0, x).index)):
        return None
    used2 = m.read_by(k2)
    if sorted(m.srcs(k3, "v_add_u32") or []) != sorted(["1", q0]) or m.read_by(k3) != {k5} or \
            used2 is None or len(used2) != 3:
        return None
    k4 = _compare(m, used2, d, x1)
    k6 = m.one_of(used2, "v_subrev_u32", "v_sub_u32")
    k7 = m.one_of(used2, "v_cndmask_b32")
    if None in (k4, k6, k7) or not (m.srcs(k6, "v_subrev_u32") == [d, x1] or m.srcs(k6, "v_sub_u32") == [x1, d]):
        return None
    c1, q2, t, x2 = m.dst(k4), m.dst(k5), m.dst(k6), m.dst(k7)
    if m.srcs(k5, "v_cndmask_b32") != [q0, q1, c1] or m.srcs(k7, "v_cndmask_b32") != [x1, t, c1] or \
            m.read_by(k6) != {k7} or sorted(m.body.readers(k4, _end(m.body, k4)) or []) != sorted([k5, k7]):
        return None
    used5, used7 = m.read_by(k5), m.read_by(k7)
    if used5 is None or len(used5) != 2 or used7 is None or len(used7) != 1:
        return None
    k8, k10 = m.one_of(used5, "v_add_u32"), m.one_of(used5, "v_cndmask_b32")
    (k9,) = used7
    if None in (k8, k10) or _compare(m, [k9], d, x2) is None:
        return None
    q3, c2 = m.dst(k8), m.dst(k9)
    if sorted(m.srcs(k8, "v_add_u32") or []) != sorted(["1", q2]) or m.read_by(k8) != {k10} or \
            m.srcs(k10, "v_cndmask_b32") != [q2, q3, c2] or \
            m.body.readers(k9, _end(m.body, k9)) != [k10]:
        return None
    parts = [k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10]
    if not _quiet(m.body, min(parts), max(parts), _sregs(m.body, d)):
        return None
    return parts, {"x": x, "r": r, "d": d, "q": m.dst(k10)}


def _end(body: Body, k: int) -> int:
    """The end of instruction k's block."""
    return body.cfg.blocks[body.cfg.block_of[k]].end


def _compare(m: _Match, ks, d: str, x: str) -> int | None:
    """The instruction of `ks` comparing D <= x (`v_cmp_le_u32 D, x` or `v_cmp_ge_u32 x, D`)."""
    return next((k for k in ks if m.srcs(k, "v_cmp_le_u32") == [d, x] or m.srcs(k, "v_cmp_ge_u32") == [x, d]), None)


def _reciprocal(m: _Match, k0: int, r: str, d: str) -> int | None:
    """The last instruction of the sequence computing reciprocal `r` of `d` that instruction k0 reads."""
    kr = m.def_of(k0, r)
    add = m.srcs(kr, "v_add_u32") if kr is not None else None
    if add is None:
        return None
    for e, h in (add, add[::-1]):
        kh, ke = m.def_of(kr, h), m.def_of(kr, e)
        hi = m.srcs(kh, "v_mul_hi_u32") if kh is not None else None
        if hi is None or e not in hi or m.def_of(kh, e) != ke:
            continue
        n = hi[1] if hi[0] == e else hi[0]
        kn = m.def_of(kh, n)
        lo = m.srcs(kn, "v_mul_lo_u32") if kn is not None else None
        if lo is None or e not in lo or m.def_of(kn, e) != ke:
            continue
        neg = lo[1] if lo[0] == e else lo[0]
        ks = m.scalar_def_of(kn, neg) if _is_sgpr(neg) else None
        if ks is None or m.srcs(ks, "s_sub_i32", "s_sub_u32") != ["0", d]:
            continue
        chain = _estimate(m, ke, d)
        if chain is None:
            continue
        parts = [kr, kh, kn, ks, *chain]
        if _quiet(m.body, min(parts), max(parts), _sregs(m.body, d)):
            return kr
    return None


def _estimate(m: _Match, ke: int, d: str) -> list[int] | None:
    """The instructions of `e = cvt_u32(0x4f7ffffe * rcp(cvt_f32(D)))` ending at ke."""
    f = m.srcs(ke, "v_cvt_u32_f32")
    kf = m.def_of(ke, f[0]) if f else None
    scaled = m.srcs(kf, "v_mul_f32") if kf is not None else None
    if scaled is None or _RECIPROCAL_SCALE not in scaled:
        return None
    kc = m.def_of(kf, next(t for t in scaled if t != _RECIPROCAL_SCALE))
    rcp = m.srcs(kc, "v_rcp_f32", "v_rcp_iflag_f32") if kc is not None else None
    kd = m.def_of(kc, rcp[0]) if rcp else None
    if kd is None or m.srcs(kd, "v_cvt_f32_u32") != [d]:
        return None
    return [ke, kf, kc, kd]


def _dividend(m: _Match, k0: int, x: str) -> tuple[str, int, bool, tuple[int, ...], tuple] | None:
    """X as read at k0: (S, C, signed, the instructions reading S, (reader, writer) of each value of the chain)."""
    kx = m.def_of(k0, x)
    if kx is None:
        return None
    plain = _or_form(m, kx)
    if plain is not None:
        return (*plain, False, (kx,), ((k0, kx),))
    xor = m.srcs(kx, "v_xor_b32")
    if xor is not None:
        g = next((t for t in xor if _is_sgpr(t)), None)
        a = next((t for t in xor if t != g), None)
        ka = m.def_of(kx, a) if g is not None and a is not None else None
        add = m.srcs(ka, "v_add_u32") if ka is not None else None
        if add is None or g not in add:
            return None
        xv = add[1] if add[0] == g else add[0]
        kxo, kg = m.def_of(ka, xv), m.scalar_def_of(ka, g)
        form = _or_form(m, kxo) if kxo is not None else None
        if form is None or kg is None or m.scalar_def_of(kx, g) != kg or m.srcs(kg, "s_ashr_i32") != [form[0], "31"]:
            return None
        return (*form, True, (kxo, kg), ((k0, kx), (kx, ka), (ka, kxo), (ka, kg), (kx, kg)))
    mx = m.srcs(kx, "v_max_i32")
    if mx is None:
        return None
    for b, xv in (mx, mx[::-1]):
        kb, kxo = m.def_of(kx, b), m.def_of(kx, xv)
        if kb is None or kxo is None or not (m.srcs(kb, "v_sub_u32") == ["0", xv] or
                                             m.srcs(kb, "v_subrev_u32") == [xv, "0"]) or m.def_of(kb, xv) != kxo:
            continue
        form = _or_form(m, kxo)
        if form is not None:
            return (*form, True, (kxo,), ((k0, kx), (kx, kb), (kx, kxo), (kb, kxo)))
    return None


def _or_form(m: _Match, k: int) -> tuple[str, int] | None:
    """(S, C) of `v_or_b32 x, S, v` at k, v's possible one bits below C."""
    srcs = m.srcs(k, "v_or_b32")
    if srcs is None:
        return None
    s = next((t for t in srcs if _is_sgpr(t)), None)
    v = next((op for op in m.body.infos[k].srcs if op.kind == "vgpr"), None)
    if s is None or v is None:
        return None
    window = 1 << m.ones.operand(k, v).bit_length()
    return (s, window) if window <= MAX_WINDOW else None


def core_at(body: Body, k: int) -> Core | None:
    """The division core whose mulhi is instruction k, with its reciprocal and dividend recognised, else None."""
    try:
        m = _Match(body, webs_of(body))
    except NotAnalysable:
        return None
    return _core_of(m, k)


def _core_of(m: _Match, k: int) -> Core | None:
    found = _core(m, k)
    if found is None:
        return None
    parts, t = found
    div = _dividend(m, k, t["x"])
    kr = _reciprocal(m, k, t["r"], t["d"])
    if div is None or kr is None:
        return None
    s, window, signed, s_readers, chain = div
    core = Core(tuple(parts), t["q"], t["d"], t["r"], s, window, signed, s_readers, chain, kr, parts[-1], t["q"],
                tuple(parts[:-1]))
    fix = _sign_fix(m, parts[-1], t["q"], s) if signed else None
    if fix is None:
        return core
    k11, k12, u, u_readers, more_s, more_chain = fix
    return replace(core, s_readers=s_readers + more_s, chain=chain + more_chain, out=k12, dst=m.dst(k12),
                   gone=(*parts, k11), u=u, u_readers=u_readers)


def _sign_fix(m: _Match, k10: int, q: str, s: str) -> tuple | None:
    """A signed division's sign fix of Q at k10, `Q' = Q ^ sg; Qs = Q' - sg` in Q's block with no EXEC write, when
    sg = g ^ U for a uniform SGPR U and g = S >> 31 or x >> 31 (x = S | v): zero where the fast copy runs, so Qs =
    (q ^ U) - U. (xor, subtraction, U, the instructions reading U, those reading S, (reader, writer) pairs)."""
    used = m.read_by(k10)
    k11 = next(iter(used)) if used is not None and len(used) == 1 else None
    xor = m.srcs(k11, "v_xor_b32") if k11 is not None else None
    if xor is None or q not in xor:
        return None
    sg, q1 = (xor[1] if xor[0] == q else xor[0]), m.dst(k11)
    used = m.read_by(k11)
    k12 = next(iter(used)) if used is not None and len(used) == 1 else None
    if k12 is None or not (m.srcs(k12, "v_sub_u32") == [q1, sg] or m.srcs(k12, "v_subrev_u32") == [sg, q1]) or \
            not _quiet(m.body, k10, k12, frozenset()):
        return None
    if _is_sgpr(sg):
        ksg = m.scalar_def_of(k11, sg)
        pair = m.srcs(ksg, "s_xor_b32") if ksg is not None and m.scalar_def_of(k12, sg) == ksg else None
        for g, u in (pair, pair[::-1]) if pair else ():
            kg = m.scalar_def_of(ksg, g) if _is_sgpr(g) else None
            if kg is not None and _is_sgpr(u) and m.srcs(kg, "s_ashr_i32") == [s, "31"]:
                return k11, k12, u, (ksg,), (kg,), ((k11, ksg), (k12, ksg), (ksg, kg))
        return None
    ksg = m.def_of(k11, sg)
    pair = m.srcs(ksg, "v_xor_b32") if ksg is not None and m.def_of(k12, sg) == ksg else None
    for w, u in (pair, pair[::-1]) if pair else ():
        kw = None if _is_sgpr(w) else m.def_of(ksg, w)
        shift = m.srcs(kw, "v_ashrrev_i32") if kw is not None else None
        if shift is None or shift[0] != "31" or not _is_sgpr(u):
            continue
        kxo = m.def_of(kw, shift[1])
        form = _or_form(m, kxo) if kxo is not None else None
        if form is not None and form[0] == s:
            return k11, k12, u, (ksg,), (kxo,), ((k11, ksg), (k12, ksg), (ksg, kw), (kw, kxo))
    return None


def _key(core: Core) -> tuple[str, str, str]:
    return core.s, core.d, core.r


def _first_core(m: _Match, i: int) -> Core | None:
    """The first division core in instruction i's block."""
    blk = m.body.cfg.blocks[m.body.cfg.block_of[i]]
    return next((c for k in range(blk.start, blk.end) if m.body.infos[k].base == "v_mul_hi_u32"
                 and (c := _core_of(m, k)) is not None), None)


def quotient_key(body: Body, i: int) -> tuple[str, str, str] | None:
    """(S, D, R) of the first division core in instruction i's block: the cores `version_uniform_quotients` versions
    together; None without one."""
    try:
        first = _first_core(_Match(body, webs_of(body)), i)
    except NotAnalysable:
        return None
    return None if first is None else _key(first)


def version_uniform_quotients(body: Body, i: int) -> Body | None:
    """Version the blocks holding the division cores of instruction i's block (and every core with the same
    uniform part, divisor and reciprocal) on every lane's quotient being one value (module docstring); None when
    the block has no core or a condition fails."""
    try:
        webs = webs_of(body)
        lanes = lanes_of(body)
    except NotAnalysable:
        return None
    m = _Match(body, webs)
    cfg = body.cfg
    first = _first_core(m, i)
    if first is None:
        return None
    key = _key(first)
    cores = [c for k in range(len(body.instructions))
             if body.infos[k].base == "v_mul_hi_u32" and (c := _core_of(m, k)) is not None and _key(c) == key]
    head = _head(body, cores)
    free = free_sgprs(body)
    if head is None or len(free) < 6:
        return None
    t0 = cfg.blocks[head].start
    if not _legal(body, m, Flow(body, webs), lanes, cores, t0):
        return None
    window = max(c.window for c in cores)
    signed = any(c.signed for c in cores)
    signs = sorted({c.u for c in cores if c.u is not None})
    if len(free) < 6 + len(signs):
        return None
    q, r, w, t, u, keep = free[:6]
    fixed = dict(zip(signs, free[6:]))
    s, d, rec = key
    test = [f"v_readfirstlane_b32 {r}, {rec}", f"s_and_b32 {w}, {s}, {-window}", f"s_mul_hi_u32 {q}, {w}, {r}",
            f"s_mul_i32 {t}, {q}, {d}", f"s_sub_u32 {w}, {w}, {t}"]
    for _ in range(2):
        test += [f"s_sub_u32 {t}, {w}, {d}", f"s_add_u32 {u}, {q}, 1", f"s_cmp_ge_u32 {w}, {d}",
                 f"s_cselect_b32 {q}, {u}, {q}", f"s_cselect_b32 {w}, {t}, {w}"]
    test += [f"s_sub_u32 {t}, {d}, {window}", f"s_cselect_b32 {q}, -1, {q}", f"s_cmp_gt_u32 {w}, {t}",
             f"s_cselect_b32 {q}, -1, {q}"]
    test += [f"s_cmp_lt_i32 {s}, 0", f"s_cselect_b32 {q}, -1, {q}"] if signed else []
    for sign, value in fixed.items():
        test += [f"s_xor_b32 {value}, {q}, {sign}", f"s_sub_u32 {value}, {value}, {sign}"]
    test.append(f"s_cmp_eq_u32 {q}, -1")
    blocks = sorted({head} | {cfg.block_of[c.parts[0]] for c in cores})
    replaced = {c.out: f"v_mov_b32_e32 {c.dst}, {fixed.get(c.u, q)}" for c in cores}
    ks = [k for b in blocks for k in range(cfg.blocks[b].start, cfg.blocks[b].end)]
    gone = dead_in_fast(webs, ks, {k for c in cores for k in c.gone}, set(replaced))
    tails = []
    for b in blocks:
        start, end = cfg.blocks[b].start, cfg.blocks[b].end
        fast = [(make_item(replaced[j]) if j in replaced else body.items[body.pos[j]], j)
                for j in range(start, end) if j not in gone]
        lines = test if b == head else [f"s_cmp_eq_u32 {q}, -1"]
        tails.append(Tail(start, lambda slow, lines=lines: [*lines, f"s_cbranch_scc1 {slow}"], fast))
    return versioned(body, tails, ".Lquot", keep)


def _head(body: Body, cores: list[Core]) -> int | None:
    """The block, among those of the cores and of the instructions reading S for them, that dominates the others."""
    cfg = body.cfg
    blocks = {cfg.block_of[k] for c in cores for k in (c.parts[0], *c.s_readers)}
    dom = cfg.dominators()
    return next((h for h in sorted(blocks) if all(h in dom.get(b, ()) for b in blocks)), None)


def _legal(body: Body, m: _Match, flow: Flow, lanes, cores: list[Core], t0: int) -> bool:
    """The conditions of the module docstring that tie each core and the reciprocal to the test at t0."""
    infos = body.infos
    s, d, r = cores[0].s, cores[0].d, cores[0].r
    sregs, dregs = _sregs(body, s), _sregs(body, d)
    rreg = m.operand(cores[0].parts[0], r)
    rregs = frozenset({("v", rreg.index)})
    kr = cores[0].reciprocal
    if not flow.dominates(kr, t0) or any(infos[j].defs & (dregs | rregs) for j in flow.between(kr, t0)) or \
            not lanes.covers(kr, t0):
        return False

    def seen_as_tested(k: int, regs) -> bool:
        on_path = flow.between(t0, k, stop=t0) | {t0} if k != t0 else set()
        return flow.dominates(t0, k) and not any(infos[j].defs & regs for j in on_path)

    def written_after_test(reader: int, writer: int) -> bool:
        return flow.passes((writer,), reader) and flow.passes((writer,), reader, start=t0)

    for c in cores:
        d_readers = [c.parts[n] for n in (1, 4, 6, 9)]
        if not all(seen_as_tested(k, sregs) for k in c.s_readers) or \
                not all(seen_as_tested(k, _sregs(body, c.u)) for k in c.u_readers) or \
                not all(seen_as_tested(k, dregs | rregs) for k in (c.parts[0], *d_readers)) or \
                not all(written_after_test(reader, writer) for reader, writer in c.chain):
            return False
    return True
