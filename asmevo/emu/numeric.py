"""Bit-exact floating-point format conversions for the gfx942 emulator.

Every function takes and returns raw bit patterns as unsigned numpy integer arrays (any shape)
and is vectorised; no float arithmetic decides a result bit. Formats:

* f16 (IEEE binary16), bf16, f32, f64 (as lo/hi dword pairs);
* FP8 as on gfx942 (CDNA3): the FNUZ variants ``"fp8"`` = E4M3FNUZ (bias 8, max 240) and
  ``"bf8"`` = E5M2FNUZ (bias 16, max 57344). Both have a single NaN 0x80, no infinity and no
  negative zero. The OCP variants of gfx950 are ``"e4m3fn"`` (bias 7, NaN S.1111.111, max 448)
  and ``"e5m2"`` (IEEE-like, bias 15, with infinities).

NaN conventions (not observable on hardware here; chosen to match LLVM's lowering and the
IEEE-mode behaviour of the VALU): f16<->f32 quiets signalling NaNs and keeps sign and the
top payload bits; bf16 rounding follows LLVM's gfx942 integer lowering of ``fptrunc``
(``(x | 0x400000) >> 16`` for NaN).

Denormals: conversions here always honour denormals; VALU instructions flush f32 ones where
MODE says so (float_mode.py).
"""
from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------------------- helpers


def _uint(x, dtype) -> np.ndarray:
    """Integer array `x` as `dtype`, wrapping (so a u32 register array yields its low bits)."""
    a = np.asarray(x)
    if a.dtype.kind not in "ui":
        raise TypeError(f"expected an integer bit-pattern array, got dtype {a.dtype}")
    return a.astype(dtype)


def as_f32(u32) -> np.ndarray:
    """View u32 bit patterns as float32 (no copy when already uint32)."""
    return _uint(u32, np.uint32).view(np.float32)


def as_u32(f32) -> np.ndarray:
    """Bit patterns of float32 values as uint32."""
    return np.asarray(f32, dtype=np.float32).view(np.uint32)


def pack_f64(lo, hi) -> np.ndarray:
    """float64 values from (low dword, high dword) register pairs."""
    lo64 = _uint(lo, np.uint32).astype(np.uint64)
    hi64 = _uint(hi, np.uint32).astype(np.uint64)
    return ((hi64 << np.uint64(32)) | lo64).view(np.float64)


def unpack_f64(f64) -> tuple[np.ndarray, np.ndarray]:
    """(low dword, high dword) uint32 arrays holding float64 values."""
    b = np.asarray(f64, dtype=np.float64).view(np.uint64)
    return (b & np.uint64(0xFFFFFFFF)).astype(np.uint32), (b >> np.uint64(32)).astype(np.uint32)


def _round_shift(v: np.ndarray, shift: np.ndarray, rounding: str) -> np.ndarray:
    """`v >> shift` (int64 arrays, 0 <= v < 2**40) rounded per `rounding` ("rne"/"rtz")."""
    s = np.clip(shift, 0, 48)
    q = v >> s
    if rounding == "rtz":
        return q
    if rounding != "rne":
        raise ValueError(f"unknown rounding {rounding!r}")
    rem = v - (q << s)
    half = np.where(s > 0, np.left_shift(1, np.maximum(s - 1, 0)), 1 << 50)
    up = (rem > half) | ((rem == half) & ((q & 1) == 1))
    return q + up


def _f32_fields(x) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(sign, biased exponent, significand with implicit bit, is_nan_or_inf) as int64."""
    b = _uint(x, np.uint32).astype(np.int64)
    sign = b >> 31
    exp = (b >> 23) & 0xFF
    man = b & 0x7FFFFF
    sig = np.where(exp > 0, man | 0x800000, man)
    return sign, np.maximum(exp, 1), sig, exp == 0xFF


def _encode_small(x, mbits: int, bias: int, rounding: str
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Round finite f32 `x` to a format with `mbits`/`bias` and an unbounded exponent.

    Returns (sign, magnitude code, is_nan_or_inf): the magnitude code is
    ``(biased exponent << mbits) | mantissa`` and may exceed the format's largest finite
    code; callers decide what overflow means."""
    sign, exp, sig, special = _f32_fields(x)
    e = exp - 127 + bias                      # target biased exponent of a normal result
    shift = (23 - mbits) + np.maximum(1 - e, 0)
    base = np.maximum(e - 1, 0) << mbits      # implicit bit of `sig` adds the final +1 exp
    return sign, base + _round_shift(sig, shift, rounding), special


# ------------------------------------------------------------------------------------ f16, bf16


def f16_to_f32(u16) -> np.ndarray:
    """IEEE half bit patterns -> f32 bit patterns (exact; denormals kept; sNaN quieted)."""
    h = _uint(u16, np.uint16).astype(np.uint32)
    sign = (h & 0x8000) << 16
    exp = (h >> 10) & 0x1F
    man = h & 0x3FF
    normal = ((exp + (127 - 15)) << 23) | (man << 13)
    # denormal: man * 2**-24 is exact in f32
    den = as_u32(man.astype(np.float32) * np.float32(2.0 ** -24))
    special = np.uint32(0x7F800000) | (man << 13) | np.where(man != 0, 0x400000, 0).astype(np.uint32)
    out = np.where(exp == 0x1F, special, np.where(exp == 0, den, normal))
    return (out | sign).astype(np.uint32)


def f32_to_f16(u32, rounding: str = "rne") -> np.ndarray:
    """f32 bit patterns -> IEEE half (``v_cvt_f16_f32``; ``"rtz"`` is ``v_cvt_pkrtz_f16_f32``).

    RNE overflows to infinity, RTZ saturates to +-65504 (infinities stay infinite). Denormal
    results are produced; f32 denormal inputs round to +-0 (or +-0 under RTZ). NaN -> quiet
    NaN keeping sign and the top 9 payload bits."""
    b = _uint(u32, np.uint32)
    sign, mag, special = _encode_small(b, 10, 15, rounding)
    limit = 0x7C00 if rounding == "rne" else 0x7BFF
    mag = np.minimum(mag, limit)
    man = (b & 0x7FFFFF).astype(np.int64)
    nan_inf = np.where(man != 0, 0x7E00 | (man >> 13), 0x7C00)
    out = np.where(special, nan_inf, mag) | (sign << 15)
    return out.astype(np.uint16)


def bf16_to_f32(u16) -> np.ndarray:
    """bf16 bit patterns -> f32 bit patterns (a 16-bit shift, as LLVM emits on gfx942)."""
    return _uint(u16, np.uint16).astype(np.uint32) << 16


def f32_to_bf16(u32, rounding: str = "rne") -> np.ndarray:
    """f32 bit patterns -> bf16.

    ``"rne"`` matches LLVM's gfx942 lowering of ``fptrunc`` to bf16 (gfx942 has no convert
    instruction): ``(x + 0x7fff + ((x >> 16) & 1)) >> 16`` for non-NaN, which rounds to nearest
    even, overflows to infinity and keeps denormals; NaN becomes ``(x | 0x400000) >> 16``.
    ``"trunc"`` is the raw upper half, ``x >> 16`` (what kernels that truncate emit); a NaN
    whose payload lies only in the low 16 bits then becomes an infinity."""
    x = _uint(u32, np.uint32)
    if rounding == "trunc":
        return (x >> 16).astype(np.uint16)
    if rounding != "rne":
        raise ValueError(f"unknown rounding {rounding!r}")
    x64 = x.astype(np.uint64)
    rounded = (x64 + 0x7FFF + ((x64 >> 16) & 1)) >> 16
    is_nan = (x & 0x7FFFFFFF) > 0x7F800000
    quiet = (x | np.uint32(0x400000)) >> 16
    return np.where(is_nan, quiet, rounded).astype(np.uint16)


# ------------------------------------------------------------------------------------------ fp8

# name -> (exponent bits, mantissa bits, bias, NaN/Inf convention)
FP8_FORMATS: dict[str, tuple[int, int, int, str]] = {
    "fp8": (4, 3, 8, "fnuz"),      # E4M3FNUZ, gfx942 "fp8"
    "bf8": (5, 2, 16, "fnuz"),     # E5M2FNUZ, gfx942 "bf8"
    "e4m3fn": (4, 3, 7, "fn"),     # OCP E4M3 (gfx950 fp8)
    "e5m2": (5, 2, 15, "ieee"),    # OCP E5M2 (gfx950 bf8)
}
F32_QNAN = 0x7FC00000


def _fp8_decode_table(fmt: str) -> np.ndarray:
    ebits, mbits, bias, kind = FP8_FORMATS[fmt]
    code = np.arange(256, dtype=np.uint32)
    sign = (code >> 7) << 31
    exp = (code >> mbits) & ((1 << ebits) - 1)
    man = code & ((1 << mbits) - 1)
    normal = ((exp + (127 - bias)) << 23) | (man << (23 - mbits))
    den = as_u32(man.astype(np.float32) * np.float32(2.0 ** (1 - bias - mbits)))
    out = np.where(exp == 0, den, normal) | sign
    if kind == "fnuz":
        out[0x80] = F32_QNAN
    elif kind == "fn":
        out[[0x7F, 0xFF]] = [F32_QNAN, F32_QNAN | 0x80000000]
    else:
        top = exp == (1 << ebits) - 1
        special = np.where(man == 0, 0x7F800000, F32_QNAN | (man << (23 - mbits))) | sign
        out = np.where(top, special, out)
    return out.astype(np.uint32)


_FP8_TABLES = {fmt: _fp8_decode_table(fmt) for fmt in FP8_FORMATS}


def fp8_to_f32(u8, fmt: str) -> np.ndarray:
    """8-bit float codes -> f32 bit patterns, exact (``v_cvt_f32_fp8`` / ``v_cvt_f32_bf8``).

    `fmt` is one of FP8_FORMATS. The FNUZ NaN 0x80 decodes to the canonical quiet NaN
    0x7FC00000; OCP NaNs keep their sign."""
    return _FP8_TABLES[fmt][_uint(u8, np.uint8)]


def f32_to_fp8(u32, fmt: str, saturate: bool = False, rounding: str = "rne",
               sr_random=None) -> np.ndarray:
    """f32 bit patterns -> 8-bit float codes (uint8).

    Models ``v_cvt_pk_fp8_f32``/``v_cvt_pk_bf8_f32`` (``rounding="rne"``) and
    ``v_cvt_sr_fp8_f32``/``v_cvt_sr_bf8_f32`` (``rounding="sr"``, `sr_random` = the u32
    random operand per element). `saturate` is the instruction's clamp bit.

    * Denormal results are produced; FNUZ results that round to zero are +0 (0x00).
    * Overflow (the rounded magnitude exceeds the largest finite value) and infinities:
      with `saturate`, +-max finite; otherwise NaN 0x80 for FNUZ, NaN S.1111.111 for
      e4m3fn and +-infinity for e5m2 (finite overflow and infinities alike).
    * NaN -> 0x80 (FNUZ) or a quiet NaN keeping the sign (OCP), even with `saturate`.
    * ``"sr"``: the significand is aligned to the result's exponent (bits below the
      result's (23 - mantissa bits) drop positions truncated), then the low (23 - mantissa
      bits) bits of `sr_random` are added and the remainder truncated, so a value rounds up
      with probability equal to its position between the two neighbours.
    The saturation of infinities and the exact SR bit selection are choices made here, not
    observed on silicon."""
    _, mbits, bias, kind = FP8_FORMATS[fmt]
    x = _uint(u32, np.uint32)
    if rounding == "sr":
        if sr_random is None:
            raise ValueError("rounding='sr' needs sr_random")
        sign, exp, sig, special = _f32_fields(x)
        e = exp - 127 + bias
        extra = np.minimum(np.maximum(1 - e, 0), 40)
        drop = 23 - mbits
        rnd = _uint(sr_random, np.uint32).astype(np.int64) & ((1 << drop) - 1)
        base = np.maximum(e - 1, 0) << mbits
        mag = base + (((sig >> extra) + rnd) >> drop)
    else:
        sign, mag, special = _encode_small(x, mbits, bias, rounding)
    max_code = {"fnuz": 0x7F, "fn": 0x7E, "ieee": 0x7B}[kind]
    is_nan = (x & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    over = special | (mag > max_code)
    if saturate:
        over_code = max_code
    else:
        over_code = {"fnuz": 0x80, "fn": 0x7F, "ieee": 0x7C}[kind]
    nan_code = {"fnuz": 0x80, "fn": 0x7F, "ieee": 0x7E}[kind]
    out = np.where(is_nan, nan_code, np.where(over, over_code, mag))
    if kind == "fnuz":
        out = np.where((out == 0) | (out == 0x80), out, out | (sign << 7))
    else:
        out = out | (sign << 7)
    return out.astype(np.uint8)


# ------------------------------------------------------------------------------------ fp4 (E2M1)

def f32_to_fp4(u32) -> np.ndarray:
    """Finite f32 bit patterns -> OCP E2M1 codes (uint8, low nibble), rounded to nearest even and
    saturated to +-6 (the format has no infinity or NaN); the sign is kept, so a negative value that
    rounds to zero gives -0 (0x8). Facts: AMD Composable Kernel's f4_convert_rne (on gfx950 the
    v_cvt_scalef32_pk_fp4_f32 builtin, elsewhere a saturating conversion of x / scale) and HIP's
    amd_hip_ocp_host.hpp (round to nearest even, overflow to the largest magnitude, sign kept on
    zero). Callers refuse NaN and infinite inputs."""
    sign, mag, _ = _encode_small(u32, 1, 1, "rne")
    return ((sign << 3) | np.minimum(mag, 7)).astype(np.uint8)

