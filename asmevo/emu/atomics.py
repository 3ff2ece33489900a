"""Read-modify-write atomics on global memory with sequential semantics for colliding lanes:
lanes are applied in order (waves in group order, lanes 0..63), so returned pre-op values and
float sums are those of that serial order.

`AtomicWriters` records, per launch, which workgroup last updated each global dword with an atomic,
so that a store overwriting another workgroup's atomic update is a `workgroup_order` finding: the
emulator's order of workgroups (batches, lowest PC first) is one hardware may not follow."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedInstruction
from . import numeric

U32, U64 = np.uint32, np.uint64
ATOMIC_OPS = {"swap", "cmpswap", "add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "inc", "dec",
              "add_f32", "add_f64", "min_f64", "max_f64", "pk_add_f16", "pk_add_bf16"}
_UFUNC_AT = {"add": np.add, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
             "umin": np.minimum, "umax": np.maximum}


@dataclass
class AtomicRequest:
    """Operation and per-lane data (uint32 [G,64,ndata]) of an atomic, passed through addressing."""

    op: str
    ndw: int
    data: np.ndarray
    ret: bool


def _combine(op: str, old: np.ndarray, d: np.ndarray, ndw: int) -> np.ndarray:
    """New memory value from old and data (words of uint32 or uint64 as ndw)."""
    bits = 32 * ndw
    it = np.int64 if ndw == 2 else np.int32
    src = d[:, 0] if ndw == 1 else d[:, 0].astype(U64) | (d[:, 1].astype(U64) << U64(32))
    dt = U64 if ndw == 2 else U32
    src = src.astype(dt)
    if op == "swap":
        return src
    if op == "cmpswap":
        cmp = d[:, 1] if ndw == 1 else d[:, 2].astype(U64) | (d[:, 3].astype(U64) << U64(32))
        return np.where(old == cmp.astype(dt), src, old)
    if op == "add":
        return (old + src).astype(dt)
    if op == "sub":
        return (old - src).astype(dt)
    if op in ("and", "or", "xor"):
        return {"and": old & src, "or": old | src, "xor": old ^ src}[op]
    if op in ("umin", "umax"):
        return np.minimum(old, src) if op == "umin" else np.maximum(old, src)
    if op in ("smin", "smax"):
        f = np.minimum if op == "smin" else np.maximum
        return f(old.view(it), src.view(it)).view(dt)
    if op == "inc":
        return np.where(old >= src, dt(0), old + dt(1)).astype(dt)
    if op == "dec":
        return np.where((old == 0) | (old > src), src, old - dt(1)).astype(dt)
    if op == "add_f32":
        return (old.view(np.float32) + src.view(np.float32)).view(U32)
    if op == "add_f64":
        return (old.view(np.float64) + src.view(np.float64)).view(U64)
    if op in ("min_f64", "max_f64"):
        f = np.fmin if op == "min_f64" else np.fmax
        return f(old.view(np.float64), src.view(np.float64)).view(U64)
    if op in _PACKED16:
        widen, narrow = _PACKED16[op]
        halves = [narrow(_f32_sum(widen(old >> U32(s) & U32(0xFFFF)), widen(src >> U32(s) & U32(0xFFFF))))
                  for s in (0, 16)]
        return halves[0].astype(U32) | (halves[1].astype(U32) << U32(16))
    raise UnsupportedInstruction(f"atomic {op}")


# Packed 16-bit float adds (`*_atomic_pk_add_{f16,bf16}`, `ds_pk_add_{f16,bf16}`): each half of the dword is
# a float add (LLVM FLATInstructions.td / DSInstructions.td: FPAtomic, v2f16 / v2bf16 fadd). The halves are
# widened to f32 bit patterns, added as f32 and rounded once to nearest even: f32 carries 24 >= 2p + 2
# significand bits for f16 (p = 11) and bf16 (p = 8), so the f32-rounded sum rounds to the correctly
# rounded 16-bit sum (double rounding is innocuous, Figueroa 1995), and f32 covers both exponent ranges.
_PACKED16 = {"pk_add_f16": (numeric.f16_to_f32, numeric.f32_to_f16),
             "pk_add_bf16": (numeric.bf16_to_f32, numeric.f32_to_bf16)}


def _f32_sum(a_bits: np.ndarray, b_bits: np.ndarray) -> np.ndarray:
    """f32 bit patterns of the f32 sum of two arrays of f32 bit patterns."""
    return numeric.as_u32(numeric.as_f32(a_bits) + numeric.as_f32(b_bits))


def apply_atomic(m, ins, off: np.ndarray, op: str, ndw: int, data: np.ndarray, ret: bool) -> np.ndarray:
    """Apply an atomic at heap offsets `off` [N]; return the pre-op values as uint32 [N, ndw]."""
    size = 4 * ndw
    if (off % size).any():
        m.find("out_of_bounds", ins.address, 0, f"{ins.mnemonic}: misaligned atomic address")
        keep = off % size == 0
        out = np.zeros((len(off), ndw), U32)
        out[keep] = apply_atomic(m, ins, off[keep], op, ndw, data[keep], ret)
        return out
    m.memory.touch(off, size)
    words = m.memory.heap.view(U64 if ndw == 2 else U32)
    idx = off // size
    old_all = np.zeros(len(off), words.dtype)
    uniq, first = np.unique(idx, return_index=True)
    if len(uniq) == len(idx):
        old_all = words[idx].copy()
        words[idx] = _combine(op, old_all, data, ndw)
    elif not ret and (op in _UFUNC_AT or op in ("add_f32", "add_f64")):
        src = data[:, 0] if ndw == 1 else data[:, 0].astype(U64) | (data[:, 1].astype(U64) << U64(32))
        if op == "add_f32":
            np.add.at(words.view(np.float32), idx, src.view(np.float32))
        elif op == "add_f64":
            np.add.at(words.view(np.float64), idx, src.astype(U64).view(np.float64))
        else:
            _UFUNC_AT[op].at(words, idx, src.astype(words.dtype))
    else:
        remaining = np.arange(len(idx))
        while len(remaining):
            _, pos = np.unique(idx[remaining], return_index=True)
            take = remaining[pos]
            old = words[idx[take]].copy()
            words[idx[take]] = _combine(op, old, data[take], ndw)
            old_all[take] = old
            remaining = np.setdiff1d(remaining, take, assume_unique=True)
    if ndw == 2:
        return np.stack([(old_all & U64(0xFFFFFFFF)).astype(U32), (old_all >> U64(32)).astype(U32)], axis=-1)
    return old_all[:, None].astype(U32)


class AtomicWriters:
    """One launch's global dwords updated by atomics, each with the workgroup that updated it last, and the
    workgroups that executed an atomic returning its pre-op value (they can tell which of them came last,
    so their stores may follow other workgroups' atomics by design: e.g. the last of a split-K's
    workgroups clearing a workspace). Pages of PAGE dwords hold workgroup id + 1 (0: no atomic)."""

    PAGE = 1024

    def __init__(self) -> None:
        self.pages: dict[int, np.ndarray] = {}
        self.returned: set[int] = set()

    def record(self, off: np.ndarray, size: int, wg: np.ndarray, returned: bool) -> None:
        """Atomics of `size` bytes at heap offsets `off` (4-aligned) by workgroups `wg` (one per lane)."""
        if returned:
            self.returned.update(np.unique(wg).tolist())
        dw = np.concatenate([off // 4 + j for j in range(size // 4)])
        who = np.tile(np.asarray(wg, np.int64) + 1, size // 4)
        for p in np.unique(dw // self.PAGE).tolist():
            sel = dw // self.PAGE == p
            page = self.pages.setdefault(p, np.zeros(self.PAGE, np.int64))
            page[dw[sel] % self.PAGE] = who[sel]

    def overwritten(self, off: np.ndarray, size: int, wg: np.ndarray) -> tuple[int, int] | None:
        """(store lane, other workgroup) of the first lane of a `size`-byte store at heap offsets `off` by
        workgroups `wg` that overwrites a dword another workgroup updated by atomic; None when no lane does.
        Workgroups in `returned` are exempt."""
        first, last = off // 4, (off + size - 1) // 4
        for j in range(int((last - first).max()) + 1):
            dw = first + j
            pages = dw // self.PAGE
            for p in np.intersect1d(np.unique(pages), np.fromiter(self.pages, np.int64)).tolist():
                sel = np.nonzero((pages == p) & (dw <= last))[0]
                other = self.pages[p][dw[sel] % self.PAGE] - 1
                hit = (other >= 0) & (other != wg[sel])
                if hit.any():
                    lanes = sel[hit]
                    keep = ~np.isin(wg[lanes], list(self.returned))
                    if keep.any():
                        k = int(np.nonzero(keep)[0][0])
                        return int(lanes[k]), int(other[hit][k])
        return None
