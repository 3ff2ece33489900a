"""Read-modify-write atomics on global memory with sequential semantics for colliding lanes:
lanes are applied in order (waves in group order, lanes 0..63), so returned pre-op values and
float sums are those of that serial order."""
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
    if op == "pk_add_f16":
        lo = numeric.f32_to_f16((numeric.f16_to_f32(old & U32(0xFFFF)) + numeric.f16_to_f32(src & U32(0xFFFF))))
        hi = numeric.f32_to_f16((numeric.f16_to_f32(old >> U32(16)) + numeric.f16_to_f32(src >> U32(16))))
        return lo.astype(U32) | (hi.astype(U32) << U32(16))
    if op == "pk_add_bf16":
        lo = numeric.f32_to_bf16(numeric.bf16_to_f32(old & U32(0xFFFF)) + numeric.bf16_to_f32(src & U32(0xFFFF)))
        hi = numeric.f32_to_bf16(numeric.bf16_to_f32(old >> U32(16)) + numeric.bf16_to_f32(src >> U32(16)))
        return lo.astype(U32) | (hi.astype(U32) << U32(16))
    raise UnsupportedInstruction(f"atomic {op}")


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
