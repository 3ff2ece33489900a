"""Operand accessors prepared once per instruction: closures `(machine, group) -> array`.

Scalar readers return uint32 [G] (or uint64 [G] for 64-bit operands); vector readers return
uint32/uint64 arrays broadcastable to [G,64] (SGPRs and constants are [G,1] or 0-d).
Inline float constants are encoded for the operand's type (`f16`, `f32`, `f64`); integer
constants are raw bits (sign-extended to 64 bits when negative); a 32-bit literal used as an f64
operand supplies the high dword.
"""
from __future__ import annotations

import struct
from typing import Callable

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.operands import SPECIAL_PAIRS, SPECIAL_SGPR_INDEX, TTMP_BASE, Operand
from .state import EXEC, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI, VCC, unpack_lanes

Reader = Callable[..., np.ndarray]
U32, U64 = np.uint32, np.uint64
INLINE_INTS = range(-16, 65)


def const_bits(op: Operand, bits: int, ftype: str | None) -> int:
    """Bit pattern of a constant operand as seen by an operand of `bits` width and float type."""
    if op.kind == "float":
        v = float(op.value)
        if op.text.lstrip("-") == "0.15915494":  # inline 1/(2*pi): exact hardware patterns
            pat = {16: 0x3118, 32: 0x3E22F983, 64: 0x3FC45F306DC9C882}[bits]
            return pat
        if bits == 64:
            return struct.unpack("<Q", struct.pack("<d", v))[0]
        if bits == 16 or ftype in ("f16", "bf16"):
            if ftype == "bf16":
                return struct.unpack("<I", struct.pack("<f", v))[0] >> 16
            return int(np.float16(v).view(np.uint16))
        return struct.unpack("<I", struct.pack("<f", v))[0]
    if op.kind != "imm":
        raise UnsupportedInstruction(op.text, None, "not a constant")
    v = int(op.value)
    if bits == 64:
        if ftype == "f64" and v not in INLINE_INTS:
            return (v & 0xFFFFFFFF) << 32
        return v & 0xFFFFFFFFFFFFFFFF
    return v & ((1 << bits) - 1) if bits < 32 else v & 0xFFFFFFFF


def sgpr_index(op: Operand) -> int | None:
    """Index in the 128-entry SGPR file of an sgpr/ttmp/special-register operand."""
    if op.kind == "sgpr":
        return op.index
    if op.kind == "ttmp":
        return TTMP_BASE + op.index
    if op.kind == "special":
        if op.name in SPECIAL_SGPR_INDEX:
            return SPECIAL_SGPR_INDEX[op.name]
        if op.name in SPECIAL_PAIRS:
            return SPECIAL_PAIRS[op.name]
    return None


def scalar_reader(op: Operand, bits: int = 32, ftype: str | None = None) -> Reader:
    """Reader of a scalar operand for all waves of a group: uint32 [G] or uint64 [G]."""
    r = sgpr_index(op)
    if r is not None:
        if bits == 64:
            if r % 2:
                return lambda m, g: m.s[g.sel, r].astype(U64) | (m.s[g.sel, r + 1].astype(U64) << U64(32))
            h = r // 2
            return lambda m, g: m.s64[g.sel, h]
        return lambda m, g: m.s[g.sel, r]
    if op.kind in ("imm", "float"):
        c = np.array(const_bits(op, bits, ftype), U64 if bits == 64 else U32)
        return lambda m, g: c
    if op.kind == "special":
        name = op.name.removeprefix("src_")
        dt = U64 if bits == 64 else U32
        if name == "scc":
            return lambda m, g: m.scc[g.sel].astype(dt)
        if name == "vccz":
            return lambda m, g: (m.s64[g.sel, VCC // 2] == 0).astype(dt)
        if name == "execz":
            return lambda m, g: (m.s64[g.sel, EXEC // 2] == 0).astype(dt)
        apertures = {"shared_base": SHARED_APERTURE_HI, "private_base": PRIVATE_APERTURE_HI,
                     "shared_limit": SHARED_APERTURE_HI + 0xFFFF, "private_limit": PRIVATE_APERTURE_HI + 0xFFFF}
        if name in apertures:
            hi = apertures[name]
            val = (hi << 32) if bits == 64 else hi
            if name.endswith("limit") and bits == 64:
                val |= 0xFFFFFFFF
            c = np.array(val, dt)
            return lambda m, g: c
        if name == "null":
            c = np.array(0, dt)
            return lambda m, g: c
    raise UnsupportedInstruction(op.text, None, "scalar operand")


def scalar_writer(op: Operand, bits: int = 32) -> Callable:
    """Writer `(m, g, value)` of a scalar destination."""
    r = sgpr_index(op)
    if r is not None:
        if bits == 64:
            if r % 2:
                raise UnsupportedInstruction(op.text, None, "misaligned SGPR pair")
            return lambda m, g, val: m.swrite64(g, r, val)
        return lambda m, g, val: m.swrite(g, r, val)
    if op.kind == "special" and op.name in ("null", "scc", "src_scc"):
        if op.name == "null":
            return lambda m, g, val: None
        return lambda m, g, val: m.scc.__setitem__(g.sel, np.asarray(val) != 0)
    raise UnsupportedInstruction(op.text, None, "scalar destination")


def vector_reader(op: Operand, bits: int = 32, ftype: str | None = None) -> Reader:
    """Reader of a VALU source: VGPR/AGPR [G,64]; SGPR [G,1]; constant 0-d. 64-bit -> uint64."""
    if op.kind in ("vgpr", "agpr"):
        i = op.index
        name = "v" if op.kind == "vgpr" else "a"
        if bits == 64:
            return lambda m, g: join64(getattr(m, name)[i][g.sel], getattr(m, name)[i + 1][g.sel])
        if name == "v":
            return lambda m, g: m.v[i][g.sel]
        return lambda m, g: m.a[i][g.sel]
    rd = scalar_reader(op, bits, ftype)
    if op.kind in ("imm", "float"):
        return rd
    return lambda m, g: rd(m, g)[:, None]


def vector_writer(op: Operand, bits: int = 32) -> Callable:
    """Writer `(m, g, value, extra_mask=None)` of a VGPR/AGPR destination under EXEC."""
    if op.kind not in ("vgpr", "agpr"):
        raise UnsupportedInstruction(op.text, None, "vector destination")
    i = op.index
    kind = op.kind

    def write(m, g, val, extra=None):
        file = m.v if kind == "vgpr" else m.a
        if bits == 64:
            lo, hi = split64(val)
            m.vwrite(g, file, i, lo, extra)
            m.vwrite(g, file, i + 1, hi, extra)
        else:
            m.vwrite(g, file, i, val, extra)
    return write


def join64(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Two uint32 register arrays -> uint64 (lo | hi << 32) without shifts."""
    out = np.empty(lo.shape + (2,), U32)
    out[..., 0] = lo
    out[..., 1] = hi
    return out.view(U64).reshape(lo.shape)


def split64(val) -> tuple[np.ndarray, np.ndarray]:
    """uint64 array -> (low dwords, high dwords) as zero-copy strided uint32 views."""
    v = np.ascontiguousarray(val, U64)
    halves = v.view(U32).reshape(v.shape + (2,))
    return halves[..., 0], halves[..., 1]


def reg_file(m, kind: str) -> np.ndarray:
    return m.v if kind == "vgpr" else m.a


def lane_mask_reader(op: Operand) -> Reader:
    """A 64-bit lane mask operand (vcc, s[n:n+1], constant) expanded to bool [G,64]."""
    rd = scalar_reader(op, 64)
    return lambda m, g: unpack_lanes(np.broadcast_to(np.asarray(rd(m, g), U64), (len(g),)))


def pack_lanes(bits: np.ndarray) -> np.ndarray:
    """bool [G,64] -> uint64 [G] lane mask."""
    return np.packbits(bits, axis=1, bitorder="little").view(U64).reshape(-1)
