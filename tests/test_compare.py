"""Comparison policy on synthetic arrays: bitwise default, tolerances, NaN positions, integers."""
import numpy as np
import pytest

from asmevo.compare import (Tolerance, TolerancePolicy, ToleranceError, compare_buffer, compare_buffers,
                            ulp_distance)


def test_identical_float_buffers_agree_bitwise():
    a = np.linspace(-3, 3, 100, dtype=np.float32)
    assert compare_buffer("y", a, a.copy()) is None


def test_bitwise_default_rejects_one_ulp_and_names_first_index():
    a = np.ones((4, 8), dtype=np.float32)
    b = a.copy()
    b[2, 5] = np.nextafter(np.float32(1), np.float32(2))
    b[3, 0] = 7
    d = compare_buffer("y", a, b)
    assert d is not None and d.buffer == "y" and d.index == (2, 5) and d.count == 2
    assert d.reason == "bitwise" and "1.0" in d.expected and "1.0000001" in d.actual


def test_bitwise_distinguishes_signed_zero_and_nan_payload():
    a = np.zeros(4, dtype=np.float32)
    b = a.copy()
    b[1] = -0.0
    assert compare_buffer("y", a, b).index == (1,)
    n1 = np.array([np.nan], dtype=np.float32)
    n2 = np.array([0x7FC00001], dtype=np.uint32).view(np.float32)
    assert compare_buffer("y", n1, n2) is not None


def test_tolerance_accepts_within_atol_rtol_and_rejects_beyond():
    a = np.array([1.0, 100.0, 0.0], dtype=np.float32)
    b = np.array([1.0 + 1e-6, 100.001, 1e-7], dtype=np.float32)
    assert compare_buffer("y", a, b, Tolerance(atol=1e-6, rtol=1e-5)) is None
    d = compare_buffer("y", a, b, Tolerance(atol=1e-9, rtol=1e-9))
    assert d is not None and d.index == (0,) and "tolerance" in d.reason


def test_max_ulp():
    a = np.array([1.0, 2.0], dtype=np.float32)
    b = a.view(np.uint32).copy()
    b += np.array([2, 3], dtype=np.uint32)
    b = b.view(np.float32)
    assert ulp_distance(a, b).tolist() == [2, 3]
    assert compare_buffer("y", a, b, Tolerance(max_ulp=3)) is None
    assert compare_buffer("y", a, b, Tolerance(max_ulp=2)).index == (1,)
    z = np.array([0.0], dtype=np.float32)
    assert ulp_distance(z, -z).tolist() == [0]


def test_nan_positions_must_match_under_tolerance():
    a = np.array([1.0, np.nan, 3.0], dtype=np.float32)
    b = np.array([1.0, 2.0, np.nan], dtype=np.float32)
    d = compare_buffer("y", a, b, Tolerance(atol=10.0))
    assert d.reason == "NaN position" and d.index == (1,)
    assert compare_buffer("y", a, a.copy(), Tolerance(atol=1e-3)) is None


def test_infinities_must_be_equal_under_tolerance():
    a = np.array([np.inf, 1.0], dtype=np.float32)
    b = np.array([-np.inf, 1.0], dtype=np.float32)
    assert compare_buffer("y", a, b, Tolerance(atol=1e30)).reason == "infinity"
    big = np.array([3e38], dtype=np.float32)
    assert compare_buffer("y", big, np.array([np.inf], dtype=np.float32), Tolerance(rtol=1.0)).reason == "infinity"


def test_integers_exact_even_with_tolerance():
    a = np.arange(10, dtype=np.int32)
    b = a.copy()
    b[7] = 8
    d = compare_buffer("idx", a, b, Tolerance(atol=5))
    assert d.reason == "exact" and d.index == (7,) and d.expected == "7" and d.actual == "8"


def test_half_precision_and_float64():
    for dt in (np.float16, np.float64):
        a = np.array([1, 2, 3], dtype=dt)
        b = a.copy()
        b[2] = np.nextafter(b[2], dt(10))
        assert compare_buffer("y", a, b).index == (2,)
        assert compare_buffer("y", a, b, Tolerance(max_ulp=1)) is None


def test_shape_and_missing_buffer():
    assert compare_buffer("y", np.zeros(3, np.float32), np.zeros(4, np.float32)).reason == "dtype or shape"
    d = compare_buffers({"x": np.zeros(2), "y": np.zeros(2)}, {"x": np.zeros(2)})
    assert d.buffer == "y" and d.reason == "buffer missing"


def test_policy_per_buffer_override_and_validation():
    pol = TolerancePolicy.from_dict({"atol": 1e-3, "buffers": {"exact": {}}})
    a = np.zeros(3, np.float32)
    b = a + np.float32(1e-4)
    assert compare_buffers({"y": a}, {"y": b}, pol) is None
    assert compare_buffers({"exact": a}, {"exact": b}, pol).buffer == "exact"
    assert pol.to_dict()["buffers"]["exact"]["atol"] == 0.0
    with pytest.raises(ToleranceError):
        TolerancePolicy.from_dict({"atoll": 1})
    with pytest.raises(ToleranceError):
        Tolerance.from_dict({"atol": -1})


def test_bfloat16_bits_under_tolerance_use_decoded_values_and_bit_ulps():
    from asmevo.device.dtypes import get_dtype
    bf16 = get_dtype("bfloat16")
    a = bf16.encode(np.array([1.0, 2.0, np.nan], dtype=np.float32))
    b = a.copy()
    b[1] += 1
    assert compare_buffer("y", a, b).reason == "exact"
    assert compare_buffer("y", a, b, Tolerance(max_ulp=1), bf16.decode) is None
    assert compare_buffer("y", a, b, Tolerance(atol=1e-3), bf16.decode).index == (1,)
    c = a.copy()
    c[2] = bf16.encode(np.array([0.0], dtype=np.float32))[0]
    assert compare_buffer("y", a, c, Tolerance(atol=1.0), bf16.decode).reason == "NaN position"
