"""CDNA3 (gfx942) and CDNA4 (gfx950) MFMA semantics with the exact register layouts of the hardware.

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

CDNA4 (gfx950): the same layouts with twice the K of the CDNA3 shapes (16x16x32 / 32x32x16 f16 and
bf16, 16x16x64 / 32x32x32 i8: 8 or 16 elements per lane), fp8/bf8 in the OCP E4M3/E5M2 formats, and
the f8f6f4 MFMAs (16x16x128, 32x32x64; 32 elements per lane), whose A and B formats are the cbsz and
blgp fields (0 fp8 E4M3, 1 bf8 E5M2, 2 fp6 E2M3, 3 bf6 E3M2, 4 fp4 E2M1: OCP MX formats; LLVM
AMDGPU::MFMAScaleFormats), packed densely from bit 0 of the register tuple (fp8 8, fp6 6, fp4 4
registers, as LLVM's gfx950 assembler sizes the operands). `v_mfma_scale_*` multiply each lane's 32 A (B)
elements, one K block of one row (column), by 2^(e-127) of that lane's E8M0 scale byte (0xFF: NaN).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.table import MfmaShape, instr_info, split_mnemonic
from ..target import processor as processor_info
from . import numeric as nm

_BITS = {"f32": 32, "xf32": 32, "f16": 16, "bf16": 16, "i8": 8, "fp8": 8, "bf8": 8,
         "f64": 64, "i32": 32, "fp6": 6, "bf6": 6, "fp4": 4}
# cbsz / blgp of an f8f6f4 MFMA -> element format (LLVM AMDGPU::MFMAScaleFormats)
F8F6F4_FORMATS = ("fp8", "bf8", "fp6", "bf6", "fp4")
# significant bits (mantissa + the implicit one) of each float element type (xf32: f32 with 10 mantissa bits)
SIGNIFICANT_BITS = {"f32": 24, "xf32": 11, "f16": 11, "bf16": 8, "fp8": 4, "bf8": 3, "fp6": 4, "bf6": 3, "fp4": 2}
# (exponent bits, mantissa bits, bias) of the OCP MX 6- and 4-bit formats: no infinity, no NaN
_SMALL = {"fp6": (2, 3, 1), "bf6": (3, 2, 3), "fp4": (2, 1, 1)}


def canonical(mnemonic: str) -> str:
    """The gfx940 name of an MFMA (gfx90a spellings mapped)."""
    return split_mnemonic(mnemonic)[0]


def info(mnemonic: str, processor: str = "gfx942") -> MfmaShape:
    """Shape, register counts and types of a dense MFMA (canonical or gfx90a spelling), from the
    processor's instruction table; SMFMAC and non-MFMA mnemonics are not emulated."""
    try:
        shape = instr_info(mnemonic, processor).mfma
    except UnsupportedInstruction:
        shape = None
    if shape is None or shape.sparse:
        raise UnsupportedInstruction(mnemonic, detail="not a dense MFMA the emulator implements")
    return shape


# ------------------------------------------------------------------------------------ layouts

@lru_cache(maxsize=None)
def input_layout(mnemonic: str, operand: str = "a", processor: str = "gfx942") -> tuple[np.ndarray, np.ndarray]:
    """(lane, element) index arrays of shape [blocks, rows, k] locating ``A[b][i][k]``
    (operand "a") or ``B[b][k][j]`` stored as [b][j][k] (operand "b") before BLGP."""
    f = info(mnemonic, processor)
    rows = f.m if operand == "a" else f.n
    e = rows * f.k * f.blocks // 64
    b, i, k = np.meshgrid(np.arange(f.blocks), np.arange(rows), np.arange(f.k), indexing="ij")
    return i + rows * b + rows * f.blocks * (k // e), k % e


@lru_cache(maxsize=None)
def output_layout(mnemonic: str, processor: str = "gfx942") -> tuple[np.ndarray, np.ndarray]:
    """(register, lane) index arrays of shape [blocks, m, n] locating ``D[b][i][j]``; for f64
    outputs the register index is that of the pair's low dword."""
    f = info(mnemonic, processor)
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

@lru_cache(maxsize=None)
def _small_values(fmt: str) -> np.ndarray:
    """Every code of an OCP MX fp6 / fp4 format -> its float64 value (exact)."""
    eb, mb, bias = _SMALL[fmt]
    codes = np.arange(1 << (1 + eb + mb))
    sign = np.where((codes >> (eb + mb)) & 1, -1.0, 1.0)
    e, m = (codes >> mb) & ((1 << eb) - 1), codes & ((1 << mb) - 1)
    mag = np.where(e == 0, m * 2.0 ** (1 - bias - mb), (m + 2.0 ** mb) * 2.0 ** (e - bias - mb))
    return sign * mag


def small_float(codes: np.ndarray, fmt: str) -> np.ndarray:
    """OCP MX fp6 (E2M3 "fp6", E3M2 "bf6") / fp4 (E2M1 "fp4") codes -> float64 values (exact)."""
    return _small_values(fmt)[np.asarray(codes, np.int64)]


def e8m0(codes: np.ndarray) -> np.ndarray:
    """E8M0 block-scale codes -> float64 factors 2^(code - 127); 0xFF is NaN (OCP MX)."""
    codes = np.asarray(codes, np.int64)
    return np.where(codes == 0xFF, np.nan, np.ldexp(1.0, codes - 127))


def _packed(regs: np.ndarray, width: int, count: int) -> np.ndarray:
    """Elements of `width` bits packed densely from bit 0 of a register tuple: [waves, 64, count]."""
    words = regs.transpose(0, 2, 1).astype(np.uint64)              # [waves, 64, nregs]
    start = np.arange(count) * width
    lo = words[:, :, start // 32] >> (start % 32).astype(np.uint64)
    nxt = np.minimum(start // 32 + 1, words.shape[2] - 1)
    hi = np.where((start % 32 + width > 32)[None, None, :], words[:, :, nxt] << (32 - start % 32).astype(np.uint64), 0)
    return ((lo | hi) & np.uint64((1 << width) - 1)).astype(np.int64)


def _elements(regs: np.ndarray, typ: str, nregs: int, fp8_formats: tuple[str, str] = ("fp8", "bf8"),
              count: int = 0) -> np.ndarray:
    """Per-lane element values [waves, 64, e] (float64, or int64 for i8) of source registers; `count`
    elements of a 6- or 4-bit type."""
    regs = np.asarray(regs, dtype=np.uint32)
    if regs.ndim != 3 or regs.shape[1:] != (nregs, 64):
        raise ValueError(f"expected registers [waves, {nregs}, 64], got {regs.shape}")
    if typ == "f64":
        vals = nm.pack_f64(regs[:, 0::2], regs[:, 1::2])
        return vals.transpose(0, 2, 1)
    w = _BITS[typ]
    if typ in _SMALL and 32 % w:
        return small_float(_packed(regs, w, count), typ)
    shifts = np.arange(0, 32, w, dtype=np.uint32)
    sub = (regs[:, :, None, :] >> shifts[None, None, :, None]) & np.uint32((1 << w) - 1)
    sub = sub.reshape(regs.shape[0], -1, 64).transpose(0, 2, 1)    # [waves, 64, e]
    if typ in _SMALL:
        return small_float(sub[:, :, :count], typ)
    if typ == "i8":
        return sub.astype(np.uint8).view(np.int8).astype(np.int64)
    if typ == "f16":
        bits = nm.f16_to_f32(sub)
    elif typ == "bf16":
        bits = nm.bf16_to_f32(sub)
    elif typ in ("fp8", "bf8"):
        bits = nm.fp8_to_f32(sub, fp8_formats[typ == "bf8"])
    elif typ == "xf32":
        bits = sub & np.uint32(0xFFFFE000)
    else:
        bits = sub
    return nm.as_f32(bits).astype(np.float64)


def f8f6f4_types(mnemonic: str, cbsz: int, blgp: int) -> tuple[str, str]:
    """(A format, B format) of an f8f6f4 MFMA from its cbsz / blgp fields; others raise."""
    if max(cbsz, blgp) >= len(F8F6F4_FORMATS) or min(cbsz, blgp) < 0:
        raise UnsupportedInstruction(mnemonic, detail=f"cbsz:{cbsz} blgp:{blgp} name no f8f6f4 format")
    return F8F6F4_FORMATS[cbsz], F8F6F4_FORMATS[blgp]


def source_regs(f: MfmaShape, typ: str, operand: str = "a") -> int:
    """Registers per lane of an A (B) operand holding `typ` elements."""
    rows = f.m if operand == "a" else f.n
    return -(-rows * f.k * f.blocks * _BITS[typ] // (64 * 32))


def execute(mnemonic: str, a, b, c, cbsz: int = 0, abid: int = 0, blgp: int = 0,
            neg: tuple[int, int, int] = (0, 0, 0), processor: str = "gfx942",
            scale_a=None, scale_b=None) -> np.ndarray:
    """D = A x B + C for each block of each wave; returns D registers [waves, cd_regs, 64].

    `c` must already be expanded to registers (an inline-constant C is the executor's
    broadcast). CBSZ/ABID broadcast A block ``(b >> cbsz << cbsz) + abid`` to block b
    (multi-block MFMAs only); BLGP reads B lanes per :func:`blgp_lanes`; `neg` negates A, B,
    C and exists only on the f64 MFMAs, where the encoding reuses the BLGP field. On the f8f6f4
    MFMAs cbsz / blgp are the A / B formats (`a`, `b` hold `source_regs` registers of them) and
    `scale_a` / `scale_b` ([waves, 64] E8M0 codes, one per lane) scale each lane's elements."""
    f = info(mnemonic, processor)
    fp8 = processor_info(processor).fp8_formats
    if f.in_type == "f8f6f4":
        if abid or any(neg):
            raise UnsupportedInstruction(mnemonic, detail=f"abid:{abid} neg:{list(neg)}")
        ta, tb = f8f6f4_types(mnemonic, cbsz, blgp)
        name = canonical(mnemonic)
        a_lane, a_el = input_layout(name, "a", processor)
        b_lane, b_el = input_layout(name, "b", processor)
        e = f.m * f.k // 64
        avals = _elements(a, ta, source_regs(f, ta, "a"), fp8, e)
        bvals = _elements(b, tb, source_regs(f, tb, "b"), fp8, e)
        if scale_a is not None:
            avals = avals * e8m0(np.asarray(scale_a, np.int64))[:, :, None]
            bvals = bvals * e8m0(np.asarray(scale_b, np.int64))[:, :, None]
        return _accumulate_f32(f, name, avals[:, a_lane, a_el], bvals[:, b_lane, b_el], c, processor, (ta, tb))
    if cbsz or abid:
        if f.blocks == 1 or (1 << cbsz) > f.blocks or abid >= (1 << cbsz):
            raise UnsupportedInstruction(mnemonic, detail=f"cbsz:{cbsz} abid:{abid}")
    is_f64 = f.out_type == "f64"
    if (blgp and is_f64) or (any(neg) and not is_f64) or not 0 <= blgp < 8:
        raise UnsupportedInstruction(mnemonic, detail=f"blgp:{blgp} neg:{list(neg)}")

    name = canonical(mnemonic)
    a_lane, a_el = input_layout(name, "a", processor)
    b_lane, b_el = input_layout(name, "b", processor)
    av = _elements(a, f.in_type, f.a_regs, fp8)[:, a_lane, a_el]               # [w, blk, m, k]
    bv = _elements(b, f.b_type, f.b_regs, fp8)[:, blgp_lanes(blgp)[b_lane], b_el]  # [w, blk, n, k]
    group = 1 << cbsz
    av = av[:, (np.arange(f.blocks) // group) * group + abid]
    d_reg, d_lane = output_layout(name, processor)
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
    return _accumulate_f32(f, name, av, bv, c, processor, (f.in_type, f.b_type))


def _accumulate_f32(f: MfmaShape, name: str, av: np.ndarray, bv: np.ndarray, c, processor: str,
                    types: tuple[str, str]) -> np.ndarray:
    """f32 D = sum over k (in order, float64) of A x B, plus C, rounded once; av/bv [w, blk, rows, k]
    hold elements of `types` (A, B), scaled by powers of two at most."""
    d_reg, d_lane = output_layout(name, processor)
    c = np.asarray(c, dtype=np.uint32)
    if c.ndim != 3 or c.shape[1:] != (f.cd_regs, 64) or c.shape[0] != av.shape[0]:
        raise ValueError(f"expected C registers [{av.shape[0]}, {f.cd_regs}, 64], got {c.shape}")
    out = np.zeros_like(c)
    c64 = nm.as_f32(c[:, d_reg, d_lane]).astype(np.float64)
    acc = _exact_sum(av, bv, c64, SIGNIFICANT_BITS[types[0]], SIGNIFICANT_BITS[types[1]])
    if acc is None:
        with np.errstate(over="ignore", invalid="ignore"):
            acc = av[:, :, :, None, 0] * bv[:, :, None, :, 0]
            for k in range(1, f.k):
                acc = acc + av[:, :, :, None, k] * bv[:, :, None, :, k]
            acc = acc + c64
    with np.errstate(over="ignore"):
        out[:, d_reg, d_lane] = nm.as_u32(acc.astype(np.float32))
    return out


def _lowest_bit(x: np.ndarray, bits: int) -> int | None:
    """A lower bound on the exponent of the least significant set bit of `x`'s nonzero values, which
    carry at most `bits` significant bits each (None: all zero)."""
    smallest = float(np.min(np.abs(x), where=x != 0, initial=np.inf))
    return None if smallest == np.inf else math.frexp(smallest)[1] - bits


def _exact_sum(av: np.ndarray, bv: np.ndarray, c64: np.ndarray, bits_a: int, bits_b: int) -> np.ndarray | None:
    """sum over k of A x B, plus C (f32), as one matrix product when that is bit-identical to the
    in-order float64 sum: every product and partial sum, in any order, is then a multiple of a power
    of two at or below the smallest bit set in any product or C and below 2^53 of it, so both are the
    exact sum (an exact zero's sign follows the in-order rule). A and B elements carry at most
    `bits_a` / `bits_b` significant bits. None otherwise (a non-finite value, too wide a range of
    magnitudes)."""
    if not (np.isfinite(av).all() and np.isfinite(bv).all() and np.isfinite(c64).all()):
        return None
    lows = [_lowest_bit(av, bits_a), _lowest_bit(bv, bits_b)]
    low = [lows[0] + lows[1]] if None not in lows else []
    low_c = _lowest_bit(c64, SIGNIFICANT_BITS["f32"])
    low = min(low + ([low_c] if low_c is not None else []), default=None)
    if low is None:
        return None
    with np.errstate(over="ignore"):
        top = float((np.abs(av) @ np.abs(bv).swapaxes(-1, -2) + np.abs(c64)).max()) * (1 + 2.0 ** -40)
    if not np.isfinite(top) or top >= 2.0 ** (low + 53):
        return None
    acc = av @ bv.swapaxes(-1, -2) + c64
    w, blk, i, j = np.nonzero(acc == 0)
    if w.size:  # in order, an exact zero is -0 only when every product and C are -0
        terms = av[w, blk, i] * bv[w, blk, j]
        negative = np.signbit(terms).all(axis=-1) & np.signbit(c64[w, blk, i, j])
        acc[w, blk, i, j] = np.where(negative, -0.0, 0.0)
    return acc
