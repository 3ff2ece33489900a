"""Correctness-gated timing: only a candidate with an `equivalent` verdict is timed.

A `Timing` carries its unit (`ms` from hardware events, `model_us` from the timing model, a
prediction) and its provenance (device, launch, configuration); comparing Timings of different units
raises. On the emulator K0 and K1 are each modelled once (`asmevo.model`) on the same sampled
workgroups and inputs of the timing launch, for a GPU (`asmevo.target.gpus`). On hardware they are
timed as pairs in random order by the protocol of `asmevo.device.hip_timing` (device-side cache
flush, events around the launch only, one synchronisation per batch, time-based warm-up), in an
isolated child on a leased GPU. The decision is on the paired ratios r = t1 / t0: the speedup is
1 / median(r), its interval a percentile bootstrap of that median, and a speedup is accepted when it
exceeds `1 + eps` and its whole interval lies above 1 (`decide`).
"""
from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass, field

import numpy as np

from .codeobj import CodeObject
from .device import Device
from .device.hip_timing import Protocol, measure
from .errors import AsmEvoError
from .launches import VerifyLaunch
from .model import UNIT as MODEL_UNIT
from .model import Estimate, estimate, model_spec, trace_sample
from .model.reuse import same_paths, transplant
from .target import DEFAULT_GPU, gpu
from .verify import Verdict, sha256

UNITS = ("ms", MODEL_UNIT)
CONFIDENCE = 0.95
RESAMPLES = 2000


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
    """K1 against K0: the speedup (1 / median of the paired ratios t1/t0), its `interval` at
    `confidence`, the `threshold` it had to exceed (1 + eps), and the decision."""

    baseline: Timing
    candidate: Timing
    speedup: float
    threshold: float
    accepted: bool
    interval: tuple[float, float]
    confidence: float

    @property
    def unit(self) -> str:
        return self.baseline.unit

    def to_json(self) -> dict:
        return {"unit": self.unit, "speedup": self.speedup, "interval": list(self.interval),
                "confidence": self.confidence, "threshold": self.threshold, "accepted": self.accepted,
                "baseline": self.baseline.to_json(), "candidate": self.candidate.to_json()}


def median_interval(values: np.ndarray, confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                    seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap interval of the median of `values` (seeded: the same samples give the same
    interval); a single value is its own interval."""
    if len(values) == 1:
        return float(values[0]), float(values[0])
    rng = np.random.default_rng(seed)
    medians = np.median(values[rng.integers(0, len(values), (resamples, len(values)))], axis=1)
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(medians, [tail, 100 - tail])
    return float(low), float(high)


def decide(baseline: Timing, candidate: Timing, *, eps: float = 0.01, confidence: float = CONFIDENCE) -> SpeedupDecision:
    """Accept K1 when its speedup exceeds `1 + eps` and the whole interval of the speedup lies above 1.
    Samples are paired by position (sample i of both came from repetition i); one sample each (the
    deterministic cycle model) gives a degenerate interval."""
    baseline._same_unit(candidate)
    if len(baseline.samples) != len(candidate.samples):
        raise AsmEvoError(f"paired timing needs as many samples of K1 as of K0, got {len(candidate.samples)} and "
                          f"{len(baseline.samples)}")
    if eps < 0 or not 0 < confidence < 1:
        raise AsmEvoError(f"bad decision parameters eps={eps} confidence={confidence}")
    ratios = np.asarray(candidate.samples) / np.asarray(baseline.samples)
    low, high = median_interval(ratios, confidence)
    speedup, interval = 1.0 / float(np.median(ratios)), (1.0 / high, 1.0 / low)
    threshold = 1.0 + eps
    return SpeedupDecision(baseline, candidate, speedup, threshold, speedup > threshold and interval[0] > 1.0,
                           interval, confidence)


def _gate(verdict: Verdict, k0: CodeObject, k1: CodeObject) -> None:
    if verdict.kind != "equivalent":
        raise NotVerified(f"candidate not timed: verdict is {verdict.kind} ({verdict.reason})")
    if (verdict.k0_sha256, verdict.k1_sha256) != (sha256(k0.data), sha256(k1.data)):
        raise NotVerified("candidate not timed: the verdict is about different code objects")


def model_time(co: CodeObject, launch: VerifyLaunch, gpu_name: str = DEFAULT_GPU, *,
               workgroups: list[int] | None = None) -> tuple[Timing, Estimate]:
    """The timing model's prediction for `co` on `launch` (sampled workgroups on sparse memory; the
    given `workgroups` reproduce another object's sample), as a Timing in model_us and the Estimate."""
    est = model_spec(co, launch.spec, gpu(gpu_name), known_findings=launch.known_findings, workgroups=workgroups)
    return model_timing(co, launch, est), est


def model_candidate(k0: CodeObject, k1: CodeObject, launch: VerifyLaunch, k0_estimate: Estimate,
                    check: VerifyLaunch, gpu_name: str = DEFAULT_GPU) -> tuple[Timing, Estimate]:
    """K1 modelled on `launch` against K0's `k0_estimate` there: K0's traced sample with K1's code when
    K1 takes K0's paths on `check` (a launch both run whole, cheaply: `asmevo.model.reuse`), else K1's
    own run of K0's sampled workgroups."""
    kernel = launch.spec.kernel
    ins0, ins1 = k0.kernel_instructions(kernel), k1.kernel_instructions(kernel)
    run0, run1 = (whole_trace(co, check) for co in (k0, k1))
    same = same_paths(ins0, ins1, run0, run1)
    moved = transplant(k0_estimate.traced, ins0, ins1, k1.target.processor) if same else None
    if moved is None:
        return model_time(k1, launch, gpu_name, workgroups=k0_estimate.sample)
    est = estimate(ins1, k1.kernel(kernel), moved, gpu(gpu_name))
    return model_timing(k1, launch, est), est


@functools.lru_cache(maxsize=64)
def _whole_trace(data: bytes, spec, known_findings: frozenset[str]):
    return trace_sample(CodeObject(data), spec, spec.seed, max_samples=math.prod(spec.grid),
                        known_findings=known_findings)


def whole_trace(co: CodeObject, launch: VerifyLaunch):
    """Every workgroup of `launch` traced (cached by content: K0's is reused by every candidate)."""
    return _whole_trace(co.data, launch.spec, launch.known_findings)


def model_timing(co: CodeObject, launch: VerifyLaunch, est: Estimate) -> Timing:
    """An Estimate of `co` on `launch` as a Timing in model_us."""
    provenance = {"device": "emu", "launch": launch.label, "kernel": launch.spec.kernel, "grid": list(launch.spec.grid),
                  "block": list(launch.spec.block), "code_sha256": sha256(co.data),
                  "config": {"model": "asmevo.model", "gpu": est.gpu, "bound": est.bound,
                             "sampled_workgroups": est.sampled_workgroups, "sampling_error": est.sampling_error}}
    return Timing(MODEL_UNIT, (est.predicted_us,), provenance)


def time_candidate(verdict: Verdict, k0: CodeObject, k1: CodeObject, launch: VerifyLaunch, device: Device, *,
                   eps: float = 0.01, protocol: Protocol = Protocol(), timeout: float | None = None,
                   gpu_name: str = DEFAULT_GPU) -> SpeedupDecision:
    """Time K1 against K0 on `launch` if `verdict` says K1 is equivalent; otherwise NotVerified. On the
    emulator both are modelled for `gpu_name` on the same workgroups; on hardware (`device.sandboxed`
    False) `protocol` applies and a crash or hang raises TimingCrashed."""
    _gate(verdict, k0, k1)
    base = {"device": device.name, "launch": launch.label, "kernel": launch.spec.kernel,
            "grid": list(launch.spec.grid), "block": list(launch.spec.block)}
    if device.sandboxed:
        t0, est0 = model_time(k0, launch, gpu_name)
        t1, _ = model_time(k1, launch, gpu_name, workgroups=est0.sample)
        return decide(t0, t1, eps=eps)
    run = measure([k0.data, k1.data], launch.spec, device_id=getattr(device, "device_id", None), protocol=protocol,
                  timeout=timeout)
    t0, t1 = (Timing("ms", tuple(samples), {**base, "code_sha256": sha256(co.data), **_hardware_provenance(run)})
              for co, samples in zip((k0, k1), run["samples"]))
    return decide(t0, t1, eps=eps)


def _hardware_provenance(run: dict) -> dict:
    return {"config": run["protocol"], "hardware": run["hardware"], "clocks": run["clocks"],
            "warmup_launches": run["warmup_launches"]}


def time_on_hardware(k0: CodeObject, k1: CodeObject | None, launch: VerifyLaunch, device_id: int | None = 0, *,
                     verdict: Verdict | None = None, eps: float = 0.01, timeout: float | None = None,
                     **protocol) -> dict:
    """`asmevo time ... --device hip`: K0 alone, or K0 and K1 (which needs an equivalent `verdict` about
    these two objects) timed on GPU `device_id` (None: the first free GPU of the pool). The JSON object:
    unit "ms", launch, hardware identity, clocks, protocol, one entry per kernel (code_sha256, median,
    samples) and, with K1, the paired speedup, its interval, the threshold and the decision."""
    if k1 is not None:
        if verdict is None:
            raise NotVerified("K1 is not timed on hardware without an equivalent verdict against K0")
        _gate(verdict, k0, k1)
    codes = [k0] if k1 is None else [k0, k1]
    run = measure([co.data for co in codes], launch.spec, device_id=device_id, protocol=Protocol(**protocol),
                  timeout=timeout)
    timings = [Timing("ms", tuple(samples)) for samples in run["samples"]]
    out = {"unit": "ms", "device": "hip", "launch": launch.label, "kernel": launch.spec.kernel,
           "kernels": [{"code_sha256": sha256(co.data), "median": t.median, "samples": list(t.samples)}
                       for co, t in zip(codes, timings)], **_hardware_provenance(run)}
    if k1 is not None:
        d = decide(timings[0], timings[1], eps=eps)
        out.update(speedup=d.speedup, interval=list(d.interval), confidence=d.confidence, threshold=d.threshold,
                   accepted=d.accepted)
    return out
