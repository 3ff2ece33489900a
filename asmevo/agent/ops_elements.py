"""Packing a block's elements across an earlier packing. A packer that pairs what it meets first can leave two
elements unpaired, each partly packed within itself, with other elements' packed chain between them: the two
then differ in shape wherever each packed within itself, so `pack_elements` (a run and the next run of the same
shape) finds no twin. 29_Softplus's versioned fast path is so: the compiler interleaved the middle two of a lane's
four elements, `pack_elements` pairs those, and `pack_f32_chains` packs some of each outer element's own
independent ops together.

`repack_elements` tags every instruction of a block with the loaded values it depends on there (each VGPR a
load of the block writes is an element; a packed op's two halves are tagged apart), unpacks the packed ops
whose two halves compute one element's values (`unpacked`), takes into an element's chain the constants only
that chain reads, pairs the elements so that the most instructions pair in total (two chains pair by the longest
common subsequence of their instruction shapes, with half the shorter chain paired at least), orders each pair's
chains pairwise after `pack_elements`' preparation (masks and scalar temporaries in registers of their own, the
second chain's values renamed apart, `ordered_pairwise`), and packs the block (`pack_f32_chains`). Refused unless
the kernel then issues fewer VALU instructions.

Unpacking: the low result of `v_pk_OP_f32 D, S...` is `v_OP_f32` of the dwords `op_sel` picks of each source
pair, source n negated by `neg_lo[n]`; the high result likewise with `op_sel_hi` and `neg_hi` (CDNA3 ISA,
VOP3P; `asmevo/emu/vop3p.py`); `v_pk_mov_b32`'s halves are moves of the dword `op_sel` picks of the first and of
the second source. Each half is a VOP2 where that encodes it (a negated subtrahend as `v_sub_f32`, bit for bit
the add of the negated value, as `pack_f32` relies on), a VOP3 otherwise. Refused: a modifier other than
those four (`clamp`), a source that is neither a VGPR or SGPR pair nor an inline constant read through its low
dword (what the high dword of a constant is differs between readers), a negated constant that is no inline
one, a half reading two SGPRs (one constant-bus read on gfx9), halves that each read the other's result."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from .body import Body, make_item
from ..isa.operands import parse_operand
from .ops_interleave import (MIN_LENGTH, SKIPPED, common_subsequence, ordered_pairwise, prepared_block,
                              shape_key)
from .ops_pack import pack_f32_chains
from .ops_rename import needs_literal
from .ops_sched import is_load
from .pad import BLOCK_REPAIRS, site_hazard_nops

_HALF_OF = {"v_pk_add_f32": "v_add_f32", "v_pk_mul_f32": "v_mul_f32", "v_pk_fma_f32": "v_fma_f32",
            "v_pk_mov_b32": "v_mov_b32"}
_SELECTS = ("op_sel", "op_sel_hi", "neg_lo", "neg_hi")
PAIRED = 0.5    # the share of the shorter of two elements' chains that must pair with the other's
MAX_ELEMENTS = 12   # elements of a block considered for pairing (the matching is exponential in them)


@dataclass(frozen=True)
class _Source:
    text: str               # a register (`v4`, `s5`) or a constant, negation folded into a constant's text
    neg: bool = False       # a register read negated
    reg: tuple[str, int] | None = None

    def __str__(self) -> str:
        return ("-" if self.neg else "") + self.text


def _source(op, sel: int, neg: int) -> _Source | None:
    """One half's read of packed source `op`: the dword `sel` picks, negated when `neg`."""
    if op.kind in ("vgpr", "sgpr") and op.count == 2 and not (op.neg or op.abs):
        r = op.index + sel
        return _Source(f"{op.kind[0]}{r}", bool(neg), (op.kind[0], r))
    negated = parse_operand(f"{-op.value}") if op.kind == "float" and neg else None
    if op.kind == "float" and sel == 0 and (negated is None or not needs_literal(negated)):
        return _Source(op.text if negated is None else negated.text)
    if op.kind == "imm" and sel == 0 and not neg and not op.neg:
        return _Source(op.text)
    return None


def _halves(ins) -> list[tuple[int, list[_Source]]] | None:
    """(destination VGPR, sources) of packed op `ins`'s low and high results; None when refused."""
    base = _HALF_OF.get(ins.mnemonic)
    if base is None or any(m.split(":")[0] not in _SELECTS for m in ins.modifiers):
        return None
    dst, *srcs = ins.operands
    n = len(srcs)
    sel, sel_hi = ins.modifier_bits("op_sel", n), ins.modifier_bits("op_sel_hi", n, 1)
    neg_lo, neg_hi = ins.modifier_bits("neg_lo", n), ins.modifier_bits("neg_hi", n)
    if dst.kind != "vgpr" or dst.count != 2:
        return None
    if base == "v_mov_b32":
        if any(neg_lo) or any(neg_hi) or n != 2:
            return None
        reads = [[_source(srcs[0], sel[0], 0)], [_source(srcs[1], sel[1], 0)]]
    else:
        reads = [[_source(s, sel[k], neg_lo[k]) for k, s in enumerate(srcs)],
                 [_source(s, sel_hi[k], neg_hi[k]) for k, s in enumerate(srcs)]]
    if any(None in r or len({s.reg for s in r if s.reg and s.reg[0] == "s"}) > 1 for r in reads):
        return None
    return [(dst.index, reads[0]), (dst.index + 1, reads[1])]


def _half_text(base: str, d: int, srcs: list[_Source]) -> str:
    if base == "v_mov_b32":
        return f"v_mov_b32_e32 v{d}, {srcs[0]}"
    if base == "v_fma_f32":
        return f"v_fma_f32 v{d}, {', '.join(map(str, srcs))}"
    a, b = srcs
    if b.reg is not None and b.reg[0] == "v" and not a.neg:
        if not b.neg:
            return f"{base}_e32 v{d}, {a}, {b.text}"
        if base == "v_add_f32":
            return f"v_sub_f32_e32 v{d}, {a}, {b.text}"
    return f"{base}_e64 v{d}, {a}, {b}"


def unpacked(ins) -> list[str] | None:
    """Two unpacked instructions computing packed op `ins`'s low and high results, ordered so that neither
    reads a result of the other; None when refused (see the module docstring)."""
    halves = _halves(ins)
    if halves is None:
        return None
    base = _HALF_OF[ins.mnemonic]
    (lo, lo_srcs), (hi, hi_srcs) = halves
    hi_reads_lo, lo_reads_hi = ("v", lo) in {s.reg for s in hi_srcs}, ("v", hi) in {s.reg for s in lo_srcs}
    if hi_reads_lo and lo_reads_hi:
        return None
    texts = [_half_text(base, lo, lo_srcs), _half_text(base, hi, hi_srcs)]
    return texts[::-1] if hi_reads_lo else texts


def element_tags(body: Body, lo: int, hi: int) -> dict[int, tuple[frozenset, frozenset]]:
    """For each instruction of lo..hi-1 (one block), the loaded values its low and high results depend on
    within the range (the same set twice but for a packed op that splits): frozensets of (load index, VGPR)."""
    reg_tags: dict[tuple, frozenset] = {}
    tags: dict[int, tuple[frozenset, frozenset]] = {}
    for k in range(lo, hi):
        info, ins = body.infos[k], body.instructions[k]
        if is_load(info, body.processor):
            tags[k] = (frozenset(), frozenset())
            for r in info.defs:
                reg_tags[r] = frozenset({(k, r[1])}) if r[0] == "v" else frozenset()
            continue
        halves = _halves(ins)
        if halves is not None:
            parts = [(d, frozenset().union(*(reg_tags.get(s.reg, frozenset()) for s in srcs if s.reg)))
                     for d, srcs in halves]
            for d, t in parts:
                reg_tags[("v", d)] = t
            tags[k] = (parts[0][1], parts[1][1])
            continue
        t = frozenset().union(*(reg_tags.get(r, frozenset()) for r in info.uses))
        for r in info.defs:
            reg_tags[r] = t
        tags[k] = (t, t)
    return tags


def _with_unpacked(body: Body, split: dict[int, list[str]]) -> Body:
    at = {p: n for n, p in enumerate(body.pos)}
    items = []
    for p, it in enumerate(body.items):
        n = at.get(p)
        items += [make_item(t) for t in split[n]] if n in split else [it]
    return body.replace(items)


def _chains(body: Body, lo: int) -> list[list[int]]:
    """Each element's chain in the block starting at instruction lo, elements in the order of their loads: the
    instructions whose results depend on that element alone, and those depending on no element whose results only
    that element's chain reads (a constant it puts in a register), in order."""
    hi = body.cfg.blocks[body.cfg.block_of[lo]].end
    tags = element_tags(body, lo, hi)
    own = {k: next(iter(t_lo)) for k, (t_lo, t_hi) in tags.items() if t_lo == t_hi and len(t_lo) == 1}
    readers: dict[int, set] = {}    # an instruction depending on no element -> the elements of its results' readers
    holder: dict[tuple, int] = {}   # register -> the instruction depending on no element whose value it holds
    for k in range(lo, hi):
        info = body.infos[k]
        for r in info.uses:
            if r in holder:
                readers.setdefault(holder[r], set()).add(own.get(k))
        for r in info.defs:
            holder.pop(r, None)
            if not any(tags[k]) and not is_load(info, body.processor):
                holder[r] = k
    own.update({k: e for k, (e,) in ((k, tuple(es)) for k, es in readers.items() if len(es) == 1) if e is not None})
    chains: dict[tuple, list[int]] = {}
    for k in sorted(own):
        if body.instructions[k].mnemonic not in SKIPPED:
            chains.setdefault(own[k], []).append(k)
    return [chains[e] for e in sorted(chains)]


def _twins(body: Body, first: list[int], second: list[int]) -> list[tuple[int, int]]:
    """The instructions of two chains paired by the longest common subsequence of their shapes; empty unless at
    least PAIRED of the shorter chain pairs up (or a chain is shorter than MIN_LENGTH)."""
    if min(len(first), len(second)) < MIN_LENGTH:
        return []
    index: dict[tuple, int] = {}
    xs, ys = ([index.setdefault(shape_key(body, k), len(index)) for k in c] for c in (first, second))
    least = PAIRED * min(len(xs), len(ys))
    if sum((Counter(xs) & Counter(ys)).values()) < least:
        return []
    pairs = common_subsequence(xs, ys)
    return [(first[x], second[y]) for x, y in pairs] if len(pairs) >= least else []


def _matching(body: Body, chains: list[list[int]]) -> list[tuple[int, int]]:
    """The pairs of elements whose chains pair up best in total (`_twins`, summed over the pairs; the first
    MAX_ELEMENTS elements), the pair with the most twins first."""
    n = min(len(chains), MAX_ELEMENTS)
    weight = {(e, f): len(_twins(body, chains[e], chains[f])) for e in range(n) for f in range(e + 1, n)}

    @lru_cache(maxsize=None)
    def best(rest: frozenset) -> tuple[int, tuple]:
        if len(rest) < 2:
            return 0, ()
        e = min(rest)
        options = [best(rest - {e})]
        for f in rest - {e}:
            if weight[e, f]:
                total, pairs = best(rest - {e, f})
                options.append((total + weight[e, f], ((e, f), *pairs)))
        return max(options, key=lambda o: o[0])

    return sorted(best(frozenset(range(n)))[1], key=lambda p: -weight[p])


def valu_count(body: Body) -> int:
    """VALU instructions in the body (each one issue slot of its wave)."""
    return sum(ins.mnemonic.startswith("v_") for ins in body.instructions)


def repack_elements(body: Body, a: int) -> Body | None:
    """Unpack the packed ops of instruction a's block that compute one element, order the best-matching
    elements' chains pairwise and pack the block (see the module docstring); None unless the kernel then
    issues fewer VALU instructions."""
    blk = body.cfg.blocks[body.cfg.block_of[a]]
    split = {k: texts for k, (t_lo, t_hi) in element_tags(body, blk.start, blk.end).items()
             if t_lo == t_hi and len(t_lo) == 1 and (texts := unpacked(body.instructions[k])) is not None}
    start = blk.start
    cur = _with_unpacked(body, split) if split else body
    if not _matching(cur, _chains(cur, start)):
        return None
    cur = prepared_block(cur, start)
    if cur is None:
        return None
    pairs = _matching(cur, _chains(cur, start))
    if not pairs:
        return None
    for e, f in pairs:
        chains = _chains(cur, start)
        twins = _twins(cur, chains[e], chains[f])
        ordered = ordered_pairwise(cur, chains[e], chains[f], twins) if twins else None
        if ordered is not None:
            cur = ordered[0]
    mixed = site_hazard_nops(cur, body, repairs=BLOCK_REPAIRS)
    if mixed is None or mixed.waitcnt_violations > body.waitcnt_violations:
        return None
    packed = pack_f32_chains(mixed, start)
    return packed if packed is not None and valu_count(packed) < valu_count(body) else None
