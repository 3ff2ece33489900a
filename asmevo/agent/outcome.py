"""A candidate's evaluation, and K0's baseline, as pure functions of content.

`evaluate(setup, base, source, through)` passes one candidate source through the gates that need no
lineage: rebuild (full reassembly with resource rescan; ABI refusals) -> ABI comparison -> static
checks -> differential verification on every verify launch -> correctness-gated timing on the timing
launch. `baseline(k0, ...)` recovers K0 and models (on hardware: measures) it on the timing launch.
Both return JSON values; a candidate's rebuilt bytes travel beside its JSON `record`. The `Evaluator`
(gates.py) asks an `Evaluations` object for them: `LocalEvaluations` computes them in this process,
the flow layer's (`tasks/candidate.py`) is a content-cached Prefect task per call. Every value passes
through canonical JSON in both, so a cached outcome and a computed one are the same value and a
search takes the same path either way.

Device and toolchain errors propagate (they say nothing about the candidate); every other problem
is a rejection in the record.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from ..abi import abi_differences
from ..codeobj import CodeObject
from ..device import Device, DeviceError, get_device
from ..device.hip_timing import TimingCrashed, measure
from ..errors import AbiChange, AsmEvoError, RebuildError, ToolchainError
from ..launches import VerifyLaunch, largest
from ..model import Estimate, TracedLaunch
from ..profile import profile_launch
from ..rebuild import rebuild_source, shrinks
from ..recover import recover
from ..static_checks import static_differences
from ..target import DEFAULT_GPU
from ..timing import Timing, _gate, decide, model_candidate, model_timing, time_candidate
from ..verify import ReferenceCache, Verdict, sha256, verify

# How far a candidate goes: the static gates only (`built`), or on through verification and timing.
THROUGH = ("built", "timed")
ENVIRONMENT_ERRORS = (DeviceError, ToolchainError)


@dataclass(frozen=True, eq=False)
class Setup:
    """What every candidate of one kernel is evaluated against: K0 (recovered as `name`.s), the kernel,
    its verify launches, the timing launch (the bench shape), the device, the GPU the timing model
    predicts for, verification trials and the speedup a candidate must beat (`eps`). `reference` keeps
    K0's results per launch and input set, computed once for every candidate evaluated here."""

    k0: CodeObject
    name: str
    kernel: str
    launches: tuple[VerifyLaunch, ...]
    timing: VerifyLaunch
    device: Device
    gpu_name: str
    trials: int
    eps: float
    reference: ReferenceCache = field(default_factory=ReferenceCache)

    @property
    def check(self) -> VerifyLaunch:
        """The launch on which a candidate must take K0's paths to reuse K0's bench trace."""
        return largest(list(self.launches))


def make_setup(k0: CodeObject, launches: list[VerifyLaunch], *, name: str = "kernel", timing: VerifyLaunch | None = None,
               device: Device | None = None, gpu_name: str = DEFAULT_GPU, trials: int = 3, kernel: str | None = None,
               eps: float | None = None) -> Setup:
    """A Setup with the defaults: timing on the largest verify launch, the emulator, `eps` 0 on the
    deterministic emulator and 1% on hardware, the kernel of the first launch."""
    if not launches:
        raise AsmEvoError("optimisation needs at least one verify launch that is not a probe")
    device = device or get_device("emu")
    kernel = kernel or launches[0].spec.kernel
    if kernel not in k0.kernel_names:
        raise AsmEvoError(f"kernel {kernel} is not in {k0.path} (has {', '.join(k0.kernel_names)})")
    eps = (0.0 if device.sandboxed else 0.01) if eps is None else eps
    return Setup(k0, name, kernel, tuple(launches), timing or largest(launches), device, gpu_name, trials, eps)


@dataclass(frozen=True)
class K0Outcome:
    """K0: its recovered source and recovery info, the timing model's estimate on the timing launch
    (with the traced sample candidates reuse) and its timing there in the device's unit."""

    name: str
    source: str
    info: dict
    estimate: Estimate
    timing: Timing

    @classmethod
    def from_json(cls, d: dict) -> "K0Outcome":
        est = replace(Estimate.from_dict(d["estimate"]), traced=trace_from_json(d["trace"]))
        return cls(d["name"], d["source"], d["info"], est, timing_from_json(d["timing"]))


def baseline(k0: CodeObject, name: str, timing: VerifyLaunch, device: Device, gpu_name: str) -> dict:
    """K0 recovered (as `name`.s), and modelled for `gpu_name` (on hardware also measured) on `timing`."""
    rec = recover(Path(f"{name}.co"), code_object=k0)
    est = profile_launch(k0, timing.spec, gpu_name=gpu_name, known_findings=timing.known_findings).estimate
    if device.sandboxed:
        t0 = model_timing(k0, timing, est)
    else:
        run = measure([k0.data], timing.spec, device_id=getattr(device, "device_id", None))
        t0 = Timing("ms", tuple(run["samples"][0]), {"device": "hip", "launch": timing.label})
    return {"name": rec.name, "source": rec.source, "info": rec.info, "estimate": est.to_dict(),
            "trace": trace_to_json(est.traced), "timing": t0.to_json()}


@dataclass(frozen=True)
class Outcome:
    """A candidate's evaluation: the JSON `record` (see `evaluate`), its rebuilt bytes (empty when it
    did not build) and whether the record came from a cache."""

    record: dict
    data: bytes = b""
    cached: bool = False


class Evaluations(Protocol):
    """Where an Evaluator gets K0's baseline and its candidates' outcomes from."""

    def baseline(self) -> dict:
        """`baseline(...)`'s JSON for the setup's K0, timing launch, device and GPU."""

    def candidate(self, source: str, through: str, label: str) -> Outcome:
        """`evaluate(setup, baseline, source, through)`; `label` names the call (e.g. in a UI) only."""


def evaluate(setup: Setup, base: K0Outcome, source: str, through: str) -> Outcome:
    """Candidate `source` through the gates, up to the static checks (`through` "built") or on
    through verification and timing ("timed"). The record: status (built, equivalent, verified or
    rejected), rejected_at (build, verify, time or null), reason, detail, sha256 of the rebuilt object,
    verdict, timing (the gate's decision), estimate (`Estimate.to_dict`, on the emulator) and seconds
    per gate."""
    if through not in THROUGH:
        raise AsmEvoError(f"unknown evaluation depth {through!r} (valid: {', '.join(THROUGH)})")
    record = {"status": "rejected", "rejected_at": None, "reason": "", "detail": "", "sha256": "", "verdict": None,
              "timing": None, "estimate": None, "seconds": {}}
    data, gates = b"", ((_build,) if through == "built" else (_build, _verify, _time))
    for gate in gates:
        started = time.perf_counter()
        try:
            data = gate(setup, base, source, data, record) or data
        except ENVIRONMENT_ERRORS:
            raise
        except TimingCrashed as exc:
            record.update(reason="crashed", detail=str(exc))
        except AsmEvoError as exc:
            record.update(reason="error", detail=str(exc))
        except Exception as exc:  # a defect met on this candidate rejects it; the search and the run go on
            record.update(reason="internal error", detail=f"{type(exc).__name__}: {exc}")
        name = gate.__name__[1:]
        record["seconds"][name] = round(time.perf_counter() - started, 6)
        if record["reason"]:
            record.update(status="rejected", rejected_at=name)
            break
    return Outcome(record, data)


def _build(setup: Setup, base: K0Outcome, source: str, _data: bytes, record: dict) -> bytes:
    try:
        data = rebuild_source(source, base.info, shrink=shrinks(source, base.info), origin="candidate").data
    except AbiChange as exc:
        return _reject(record, "abi", str(exc))
    except RebuildError as exc:
        return _reject(record, "assemble", str(exc))
    record.update(status="built", sha256=sha256(data))
    k1 = CodeObject(data, "candidate.co")
    abi = abi_differences(setup.k0, k1)
    if abi:
        return _reject(record, "abi", abi[0], data)
    new = static_differences(setup.k0, k1)
    if new:
        return _reject(record, "static", new[0], data)
    return data


def _verify(setup: Setup, base: K0Outcome, source: str, data: bytes, record: dict) -> None:
    verdict = verify(setup.k0, CodeObject(data, "candidate.co"), list(setup.launches), trials=setup.trials,
                     device=setup.device, static=False, reference=setup.reference)
    record["verdict"] = verdict.to_json()
    if not verdict.equivalent:
        _reject(record, verdict.kind, verdict.reason)
    else:
        record["status"] = "equivalent"


def _time(setup: Setup, base: K0Outcome, source: str, data: bytes, record: dict) -> None:
    k1 = CodeObject(data, "candidate.co")
    verdict = Verdict(**record["verdict"])
    if setup.device.sandboxed:
        _gate(verdict, setup.k0, k1)
        t1, est = model_candidate(setup.k0, k1, setup.timing, base.estimate, setup.check, setup.gpu_name)
        decision = decide(base.timing, t1, eps=setup.eps)
        record["estimate"] = est.to_dict()
    else:
        decision = time_candidate(verdict, setup.k0, k1, setup.timing, setup.device, eps=setup.eps)
    record.update(status="verified", timing={**decision.to_json(), "launch": setup.timing.label})


def _reject(record: dict, reason: str, detail: str, data: bytes = b"") -> bytes:
    record.update(reason=reason, detail=detail)
    return data


def wire(value):
    """`value` as it reads back from canonical JSON (sorted keys, exact floats)."""
    return json.loads(json.dumps(value, sort_keys=True, allow_nan=False))


class LocalEvaluations:
    """Baseline and outcomes computed in this process, through the same JSON as a cached task's."""

    def __init__(self, setup: Setup):
        self.setup = setup
        self._json: dict | None = None
        self._base: K0Outcome | None = None

    def baseline(self) -> dict:
        if self._json is None:
            s = self.setup
            self._json = wire(baseline(s.k0, s.name, s.timing, s.device, s.gpu_name))
        return self._json

    def candidate(self, source: str, through: str, label: str = "") -> Outcome:
        if self._base is None:
            self._base = K0Outcome.from_json(self.baseline())
        out = evaluate(self.setup, self._base, source, through)
        return Outcome(wire(out.record), out.data)


def timing_from_json(d: dict) -> Timing:
    return Timing(d["unit"], tuple(d["samples"]), d["provenance"])


def _array(a: np.ndarray) -> dict:
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.ravel().tolist()}


def _from_array(d: dict) -> np.ndarray:
    return np.asarray(d["data"], dtype=d["dtype"]).reshape(d["shape"])


def trace_to_json(t: TracedLaunch) -> dict:
    """A traced launch as JSON (arrays keep their dtype and shape, mappings their order)."""
    return {"edges": [[int(a), int(b)] for a, b in t.edges], "counts": _array(t.counts),
            "wave_workgroup": _array(t.wave_workgroup), "weight": _array(t.weight),
            "memory": [[int(pc), int(nbytes), int(lines), [[int(b), int(n)] for b, n in by.items()]]
                       for pc, (nbytes, lines, by) in t.memory.items()],
            "buffer_bytes": [int(n) for n in t.buffer_bytes], "grid": [int(n) for n in t.grid],
            "block": [int(n) for n in t.block], "dynamic_lds": int(t.dynamic_lds),
            "classes": [[int(w), [int(c) for c in cls]] for w, cls in t.classes.items()]}


def trace_from_json(d: dict) -> TracedLaunch:
    return TracedLaunch([tuple(e) for e in d["edges"]], _from_array(d["counts"]), _from_array(d["wave_workgroup"]),
                        _from_array(d["weight"]),
                        {pc: (nbytes, lines, {b: n for b, n in by}) for pc, nbytes, lines, by in d["memory"]},
                        list(d["buffer_bytes"]), tuple(d["grid"]), tuple(d["block"]), d["dynamic_lds"],
                        {w: tuple(cls) for w, cls in d["classes"]})
