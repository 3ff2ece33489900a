"""Correctness-gated timing: only a candidate with an `equivalent` verdict is timed.

A `Timing` carries its unit (`ms` from hardware events, `model_cycles` from the cycle model)
and its provenance (device, launch, configuration); comparing Timings of different units raises.
On hardware K0 and K1 run interleaved (A B A B ...) after warm-up, with an L2 flush before every
timed launch, and a speedup counts only above `1 + max(eps, k * CV)`. On the emulator both are
costed once by the deterministic cycle model.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .codeobj import CodeObject
from .cycle_model import model_launch
from .device import Device
from .device.launch import launch_args, make_inputs, run_launch
from .errors import AsmEvoError
from .launches import VerifyLaunch
from .verify import Verdict, sha256

UNITS = ("ms", "model_cycles")
FLUSH_BYTES = 512 << 20  # larger than MI300X's 256 MB Infinity Cache and 8 x 4 MB L2


class UnitMismatch(AsmEvoError):
    """Two timings in different units were compared."""


class NotVerified(AsmEvoError):
    """Timing was requested for a candidate without an `equivalent` verdict."""


@dataclass(frozen=True, eq=False)
class Timing:
    """Samples of one kernel's duration in `unit`, and where they came from."""

    unit: str
    samples: tuple[float, ...]
    provenance: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.unit not in UNITS:
            raise UnitMismatch(f"unknown timing unit {self.unit!r} (valid: {', '.join(UNITS)})")
        if not self.samples or min(self.samples) <= 0:
            raise AsmEvoError(f"a timing needs positive samples, got {self.samples!r}")

    @property
    def median(self) -> float:
        return float(statistics.median(self.samples))

    @property
    def cv(self) -> float:
        """Coefficient of variation (population standard deviation / mean); 0 for one sample."""
        return float(np.std(self.samples) / np.mean(self.samples)) if len(self.samples) > 1 else 0.0

    def _same_unit(self, other: "Timing") -> None:
        if not isinstance(other, Timing):
            raise TypeError(f"cannot compare a Timing with {type(other).__name__}")
        if other.unit != self.unit:
            raise UnitMismatch(f"cannot compare {self.unit} with {other.unit}")

    def __lt__(self, other: "Timing") -> bool:
        self._same_unit(other)
        return self.median < other.median

    def __le__(self, other: "Timing") -> bool:
        self._same_unit(other)
        return self.median <= other.median

    def __gt__(self, other: "Timing") -> bool:
        self._same_unit(other)
        return self.median > other.median

    def __ge__(self, other: "Timing") -> bool:
        self._same_unit(other)
        return self.median >= other.median

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Timing):
            return NotImplemented
        self._same_unit(other)
        return self.median == other.median

    __hash__ = None

    def speedup_over(self, baseline: "Timing") -> float:
        """baseline / self (above 1 means self is faster)."""
        self._same_unit(baseline)
        return baseline.median / self.median

    def to_json(self) -> dict:
        return {"unit": self.unit, "median": self.median, "cv": self.cv, "samples": list(self.samples),
                "provenance": self.provenance}


@dataclass(frozen=True)
class SpeedupDecision:
    """K1 against K0: the speedup, the noise-gated threshold it had to beat, and the decision."""

    baseline: Timing
    candidate: Timing
    speedup: float
    threshold: float
    accepted: bool

    @property
    def unit(self) -> str:
        return self.baseline.unit

    def to_json(self) -> dict:
        return {"unit": self.unit, "speedup": self.speedup, "threshold": self.threshold, "accepted": self.accepted,
                "baseline": self.baseline.to_json(), "candidate": self.candidate.to_json()}


def decide(baseline: Timing, candidate: Timing, *, eps: float = 0.01, k: float = 3.0) -> SpeedupDecision:
    """Accept a speedup only above `1 + max(eps, k * CV)`, CV the larger of the two timings'."""
    speedup = candidate.speedup_over(baseline)
    threshold = 1.0 + max(eps, k * max(baseline.cv, candidate.cv))
    return SpeedupDecision(baseline, candidate, speedup, threshold, speedup > threshold)


class PairTimer(Protocol):
    """What interleaved timing needs: flush caches, and time one launch of K0 (0) or K1 (1) in ms."""

    def flush(self) -> None: ...

    def run(self, which: int) -> float: ...


def interleaved(timer: PairTimer, *, warmup: int = 5, repetitions: int = 30) -> tuple[list[float], list[float]]:
    """Warm up both kernels, then time A B A B ... with a flush before every timed launch."""
    if warmup < 0 or repetitions < 1:
        raise AsmEvoError(f"bad timing configuration warmup={warmup} repetitions={repetitions}")
    for _ in range(warmup):
        timer.run(0)
        timer.run(1)
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(repetitions):
        for which in (0, 1):
            timer.flush()
            samples[which].append(timer.run(which))
    return samples


class DevicePairTimer:
    """PairTimer over a hardware Device: K0 and K1 loaded once, shared input buffers, event-timed
    launches (`LaunchResult.elapsed_ms`), and a flush that overwrites a FLUSH_BYTES buffer."""

    def __init__(self, device: Device, k0: CodeObject, k1: CodeObject, launch: VerifyLaunch,
                 flush_bytes: int = FLUSH_BYTES):
        self.device = device
        self.spec = launch.spec
        self.modules = (device.load(k0.data), device.load(k1.data))
        inputs = make_inputs(self.spec)
        self.buffers = {}
        for name, buf in self.spec.buffers.items():
            self.buffers[name] = device.alloc(buf.nbytes, name)
            device.copy_in(self.buffers[name], inputs[name])
        self.args = launch_args(self.spec, self.modules[0].kernel(self.spec.kernel), self.buffers)
        self.flush_buffer = device.alloc(flush_bytes, "l2_flush")
        self.flush_data = np.zeros(flush_bytes, np.uint8)

    def flush(self) -> None:
        self.device.copy_in(self.flush_buffer, self.flush_data)

    def run(self, which: int) -> float:
        s = self.spec
        result = self.device.launch(self.modules[which], s.kernel, s.grid, s.block, s.dynamic_lds, self.args)
        if not result.ok or result.elapsed_ms is None:
            raise AsmEvoError(f"timed launch of K{which} failed: {result.findings or 'no event time'}")
        return result.elapsed_ms

    def close(self) -> None:
        for buf in [*self.buffers.values(), self.flush_buffer]:
            self.device.free(buf)


def _gate(verdict: Verdict, k0: CodeObject, k1: CodeObject) -> None:
    if verdict.kind != "equivalent":
        raise NotVerified(f"candidate not timed: verdict is {verdict.kind} ({verdict.reason})")
    if (verdict.k0_sha256, verdict.k1_sha256) != (sha256(k0.data), sha256(k1.data)):
        raise NotVerified("candidate not timed: the verdict is about different code objects")


def time_candidate(verdict: Verdict, k0: CodeObject, k1: CodeObject, launch: VerifyLaunch, device: Device, *,
                   warmup: int = 5, repetitions: int = 30, eps: float = 0.01, k: float = 3.0,
                   flush_bytes: int = FLUSH_BYTES) -> SpeedupDecision:
    """Time K1 against K0 on `launch` if `verdict` says K1 is equivalent; otherwise NotVerified."""
    _gate(verdict, k0, k1)
    base = {"device": device.name, "launch": launch.label, "kernel": launch.spec.kernel,
            "grid": list(launch.spec.grid), "block": list(launch.spec.block)}
    if device.timing_unit == "model_cycles":
        timings = []
        for which, co in enumerate((k0, k1)):
            _, result = run_launch(device, co.data, launch.spec, make_inputs(launch.spec))
            findings = [f for f in result.findings if f["kind"] not in launch.known_findings]
            if findings or result.report is None:
                raise AsmEvoError(f"K{which} has findings on timing launch {launch.label}: {findings[:1]}")
            est = model_launch(co, launch.spec, result.report)
            timings.append(Timing("model_cycles", (float(est.model_cycles),), {
                **base, "code_sha256": sha256(co.data), "config": {"model": "asmevo.cycle_model",
                                                                   "machine": est.machine, "bound": est.bound}}))
        return decide(timings[0], timings[1], eps=eps, k=k)
    timer = DevicePairTimer(device, k0, k1, launch, flush_bytes)
    try:
        a, b = interleaved(timer, warmup=warmup, repetitions=repetitions)
    finally:
        timer.close()
    config = {"warmup": warmup, "repetitions": repetitions, "interleaved": True, "flush_bytes": flush_bytes}
    t0 = Timing(device.timing_unit, tuple(a), {**base, "code_sha256": sha256(k0.data), "config": config})
    t1 = Timing(device.timing_unit, tuple(b), {**base, "code_sha256": sha256(k1.data), "config": config})
    return decide(t0, t1, eps=eps, k=k)
