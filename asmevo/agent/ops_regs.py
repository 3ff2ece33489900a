"""Register re-allocation for occupancy: rename VGPR values (webs, `asmevo.agent.webs`) from the top
of the file into registers that are free where those values live, so the kernel names fewer VGPRs
and its allocation drops to a granule that fits one more wave per SIMD.

A SIMD holds `vgprs_per_lane // allocation` waves (at most `max_waves_per_simd`), the allocation
being the VGPRs named (arch VGPRs rounded to the accumulator granule, plus AGPRs, on a unified file)
rounded up to the allocation granule (CDNA3 ISA 3.6.4; LLVM `GCNSubtarget::getOccupancyWithNumVGPRs`;
the GPU records, `asmevo.target.gpus`). The rebuild then declares the smaller allocation
(`asmevo.rebuild.shrinks`: a candidate naming fewer registers than K0 and addressing none
indirectly is rebuilt with the `shrink` policy). Every web above the target must move and none may
be pinned, or the operator refuses; liveness is the webs' (exact for whole-EXEC writes and one-EXEC
epochs, conservative elsewhere). Bodies the analysis cannot follow (indirect branches, s_setpc,
gpr-index mode, movrel) are refused.
"""
from __future__ import annotations

from functools import lru_cache

from ..target import gpus_of, processor
from .body import Body
from .webs import NotAnalysable, webs_of


def named_top(body: Body, kind: str) -> int:
    """How many registers of `kind` ("v", "a", "s") the body names: one past the highest."""
    return body.named_tops.get(kind, 0)


def waves_per_simd(vgprs: int, agprs: int = 0, processor: str = "gfx942") -> int:
    """Waves one SIMD holds for a `processor` kernel naming `vgprs` VGPRs and `agprs` AGPRs (VGPR-limited
    only; the register file and wave slots of the processor's first GPU record, the same on all)."""
    g = gpus_of(processor)[0]
    total = (-(-vgprs // g.processor.accum_granule) * g.processor.accum_granule + agprs) if agprs else vgprs
    alloc = -(-max(total, 1) // g.vgpr_alloc_granule) * g.vgpr_alloc_granule
    return min(g.max_waves_per_simd, g.vgprs_per_lane // alloc)


def vgpr_limit(body: Body) -> int:
    """The most VGPRs the body may name and keep its waves per SIMD (at most the processor's arch VGPRs;
    what it names when that is more, which no assembler takes)."""
    return _vgpr_limit(named_top(body, "v"), named_top(body, "a"), body.processor)


@lru_cache(maxsize=None)
def _vgpr_limit(vgprs: int, agprs: int, name: str) -> int:
    waves = waves_per_simd(vgprs, agprs, name)
    top = processor(name).arch_vgprs
    return next((t for t in range(top, vgprs - 1, -1) if waves_per_simd(t, agprs, name) >= waves), vgprs)


def vgpr_target(vgprs: int, agprs: int = 0, processor: str = "gfx942") -> int | None:
    """The most VGPRs a `processor` kernel may name to fit one more wave per SIMD; None when none would."""
    waves = waves_per_simd(vgprs, agprs, processor)
    return next((t for t in range(vgprs - 1, 0, -1) if waves_per_simd(t, agprs, processor) > waves), None)


def _assign(webs, target: int, movable) -> dict[int, int] | None:
    """New registers below `target` (id(web) -> VGPR) for the `movable` webs, the others staying put;
    longest-lived first, each in the lowest register free wherever it lives. None when one does not fit."""
    taken: dict[int, int] = {}
    for w in webs.webs:
        if w not in movable:
            taken[w.reg] = taken.get(w.reg, 0) | w.occupied
    moves: dict[int, int] = {}
    for w in sorted(movable, key=lambda w: (-w.occupied.bit_count(), w.reg, min(w.defs | w.uses))):
        reg = next((r for r in range(target) if not w.occupied & taken.get(r, 0)), None)
        if reg is None:
            return None
        taken[reg] = taken.get(reg, 0) | w.occupied
        if reg != w.reg:
            moves[id(w)] = reg
    return moves


@lru_cache(maxsize=8)
def _compacted(body: Body) -> Body | None:
    """The body with its VGPR values re-allocated below the next occupancy level: first only the
    values above it move, else every unpinned value is re-allocated (pinned ones keep their
    registers); None when neither fits."""
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    target = vgpr_target(named_top(body, "v"), named_top(body, "a"), body.processor)
    if target is None:
        return None
    above = [w for w in webs.webs if w.reg >= target]
    if any(w.pinned for w in above):
        return None
    moves = _assign(webs, target, set(above))
    if moves is None:
        moves = _assign(webs, target, {w for w in webs.webs if not w.pinned})
    if moves is None:
        return None
    new = webs.renamed(moves)
    return new if named_top(new, "v") <= target and new.no_worse(body) else None


def compact_vgprs(body: Body, i: int) -> Body | None:
    """Move every VGPR value named above the next occupancy level into a lower register that is free
    wherever it lives (instruction i must name such a register); None when some value cannot move."""
    target = vgpr_target(named_top(body, "v"), named_top(body, "a"), body.processor)
    if target is None or not any(k == "v" and r >= target for k, r in body.infos[i].defs | body.infos[i].uses):
        return None
    return _compacted(body)
