"""Bit-exact tests of asmevo.emu.numeric against hand-known patterns and independent
formulas (Python float arithmetic or numpy's own float16, never the module's code)."""
import math

import numpy as np
import pytest

from asmevo.emu import numeric as nm

RNG = np.random.default_rng(1234)


def f32_bits(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float32).view(np.uint32)


def half_value(code: int) -> float:
    """Value of an IEEE half code, by the textbook formula."""
    s = -1.0 if code & 0x8000 else 1.0
    e, m = (code >> 10) & 0x1F, code & 0x3FF
    if e == 0x1F:
        return s * math.inf if m == 0 else math.nan
    if e == 0:
        return s * m * 2.0 ** -24
    return s * (1 + m / 1024) * 2.0 ** (e - 15)


# ----------------------------------------------------------------------------------------- f16

@pytest.mark.parametrize("code,f32", [
    (0x3C00, 0x3F800000), (0x0000, 0x00000000), (0x8000, 0x80000000), (0x7BFF, 0x477FE000),
    (0xC000, 0xC0000000), (0x0001, 0x33800000), (0x03FF, 0x387FC000), (0x0400, 0x38800000),
    (0x7C00, 0x7F800000), (0xFC00, 0xFF800000), (0x7E00, 0x7FC00000), (0x7C01, 0x7FC02000),
    (0xFE01, 0xFFC02000),
])
def test_f16_to_f32_known(code, f32):
    assert int(nm.f16_to_f32(np.array([code], np.uint16))[0]) == f32


def test_f16_to_f32_all_codes_formula():
    codes = np.arange(65536, dtype=np.uint32)
    got = nm.as_f32(nm.f16_to_f32(codes)).astype(np.float64)
    want = np.array([half_value(c) for c in range(65536)])
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan], want[~nan])
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))


def test_f16_roundtrip_all_codes():
    codes = np.arange(65536, dtype=np.uint16)
    back = nm.f32_to_f16(nm.f16_to_f32(codes))
    exp_all_ones = (codes & 0x7C00) == 0x7C00
    is_nan = exp_all_ones & ((codes & 0x3FF) != 0)
    assert np.array_equal(back[~is_nan], codes[~is_nan])
    assert np.array_equal(back[is_nan], codes[is_nan] | 0x200)   # quieted, payload kept


@pytest.mark.parametrize("f32,code", [
    (1.0, 0x3C00), (65504.0, 0x7BFF), (65519.99, 0x7BFF), (65520.0, 0x7C00), (1e9, 0x7C00),
    (-1e9, 0xFC00), (2.0 ** -24, 0x0001), (2.0 ** -25, 0x0000), (1.5 * 2.0 ** -25, 0x0001),
    (3 * 2.0 ** -25, 0x0002), (-(2.0 ** -25), 0x8000), (1 + 2.0 ** -11, 0x3C00),
    (1 + 3 * 2.0 ** -11, 0x3C02), (2.0 ** -14 - 2.0 ** -25, 0x0400), (1e-45, 0x0000),
])
def test_f32_to_f16_known_rne(f32, code):
    assert int(nm.f32_to_f16(f32_bits([f32]))[0]) == code


def test_f32_to_f16_special():
    bits = np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0xFF812345, 0x7F800001], np.uint32)
    assert nm.f32_to_f16(bits).tolist() == [0x7C00, 0xFC00, 0x7E00, 0xFE09, 0x7E00]
    assert nm.f32_to_f16(bits, "rtz").tolist() == [0x7C00, 0xFC00, 0x7E00, 0xFE09, 0x7E00]


def test_f32_to_f16_rne_matches_numpy_random():
    bits = RNG.integers(0, 2 ** 32, size=400_000, dtype=np.uint64).astype(np.uint32)
    # bias toward the half range and its tie points
    near = f32_bits(RNG.uniform(-7e4, 7e4, 200_000))
    ties = nm.f16_to_f32(RNG.integers(0, 0x7C00, 100_000).astype(np.uint16)) + np.uint32(1 << 12)
    tiny = f32_bits(RNG.uniform(-2.0 ** -13, 2.0 ** -13, 100_000))
    x = np.concatenate([bits, near, ties, ties + np.uint32(1), tiny])
    x = x[(x & 0x7FFFFFFF) <= 0x7F800000]                         # NaN payloads: see above
    with np.errstate(over="ignore"):
        want = nm.as_f32(x).astype(np.float16).view(np.uint16)
    assert np.array_equal(nm.f32_to_f16(x), want)


def test_f32_to_f16_rtz():
    x = np.concatenate([f32_bits(RNG.uniform(-7e4, 7e4, 100_000)),
                        f32_bits(RNG.uniform(-1e-4, 1e-4, 100_000))])
    got = nm.f32_to_f16(x, "rtz")
    v = np.abs(nm.as_f32(x).astype(np.float64))
    r = np.abs(nm.as_f32(nm.f16_to_f32(got)).astype(np.float64))
    nxt = np.abs(nm.as_f32(nm.f16_to_f32(got + np.uint16(1))).astype(np.float64))
    sat = (got & 0x7FFF) == 0x7BFF
    assert np.all(r <= v)
    assert np.all((v < nxt) | sat)
    assert np.all(((got >> 15) == (x >> 31)) | (r == 0))
    assert nm.f32_to_f16(f32_bits([1e9, -7e4]), "rtz").tolist() == [0x7BFF, 0xFBFF]


# ---------------------------------------------------------------------------------------- bf16

def test_bf16_known():
    assert nm.bf16_to_f32(np.array([0x3F80, 0xFF80, 0x0001], np.uint16)).tolist() == \
        [0x3F800000, 0xFF800000, 0x00010000]
    x = np.array([0x3F808000, 0x3F818000, 0x3F808001, 0x7F7FFFFF, 0x7F7F7FFF, 0x00008000,
                  0x7F800001, 0xFFC00000, 0x7F800000, 0x80018000], np.uint32)
    assert nm.f32_to_bf16(x).tolist() == [0x3F80, 0x3F82, 0x3F81, 0x7F80, 0x7F7F, 0x0000,
                                          0x7FC0, 0xFFC0, 0x7F80, 0x8002]
    assert nm.f32_to_bf16(x, "trunc").tolist() == [0x3F80, 0x3F81, 0x3F80, 0x7F7F, 0x7F7F,
                                                   0x0000, 0x7F80, 0xFFC0, 0x7F80, 0x8001]


def test_f32_to_bf16_nearest_even_formula():
    x = np.concatenate([RNG.integers(0, 2 ** 32, 300_000, dtype=np.uint64).astype(np.uint32),
                        (RNG.integers(0, 2 ** 16, 100_000).astype(np.uint32) << 16)
                        | np.uint32(0x8000)])
    x = x[(x & 0x7FFFFFFF) < 0x7F800000]
    got = nm.f32_to_bf16(x)
    v = nm.as_f32(x).astype(np.float64)
    lo = nm.as_f32(x & np.uint32(0xFFFF0000)).astype(np.float64)
    hi_bits = (x & np.uint32(0xFFFF0000)) + np.uint32(0x10000)
    hi = np.where((hi_bits & 0x7FFFFFFF) == 0x7F800000, np.copysign(2.0 ** 128, v),
                  nm.as_f32(hi_bits).astype(np.float64))
    dlo, dhi = np.abs(v - lo), np.abs(hi - v)
    lo_code = (x >> 16).astype(np.uint16)
    want = np.where(dlo < dhi, lo_code,
                    np.where(dhi < dlo, lo_code + np.uint16(1),
                             np.where(lo_code & 1, lo_code + np.uint16(1), lo_code)))
    assert np.array_equal(got, want)


def test_bf16_roundtrip_all_codes():
    codes = np.arange(65536, dtype=np.uint16)
    back = nm.f32_to_bf16(nm.bf16_to_f32(codes))
    nan = ((codes & 0x7F80) == 0x7F80) & ((codes & 0x7F) != 0)
    assert np.array_equal(back[~nan], codes[~nan])
    assert np.array_equal(back[nan], codes[nan] | 0x40)


# ------------------------------------------------------------------------------------- helpers

def test_helpers():
    x = np.array([1.5, -2.0, np.pi], np.float64)
    lo, hi = nm.unpack_f64(x)
    assert lo.dtype == np.uint32 and hi.dtype == np.uint32
    assert int(hi[0]) == 0x3FF80000 and int(lo[0]) == 0
    assert np.array_equal(nm.pack_f64(lo, hi), x)
    assert nm.as_f32(np.array([0x3F800000], np.uint32))[0] == 1.0
    assert nm.as_u32(np.float32([2.0]))[0] == 0x40000000


def test_rejects_float_input():
    with pytest.raises(TypeError):
        nm.f16_to_f32(np.array([1.0]))


# ----------------------------------------------------------------------------------------- fp8

FP8_SPEC = {  # fmt: (exponent bits, mantissa bits, bias, NaN codes, inf codes)
    "fp8": (4, 3, 8, {0x80}, set()),
    "bf8": (5, 2, 16, {0x80}, set()),
    "e4m3fn": (4, 3, 7, {0x7F, 0xFF}, set()),
    "e5m2": (5, 2, 15, {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}, {0x7C, 0xFC}),
}
FP8_MAX = {"fp8": 240.0, "bf8": 57344.0, "e4m3fn": 448.0, "e5m2": 57344.0}


def fp8_value(code: int, fmt: str) -> float:
    ebits, mbits, bias, nans, infs = FP8_SPEC[fmt]
    if code in nans:
        return math.nan
    s = -1.0 if code & 0x80 else 1.0
    if code in infs:
        return s * math.inf
    e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if e == 0:
        return s * m * 2.0 ** (1 - bias - mbits)
    return s * (1 + m / 2 ** mbits) * 2.0 ** (e - bias)


@pytest.mark.parametrize("fmt", sorted(FP8_SPEC))
def test_fp8_decode_all_codes(fmt):
    got = nm.as_f32(nm.fp8_to_f32(np.arange(256, dtype=np.uint8), fmt)).astype(np.float64)
    want = np.array([fp8_value(c, fmt) for c in range(256)])
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan], want[~nan])
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))
    assert np.nanmax(np.where(np.isinf(want), np.nan, want)) == FP8_MAX[fmt]


@pytest.mark.parametrize("fmt", sorted(FP8_SPEC))
def test_fp8_roundtrip_all_codes(fmt):
    codes = np.arange(256, dtype=np.uint8)
    back = nm.f32_to_fp8(nm.fp8_to_f32(codes, fmt), fmt)
    finite = np.array([math.isfinite(fp8_value(c, fmt)) for c in range(256)])
    want = codes.copy()
    if fmt in ("fp8", "bf8"):
        pass                                           # 0x80 is NaN and maps to itself
    else:
        want[0x80] = 0x80                              # -0 stays -0
    assert np.array_equal(back[finite], want[finite])


def nearest_fp8(v: np.ndarray, fmt: str) -> np.ndarray:
    """Independent RNE: nearest of the sorted finite magnitudes plus one virtual value past
    the maximum (which means overflow), ties to the even code; returns magnitude codes."""
    ebits, mbits, bias, nans, infs = FP8_SPEC[fmt]
    mags = [(fp8_value(c, fmt), c) for c in range(0x80) if math.isfinite(fp8_value(c, fmt))]
    top = max(mags)
    ulp = 2.0 ** (math.floor(math.log2(top[0])) - mbits)
    mags.append((top[0] + ulp, top[1] + 1))
    vals = np.array([m for m, _ in mags])
    codes = np.array([c for _, c in mags])
    a = np.abs(v)
    hi = np.clip(np.searchsorted(vals, a), 1, len(vals) - 1)
    lo = hi - 1
    dlo, dhi = a - vals[lo], vals[hi] - a
    pick_hi = (dhi < dlo) | ((dhi == dlo) & (codes[hi] % 2 == 0))
    res = np.where(pick_hi, codes[hi], codes[lo])
    return np.where(a > vals[-1], codes[-1], res)


@pytest.mark.parametrize("fmt", sorted(FP8_SPEC))
@pytest.mark.parametrize("saturate", [False, True])
def test_f32_to_fp8_rne_formula(fmt, saturate):
    mx = FP8_MAX[fmt]
    v = np.concatenate([RNG.uniform(-1.2 * mx, 1.2 * mx, 50_000),
                        RNG.uniform(-4 * 2.0 ** -FP8_SPEC[fmt][2], 4 * 2.0 ** -FP8_SPEC[fmt][2],
                                    50_000),
                        nm.as_f32(nm.fp8_to_f32(np.arange(256, dtype=np.uint8), fmt))
                        .astype(np.float64) * 1.0625]).astype(np.float32)
    v = v[np.isfinite(v)]
    got = nm.f32_to_fp8(nm.as_u32(v), fmt, saturate=saturate)
    mag = nearest_fp8(v.astype(np.float64), fmt)
    _, _, _, nans, infs = FP8_SPEC[fmt]
    max_code = {"fp8": 0x7F, "bf8": 0x7F, "e4m3fn": 0x7E, "e5m2": 0x7B}[fmt]
    over = mag > max_code
    neg = np.signbit(v)
    if fmt in ("fp8", "bf8"):
        want = np.where(mag == 0, 0, mag | (neg << 7))
        want = np.where(over, (max_code | (neg << 7)) if saturate else 0x80, want)
    else:
        ov = max_code if saturate else (0x7F if fmt == "e4m3fn" else 0x7C)
        want = np.where(over, ov, mag) | (neg << 7)
    assert np.array_equal(got, want.astype(np.uint8))


def test_f32_to_fp8_special_values():
    bits = np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x80000000], np.uint32)
    assert nm.f32_to_fp8(bits, "fp8").tolist() == [0x80, 0x80, 0x80, 0x80, 0x00]
    assert nm.f32_to_fp8(bits, "fp8", saturate=True).tolist() == [0x7F, 0xFF, 0x80, 0x80, 0]
    assert nm.f32_to_fp8(bits, "bf8", saturate=True).tolist() == [0x7F, 0xFF, 0x80, 0x80, 0]
    assert nm.f32_to_fp8(bits, "e4m3fn").tolist() == [0x7F, 0xFF, 0x7F, 0xFF, 0x80]
    assert nm.f32_to_fp8(bits, "e5m2").tolist() == [0x7C, 0xFC, 0x7E, 0xFE, 0x80]
    assert nm.f32_to_fp8(bits, "e5m2", saturate=True).tolist() == [0x7B, 0xFB, 0x7E, 0xFE, 0x80]
    v = f32_bits([1.0, 240.0, 247.99, 248.0, 2.0 ** -10, 2.0 ** -11, 1.5 * 2.0 ** -11, -1e-9])
    assert nm.f32_to_fp8(v, "fp8").tolist() == [0x40, 0x7F, 0x7F, 0x80, 0x01, 0x00, 0x01, 0x00]


def test_f32_to_fp8_stochastic_rounding():
    one_and_quarter_ulp = f32_bits([1 + 0.125 / 4])                # 1/4 of the way to 1.125
    x = np.repeat(one_and_quarter_ulp, 40_000)
    rnd = RNG.integers(0, 2 ** 32, x.size, dtype=np.uint64).astype(np.uint32)
    got = nm.f32_to_fp8(x, "fp8", rounding="sr", sr_random=rnd)
    assert set(got.tolist()) == {0x40, 0x41}
    assert abs(np.mean(got == 0x41) - 0.25) < 0.01
    exact = nm.fp8_to_f32(np.arange(0x80, dtype=np.uint8)[1:], "fp8")
    ones = np.full(exact.size, 0xFFFFFFFF, np.uint32)
    assert np.array_equal(nm.f32_to_fp8(exact, "fp8", rounding="sr", sr_random=ones),
                          np.arange(1, 0x80, dtype=np.uint8))          # exact: never bumped
    assert nm.f32_to_fp8(f32_bits([1.1]), "fp8", rounding="sr",
                         sr_random=np.zeros(1, np.uint32)).tolist() == [0x40]   # truncates
    assert nm.f32_to_fp8(f32_bits([241.0, 1e6]), "fp8", saturate=False, rounding="sr",
                         sr_random=np.full(2, 0xFFFFFFFF, np.uint32)).tolist() == [0x80, 0x80]
    # denormal result: 1.5 * 2**-11 sits halfway between 0 and 2**-10
    half = nm.f32_to_fp8(np.repeat(f32_bits([1.5 * 2.0 ** -11]), 40_000), "fp8", rounding="sr",
                         sr_random=rnd)
    assert abs(np.mean(half == 0x01) - 0.75) < 0.01
    with pytest.raises(ValueError):
        nm.f32_to_fp8(f32_bits([1.0]), "fp8", rounding="sr")
