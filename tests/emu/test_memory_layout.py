"""Global memory layouts: the crossing layout puts every buffer across a 4 GiB boundary."""
from __future__ import annotations

import numpy as np
import pytest

from asmevo.emu.memory import BASE, CROSS_MIN, GUARD, Memory
from asmevo.errors import EmulationError
from emutools import asm, launch_raw

SIZES = [4, 16, 17, 100, 4096, 5000]


def test_crossing_buffers_straddle_distinct_4gib_boundaries():
    mem = Memory(layout="crossing")
    addrs = [mem.alloc(n, f"b{i}") for i, n in enumerate(SIZES)]
    for i, (a, n) in enumerate(zip(addrs, SIZES)):
        boundary = BASE + ((2 * i + 1) << 32)
        below = boundary - a
        assert a % CROSS_MIN == 0 and a % below == 0
        assert n <= CROSS_MIN or (n // 2 <= below < n)  # up to half the buffer above the boundary
    assert len({a >> 32 for a in addrs}) == len(addrs)


def test_crossing_round_trip_and_unmapped_neighbourhood():
    mem = Memory(layout="crossing")
    a = mem.alloc(5000, "x")
    b = mem.alloc(64, "y")
    data = np.arange(1250, dtype=np.uint32).tobytes()
    mem.write(a, data)
    mem.write(b, bytes(range(64)))
    assert mem.read(a, 5000) == data and mem.read(b, 64) == bytes(range(64))
    probe = np.array([a, a + 4996, a + 4996 + (1 << 32), a + 4996 - (1 << 32), a - GUARD - 1], np.uint64)
    ok = mem.in_bounds(mem.offsets(probe), 4)
    assert ok.tolist() == [True, True, False, False, False]
    with pytest.raises(EmulationError):
        mem.read(a + 4096 - (1 << 32), 4)


LOAD_AT_768 = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  s_add_u32 s4, s4, 0x300
  {high}
  global_load_dword v2, v1, s[4:5]
  s_waitcnt vmcnt(0)
  global_store_dword v1, v2, s[6:7]
  s_endpgm
"""


@pytest.mark.parametrize("high,layout,ok", [
    ("s_addc_u32 s5, s5, 0", "packed", True),
    ("s_addc_u32 s5, s5, 0", "crossing", True),
    ("s_add_u32 s5, s5, 0", "packed", True),  # the dropped carry is invisible when nothing carries
    ("s_add_u32 s5, s5, 0", "crossing", False),
])
def test_dropped_address_carry_is_out_of_bounds_in_the_crossing_layout(high, layout, ok):
    co = asm(LOAD_AT_768.format(high=high), args=2)
    x = np.arange(256, dtype=np.uint32)
    res = launch_raw(co, "k", (1,), (64,), [x, np.zeros(64, np.uint32)], layout=layout)
    if ok:
        assert res.report.ok, res.report.findings
        assert (res.outputs[1] == x[192:]).all()
    else:
        assert {f.kind for f in res.report.findings} == {"out_of_bounds"}
