"""The machine's GPUs as HIP sees them, their identity for cache keys, and exclusive use of one GPU.

`runtime_report()` asks HIP, in an isolated child, for versions and every visible GPU (cached per
process). `hardware_identity()` is what makes hardware results comparable, and keys their caches:
the GPU name, gfx target with features, HIP runtime, driver, ROCm and hip-python versions of the GPU
pool (ASMEVO_GPUS, else every visible GPU), which must hold one kind of GPU. With a device id it
also names that GPU (index, PCI bus id) and the host, for provenance. `require_identity` refuses
to run a stage keyed by another identity (a Dask worker on other hardware). `gpu_lease(device_id)`
holds a machine-wide lock on one GPU (an flock on a file named by its PCI bus id, so threads, Dask
workers and separate runs all serialise on it); with no device id it takes the first free GPU of
the pool.
"""
from __future__ import annotations

import fcntl
import functools
import os
import socket
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from ..target import TargetId
from .base import DeviceError
from .isolated import run_isolated

GPUS_ENV = "ASMEVO_GPUS"
LOCK_DIR = Path(tempfile.gettempdir()) / "asmevo-gpu-locks"
POLL_SECONDS = 0.05


def query_runtime(*, progress: Callable[[str], None]) -> dict:
    """(Runs in the isolated child.) HIP's versions and every GPU's properties."""
    from .hip import HipDevice

    progress("initialising HIP")
    device = HipDevice(device_id=0)
    try:
        report = device.describe()
        report["gpus"] = [gpu.to_json() for gpu in device.gpus()]
    finally:
        device.close()
    del report["gpu"]
    return report


@functools.lru_cache(maxsize=1)
def runtime_report() -> dict:
    """`query_runtime` run once per process in an isolated child (DeviceError when HIP is unusable)."""
    return run_isolated("asmevo.device.gpus:query_runtime", timeout=60.0)


def pool() -> list[int]:
    """The GPUs hardware stages may use: $ASMEVO_GPUS (comma-separated HIP device ids), else all."""
    visible = list(range(len(runtime_report()["gpus"])))
    raw = os.environ.get(GPUS_ENV)
    if raw is None or not raw.strip():
        return visible
    try:
        chosen = [int(part) for part in raw.split(",") if part.strip()]
    except ValueError:
        raise DeviceError(f"{GPUS_ENV} must list HIP device ids like 0,1, got {raw!r}") from None
    missing = sorted(set(chosen) - set(visible))
    if missing:
        raise DeviceError(f"{GPUS_ENV} names GPU(s) {missing}, HIP sees {len(visible)}")
    return chosen


def gpu(device_id: int) -> dict:
    """One visible GPU's properties (DeviceError when there is no such GPU)."""
    gpus = runtime_report()["gpus"]
    if not 0 <= device_id < len(gpus):
        raise DeviceError(f"GPU {device_id} does not exist: HIP sees {len(gpus)} GPU(s)")
    return gpus[device_id]


def hardware_identity(device_id: int | None = None) -> dict:
    """What hardware results depend on (see the module doc); a device id adds it, its PCI bus id and the host."""
    report = runtime_report()
    base = {"hip_runtime": report["hip_runtime"], "driver": report["driver"], "rocm": report["rocm"],
            "hip_python": report["hip_python"]}
    if device_id is not None:
        g = gpu(device_id)
        return {**base, "gpu": g["name"], "target": g["arch"], "device_id": device_id, "pci_bus_id": g["pci_bus_id"],
                "host": socket.gethostname()}
    kinds = sorted({(gpu(i)["name"], gpu(i)["arch"]) for i in pool()})
    if len(kinds) != 1:
        raise DeviceError(f"the GPUs in use differ ({'; '.join(' '.join(k) for k in kinds)}): choose one kind "
                          f"with {GPUS_ENV} or HIP_VISIBLE_DEVICES")
    return {**base, "gpu": kinds[0][0], "target": kinds[0][1]}


def require_identity(expected: dict) -> None:
    """Raise DeviceError unless this machine's GPU pool has the `expected` identity."""
    here = hardware_identity()
    if here != expected:
        changed = ", ".join(f"{k} {here.get(k)!r} (run: {expected.get(k)!r})" for k in sorted(set(here) | set(expected))
                            if here.get(k) != expected.get(k))
        raise DeviceError(f"this machine's GPUs differ from the run's hardware identity: {changed}")


def require_gpu_for(target: TargetId, device_id: int | None = None) -> None:
    """Raise DeviceError unless GPU `device_id` (or some GPU of the pool) can run code for `target`."""
    from .hip import GpuProperties, target_fits

    reasons = [target_fits(target, GpuProperties(**gpu(i))) for i in ([device_id] if device_id is not None else pool())]
    if all(reasons):
        raise DeviceError(f"no GPU can run this code object: {'; '.join(reasons)}")


def _open_lock(device_id: int) -> int:
    """A descriptor of GPU `device_id`'s lock file (named by its PCI bus id: the same across processes
    whatever HIP_VISIBLE_DEVICES renumbers)."""
    LOCK_DIR.mkdir(exist_ok=True)
    path = LOCK_DIR / f"gpu-{gpu(device_id)['pci_bus_id'].replace(':', '_')}.lock"
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)


@contextmanager
def gpu_lease(device_id: int | None = None) -> Iterator[int]:
    """Exclusive use of GPU `device_id` (waiting for it), or of the first free GPU of the pool."""
    candidates = [device_id] if device_id is not None else pool()
    if device_id is not None:
        gpu(device_id)
    fds = {i: _open_lock(i) for i in candidates}
    held = None
    try:
        if len(candidates) == 1:
            fcntl.flock(fds[candidates[0]], fcntl.LOCK_EX)
            held = candidates[0]
        while held is None:
            for i in candidates:
                try:
                    fcntl.flock(fds[i], fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                held = i
                break
            else:
                time.sleep(POLL_SECONDS)
        yield held
    finally:
        for fd in fds.values():
            os.close(fd)  # closing the descriptor releases its lock
