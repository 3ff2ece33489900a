"""Pure VALU arithmetic on typed numpy arrays: the table of VOP1/VOP2/VOP3 operations.

Each entry is (destination type, source types, function of typed sources). Types: f16/f32/f64
(computed as float32/float32/float64: f16 arithmetic is exact in f32 before the final rounding),
bf16, u16/i16/u32/i32/u64/i64 (integers are returned unwrapped where the dst conversion wraps or
saturates). Approximations: v_exp/log/rcp/rsq/sqrt/sin/cos use correctly rounded numpy float32
(hardware is within ~1 ulp; `faithful` gives the f32 ones the other neighbour of the exact result
for half the inputs); f64 fma is evaluated with error-free transformations.
"""
from __future__ import annotations

import math

import numpy as np

from . import numeric
from .sop import bit_length, popcount

F32, F64, U32, U64, I32, I64 = np.float32, np.float64, np.uint32, np.uint64, np.int32, np.int64


# ---- float helpers ---------------------------------------------------------------------------------
def fma32(a, b, c) -> np.ndarray:
    """Correctly rounded f32 fused multiply-add. a*b is exact in float64; the float64 sum is
    rounded once more to f32, which is exact unless that sum sits on an f32 rounding midpoint (or in
    the f32 subnormal range), where the exact residual decides (round-to-odd)."""
    p = np.asarray(a, F64) * np.asarray(b, F64)
    s = p + np.asarray(c, F64)
    r = s.astype(F32)
    sb = s.view(U64)
    suspect = ((sb & U64(0x1FFFFFFF)) == U64(0x10000000)) | (np.abs(s) < 2.0 ** -125)
    if suspect.any():
        a_, b_, c_ = (np.broadcast_to(np.asarray(x, F64), s.shape)[suspect] for x in (a, b, c))
        r = np.array(r, copy=True).reshape(s.shape)
        r[suspect] = _fma32_exact(a_, b_, c_)
    return r


def _fma32_exact(a, b, c) -> np.ndarray:
    """fma via round-to-odd in float64, then RNE to f32 (exact for every input)."""
    p = a * b
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    inexact = (err != 0) & np.isfinite(err) & np.isfinite(s)
    bits = s.view(I64).copy()
    toward_zero = inexact & ((err > 0) != (s > 0))
    bits = np.where(toward_zero, bits - 1, bits)
    bits = np.where(inexact, bits | 1, bits)
    return bits.view(F64).astype(F32)


def _two_prod(a, b):
    p = a * b
    split = 134217729.0
    ah = a * split
    ah = ah - (ah - a)
    al = a - ah
    bh = b * split
    bh = bh - (bh - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def fma64(a, b, c) -> np.ndarray:
    """f64 fused multiply-add via TwoProduct/TwoSum (exact except rare double-rounding cases)."""
    a, b, c = np.asarray(a, F64), np.asarray(b, F64), np.asarray(c, F64)
    p, e = _two_prod(a, b)
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    r = s + (t + e)
    return np.where(np.isfinite(r) & np.isfinite(p), r, a * b + c)


def fmax(a, b):
    r = np.fmax(a, b)
    z = (a == 0) & (b == 0)
    return np.where(z, np.where(np.signbit(a), b, a), r)


def fmin(a, b):
    r = np.fmin(a, b)
    z = (a == 0) & (b == 0)
    return np.where(z, np.where(np.signbit(a), a, b), r)


def _signalling(x) -> np.ndarray:
    """Signalling NaNs (quiet bit clear) of a float32/float64 array."""
    x = np.asarray(x)
    quiet = x.view(U64) & U64(1 << 51) if x.dtype == F64 else x.astype(F32).view(U32) & U32(1 << 22)
    return np.isnan(x) & (quiet == 0)


def _quieted(x) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype == F64:
        return (x.view(U64) | U64(1 << 51)).view(F64)
    return (x.astype(F32).view(U32) | U32(1 << 22)).view(F32)


def first_nan(r, *xs) -> np.ndarray:
    """`r`, an arithmetic result of the operands `xs` in the order the operation reads them, with every NaN that
    came from a NaN operand made the first NaN operand, quieted, sign and payload kept. For a NaN src0 that is
    what llvm-project PR #201440 reports of the hardware (fmul returns it whatever src1 is); for two NaNs at
    other positions it is this emulator's choice, x86's rule. numpy alone returns either of two NaN operands, as
    its loop's vector width falls."""
    r = np.asarray(r)
    flat = r.ravel()
    if not math.isnan(flat.dot(flat)):  # a sum of squares is NaN only with a NaN in it (the fastest test here)
        return r
    at = np.flatnonzero(np.isnan(flat))  # only the NaN results are looked at again
    vals = flat[at]
    for x in reversed(xs):
        x = np.asarray(x)
        picked = x.ravel()[at] if x.shape == r.shape else np.broadcast_to(x, r.shape).ravel()[at]
        from_x = np.isnan(picked)
        vals[from_x] = _quieted(picked[from_x]).astype(vals.dtype)
    out = flat.copy()
    out[at] = vals
    return out.reshape(r.shape)


def _first_nan(fn):
    return lambda *xs: first_nan(fn(*xs), *xs)


def _added(a, b):
    return first_nan(a + b, a, b)


def _quieting(fn):
    """`fn`, a min/max of two or three operands, in IEEE mode: a signalling NaN input gives that NaN quieted
    (the first such input; LLVM SIModeRegisterDefaults.h, IEEE: min/max "quiet and propagate signaling NaN
    inputs per IEEE 754-2008"); otherwise `fn`'s result."""
    def ieee(*xs):
        r = fn(*xs)
        for x in reversed(xs):
            s = _signalling(x)
            if s.any():
                r = np.where(s, _quieted(x), r)
        return r
    return ieee


def med3f(a, b, c):
    nan = np.isnan(a) | np.isnan(b) | np.isnan(c)
    med = fmax(fmin(a, b), fmin(fmax(a, b), c))
    return np.where(nan, fmin(fmin(a, b), c), med)


def med3i(a, b, c):
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


def cvt_int(x, lo, hi, mode="trunc"):
    """float -> int with saturation and NaN -> 0 (v_cvt_*_f32/f64)."""
    x = np.asarray(x, F64)
    if mode == "floor":
        x = np.floor(x)
    elif mode == "rpi":
        x = np.floor(x + 0.5)
    r = np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x, nan=0.0, posinf=hi, neginf=lo)), lo, hi))
    return r.astype(I64)


def frexp_mant(x):
    m, _ = np.frexp(x)
    return np.where(np.isfinite(x), m, x).astype(x.dtype)


def frexp_exp(x):
    _, e = np.frexp(x)
    return np.where(np.isfinite(x), e, 0).astype(I64)


def fract(x):
    one_minus = np.nextafter(x.dtype.type(1), x.dtype.type(0))
    r = np.minimum(x - np.floor(x), one_minus)
    return np.where(np.isinf(x), np.nan, r).astype(x.dtype)


def ldexp(x, e):
    e = np.clip(np.asarray(e, I64), -2000, 2000).astype(np.int32)
    return np.ldexp(x, e).astype(x.dtype)


def legacy_mul(a, b):
    return np.where((a == 0) | (b == 0), F32(0), a * b).astype(F32)


def sin_rev(x):
    return np.sin(np.asarray(x, F64) * (2 * np.pi)).astype(np.asarray(x).dtype)


def cos_rev(x):
    return np.cos(np.asarray(x, F64) * (2 * np.pi)).astype(np.asarray(x).dtype)


def rsq(x):
    return (1 / np.sqrt(np.asarray(x, F64))).astype(np.asarray(x).dtype)


def rcp(x):
    return (1 / np.asarray(x, F64)).astype(np.asarray(x).dtype)


# f32 transcendentals the hardware computes only to within ~1 ulp.
APPROXIMATE_F32 = frozenset({"v_exp_f32", "v_log_f32", "v_rcp_f32", "v_rcp_iflag_f32", "v_rsq_f32", "v_sqrt_f32",
                             "v_sin_f32", "v_cos_f32"})


def faithful(fn, x, nearest):
    """`nearest` (fn(x) rounded to nearest f32) replaced, for a hash-chosen half of the input bit
    patterns, by the f32 neighbour on the other side of the exact result: still a faithful rounding,
    as hardware transcendentals are, but code that relies on correct rounding (a deleted Newton
    refinement, say) now computes something else. The choice depends only on x, so equal inputs
    give equal results. Exact results, infinities and NaNs are kept."""
    x = np.asarray(x, F32)
    r = np.asarray(nearest, F32)
    exact = np.asarray(fn(x.astype(F64)), F64)
    other = np.nextafter(r, np.where(exact > r, F32(np.inf), F32(-np.inf))).astype(F32)
    flip = ((x.view(U32).astype(U64) * U64(0x9E3779B1)) >> U64(31)) & U64(1) == 1
    keep = ~np.isfinite(exact) | (exact == r) | ~np.isfinite(other)
    return np.where(flip & ~keep, other, r).astype(F32)


# ---- integer helpers -------------------------------------------------------------------------------
def s24(x):
    x = np.asarray(x, U32) & U32(0xFFFFFF)
    return ((x << U32(8)).view(I32) >> I32(8)).astype(I64)


def u24(x):
    return (np.asarray(x, U32) & U32(0xFFFFFF)).astype(I64)


def bfe(x, off, width, signed):
    off = np.asarray(off, U32) & U32(31)
    w = np.asarray(width, U32) & U32(31)
    v = (np.asarray(x, U64) >> off.astype(U64)) & ((U64(1) << w.astype(U64)) - U64(1))
    if signed:
        sh = (U64(64) - w.astype(U64))
        v = np.where(w == 0, 0, ((v << sh).view(I64) >> sh.view(I64)))
    return v


def perm(s0, s1, sel):
    comb = (np.asarray(s0, U64) << U64(32)) | np.asarray(s1, U64)
    out = np.zeros(np.broadcast(s0, s1, sel).shape, U32)
    sel = np.asarray(sel, U32)
    for k in range(4):
        b = (sel >> U32(8 * k)) & U32(0xFF)
        byte = (comb >> (np.minimum(b, 7).astype(U64) * U64(8))) & U64(0xFF)
        sign_bit = (comb >> (U64(16) * (np.clip(b.astype(np.int64) - 8, 0, 3) + 1).astype(U64) - U64(1))) & U64(1)
        val = np.where(b < 8, byte, np.where(b < 12, sign_bit * U64(0xFF), np.where(b == 12, 0, 0xFF)))
        out |= (val.astype(U32) << U32(8 * k))
    return out


def ffbh_i32(x):
    x = np.asarray(x, U32)
    y = np.where(x.view(I32) < 0, ~x, x)
    n = 32 - bit_length(y)  # leading bits equal to the sign, including the sign bit
    return np.where((x == 0) | (x == U32(0xFFFFFFFF)), -1, n - 1)


def ffbl(x):
    x = np.asarray(x, U64)
    low = x & (~x + U64(1))
    return np.where(x == 0, -1, popcount(low - U64(1)).astype(I64))


def brev32(x):
    x = np.ascontiguousarray(np.asarray(x, U32))
    b = np.unpackbits(x.reshape(-1, 1).view(np.uint8), axis=1, bitorder="little")[:, ::-1]
    return np.packbits(b, axis=1, bitorder="little").view(U32).reshape(x.shape)


def sat(x, lo, hi):
    return np.clip(np.asarray(x, I64), lo, hi)


def dot(a_parts, b_parts, c):
    acc = np.asarray(c, I64)
    for x, y in zip(a_parts, b_parts):
        acc = acc + x * y
    return acc


def _bytes(x, signed, width=8):
    x = np.asarray(x, U32)
    n = 32 // width
    out = []
    for i in range(n):
        v = ((x >> U32(width * i)) & U32((1 << width) - 1)).astype(I64)
        if signed:
            v = np.where(v >= (1 << (width - 1)), v - (1 << width), v)
        out.append(v)
    return out


def sad_u8(a, b, c):
    return sum(np.abs(x - y) for x, y in zip(_bytes(a, False), _bytes(b, False))) + np.asarray(c, I64)


def cvt_pk_u8(x, byte, acc):
    v = cvt_int(np.rint(np.asarray(x, F64)), 0, 255)
    sh = (np.asarray(byte, U32) & U32(3)) * U32(8)
    return (np.asarray(acc, U32) & ~(U32(0xFF) << sh)) | (v.astype(U32) << sh)


def f32_to_f16_rtz(x):
    return numeric.f32_to_f16(np.asarray(x, F32).view(U32), "rtz").astype(U32)


def _f16_bits(x):
    return numeric.f32_to_f16(np.asarray(x, F32).view(U32), "rne").astype(U32)


def _bf16_bits(x):
    return numeric.f32_to_bf16(np.asarray(x, F32).view(U32), "rne").astype(U32)


I16, U16 = (-32768, 32767), (0, 65535)

# name: (dst, (srcs...), fn)
TABLE: dict[str, tuple] = {
    # ---- f32
    "v_add_f32": ("f32", ("f32", "f32"), lambda a, b: a + b),
    # a subtraction adds the negated subtrahend, so a NaN one comes back with its sign flipped (llvm-project pull
    # request #212305 reports hardware fuzzing that found v_sub_f32 matching v_fma_mix_f32(-y, 1.0, x) with neg on
    # y); numpy's a - b would return it unflipped
    "v_sub_f32": ("f32", ("f32", "f32"), lambda a, b: _added(a, -b)),
    "v_subrev_f32": ("f32", ("f32", "f32"), lambda a, b: _added(b, -a)),
    "v_mul_f32": ("f32", ("f32", "f32"), lambda a, b: a * b),
    "v_mul_legacy_f32": ("f32", ("f32", "f32"), legacy_mul),
    "v_min_f32": ("f32", ("f32", "f32"), fmin), "v_max_f32": ("f32", ("f32", "f32"), fmax),
    "v_fma_f32": ("f32", ("f32",) * 3, fma32), "v_fmac_f32": ("f32", ("f32",) * 3, fma32),
    "v_fmamk_f32": ("f32", ("f32",) * 3, fma32), "v_fmaak_f32": ("f32", ("f32",) * 3, fma32),
    "v_mad_f32": ("f32", ("f32",) * 3, lambda a, b, c: (a * b) + c),
    "v_mac_f32": ("f32", ("f32",) * 3, lambda a, b, c: (a * b) + c),
    "v_madmk_f32": ("f32", ("f32",) * 3, lambda a, b, c: (a * b) + c),
    "v_madak_f32": ("f32", ("f32",) * 3, lambda a, b, c: (a * b) + c),
    "v_mad_legacy_f32": ("f32", ("f32",) * 3, lambda a, b, c: legacy_mul(a, b) + c),
    "v_min3_f32": ("f32", ("f32",) * 3, lambda a, b, c: fmin(fmin(a, b), c)),
    "v_max3_f32": ("f32", ("f32",) * 3, lambda a, b, c: fmax(fmax(a, b), c)),
    "v_med3_f32": ("f32", ("f32",) * 3, med3f),
    "v_exp_f32": ("f32", ("f32",), np.exp2), "v_log_f32": ("f32", ("f32",), np.log2),
    "v_rcp_f32": ("f32", ("f32",), rcp), "v_rcp_iflag_f32": ("f32", ("f32",), rcp),
    "v_rsq_f32": ("f32", ("f32",), rsq), "v_sqrt_f32": ("f32", ("f32",), np.sqrt),
    "v_sin_f32": ("f32", ("f32",), sin_rev), "v_cos_f32": ("f32", ("f32",), cos_rev),
    "v_fract_f32": ("f32", ("f32",), fract), "v_trunc_f32": ("f32", ("f32",), np.trunc),
    "v_ceil_f32": ("f32", ("f32",), np.ceil), "v_floor_f32": ("f32", ("f32",), np.floor),
    "v_rndne_f32": ("f32", ("f32",), np.rint),
    "v_frexp_mant_f32": ("f32", ("f32",), frexp_mant), "v_frexp_exp_i32_f32": ("i32", ("f32",), frexp_exp),
    "v_ldexp_f32": ("f32", ("f32", "i32"), ldexp),
    "v_cvt_f32_i32": ("f32", ("i32",), lambda a: a.astype(F32)),
    "v_cvt_f32_u32": ("f32", ("u32",), lambda a: a.astype(F32)),
    "v_cvt_i32_f32": ("i32", ("f32",), lambda a: cvt_int(a, -2**31, 2**31 - 1)),
    "v_cvt_u32_f32": ("u32", ("f32",), lambda a: cvt_int(a, 0, 2**32 - 1)),
    "v_cvt_rpi_i32_f32": ("i32", ("f32",), lambda a: cvt_int(a, -2**31, 2**31 - 1, "rpi")),
    "v_cvt_flr_i32_f32": ("i32", ("f32",), lambda a: cvt_int(a, -2**31, 2**31 - 1, "floor")),
    "v_cvt_f32_ubyte0": ("f32", ("u32",), lambda a: (a & U32(0xFF)).astype(F32)),
    "v_cvt_f32_ubyte1": ("f32", ("u32",), lambda a: ((a >> U32(8)) & U32(0xFF)).astype(F32)),
    "v_cvt_f32_ubyte2": ("f32", ("u32",), lambda a: ((a >> U32(16)) & U32(0xFF)).astype(F32)),
    "v_cvt_f32_ubyte3": ("f32", ("u32",), lambda a: (a >> U32(24)).astype(F32)),
    "v_cvt_f32_f16": ("f32", ("f16",), lambda a: a), "v_cvt_f16_f32": ("f16", ("f32",), lambda a: a),
    "v_cvt_f32_f64": ("f32", ("f64",), lambda a: a.astype(F32)),
    "v_cvt_f64_f32": ("f64", ("f32",), lambda a: a.astype(F64)),
    "v_cvt_f64_i32": ("f64", ("i32",), lambda a: a.astype(F64)),
    "v_cvt_f64_u32": ("f64", ("u32",), lambda a: a.astype(F64)),
    "v_cvt_i32_f64": ("i32", ("f64",), lambda a: cvt_int(a, -2**31, 2**31 - 1)),
    "v_cvt_u32_f64": ("u32", ("f64",), lambda a: cvt_int(a, 0, 2**32 - 1)),
    # gfx950: what LLVM selects for fptrunc <2 x float> to half / bfloat there (GCNSubtarget
    # hasCvtPkF16F32Inst / BF16): each half rounded to nearest even (MODE's default), NaN quieted
    "v_cvt_pk_f16_f32": ("u32", ("f32", "f32"), lambda a, b: _f16_bits(a) | (_f16_bits(b) << U32(16))),
    "v_cvt_pk_bf16_f32": ("u32", ("f32", "f32"), lambda a, b: _bf16_bits(a) | (_bf16_bits(b) << U32(16))),
    "v_cvt_pkrtz_f16_f32": ("u32", ("f32", "f32"), lambda a, b: f32_to_f16_rtz(a) | (f32_to_f16_rtz(b) << U32(16))),
    "v_cvt_pk_u8_f32": ("u32", ("f32", "u32", "u32"), cvt_pk_u8),
    "v_cvt_pk_u16_u32": ("u32", ("u32", "u32"), lambda a, b: (np.minimum(a, 65535) | (np.minimum(b, 65535) << U32(16))).astype(U32)),
    "v_cvt_pk_i16_i32": ("u32", ("i32", "i32"), lambda a, b: (sat(a, *I16) & 0xFFFF) | ((sat(b, *I16) & 0xFFFF) << 16)),
    "v_cvt_pknorm_i16_f32": ("u32", ("f32", "f32"), lambda a, b: (cvt_int(np.rint(np.clip(a, -1, 1) * 32767.0), *I16) & 0xFFFF) | ((cvt_int(np.rint(np.clip(b, -1, 1) * 32767.0), *I16) & 0xFFFF) << 16)),
    "v_cvt_pknorm_u16_f32": ("u32", ("f32", "f32"), lambda a, b: (cvt_int(np.rint(np.clip(a, 0, 1) * 65535.0), *U16)) | (cvt_int(np.rint(np.clip(b, 0, 1) * 65535.0), *U16) << 16)),
    # ---- f16 (16-bit results zero the high half unless op_sel writes it)
    "v_add_f16": ("f16", ("f16", "f16"), lambda a, b: a + b),
    "v_sub_f16": ("f16", ("f16", "f16"), lambda a, b: _added(a, -b)),     # the negated subtrahend, as v_sub_f32
    "v_subrev_f16": ("f16", ("f16", "f16"), lambda a, b: _added(b, -a)),
    "v_mul_f16": ("f16", ("f16", "f16"), lambda a, b: a * b),
    "v_min_f16": ("f16", ("f16", "f16"), fmin), "v_max_f16": ("f16", ("f16", "f16"), fmax),
    "v_fma_f16": ("f16", ("f16",) * 3, lambda a, b, c: a.astype(F64) * b + c),
    "v_fmac_f16": ("f16", ("f16",) * 3, lambda a, b, c: a.astype(F64) * b + c),
    "v_mad_f16": ("f16", ("f16",) * 3, lambda a, b, c: (a * b).astype(np.float16).astype(F32) + c),
    "v_mac_f16": ("f16", ("f16",) * 3, lambda a, b, c: (a * b).astype(np.float16).astype(F32) + c),
    "v_min3_f16": ("f16", ("f16",) * 3, lambda a, b, c: fmin(fmin(a, b), c)),
    "v_max3_f16": ("f16", ("f16",) * 3, lambda a, b, c: fmax(fmax(a, b), c)),
    "v_med3_f16": ("f16", ("f16",) * 3, med3f),
    "v_exp_f16": ("f16", ("f16",), np.exp2), "v_log_f16": ("f16", ("f16",), np.log2),
    "v_rcp_f16": ("f16", ("f16",), rcp), "v_rsq_f16": ("f16", ("f16",), rsq),
    "v_sqrt_f16": ("f16", ("f16",), np.sqrt), "v_sin_f16": ("f16", ("f16",), sin_rev),
    "v_cos_f16": ("f16", ("f16",), cos_rev), "v_fract_f16": ("f16", ("f16",), fract),
    "v_trunc_f16": ("f16", ("f16",), np.trunc), "v_ceil_f16": ("f16", ("f16",), np.ceil),
    "v_floor_f16": ("f16", ("f16",), np.floor), "v_rndne_f16": ("f16", ("f16",), np.rint),
    "v_ldexp_f16": ("f16", ("f16", "i16"), ldexp),
    "v_frexp_mant_f16": ("f16", ("f16",), frexp_mant),
    "v_cvt_f16_u16": ("f16", ("u16",), lambda a: a.astype(F32)),
    "v_cvt_f16_i16": ("f16", ("i16",), lambda a: a.astype(F32)),
    "v_cvt_u16_f16": ("u16", ("f16",), lambda a: cvt_int(a, *U16)),
    "v_cvt_i16_f16": ("i16", ("f16",), lambda a: cvt_int(a, *I16)),
    # ---- f64
    "v_add_f64": ("f64", ("f64", "f64"), lambda a, b: a + b),
    "v_mul_f64": ("f64", ("f64", "f64"), lambda a, b: a * b),
    "v_min_f64": ("f64", ("f64", "f64"), fmin), "v_max_f64": ("f64", ("f64", "f64"), fmax),
    "v_fma_f64": ("f64", ("f64",) * 3, fma64), "v_fmac_f64": ("f64", ("f64",) * 3, fma64),
    "v_ldexp_f64": ("f64", ("f64", "i32"), ldexp),
    "v_rcp_f64": ("f64", ("f64",), lambda a: 1 / a), "v_rsq_f64": ("f64", ("f64",), lambda a: 1 / np.sqrt(a)),
    "v_sqrt_f64": ("f64", ("f64",), np.sqrt), "v_fract_f64": ("f64", ("f64",), fract),
    "v_trunc_f64": ("f64", ("f64",), np.trunc), "v_ceil_f64": ("f64", ("f64",), np.ceil),
    "v_floor_f64": ("f64", ("f64",), np.floor), "v_rndne_f64": ("f64", ("f64",), np.rint),
    "v_frexp_mant_f64": ("f64", ("f64",), frexp_mant), "v_frexp_exp_i32_f64": ("i32", ("f64",), frexp_exp),
    # ---- 32-bit integer
    "v_mov_b32": ("u32", ("u32",), lambda a: a),
    "v_add_u32": ("u32", ("u32", "u32"), lambda a, b: a.astype(I64) + b),
    "v_sub_u32": ("u32", ("u32", "u32"), lambda a, b: a.astype(I64) - b),
    "v_subrev_u32": ("u32", ("u32", "u32"), lambda a, b: b.astype(I64) - a),
    "v_add_i32": ("i32", ("i32", "i32"), lambda a, b: a.astype(I64) + b),
    "v_sub_i32": ("i32", ("i32", "i32"), lambda a, b: a.astype(I64) - b),
    "v_mul_lo_u32": ("u32", ("u32", "u32"), lambda a, b: a * b),
    "v_mul_hi_u32": ("u32", ("u32", "u32"), lambda a, b: (a.astype(U64) * b.astype(U64)) >> U64(32)),
    "v_mul_hi_i32": ("u32", ("i32", "i32"), lambda a, b: (a.astype(I64) * b.astype(I64)) >> 32),
    "v_mul_i32_i24": ("u32", ("u32", "u32"), lambda a, b: s24(a) * s24(b)),
    "v_mul_hi_i32_i24": ("u32", ("u32", "u32"), lambda a, b: (s24(a) * s24(b)) >> 32),
    "v_mul_u32_u24": ("u32", ("u32", "u32"), lambda a, b: u24(a) * u24(b)),
    "v_mul_hi_u32_u24": ("u32", ("u32", "u32"), lambda a, b: (u24(a) * u24(b)) >> 32),
    "v_mad_i32_i24": ("u32", ("u32", "u32", "i32"), lambda a, b, c: s24(a) * s24(b) + c),
    "v_mad_u32_u24": ("u32", ("u32", "u32", "u32"), lambda a, b, c: u24(a) * u24(b) + c),
    "v_min_i32": ("i32", ("i32", "i32"), np.minimum), "v_max_i32": ("i32", ("i32", "i32"), np.maximum),
    "v_min_u32": ("u32", ("u32", "u32"), np.minimum), "v_max_u32": ("u32", ("u32", "u32"), np.maximum),
    "v_min3_i32": ("i32", ("i32",) * 3, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
    "v_max3_i32": ("i32", ("i32",) * 3, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    "v_min3_u32": ("u32", ("u32",) * 3, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
    "v_max3_u32": ("u32", ("u32",) * 3, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    "v_med3_i32": ("i32", ("i32",) * 3, med3i), "v_med3_u32": ("u32", ("u32",) * 3, med3i),
    "v_lshrrev_b32": ("u32", ("u32", "u32"), lambda a, b: b >> (a & U32(31))),
    "v_ashrrev_i32": ("i32", ("u32", "i32"), lambda a, b: b >> (a & U32(31)).astype(I32)),
    "v_lshlrev_b32": ("u32", ("u32", "u32"), lambda a, b: b << (a & U32(31))),
    "v_and_b32": ("u32", ("u32", "u32"), lambda a, b: a & b),
    "v_or_b32": ("u32", ("u32", "u32"), lambda a, b: a | b),
    "v_xor_b32": ("u32", ("u32", "u32"), lambda a, b: a ^ b),
    "v_xnor_b32": ("u32", ("u32", "u32"), lambda a, b: ~(a ^ b)),
    "v_not_b32": ("u32", ("u32",), lambda a: ~a),
    "v_bfrev_b32": ("u32", ("u32",), brev32),
    "v_ffbh_u32": ("i32", ("u32",), lambda a: np.where(a == 0, -1, 32 - bit_length(a))),
    "v_ffbl_b32": ("i32", ("u32",), ffbl), "v_ffbh_i32": ("i32", ("u32",), ffbh_i32),
    "v_bcnt_u32_b32": ("u32", ("u32", "u32"), lambda a, b: popcount(a) + b),
    "v_bfm_b32": ("u32", ("u32", "u32"), lambda a, b: ((U64(1) << (a & U32(31)).astype(U64)) - U64(1)) << (b & U32(31)).astype(U64)),
    "v_bfe_u32": ("u32", ("u32",) * 3, lambda a, b, c: bfe(a, b, c, False)),
    "v_bfe_i32": ("u32", ("u32",) * 3, lambda a, b, c: bfe(a, b, c, True)),
    "v_bfi_b32": ("u32", ("u32",) * 3, lambda a, b, c: (a & b) | (~a & c)),
    "v_alignbit_b32": ("u32", ("u32",) * 3, lambda a, b, c: ((a.astype(U64) << U64(32)) | b) >> (c & U32(31)).astype(U64)),
    "v_alignbyte_b32": ("u32", ("u32",) * 3, lambda a, b, c: ((a.astype(U64) << U64(32)) | b) >> ((c & U32(3)) * U32(8)).astype(U64)),
    "v_perm_b32": ("u32", ("u32",) * 3, perm),
    "v_lshl_add_u32": ("u32", ("u32",) * 3, lambda a, b, c: (a << (b & U32(31))) + c),
    "v_add_lshl_u32": ("u32", ("u32",) * 3, lambda a, b, c: (a + b) << (c & U32(31))),
    "v_add3_u32": ("u32", ("u32",) * 3, lambda a, b, c: a + b + c),
    "v_lshl_or_b32": ("u32", ("u32",) * 3, lambda a, b, c: (a << (b & U32(31))) | c),
    "v_and_or_b32": ("u32", ("u32",) * 3, lambda a, b, c: (a & b) | c),
    "v_or3_b32": ("u32", ("u32",) * 3, lambda a, b, c: a | b | c),
    "v_xad_u32": ("u32", ("u32",) * 3, lambda a, b, c: (a ^ b) + c),
    "v_sad_u32": ("u32", ("u32",) * 3, lambda a, b, c: np.abs(a.astype(I64) - b) + c),
    "v_sad_u8": ("u32", ("u32",) * 3, sad_u8),
    "v_mad_u32_u16": ("u32", ("u16", "u16", "u32"), lambda a, b, c: a.astype(I64) * b + c),
    "v_mad_i32_i16": ("i32", ("i16", "i16", "i32"), lambda a, b, c: a.astype(I64) * b + c),
    # ---- 16-bit integer
    "v_add_u16": ("u16", ("u16", "u16"), lambda a, b: a.astype(I64) + b),
    "v_sub_u16": ("u16", ("u16", "u16"), lambda a, b: a.astype(I64) - b),
    "v_subrev_u16": ("u16", ("u16", "u16"), lambda a, b: b.astype(I64) - a),
    "v_add_i16": ("i16", ("i16", "i16"), lambda a, b: a.astype(I64) + b),
    "v_sub_i16": ("i16", ("i16", "i16"), lambda a, b: a.astype(I64) - b),
    "v_mul_lo_u16": ("u16", ("u16", "u16"), lambda a, b: a.astype(I64) * b),
    "v_lshlrev_b16": ("u16", ("u16", "u16"), lambda a, b: b.astype(I64) << (a & 15)),
    "v_lshrrev_b16": ("u16", ("u16", "u16"), lambda a, b: b >> (a & 15)),
    "v_ashrrev_i16": ("i16", ("u16", "i16"), lambda a, b: b >> (a & 15)),
    "v_max_u16": ("u16", ("u16", "u16"), np.maximum), "v_min_u16": ("u16", ("u16", "u16"), np.minimum),
    "v_max_i16": ("i16", ("i16", "i16"), np.maximum), "v_min_i16": ("i16", ("i16", "i16"), np.minimum),
    "v_mad_u16": ("u16", ("u16",) * 3, lambda a, b, c: a.astype(I64) * b + c),
    "v_mad_i16": ("i16", ("i16",) * 3, lambda a, b, c: a.astype(I64) * b + c),
    "v_min3_i16": ("i16", ("i16",) * 3, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
    "v_max3_i16": ("i16", ("i16",) * 3, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    "v_med3_i16": ("i16", ("i16",) * 3, med3i), "v_med3_u16": ("u16", ("u16",) * 3, med3i),
    "v_min3_u16": ("u16", ("u16",) * 3, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
    "v_max3_u16": ("u16", ("u16",) * 3, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    "v_pack_b32_f16": ("u32", ("u16", "u16"), lambda a, b: a | (b << U32(16))),
    # ---- 64-bit integer
    "v_lshlrev_b64": ("u64", ("u32", "u64"), lambda a, b: b << (a & U32(63)).astype(U64)),
    "v_lshrrev_b64": ("u64", ("u32", "u64"), lambda a, b: b >> (a & U32(63)).astype(U64)),
    "v_ashrrev_i64": ("i64", ("u32", "i64"), lambda a, b: b >> (a & U32(63)).astype(I64)),
    "v_lshl_add_u64": ("u64", ("u64", "u32", "u64"), lambda a, b, c: (a << (b & U32(7)).astype(U64)) + c),
    "v_mov_b64": ("u64", ("u64",), lambda a: a),
}
# Float arithmetic: a NaN operand comes back as the result, the first of two (`first_nan`) in the order the
# operation reads them (v_fmac_f32: S0 * S1 + D; a subtraction's, `_added`, as it adds them)
_ARITHMETIC = ("v_add_", "v_mul_", "v_fma_", "v_fmac_", "v_mac_", "v_mad_", "v_fmaak_", "v_fmamk_", "v_madak_",
               "v_madmk_")
TABLE.update({name: (d, s, _first_nan(fn)) for name, (d, s, fn) in TABLE.items()
              if name.startswith(_ARITHMETIC) and name.endswith(("_f16", "_f32", "_f64")) and d in ("f16", "f32", "f64")
              and all(t in ("f16", "f32", "f64") for t in s)})
# IEEE mode (MODE bit 9): the float min/max family quiets a signalling NaN input (`_quieting`).
IEEE_TABLE: dict[str, tuple] = {
    name: (d, s, _quieting(fn)) for name, (d, s, fn) in TABLE.items()
    if name.startswith(("v_min", "v_max", "v_med3")) and d in ("f16", "f32", "f64")}
