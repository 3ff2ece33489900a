"""The hip device is import-safe without ROCm and fails on first use with one line."""
from __future__ import annotations

import sys

import pytest

from asmevo.device import DeviceError, get_device


def test_import_and_construct_without_rocm(monkeypatch):
    monkeypatch.setitem(sys.modules, "hip", None)  # as if hip-python were not installed
    import asmevo.device.hip as hipdev

    device = get_device("hip")
    assert isinstance(device, hipdev.HipDevice) and device.timing_unit == "ms"
    for call in (lambda: device.alloc(16, "x"), lambda: device.load(b"\x7fELF")):
        with pytest.raises(DeviceError) as info:
            call()
        message = str(info.value)
        assert "\n" not in message
        assert message.startswith("hip device unavailable: cannot import hip-python")
        assert "pip install 'asmevo[hip]'" in message


def test_kernarg_buffer_layout():
    import ctypes

    from asmevo.device.hip import _KernargBuffer

    packed = _KernargBuffer(b"\x01\x02\x03\x04")
    extra = (ctypes.c_void_p * 5).from_address(packed.address)
    assert [extra[0], extra[2], extra[4]] == [1, 2, 3]
    assert ctypes.string_at(extra[1], 4) == b"\x01\x02\x03\x04"
    assert ctypes.c_size_t.from_address(extra[3]).value == 4


def test_unknown_device():
    with pytest.raises(DeviceError, match="unknown device 'cuda' \\(valid: emu, hip\\)"):
        get_device("cuda")
