"""CDNA3 (gfx942) MFMA semantics with the exact register layouts of the hardware.

Register arrays are uint32 of shape ``[waves, nregs, 64]``: exactly what the instruction's
source operands hold. Layouts (derived in README_mfma.md, checked against Triton's MFMA
linear layouts in tests/emu/test_mfma.py) with ``e`` elements per lane, ``B`` blocks:

* A (and B with ``j`` for ``i``): element ``A[b][i][k]`` is element ``k % e`` of lane
  ``i + M*b + M*B*(k // e)``; element ``r`` of a lane is bits ``[w*(r%p), w*(r%p)+w)`` of
  register ``r // p`` (``p`` = 32 / width ``w``); an f64 element is a register pair.
* C/D, 32-bit: rows are grouped in quads ``q = i // 4``; register ``4*(t // G) + i % 4``,
  lane ``N*(t % G) + j`` with ``G = 64 // N`` and ``t`` the slot of (block, quad).
  C/D, f64: the same with one row per slot and register pairs.

Arithmetic: products are exact (in float64) and the K products of one output are summed in
k order in float64, C added last, then rounded once (RNE) to f32. The hardware also computes
exact products and sums with more than f32 precision, but its internal order/width is
undocumented, so results may differ from silicon when the float64 sum is inexact: the
emulated result is within 0.5 ulp(f32) of the float64 sum, which is within
``K * 2**-53 * (sum|a*b| + |c|)`` of the exact value. f64 MFMAs are evaluated as
``((c + a0*b0) + a1*b1) + ...`` with float64 rounding at every step. i8 MFMAs sum exactly and
wrap to int32. Denormals are kept (MFMA ignores the MODE denormal controls here); xf32
inputs keep sign, exponent and the top 10 mantissa bits (low 13 bits dropped, an
unverified choice).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.table import MfmaShape, instr_info, split_mnemonic
from . import numeric as nm

_BITS = {"f32": 32, "xf32": 32, "f16": 16, "bf16": 16, "i8": 8, "fp8": 8, "bf8": 8,
         "f64": 64, "i32": 32}


def canonical(mnemonic: str) -> str:
    """The gfx940 name of an MFMA (gfx90a spellings mapped)."""
    return split_mnemonic(mnemonic)[0]


def info(mnemonic: str) -> MfmaShape:
    """Shape, register counts and types of a dense MFMA (canonical or gfx90a spelling), from the
    instruction table; SMFMAC and non-MFMA mnemonics are not emulated."""
    try:
        shape = instr_info(mnemonic).mfma
    except UnsupportedInstruction:
        shape = None
    if shape is None or shape.sparse:
        raise UnsupportedInstruction(mnemonic, detail="not a dense MFMA the emulator implements")
    return shape


# ------------------------------------------------------------------------------------ layouts

@lru_cache(maxsize=None)
def input_layout(mnemonic: str, operand: str = "a") -> tuple[np.ndarray, np.ndarray]:
    """(lane, element) index arrays of shape [blocks, rows, k] locating ``A[b][i][k]``
    (operand "a") or ``B[b][k][j]`` stored as [b][j][k] (operand "b") before BLGP."""
    f = info(mnemonic)
    rows = f.m if operand == "a" else f.n
    e = rows * f.k * f.blocks // 64
    b, i, k = np.meshgrid(np.arange(f.blocks), np.arange(rows), np.arange(f.k), indexing="ij")
    return i + rows * b + rows * f.blocks * (k // e), k % e


@lru_cache(maxsize=None)
def output_layout(mnemonic: str) -> tuple[np.ndarray, np.ndarray]:
    """(register, lane) index arrays of shape [blocks, m, n] locating ``D[b][i][j]``; for f64
    outputs the register index is that of the pair's low dword."""
    f = info(mnemonic)
    b, i, j = np.meshgrid(np.arange(f.blocks), np.arange(f.m), np.arange(f.n), indexing="ij")
    slots = 64 // f.n                                   # row groups per register (lane slots)
    rows_per_group = 1 if f.out_type == "f64" else 4    # consecutive rows in consecutive regs
    groups = f.m // rows_per_group                      # row groups per block
    q, s = i // rows_per_group, i % rows_per_group
    t = b * groups + q if groups >= slots else q * (slots // groups) + b
    width = _BITS[f.out_type] // 32
    reg = (rows_per_group * (t // slots) + s) * width
    return reg, f.n * (t % slots) + j


def blgp_lanes(blgp: int) -> np.ndarray:
    """Source lane of B for each lane under the BLGP lane-group pattern."""
    lane = np.arange(64)
    return {0: lane, 1: lane % 32, 2: 32 + lane % 32, 3: (lane + 16) % 64, 4: lane % 16,
            5: 16 + lane % 16, 6: 32 + lane % 16, 7: 48 + lane % 16}[blgp]


# ----------------------------------------------------------------------------------- execute

def _elements(regs: np.ndarray, typ: str, nregs: int) -> np.ndarray:
    """Per-lane element values [waves, 64, e] (float64, or int64 for i8) of source registers."""
    regs = np.asarray(regs, dtype=np.uint32)
    if regs.ndim != 3 or regs.shape[1:] != (nregs, 64):
        raise ValueError(f"expected registers [waves, {nregs}, 64], got {regs.shape}")
    if typ == "f64":
        vals = nm.pack_f64(regs[:, 0::2], regs[:, 1::2])
        return vals.transpose(0, 2, 1)
    w = _BITS[typ]
    shifts = np.arange(0, 32, w, dtype=np.uint32)
    sub = (regs[:, :, None, :] >> shifts[None, None, :, None]) & np.uint32((1 << w) - 1)
    sub = sub.reshape(regs.shape[0], -1, 64).transpose(0, 2, 1)    # [waves, 64, e]
    if typ == "i8":
        return sub.astype(np.uint8).view(np.int8).astype(np.int64)
    if typ == "f16":
        bits = nm.f16_to_f32(sub)
    elif typ == "bf16":
        bits = nm.bf16_to_f32(sub)
    elif typ in ("fp8", "bf8"):
        bits = nm.fp8_to_f32(sub, typ)
    elif typ == "xf32":
        bits = sub & np.uint32(0xFFFFE000)
    else:
        bits = sub
    return nm.as_f32(bits).astype(np.float64)


def execute(mnemonic: str, a, b, c, cbsz: int = 0, abid: int = 0, blgp: int = 0,
            neg: tuple[int, int, int] = (0, 0, 0)) -> np.ndarray:
    """D = A x B + C for each block of each wave; returns D registers [waves, cd_regs, 64].

    `c` must already be expanded to registers (an inline-constant C is the executor's
    broadcast). CBSZ/ABID broadcast A block ``(b >> cbsz << cbsz) + abid`` to block b
    (multi-block MFMAs only); BLGP reads B lanes per :func:`blgp_lanes`; `neg` negates A, B,
    C and exists only on the f64 MFMAs, where the encoding reuses the BLGP field."""
    f = info(mnemonic)
    if cbsz or abid:
        if f.blocks == 1 or (1 << cbsz) > f.blocks or abid >= (1 << cbsz):
            raise UnsupportedInstruction(mnemonic, detail=f"cbsz:{cbsz} abid:{abid}")
    is_f64 = f.out_type == "f64"
    if (blgp and is_f64) or (any(neg) and not is_f64) or not 0 <= blgp < 8:
        raise UnsupportedInstruction(mnemonic, detail=f"blgp:{blgp} neg:{list(neg)}")

    name = canonical(mnemonic)
    a_lane, a_el = input_layout(name, "a")
    b_lane, b_el = input_layout(name, "b")
    av = _elements(a, f.in_type, f.a_regs)[:, a_lane, a_el]               # [w, blk, m, k]
    bv = _elements(b, f.b_type, f.b_regs)[:, blgp_lanes(blgp)[b_lane], b_el]  # [w, blk, n, k]
    group = 1 << cbsz
    av = av[:, (np.arange(f.blocks) // group) * group + abid]
    d_reg, d_lane = output_layout(name)
    c = np.asarray(c, dtype=np.uint32)
    if c.ndim != 3 or c.shape[1:] != (f.cd_regs, 64) or c.shape[0] != av.shape[0]:
        raise ValueError(f"expected C registers [{av.shape[0]}, {f.cd_regs}, 64], got {c.shape}")
    out = np.zeros_like(c)

    if f.out_type == "i32":
        acc = np.einsum("wbik,wbjk->wbij", av, bv) + c.view(np.int32)[:, d_reg, d_lane]
        out[:, d_reg, d_lane] = (acc & 0xFFFFFFFF).astype(np.uint32)
        return out

    sa, sb, sc = (-1.0 if x else 1.0 for x in neg)
    av, bv = av * sa, bv * sb
    if is_f64:
        acc = nm.pack_f64(c[:, d_reg, d_lane], c[:, d_reg + 1, d_lane]) * sc
        for k in range(f.k):
            acc = acc + av[:, :, :, None, k] * bv[:, :, None, :, k]
        lo, hi = nm.unpack_f64(acc)
        out[:, d_reg, d_lane], out[:, d_reg + 1, d_lane] = lo, hi
        return out
    acc = av[:, :, :, None, 0] * bv[:, :, None, :, 0]
    for k in range(1, f.k):
        acc = acc + av[:, :, :, None, k] * bv[:, :, None, :, k]
    acc = acc + nm.as_f32(c[:, d_reg, d_lane]).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        out[:, d_reg, d_lane] = nm.as_u32(acc.astype(np.float32))
    return out
