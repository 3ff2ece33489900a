"""The hardware timing protocol: event-timed launches of one or two code objects on one GPU, run in an
isolated child on a leased GPU (docs/hardware.md compares it with KernelBench's and Triton's).

For every sample the device's stream receives: a fill of a `flush_bytes` buffer (hipMemsetAsync, a
device-side write that evicts L2 and the Infinity Cache), the start event, the launch, the stop event.
The GPU is still busy with the fill while the host submits the launch, so the start event completes
right before the kernel starts and the host's launch latency stays outside the window (Triton's
`do_bench` and KernelBench enqueue their cache clear the same way). Samples are enqueued a batch at a
time with one synchronisation per batch. Before them: one synchronised run of each kernel (a fault
there names the kernel), then a warm-up of back-to-back launches lasting at least `warmup_ms` of wall
time. With two kernels every repetition is a pair in random order (seeded), so t1[i] / t0[i] are
paired ratios that cancel clock drift.
"""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from ..codeobj import CodeObject
from ..errors import AsmEvoError
from .base import DeviceError, run_then_release
from .gpus import gpu_lease, hardware_identity, require_gpu_for
from .isolated import ChildFailure, run_isolated
from .launch import LaunchSpec, launch_args, make_inputs

# > L2 (8 XCDs x 4 MB) + Infinity Cache (256 MB) of MI300X: AMD CDNA 3 Instruction Set / white paper
# ("AMD CDNA 3 Architecture", 2023: 4 MB L2 per XCD, 256 MB AMD Infinity Cache).
FLUSH_BYTES = 512 << 20
MIN_WARMUP_MS = 25.0  # Triton's do_bench default warm-up
MAX_ROUNDS_PER_SYNC = 10_000
# Clock and performance-level readers, first found wins (both ship with ROCm).
SMI_COMMANDS = (("amd-smi", "metric", "--clock", "--json"),
                ("rocm-smi", "--showclocks", "--showperflevel", "--json"))


class TimingCrashed(AsmEvoError):
    """A kernel being timed crashed the GPU process or never finished."""


@dataclass(frozen=True)
class Protocol:
    """How samples are taken: `pairs` repetitions (each one launch of every kernel), enqueued `batch`
    repetitions per synchronisation, after a warm-up of at least `warmup_ms`; `flush_bytes` are filled
    before every timed launch; `seed` orders each pair."""

    warmup_ms: float = 100.0
    pairs: int = 30
    batch: int = 10
    flush_bytes: int = FLUSH_BYTES
    seed: int = 0

    def __post_init__(self):
        if self.warmup_ms < MIN_WARMUP_MS:
            raise AsmEvoError(f"warm-up must last at least {MIN_WARMUP_MS:g} ms, got {self.warmup_ms!r}")
        if self.pairs < 5 or self.batch < 1 or self.flush_bytes < 0:
            raise AsmEvoError(f"bad timing protocol: pairs {self.pairs} (>= 5), batch {self.batch} (>= 1), "
                              f"flush_bytes {self.flush_bytes} (>= 0)")

    def to_json(self) -> dict:
        return asdict(self)


def time_child(device_id: int, codes: list[bytes], spec: LaunchSpec, protocol: dict, *,
               progress: Callable[[str], None]) -> dict:
    """(Runs in the isolated child.) Samples in ms of each code object on `spec`: see the module doc."""
    from .hip import HipDevice

    proto = Protocol(**protocol)
    progress(f"initialising GPU {device_id}")
    device = HipDevice(device_id=device_id)
    cleanup: list[Callable[[], None]] = [device.close]

    def body() -> dict:
        modules, buffers = [], {}
        for i, code in enumerate(codes):
            progress(f"loading K{i}")
            modules.append(device.load(code))
            cleanup.append(lambda m=modules[-1]: device.unload(m))
        spec.check(modules[0].kernel(spec.kernel), modules[0].code_object.target.processor)
        progress("generating inputs")
        inputs = make_inputs(spec)
        for name, buf in spec.buffers.items():
            progress(f"copying input {name}")
            buffers[name] = device.alloc(buf.nbytes, name)
            cleanup.append(lambda b=buffers[name]: device.free(b))
            device.copy_in(buffers[name], inputs.pop(name))
        args = launch_args(spec, modules[0].kernel(spec.kernel), buffers)
        dispatches = [device.dispatch(m, spec.kernel, spec.grid, spec.block, spec.dynamic_lds, args) for m in modules]
        flush = None
        if proto.flush_bytes:
            flush = device.alloc(proto.flush_bytes, "cache_flush")
            cleanup.append(lambda: device.free(flush))
        samples, warmup_launches = _sample(device, dispatches, flush, proto, progress)
        progress("releasing")
        return {"samples": samples, "warmup_launches": warmup_launches}

    return run_then_release(body, cleanup)


def _sample(device, dispatches: list, flush, proto: Protocol,
            progress: Callable[[str], None]) -> tuple[list[list[float]], int]:
    """(samples per dispatch, warm-up launches), with a start/stop event pair per sample of a batch."""
    events: list = []
    cleanup: list[Callable[[], None]] = []
    for _ in range(2 * proto.batch * len(dispatches)):
        events.append(device.event())
        cleanup.append(lambda e=events[-1]: device.destroy(e))
    pairs = list(zip(events[::2], events[1::2]))
    return run_then_release(lambda: _timed(device, dispatches, flush, proto, progress, pairs), cleanup)


def _timed(device, dispatches: list, flush, proto: Protocol, progress: Callable[[str], None],
           events: list) -> tuple[list[list[float]], int]:
    n = len(dispatches)
    first = []
    for i, d in enumerate(dispatches):
        progress(f"K{i} first run")
        start, stop = events[0]
        device.record(start)
        d.enqueue()
        device.record(stop)
        device.synchronize()
        first.append(device.elapsed_ms(start, stop))
    progress("warm-up")
    warmup_launches = 0
    began = time.perf_counter()
    while (left := proto.warmup_ms - (time.perf_counter() - began) * 1e3) > 0:
        rounds = min(MAX_ROUNDS_PER_SYNC, max(1, math.ceil(left / max(sum(first), 1e-3))))
        for _ in range(rounds):
            for d in dispatches:
                d.enqueue()
        device.synchronize()
        warmup_launches += rounds * n
    samples: list[list[float]] = [[] for _ in dispatches]
    rng = np.random.default_rng(proto.seed)
    batches = math.ceil(proto.pairs / proto.batch)
    for b in range(batches):
        progress(f"timed batch {b + 1}/{batches}")
        plan = []
        for _ in range(min(proto.batch, proto.pairs - b * proto.batch)):
            for which in (rng.permutation(n) if n > 1 else [0]):
                start, stop = events[len(plan)]
                if flush is not None:
                    device.fill(flush)
                device.record(start)
                dispatches[which].enqueue()
                device.record(stop)
                plan.append((int(which), start, stop))
        device.synchronize()
        for which, start, stop in plan:
            samples[which].append(device.elapsed_ms(start, stop))
    return samples, warmup_launches


def read_clocks() -> dict | None:
    """GPU clocks (and the performance level, with rocm-smi) from the first SMI tool found, raw."""
    for command in SMI_COMMANDS:
        exe = shutil.which(command[0])
        if exe is None:
            continue
        try:
            done = subprocess.run([exe, *command[1:]], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"command": list(command), "error": f"{type(exc).__name__}: {exc}"}
        try:
            output = json.loads(done.stdout)
        except ValueError:
            output = done.stdout[-4000:]
        return {"command": list(command), "returncode": done.returncode, "output": output}
    return None


def _failure(exc: ChildFailure, device_id: int) -> AsmEvoError:
    """The error a lost timing child stands for: TimingCrashed naming the kernel(s) in flight, or a
    DeviceError when no kernel had run yet (the GPU or its runtime failed)."""
    note = exc.note or ""
    if note.startswith("K") and "first run" in note:
        return TimingCrashed(f"{note.split()[0]} crashed or hung on GPU {device_id}: {exc}")
    if note.startswith(("warm-up", "timed batch")):
        return TimingCrashed(f"a kernel (every one timed was in flight) crashed or hung on GPU {device_id}: {exc}")
    return DeviceError(f"GPU {device_id} failed before any kernel ran: {exc}")


def measure(codes: list[bytes], spec: LaunchSpec, *, device_id: int | None = None,
            protocol: Protocol = Protocol(), timeout: float | None = None) -> dict:
    """Time `codes` (K0 first) on `spec` on a leased GPU in an isolated child: {"samples" (ms, one list
    per code), "warmup_launches", "hardware" (identity of the GPU used), "clocks" (before and after),
    "protocol"}. A crash or hang raises TimingCrashed; a GPU that cannot start, DeviceError."""
    require_gpu_for(CodeObject(codes[0]).target, device_id)
    with gpu_lease(device_id) as gid:
        before = read_clocks()
        try:
            result = run_isolated("asmevo.device.hip_timing:time_child", gid, codes, spec, protocol.to_json(),
                                  timeout=timeout)
        except ChildFailure as exc:
            raise _failure(exc, gid) from None
        after = read_clocks()
    return {**result, "hardware": hardware_identity(gid), "clocks": {"before": before, "after": after},
            "protocol": protocol.to_json()}
