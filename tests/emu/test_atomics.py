"""Global and LDS atomics: packed 16-bit float adds under collisions, and the `workgroup_order` finding."""
from __future__ import annotations

import math

import numpy as np
import pytest

from emutools import asm, launch_raw
from test_valu import run

RNG = np.random.default_rng(11)
# significand bits (with the hidden bit), least normal exponent, and a value's 16-bit pattern (exact values)
FORMATS = {"bf16": (8, -126, lambda x: int(np.float32(x).view(np.uint32)) >> 16),
           "f16": (11, -14, lambda x: int(np.float16(x).view(np.uint16)))}


def rne(x: float, fmt: str) -> int:
    """`x` rounded to nearest even in `fmt` (no overflow), as a bit pattern: x over the unit in the last
    place is exact, and Python's round() rounds it to an integer with ties to even."""
    p, emin, pattern = FORMATS[fmt]
    if x == 0:
        return pattern(x)
    ulp = 2.0 ** (max(math.frexp(x)[1], emin + 1) - p)
    return pattern(round(x / ulp) * ulp)


def pack(lo: int, hi: int) -> int:
    return lo | hi << 16


def serial(start: tuple[float, float], step: tuple[float, float], n: int, fmt: str) -> list[int]:
    """The packed dword before each of n serial adds of `step` to `start`, then after the last (each half
    rounded per add)."""
    value, out = list(start), []
    for _ in range(n + 1):
        out.append(pack(rne(value[0], fmt), rne(value[1], fmt)))
        value = [float(_decode(rne(v + s, fmt), fmt)) for v, s in zip(value, step)]
    return out


def _decode(bits: int, fmt: str) -> float:
    if fmt == "bf16":
        return float(np.uint32(bits << 16).view(np.float32))
    return float(np.uint16(bits).view(np.float16))


# (start lo/hi, per-lane addend lo/hi): the high halves reach a tie (bf16: 257 between 256 and 258; f16: 2049
# between 2048 and 2050) that rounds to even and then sticks; the low halves stay exact.
COLLIDING = {"bf16": ((1.0, 250.0), (0.5, 1.0)), "f16": ((1.0, 2040.0), (0.25, 1.0))}


@pytest.mark.parametrize("fmt", ["bf16", "f16"])
def test_global_pk_add_colliding_lanes_add_as_floats(fmt):
    """All 64 lanes add to one non-zero dword: the result and each lane's returned pre-op value are the
    serial float sums (lanes in order), not integer sums of the bit patterns."""
    (start, step) = COLLIDING[fmt]
    expect = serial(start, step, 64, fmt)
    co = asm(f"""
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v10, 2, v0
  v_mov_b32 v1, 0
  v_mov_b32 v2, {pack(rne(step[0], fmt), rne(step[1], fmt)):#x}
  s_waitcnt lgkmcnt(0)
  global_atomic_pk_add_{fmt} v3, v1, v2, s[6:7] sc0
  s_waitcnt vmcnt(0)
  global_store_dword v10, v3, s[4:5]
  s_endpgm
""", args=2)
    res = launch_raw(co, "k", (1,), (64,), [np.zeros(64, np.uint32), np.array([expect[0]], np.uint32)])
    assert res.report.ok, res.report.findings
    assert [hex(v) for v in res.outputs[0]] == [hex(v) for v in expect[:64]]
    assert hex(res.outputs[1][0]) == hex(expect[64])
    assert expect[64] == pack(rne(start[0] + 64 * step[0], fmt), rne(256.0 if fmt == "bf16" else 2048.0, fmt))


@pytest.mark.parametrize("fmt", ["bf16", "f16"])
def test_ds_pk_add_colliding_lanes_add_as_floats(fmt):
    (start, step) = COLLIDING[fmt]
    expect = serial(start, step, 64, fmt)
    body = f"""
  v_mov_b32 v5, 0
  v_mov_b32 v6, {expect[0]:#x}
  v_mov_b32 v7, {pack(rne(step[0], fmt), rne(step[1], fmt)):#x}
  ds_write_b32 v5, v6
  s_waitcnt lgkmcnt(0)
  ds_pk_add_{fmt} v5, v7
  s_waitcnt lgkmcnt(0)
  ds_read_b32 v4, v5
  s_waitcnt lgkmcnt(0)
"""
    got = run(body, np.zeros(64, np.uint32), lds=64)
    assert hex(got[0]) == hex(expect[64])


@pytest.mark.parametrize("fmt", ["bf16", "f16"])
def test_global_pk_add_rounds_each_half_to_nearest_even(fmt):
    """One lane per dword, random operands of magnitude 2^-8 .. 2^8: each half is the correctly rounded
    sum (cancellation reaches the subnormal range of f16)."""
    def draw(n):
        x = RNG.choice([-1.0, 1.0], n) * RNG.uniform(1, 2, n) * 2.0 ** RNG.integers(-8, 8, n)
        return [rne(float(v), fmt) for v in x]
    old = [draw(64), draw(64)]
    add = [draw(64), draw(64)]
    co = asm(f"""
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v10, s[4:5]
  s_waitcnt vmcnt(0)
  global_atomic_pk_add_{fmt} v10, v2, s[6:7]
  s_endpgm
""", args=2)
    mem = np.array([pack(a, b) for a, b in zip(*old)], np.uint32)
    data = np.array([pack(a, b) for a, b in zip(*add)], np.uint32)
    res = launch_raw(co, "k", (1,), (64,), [data, mem])
    assert res.report.ok, res.report.findings
    expect = [pack(rne(_decode(o0, fmt) + _decode(a0, fmt), fmt), rne(_decode(o1, fmt) + _decode(a1, fmt), fmt))
              for o0, o1, a0, a1 in zip(*old, *add)]
    np.testing.assert_array_equal(res.outputs[1], np.array(expect, np.uint32))


PROLOGUE = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v10, 2, v0
  v_mov_b32 v1, 0
  v_mov_b32 v2, 1
  s_waitcnt lgkmcnt(0)
  s_cmp_eq_u32 s2, 1
"""
ZERO = """
  global_store_dword v10, v1, s[4:5]
  s_waitcnt vmcnt(0)
  global_atomic_add v10, v2, s[4:5]
  s_endpgm
"""
ADD = """
  global_atomic_add v10, v2, s[4:5]
  s_endpgm
"""


def test_store_over_another_workgroups_atomic_is_a_workgroup_order_finding():
    """Workgroup 1 zeroes the output both workgroups then add into. Its code lies after workgroup 0's, so
    the emulator (lowest PC first) runs 0's atomic before 1's store: hardware may run them either way."""
    co = asm(PROLOGUE + " s_cbranch_scc1 zero\n" + ADD + "zero:" + ZERO, args=1)
    res = launch_raw(co, "k", (2,), (64,), [np.full(64, 7, np.uint32)])
    assert {f.kind for f in res.report.findings} == {"workgroup_order"}, res.report.findings
    assert "workgroup 1 stores over global memory workgroup 0 updated by atomic" in res.report.findings[0].message


def test_store_before_other_workgroups_atomics_is_no_finding():
    """The intended order (the zeroing workgroup's store runs first) gives no finding; the sum counts both."""
    co = asm(PROLOGUE + " s_cbranch_scc0 add\n" + ZERO + "add:" + ADD, args=1)
    res = launch_raw(co, "k", (2,), (64,), [np.full(64, 7, np.uint32)])
    assert res.report.ok, res.report.findings
    np.testing.assert_array_equal(res.outputs[0], np.full(64, 2, np.uint32))


def test_a_workgroup_that_saw_a_returned_atomic_may_store_over_others():
    """The last-arriver pattern: a returning atomic tells the storing workgroup the others are done."""
    co = asm("""
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_mov_b32 v1, 0
  v_mov_b32 v2, 1
  s_waitcnt lgkmcnt(0)
  global_atomic_add v1, v2, s[4:5]
  s_cmp_eq_u32 s2, 1
  s_cbranch_scc0 done
  global_atomic_add v3, v1, v2, s[6:7] sc0
  s_waitcnt vmcnt(0)
  global_store_dword v1, v1, s[4:5]
done:
  s_endpgm
""", args=2)
    res = launch_raw(co, "k", (2,), (64,), [np.zeros(1, np.uint32), np.zeros(1, np.uint32)])
    assert res.report.ok, res.report.findings
