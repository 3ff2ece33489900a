"""Sparse memory (pages exist once touched) and launches of selected workgroups."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from asmevo.emu import run_kernel
from asmevo.emu.memory import GUARD, PAGE, SparseMemory
from asmevo.errors import EmulationError
from emutools import asm, launch_raw

# out[wg] = wg + 1 (every lane stores the same word)
STORE_WG = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_lshl_b32 s6, s2, 2
  v_mov_b32 v1, s6
  v_mov_b32 v2, s2
  v_add_u32_e32 v2, 1, v2
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v2, s[4:5]
  s_endpgm
"""


def pattern(lo: int, hi: int) -> np.ndarray:
    return (np.arange(lo, hi) % 251).astype(np.uint8)


def test_pages_are_filled_on_first_touch_and_only_then():
    mem = SparseMemory()
    big = mem.alloc(8 << 30, "big", fill=pattern)
    small = mem.alloc(100, "small")
    far = (5 << 30) + 3
    assert mem.read(big + far, 4) == bytes(pattern(far, far + 4))
    assert mem.read(small, 4) == b"\0" * 4  # no fill: zeros
    assert mem.read(big + 100, 5 * PAGE) == bytes(pattern(100, 100 + 5 * PAGE))  # every page of a long read
    mem.write(big + 12345, b"\x01\x02")
    assert mem.read(big + 12344, 4) == bytes([pattern(12344, 12345)[0], 1, 2, pattern(12347, 12348)[0]])
    assert mem.resident_bytes <= 14 * PAGE  # eight pages of `big`, `small`'s page, guard-band checks
    assert mem.touched(mem.buffers()[0]) == [(0, 24576), (far - 3, far - 3 + PAGE)]
    assert mem.guard_violations() == []


def test_accesses_outside_buffers_and_guard_damage_are_seen():
    mem = SparseMemory()
    a = mem.alloc(1 << 32, "a")
    off = mem.offsets(np.array([a, a + (1 << 32) - 4, a + (1 << 32), a - 4], np.uint64))
    assert mem.in_bounds(off, 4).tolist() == [True, True, False, False]
    mem.scatter(off[2:3], 4, np.array([[7]], np.uint32))  # into the guard band after `a`
    assert mem.guard_violations() == [f"a: guard band after 0x{a + (1 << 32):x} overwritten"]
    with pytest.raises(EmulationError, match="outside every buffer"):
        mem.read(a - GUARD, 4)


def test_only_the_selected_workgroups_run():
    co = asm(STORE_WG, args=1)
    res = launch_raw(co, "k", (10, 1, 1), (64, 1, 1), [np.zeros(10, np.uint32)], workgroups=[9, 0, 5, 6])
    assert res.outputs[0].tolist() == [1, 0, 0, 0, 0, 6, 7, 0, 0, 10]
    assert res.report.waves == 4 and res.report.ok
    with pytest.raises(EmulationError, match="workgroup ids"):
        launch_raw(co, "k", (10, 1, 1), (64, 1, 1), [np.zeros(10, np.uint32)], workgroups=[10])


def test_a_few_workgroups_of_a_giant_grid_on_sparse_memory():
    co = asm(STORE_WG, args=1)
    nwg = (1 << 26) - 1  # the grid's work-item count must fit 32 bits
    mem = SparseMemory()
    out = mem.alloc(4 * nwg, "out")
    picked = [0, (1 << 25) + 1, nwg - 1]
    rep = run_kernel(co, "k", grid=(nwg, 1, 1), block=(64, 1, 1), dynamic_lds=0,
                     kernarg=struct.pack("<QQ", out, 0), memory=mem, workgroups=picked)
    assert rep.ok
    for w in picked:
        assert struct.unpack("<I", mem.read(out + 4 * w, 4))[0] == w + 1
    assert struct.unpack("<I", mem.read(out + 4 * 7, 4))[0] == 0
    assert mem.resident_bytes < 64 * PAGE
    with pytest.raises(EmulationError, match="geometry"):
        run_kernel(co, "k", grid=(nwg + 1, 1, 1), block=(64, 1, 1), dynamic_lds=0,
                   kernarg=struct.pack("<QQ", out, 0), memory=mem, workgroups=[0])


def test_buffer_index_of_offsets_in_one_buffer_and_across_buffers():
    mem = SparseMemory()
    a, b = mem.alloc(3 * PAGE, "a"), mem.alloc(PAGE, "b")
    off = mem.offsets(np.array([a, a + 3 * PAGE - 4, b, b + 4], np.uint64))
    assert mem.buffer_index(off[:2]).tolist() == [0, 0]
    assert mem.buffer_index(off[2:]).tolist() == [1, 1]
    assert mem.buffer_index(off).tolist() == [0, 0, 1, 1]
    assert mem.buffer_index(off[:0]).tolist() == []
