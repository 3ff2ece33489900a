"""GPU discovery, identity and leases (the runtime report is given; the stub tests cover asking HIP)."""
from __future__ import annotations

import threading
import time

import pytest

from asmevo.device import DeviceError, gpus


def report(*archs: str) -> dict:
    return {"hip_python": "7.2.2.562.43", "built_for_rocm": "7.2.2", "built_for_hip": "7.2", "hip_runtime": "7.2.53211",
            "driver": 70253211, "rocm": "7.2.2",
            "gpus": [{"index": i, "name": "AMD Instinct MI300X", "arch": a, "pci_bus_id": f"0000:{0x10 + i:02x}:00.0",
                      "max_grid": (2**31 - 1, 65536, 65536), "memory_bytes": 1, "compute_units": 304,
                      "clock_khz": 2100000, "l2_bytes": 4 << 20} for i, a in enumerate(archs)]}


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """`machine(*archs)`: pretend HIP reports GPUs of these targets; locks in the test's directory."""
    monkeypatch.setattr(gpus, "LOCK_DIR", tmp_path / "locks")
    monkeypatch.delenv("ASMEVO_GPUS", raising=False)

    def make(*archs: str) -> None:
        monkeypatch.setattr(gpus, "runtime_report", lambda: report(*archs))
    return make


def test_identity_of_one_gpu_and_of_the_pool(machine, monkeypatch):
    machine("gfx942:sramecc+:xnack-", "gfx942:sramecc+:xnack-")
    one = gpus.hardware_identity(1)
    assert one["device_id"] == 1 and one["pci_bus_id"] == "0000:11:00.0" and one["target"] == "gfx942:sramecc+:xnack-"
    assert one["host"]
    pool = gpus.hardware_identity()
    assert set(pool) == {"gpu", "target", "hip_runtime", "driver", "rocm", "hip_python"}  # no host: machines alike share
    gpus.require_identity(pool)
    with pytest.raises(DeviceError, match="differ from the run's hardware identity: rocm '7.2.2' \\(run: '6.4.4'\\)"):
        gpus.require_identity({**pool, "rocm": "6.4.4"})
    machine("gfx942:sramecc+:xnack-", "gfx90a:sramecc+:xnack-")
    with pytest.raises(DeviceError, match="the GPUs in use differ"):
        gpus.hardware_identity()
    monkeypatch.setenv("ASMEVO_GPUS", "1")
    assert gpus.hardware_identity()["target"] == "gfx90a:sramecc+:xnack-"


def test_pool_setting(machine, monkeypatch):
    machine("gfx942", "gfx942", "gfx942")
    assert gpus.pool() == [0, 1, 2]
    monkeypatch.setenv("ASMEVO_GPUS", "2,0")
    assert gpus.pool() == [2, 0]
    monkeypatch.setenv("ASMEVO_GPUS", "0,5")
    with pytest.raises(DeviceError, match=r"names GPU\(s\) \[5\], HIP sees 3"):
        gpus.pool()
    monkeypatch.setenv("ASMEVO_GPUS", "zero")
    with pytest.raises(DeviceError, match="must list HIP device ids"):
        gpus.pool()
    with pytest.raises(DeviceError, match="GPU 7 does not exist"):
        gpus.hardware_identity(7)


def test_leases_are_exclusive_and_spread_over_the_pool(machine):
    machine("gfx942", "gfx942")
    held, log = [], []

    def stage(name: str) -> None:
        with gpus.gpu_lease() as gid:
            held.append(gid)
            log.append((name, gid, "start", time.monotonic()))
            time.sleep(0.3)
            log.append((name, gid, "end", time.monotonic()))
            held.remove(gid)

    threads = [threading.Thread(target=stage, args=(f"t{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {gid for _, gid, _, _ in log} == {0, 1}  # both GPUs used
    for gid in (0, 1):  # never two stages on one GPU at once
        spans = sorted((t0, t1) for (n, g, e, t0) in log if g == gid and e == "start"
                       for (m, h, f, t1) in log if m == n and h == gid and f == "end")
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_lease_of_a_busy_gpu_waits(machine):
    machine("gfx942")
    order = []

    def second() -> None:
        with gpus.gpu_lease(0):
            order.append("second")

    with gpus.gpu_lease(0):
        waiter = threading.Thread(target=second)
        waiter.start()
        time.sleep(0.3)
        order.append("first released")
    waiter.join(timeout=5)
    assert order == ["first released", "second"]


def test_require_gpu_for(machine):
    from asmevo.target import TargetId

    machine("gfx90a:sramecc+:xnack-", "gfx942:sramecc+:xnack-")
    gpus.require_gpu_for(TargetId("gfx942", "any", "any"))
    with pytest.raises(DeviceError, match="no GPU can run this code object: code object targets gfx942, GPU 0 is gfx90a"):
        gpus.require_gpu_for(TargetId("gfx942", "any", "any"), 0)
