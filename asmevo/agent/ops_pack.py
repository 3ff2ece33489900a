"""Packed FP32: two independent f32 adds, subtractions, multiplies or FMAs whose results form an aligned VGPR
pair become one `v_pk_add_f32` / `v_pk_mul_f32` / `v_pk_fma_f32` (a subtraction an add of the negated
subtrahend, which gives the same bits, a NaN subtrahend's flipped sign included: `asmevo/emu/valu.py`), and
two `v_mov_b32` one `v_pk_mov_b32` (its low dword from one source pair, its high dword from another, `op_sel`
picking each; LLVM's gfx940 scheduling model gives it one VALU issue slot like the packed FP32 ops:
llvm-project `llvm/test/tools/llvm-mca/AMDGPU/gfx940.s`).

CDNA3 issues a packed FP32 instruction at the rate of one unpacked one while computing both halves: the
FP32 vector peak AMD quotes for MI300X (163.4 TFLOPS) is twice what one FMA per lane gives (304 CUs x 4
SIMDs x 16 lanes x 2 flops x 2.1 GHz = 81.7), which only packed FP32 reaches, and the timing model
charges a v_pk_*_f32 one issue slot like any full-rate VALU op (asmevo/isa/table.py). So a pair costs
one issue slot instead of two: worth it where SIMD issue bounds a kernel. Each half is the unpacked operation
(IEEE single precision, same rounding; `neg_lo`/`neg_hi` negate a source like VOP3's `neg`), each
source pair is an aligned register pair whose halves `op_sel` (low result) and `op_sel_hi` (high
result) choose. Sources must be registers (no literal in VOP3P on gfx9; inline constants are left
alone) with at most one SGPR pair (the constant bus), and no `abs` or output modifier (VOP3P has neither);
clamped ops are left alone too.

`pack_f32_renamed` packs two such ops whose results are not yet a pair (superword-level parallelism:
the same computation on two elements, e.g. a dwordx4 load's four lanes of an elementwise kernel): each
result's value web (`asmevo.agent.webs`) moves into one half of an aligned VGPR pair that is free
wherever the value lives, below the VGPR count that keeps the kernel's waves per SIMD; a literal both
read comes from an SGPR set to it once at the wave's start."""
from __future__ import annotations

from dataclasses import replace

from ..isa.instruction import Instruction
from ..isa.operands import Operand, parse_operand
from .body import FLOAT_MODE_WRITERS, Body, BodyItem, across_block, make_item
from .ops_const import constant_key
from .ops_regs import vgpr_limit
from .ops_rename import free_sgprs, needs_literal
from .pad import BLOCK_REPAIRS, site_hazard_nops
from .webs import NotAnalysable, VgprWebs, Web, webs_of

# v_fmaak_f32 D = S0 * S1 + K and v_fmamk_f32 D = S0 * K + S1 list their sources in FMA order (K a literal, read from
# an SGPR once packed)
PACKED = {"v_add_f32": "v_pk_add_f32", "v_sub_f32": "v_pk_add_f32", "v_mul_f32": "v_pk_mul_f32",
          "v_fma_f32": "v_pk_fma_f32", "v_fmac_f32": "v_pk_fma_f32", "v_fmaak_f32": "v_pk_fma_f32",
          "v_fmamk_f32": "v_pk_fma_f32", "v_mov_b32": "v_pk_mov_b32"}
_WINDOW = 32  # instructions after the first of a pair searched for its partner
_CONSTANTS = ("imm", "float")  # a constant both ops read comes from an SGPR set to it: a literal (VOP3P takes none)
                               # or an inline one (so both halves plainly read the same 32-bit value)


def _sources(ins: Instruction, base: str, literals: dict[str, int] | None = None) -> list[Operand] | None:
    """The sources of an unpacked f32 op in VOP3P order (v_fmac's accumulator is its destination),
    a literal read as the SGPR `literals` maps it to; None when one cannot be packed."""
    if ins.modifiers or ins.mnemonic.endswith(("_dpp", "_sdwa")):
        return None
    srcs = list(ins.operands[1:]) + ([ins.operands[0]] if base == "v_fmac_f32" else [])
    srcs = [Operand("sgpr", f"s{literals[op.text]}", literals[op.text], 1)
            if literals and op.kind in _CONSTANTS and op.text in literals else op for op in srcs]
    if base == "v_sub_f32":     # a + (-b), bit for bit (a NaN b comes back negated either way: asmevo/emu/valu.py)
        srcs[1] = replace(srcs[1], neg=not srcs[1].neg)
    if any(op.kind not in ("vgpr", "sgpr") or op.count != 1 or op.abs or op.sext for op in srcs):
        return None
    return srcs


def packable(body: Body, i: int) -> bool:
    return body.infos[i].base in PACKED


def _flags(name: str, values: list[int], default: int) -> str:
    return "" if all(v == default for v in values) else f" {name}:[{','.join(map(str, values))}]"


def _mov_text(lo: Instruction, hi: Instruction, literals: dict[str, int] | None) -> str | None:
    """`v_pk_mov_b32` doing both moves: the low dword from the pair around `lo`'s source (`op_sel[0]`
    picks which of its dwords), the high one from the pair around `hi`'s (`op_sel[1]`); a zero source
    reads as the inline constant 0 (zero in either dword, however a 64-bit operand widens it)."""
    texts, sel = [], []
    for ins in (lo, hi):
        (src,) = _sources(ins, "v_mov_b32", literals) or (None,)
        if src is None and ins.operands[1].kind == "imm" and ins.operands[1].value == 0 and not ins.modifiers:
            texts.append("0")
            sel.append(0)
        elif src is not None and not src.neg:
            p = src.index - src.index % 2
            texts.append(f"{src.kind[0]}[{p}:{p + 1}]")
            sel.append(src.index - p)
        else:
            return None
    if len({t for t in texts if t.startswith("s")}) > 1:
        return None
    d = lo.operands[0].index
    return f"v_pk_mov_b32 v[{d}:{d + 1}], {texts[0]}, {texts[1]}" + _flags("op_sel", sel, 0)


def _packed_text(base: str, lo: Instruction, hi: Instruction, literals: dict[str, int] | None = None) -> str | None:
    """The packed instruction computing `lo` into the even and `hi` into the odd register of a pair."""
    if base == "v_mov_b32":
        return _mov_text(lo, hi, literals)
    lo_srcs, hi_srcs = _sources(lo, base, literals), _sources(hi, base, literals)
    if lo_srcs is None or hi_srcs is None or len(lo_srcs) != len(hi_srcs):
        return None
    pairs, sel, sel_hi, neg_lo, neg_hi = [], [], [], [], []
    for a, b in zip(lo_srcs, hi_srcs):
        if a.kind != b.kind or a.index // 2 != b.index // 2:
            return None
        p = a.index - a.index % 2
        pairs.append(f"{a.kind[0]}[{p}:{p + 1}]")
        sel.append(a.index - p)
        sel_hi.append(b.index - p)
        neg_lo.append(int(a.neg))
        neg_hi.append(int(b.neg))
    if len({s for s in pairs if s.startswith("s")}) > 1:
        return None
    d = lo.operands[0].index
    return (f"{PACKED[base]} v[{d}:{d + 1}], {', '.join(pairs)}" + _flags("op_sel", sel, 0)
            + _flags("op_sel_hi", sel_hi, 1) + _flags("neg_lo", neg_lo, 0) + _flags("neg_hi", neg_hi, 0))


def _movable_to(body: Body, i: int, j: int) -> bool:
    """Whether instruction j can execute at i's place (i < j, one block): no instruction from i on
    writes what j reads or j's destinations, none after i reads j's destinations, and none changes
    the float mode or waits (j may read what a load the wait retires wrote)."""
    info = body.infos[j]
    for k in range(i, j):
        other = body.infos[k]
        if other.defs & (info.uses | info.defs) or other.base in FLOAT_MODE_WRITERS or other.base == "s_waitcnt":
            return False
        if k > i and other.uses & info.defs:
            return False
    return True


def pack_f32(body: Body, i: int) -> Body | None:
    """Pack instruction i with the first later instruction of its block that computes the same f32
    operation into the other register of i's destination pair and can run at i's place."""
    first = body.instructions[i]
    base = body.infos[i].base
    if base not in PACKED or first.operands[0].kind != "vgpr" or first.operands[0].count != 1:
        return None
    d = first.operands[0].index
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    for j in range(i + 1, min(blk.end, i + 1 + _WINDOW)):
        second = body.instructions[j]
        dst = second.operands[0] if second.operands else None
        if body.infos[j].base != base or dst is None or dst.kind != "vgpr" or dst.count != 1 or dst.index != d ^ 1:
            continue
        if not _movable_to(body, i, j):
            continue
        lo, hi = (first, second) if d % 2 == 0 else (second, first)
        text = _packed_text(base, lo, hi)
        if text is None:
            continue
        items = list(body.items)
        items[body.pos[i]] = make_item(text)
        del items[body.pos[j]]
        return body.replace(items)
    return None


def pack_f32_block(body: Body, i: int) -> Body | None:
    """pack_f32 at every instruction of instruction i's block, first to last."""
    return across_block(body, i, pack_f32)


def _constant_in(body: Body, k: int, op: Operand) -> str | None:
    """The constant source `op` of instruction k holds when it is a single SGPR (no modifier) that an `s_mov_b32`
    of a literal or inline constant last wrote earlier in k's block: that constant's text; else None."""
    if op.kind != "sgpr" or op.count != 1 or op.neg or op.abs or op.sext:
        return None
    for m in range(k - 1, body.cfg.blocks[body.cfg.block_of[k]].start - 1, -1):
        if ("s", op.index) in body.infos[m].defs:
            key = constant_key(body, m)
            return key.removeprefix("s_mov_b32 ") if key and key.startswith("s_mov_b32 ") else None
    return None


def _unified(body: Body, a: int, b: int) -> tuple[Instruction, Instruction]:
    """Instructions a and b, each source pair of single SGPRs in two aligned pairs that hold the same constant
    (`_constant_in`; e.g. the per-copy constants of interleaved element code) read as that constant instead,
    which a packed op takes from one SGPR (`_literal_sgprs`)."""
    x, y = body.instructions[a], body.instructions[b]
    xs, ys = list(x.operands), list(y.operands)
    for n in range(1, min(len(xs), len(ys))):
        s, t = xs[n], ys[n]
        if s.kind == t.kind == "sgpr" and s.index // 2 != t.index // 2:
            k = _constant_in(body, a, s)
            if k is not None and k == _constant_in(body, b, t):
                xs[n] = ys[n] = parse_operand(k)
    if xs == list(x.operands):
        return x, y
    return replace(x, operands=tuple(xs)), replace(y, operands=tuple(ys))


def _isomorphic(body: Body, a: int, b: int) -> bool:
    """Instructions a and b do the same packable op (an f32 add, subtraction, multiply or FMA, or a move) into two
    single VGPRs from sources pairwise single VGPRs, SGPRs of one aligned pair (or the same one) or the
    same constant (`_unified`)."""
    x, y = _unified(body, a, b)
    base = body.infos[a].base
    if body.infos[b].base != base or x.mnemonic != y.mnemonic or x.modifiers or y.modifiers:
        return False
    dx, dy = x.operands[0], y.operands[0]
    if dx.kind != "vgpr" or dy.kind != "vgpr" or dx.count != 1 or dy.count != 1 or dx.index == dy.index:
        return False
    for s, t in zip(x.operands[1:], y.operands[1:]):
        if s.kind in ("vgpr", "sgpr") and s.kind == t.kind:
            if s.count != 1 or t.count != 1 or s.kind == "sgpr" and s.index // 2 != t.index // 2:
                return False
        elif s.kind not in ("imm", "float") or s.text != t.text:
            return False
    return True


def _value_pairs(webs: VgprWebs, a: int, b: int) -> list[tuple[Web, Web]] | None:
    """The values that must share an aligned VGPR pair for a and b to pack: their results, and each
    pair of VGPR sources not in one pair yet (None when a value is unknown or would need two places)."""
    x, y = webs.body.instructions[a], webs.body.instructions[b]
    pairs = [(webs.def_web.get((a, x.operands[0].index)), webs.def_web.get((b, y.operands[0].index)))]
    for s, t in zip(x.operands[1:], y.operands[1:]):
        if s.kind == "vgpr" and s.index // 2 != t.index // 2 and webs.body.infos[a].base != "v_mov_b32":
            pairs.append((webs.use_web.get((a, s.index)), webs.use_web.get((b, t.index))))
    flat = [w for pair in pairs for w in pair]
    if None in flat or len({id(w) for w in flat}) != len(flat):
        return None
    return pairs


def _pair_moves(body: Body, a: int, b: int) -> dict[int, int] | None:
    """New VGPRs (id(web) -> register) putting each of `_value_pairs` into the two halves of one
    aligned VGPR pair below the body's VGPR limit, each free wherever its value lives (empty when
    they already are); None when some pair finds no room."""
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    pairs = _value_pairs(webs, a, b)
    if pairs is None:
        return None
    limit = vgpr_limit(body)
    occupied: dict[int, int] = {}
    occ = lambda r: occupied.get(r, webs.occupancy(r))
    moves: dict[int, int] = {}
    for wa, wb in pairs:
        if wa.reg ^ 1 == wb.reg:
            continue
        options = [(wa.reg, wa.reg ^ 1), (wb.reg ^ 1, wb.reg)]
        options += [(p + h, p + 1 - h) for p in range(0, limit - 1, 2) for h in (0, 1)]
        for pa, pb in options:
            moving = [(w, r) for w, r in ((wa, pa), (wb, pb)) if r != w.reg]
            if max(pa, pb) >= limit or any(w.pinned for w, _ in moving):
                continue
            leaving = {w.reg: w.occupied for w, _ in moving}
            if all(not w.occupied & occ(r) & ~leaving.get(r, 0) for w, r in moving):
                for w, r in moving:
                    occupied[w.reg] = occ(w.reg) & ~w.occupied
                for w, r in moving:
                    occupied[r] = occ(r) | w.occupied
                    moves[id(w)] = r
                break
        else:
            return None
    return moves


def _literal_sgprs(body: Body, texts: set[str], reader: int) -> tuple[dict[str, int], list[str]]:
    """An SGPR holding each literal for instruction `reader`: one written only by an `s_mov_b32` of it
    in the block waves start in (before `reader` when that is in the block too), else a free SGPR, with
    the `s_mov_b32` lines to put at the wave's start. A packed op reads the pair around it, but only
    the dword `op_sel` picks (`asmevo.isa.regs`)."""
    entry = body.cfg.blocks[body.cfg.block_of[body.start]]
    writes: dict[int, list[int]] = {}
    for k, info in enumerate(body.infos):
        for kind, r in info.defs:
            if kind == "s":
                writes.setdefault(r, []).append(k)
    found, lines, free = {}, [], free_sgprs(body)
    for text in sorted(texts):
        held = next((r for r, ks in writes.items() if len(ks) == 1 and body.start <= ks[0] < entry.end
                     and (ks[0] < reader or reader >= entry.end)
                     and body.instructions[ks[0]].text() == f"s_mov_b32 s{r}, {text}"), None)
        if held is None:
            if not free:
                raise LookupError("no free SGPR")
            held = int(free.pop(0)[1:])
            lines.append(f"s_mov_b32 s{held}, {text}")
        found[text] = held
    return found, lines


def _movable_down(body: Body, i: int, j: int) -> bool:
    """Whether instruction i can execute at j's place (i < j, one block): nothing after i up to j
    writes what i reads or writes, reads what i writes, or changes the float mode."""
    info = body.infos[i]
    for k in range(i + 1, j + 1):
        other = body.infos[k]
        if other.defs & (info.uses | info.defs) or other.uses & info.defs or other.base in FLOAT_MODE_WRITERS:
            return False
    return True


def pack_f32_renamed(body: Body, i: int) -> Body | None:
    """Pack instruction i with the first later isomorphic op of its block (`_isomorphic`) after
    moving both results into one aligned VGPR pair; the packed op goes to i's place or, when the
    other cannot move up, to the other's."""
    if body.infos[i].base not in PACKED:
        return None
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    for j in range(i + 1, min(blk.end, i + 1 + _WINDOW)):
        if not _isomorphic(body, i, j):
            continue
        moves = _pair_moves(body, i, j)
        if moves is None:
            continue
        cur = webs_of(body).renamed(moves) if moves else body
        if _movable_to(cur, i, j):
            place, gone = i, j
        elif _movable_down(cur, i, j):
            place, gone = j, i
        else:
            continue
        x, y = _unified(cur, i, j)
        moves = body.infos[i].base == "v_mov_b32"   # v_pk_mov_b32 takes an inline 0 itself (`_mov_text`)
        wanted = {op.text for op in x.operands[1:] if (needs_literal(op) if moves else op.kind in _CONSTANTS)}
        try:
            literals, lines = _literal_sgprs(cur, wanted, place)
        except LookupError:
            return None
        lo, hi = (x, y) if x.operands[0].index % 2 == 0 else (y, x)
        text = _packed_text(body.infos[i].base, lo, hi, literals)
        if text is None:
            continue
        items: list[BodyItem] = list(cur.items)
        items[cur.pos[place]] = make_item(text)
        del items[cur.pos[gone]]
        at = cur.pos[cur.start]
        items[at:at] = [make_item(line) for line in lines]
        return body.replace(items)
    return None


def pack_f32_chains(body: Body, i: int) -> Body | None:
    """pack_f32_renamed at every instruction of instruction i's block, first to last, until none
    packs; None when none did or the result fails the static checks (a hazard a packed op brought closer
    gets the nop it needs, `pad.site_hazard_nops`)."""
    b, cur, packed = body.cfg.block_of[i], body, 0
    while True:
        blk = cur.cfg.blocks[b]
        new = next((n for k in range(blk.start, blk.end) if (n := pack_f32_renamed(cur, k)) is not None), None)
        if new is None or len(new.cfg.blocks) != len(cur.cfg.blocks):
            break
        cur, packed = new, packed + 1
    if not packed:
        return None
    return cur if cur.no_worse(body) else site_hazard_nops(cur, body, repairs=BLOCK_REPAIRS)
