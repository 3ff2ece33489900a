"""The launch trace's memory statistics: coalescing is per wave instruction, whatever the grouping."""
import numpy as np

from asmevo.emu.trace import LINE_BYTES, LaunchTrace


def _lines(offsets, waves) -> int:
    trace = LaunchTrace({})
    offsets = np.asarray(offsets, np.int64)
    trace.access(0x100, np.zeros(len(offsets), np.int64), offsets, 4, np.asarray(waves))
    return trace.memory[0x100].lines


def test_one_waves_lanes_coalesce_into_distinct_lines():
    assert _lines(np.arange(64) * 4, np.zeros(64)) == 64 * 4 // LINE_BYTES
    assert _lines(np.zeros(64), np.zeros(64)) == 1


def test_two_waves_reading_one_line_make_two_requests_in_one_group_as_apart():
    together = _lines(np.zeros(128), np.repeat([0, 1], 64))
    apart = _lines(np.zeros(64), np.zeros(64)) + _lines(np.zeros(64), np.zeros(64))
    assert together == apart == 2


def test_bytes_by_buffer_for_one_buffer_and_for_several():
    trace = LaunchTrace({})
    trace.access(0x100, np.full(64, 2), np.arange(64) * 4, 4, np.zeros(64, np.int64))
    trace.access(0x100, np.repeat([0, 3], 32), np.arange(64) * 4, 2, np.zeros(64, np.int64))
    assert trace.memory[0x100].by_buffer == {2: 256, 0: 64, 3: 64}
