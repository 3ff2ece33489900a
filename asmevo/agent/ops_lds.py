"""Merging LDS accesses: two `ds_read_b32` (`ds_read_b64`) or two `ds_write_b32` (`ds_write_b64`) of one
block through the same address VGPR become one `ds_read2_b32` (`ds_read2_b64`, `ds_write2_*`), or its
`st64` form when both offsets are multiples of 64 elements: what LLVM's SILoadStoreOptimizer does to
compiled code (`llvm/lib/Target/AMDGPU/SILoadStoreOptimizer.cpp`), for hand-written assembly that
kept the pairs.

What it saves is one issue slot and one lgkmcnt event per pair, nothing in the LDS: the merged access
moves the same bytes (two b32s are 2 x 64 lanes x 4 B, a read2_b32 64 lanes x 8 B, through 128 B per
LDS cycle either way: ROCm Compute Profiler, "Local data share"), so the timing model's LDS term
(`model.costs.lds_bytes`) stays as it was.

A `ds_read2_b32 vD, vA offset0:a offset1:b` reads the dwords at vA + 4a and vA + 4b into vD and vD+1
(b64: 8-byte elements; st64: units of 64 elements), each as a `ds_read_b32` of that address would:
so a pair merges when

* both have the same mnemonic, address VGPR and no modifier but `offset:`; each offset is a multiple of
  the element size and fits the 8-bit element offsets (or, st64, both are multiples of 64 elements
  that fit); two writes have different offsets (one instruction writing one address twice does not
  say which lands);
* a read pair's destinations are one tuple whose first register is even (gfx90a and later require
  aligned VGPR tuples: LLVM `FeatureRequiresAlignedVGPRs`), in either order (offset0 is the low
  register's);
* the second moves to the first's place: nothing from the first on writes what the second reads
  (address, data, EXEC), nothing in between reads or writes a read's destination, writes LDS (a write,
  atomic or LDS-DMA load) before a read, or touches LDS at all before a write, and no barrier lies
  in between (another wave's LDS accesses are ordered by it);
* the lgkmcnt counts: the pair issues one event fewer, so every later `s_waitcnt` whose lgkmcnt window
  may reach back to the pair (fewer lgkm events since it, on some path, than its count) waits for one
  fewer event outstanding; the waitcnt analysis then re-checks the result (`Body.no_worse`).
"""
from __future__ import annotations

from ..isa.instruction import Instruction
from ..isa.regs import is_lds_dma
from ..isa.table import instr_info
from ..isa.waitcnt import COUNTER_MAX, decode_waitcnt
from .body import Body, across_block, make_item
from .ops_waitcnt import wait_text

MERGED = {"ds_read_b32": "ds_read2_b32", "ds_read_b64": "ds_read2_b64",
          "ds_write_b32": "ds_write2_b32", "ds_write_b64": "ds_write2_b64"}
_UNITS = 255   # offset0/offset1 are 8-bit element counts
_WINDOW = 64   # instructions after an access searched for its partner
_ORDERING = ("s_barrier", "s_sleep", "s_sethalt", "s_trap", "s_setprio", "s_icache_inv")


def mergeable(body: Body, i: int) -> bool:
    return body.instructions[i].mnemonic in MERGED


def _offset(ins: Instruction) -> int | None:
    """The byte offset of a single-address DS access, None when it carries another modifier."""
    if any(not m.startswith("offset:") for m in ins.modifiers):
        return None
    value = ins.modifier("offset")
    return int(value, 0) if value else 0


def _address(ins: Instruction):
    return ins.operands[1] if ins.mnemonic.startswith("ds_read") else ins.operands[0]


def _offsets(first: int, second: int, size: int, write: bool) -> tuple[str, int, int] | None:
    """(suffix, offset0 units, offset1 units) encoding byte offsets `first` and `second` of `size`-byte
    elements, or None."""
    if first % size or second % size or (write and first == second):
        return None
    if max(first, second) // size <= _UNITS:
        return "", first // size, second // size
    unit = 64 * size
    if first % unit == 0 and second % unit == 0 and max(first, second) // unit <= _UNITS:
        return "st64", first // unit, second // unit
    return None


def _merged_text(a: Instruction, b: Instruction, processor: str) -> str | None:
    """The one access doing what `a` then `b` do (same mnemonic and address), or None."""
    oa, ob = _offset(a), _offset(b)
    if oa is None or ob is None:
        return None
    size = instr_info(a.mnemonic, processor).access_bytes
    if a.mnemonic.startswith("ds_write"):
        enc = _offsets(oa, ob, size, True)
        operands = f"{a.operands[0].text}, {a.operands[1].text}, {b.operands[1].text}"
    else:
        da, db, regs = a.operands[0], b.operands[0], size // 4
        if da.kind != db.kind or da.kind not in ("vgpr", "agpr"):
            return None
        if db.index == da.index + regs:
            low, enc = da, _offsets(oa, ob, size, False)
        elif da.index == db.index + regs:
            low, enc = db, _offsets(ob, oa, size, False)
        else:
            return None
        if low.index % 2:
            return None
        operands = f"{low.kind[0]}[{low.index}:{low.index + 2 * regs - 1}], {a.operands[1].text}"
    if enc is None:
        return None
    suffix, o0, o1 = enc
    mnemonic = MERGED[a.mnemonic].replace("2_", f"2{suffix}_")
    return " ".join([f"{mnemonic} {operands}", *([f"offset0:{o0}"] if o0 else []), *([f"offset1:{o1}"] if o1 else [])])


def _writes_lds(body: Body, k: int) -> bool:
    ins = body.instructions[k]
    memory = instr_info(ins.mnemonic, body.processor).memory
    return (body.infos[k].family == "ds" and memory in ("store", "atomic")) or is_lds_dma(ins, body.processor)


def _movable_to(body: Body, i: int, j: int) -> bool:
    """Whether access j can run at access i's place (i < j, one block): see the module docstring."""
    moved = body.infos[j]
    write = body.instructions[j].mnemonic.startswith("ds_write")
    for k in range(i, j):
        info, ins = body.infos[k], body.instructions[k]
        if info.defs & moved.uses or ins.mnemonic in _ORDERING:
            return False
        if k == i:
            continue
        if write and (info.family == "ds" or is_lds_dma(ins, body.processor)):
            return False
        if not write and ((info.uses | info.defs) & moved.defs or _writes_lds(body, k)):
            return False
    return True


def _partner(body: Body, i: int) -> tuple[int, str] | None:
    """The first later access of i's block (within `_WINDOW`) that merges with i, and the merged text."""
    instrs = body.instructions
    a = instrs[i]
    if a.mnemonic not in MERGED or len(a.operands) < 2:
        return None
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    for j in range(i + 1, min(blk.end, i + 1 + _WINDOW)):
        b = instrs[j]
        if b.mnemonic != a.mnemonic or _address(b).text != _address(a).text:
            continue
        text = _merged_text(a, b, body.processor)
        if text is not None and _movable_to(body, i, j):
            return j, text
    return None


def _lgkm(body: Body, k: int) -> bool:
    return any(c == "lgkmcnt" for c, _ in instr_info(body.instructions[k].mnemonic, body.processor).counters)


def _recounted(body: Body, i: int, j: int) -> dict[int, int]:
    """Instruction index -> new lgkmcnt for the waits that may count access j's event once i and j are
    one event at i: those reached from j with fewer lgkm events on the way (i counted, j not: the merged
    body's events) than their count, lowered by one. A path ends at an lgkmcnt(0) wait or once the
    count can exceed any wait's."""
    instrs, cfg = body.instructions, body.cfg
    cap = COUNTER_MAX["lgkmcnt"]
    out: dict[int, int] = {}
    fewest: dict[int, int] = {}
    work = [(cfg.block_of[j], j + 1, 0)]
    while work:
        b, start, events = work.pop()
        blk = cfg.blocks[b]
        ended = False
        for k in range(start, blk.end):
            limit = decode_waitcnt(instrs[k]).get("lgkmcnt") if instrs[k].mnemonic == "s_waitcnt" else None
            if limit is not None and events < limit:
                out[k] = limit - 1
            if limit == 0:
                ended = True
                break
            if k != j and _lgkm(body, k):
                events += 1
                if events >= cap:
                    ended = True
                    break
        if ended:
            continue
        for s in blk.succs:
            if fewest.get(s, cap) > events:
                fewest[s] = events
                work.append((s, cfg.blocks[s].start, events))
    return out


def _merge(body: Body, i: int) -> Body | None:
    """`body` with access i and its partner merged at i's place and the waits recounted (unchecked)."""
    found = _partner(body, i)
    if found is None:
        return None
    j, text = found
    waits = _recounted(body, i, j)
    items = list(body.items)
    items[body.pos[i]] = make_item(text)
    for k, limit in waits.items():
        limits = {**decode_waitcnt(body.instructions[k]), "lgkmcnt": limit}
        items[body.pos[k]] = make_item(wait_text(limits))
    del items[body.pos[j]]
    return body.replace(items)


def merge_lds(body: Body, i: int) -> Body | None:
    """Merge LDS access i with the first later access of its block it pairs with (module docstring)."""
    new = _merge(body, i)
    return new if new is not None and new.no_worse(body, full=False) else None


def merge_lds_block(body: Body, i: int) -> Body | None:
    """merge_lds at every access of instruction i's block, first to last."""
    new = across_block(body, i, lambda cur, k: _merge(cur, k) if mergeable(cur, k) else None)
    return new if new is not None and new.no_worse(body, full=False) else None
