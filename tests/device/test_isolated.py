"""The isolation runner: results and errors come back; a fault or a hang costs only the child."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from asmevo.device import DeviceError
from asmevo.device.isolated import ChildCrashed, ChildTimeout, default_timeout, run_isolated
from asmevo.errors import LaunchSpecError

TESTS = str(Path(__file__).resolve().parents[1])


def run(target: str, *args, **kwargs):
    return run_isolated(f"hip_children:{target}", *args, env={"PYTHONPATH": TESTS}, **kwargs)


def test_result_and_progress():
    assert run("double", 21) == 42
    assert run("slow_but_alive", 4, 0.4, timeout=1.0) == 4  # progress notes restart the watchdog


def test_a_fault_is_a_crash_with_the_step_and_the_runtime_message():
    with pytest.raises(ChildCrashed) as info:
        run("crash")
    assert info.value.note == "about to fault"
    assert "SIGSEGV" in str(info.value) and "Memory access fault by GPU node-2" in info.value.output
    assert run("double", 1) == 2  # the caller goes on


def test_a_silent_child_is_killed_at_the_timeout():
    began = time.monotonic()
    with pytest.raises(ChildTimeout) as info:
        run("hang", timeout=1.5)
    assert 1.5 <= time.monotonic() - began < 10
    assert info.value.note == "waiting forever" and "no progress for 1.5 s" in str(info.value)


def test_errors_come_back_by_class():
    with pytest.raises(LaunchSpecError, match="grid too large"):
        run("raise_launch_spec_error")
    with pytest.raises(DeviceError, match="isolated hip_children:raise_bug failed: ZeroDivisionError: oops"):
        run("raise_bug")


def test_timeout_setting(monkeypatch):
    monkeypatch.setenv("ASMEVO_HIP_TIMEOUT", "7.5")
    assert default_timeout() == 7.5
    monkeypatch.setenv("ASMEVO_HIP_TIMEOUT", "soon")
    with pytest.raises(DeviceError, match="ASMEVO_HIP_TIMEOUT must be a positive number"):
        default_timeout()
