"""Differential verification: does candidate K1 do exactly what K0 does?

K0 and K1 run identical launches (same geometry, arguments and inputs) for every launch given,
over seeded random trials and special-value input sets; on the emulator, every other input set
places the buffers across 4 GiB boundaries (so a dropped address carry shows), and every other pair
of sets rounds f32 transcendentals only faithfully, as hardware does. After each launch
every buffer (outputs and inputs) and the guard bands around them are compared; strictness
findings of K1 are failures even when the buffers agree, and a launch on which K0 itself has
findings is invalid for verification (except kinds a suite declares known, and
uninitialized-register reads, which K1 may repeat but not add to). A launch spec marked as a probe
(giant shapes) runs only some workgroups on sparse memory, on the random trials
(`asmevo.device.probe`). The emulator runs in checked mode. Cheap static checks run first. The
answer is a `Verdict` record.

Verification always runs on the emulator. Given a hardware device (one that is not sandboxed), the
emulator's verdict decides, and only an equivalent candidate then runs on the GPU, in an isolated
child on a leased GPU, as a confirmation (`confirm_on_hardware`): K0 and K1 on every launch that is
not a probe and every input set, compared under the same policy. A difference there makes the verdict
`different`, a K1 that faults, hangs or fails to launch `crashed`, a K0 that does `invalid`.
"""
from __future__ import annotations

import functools
import hashlib
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from .codeobj import CodeObject
from .compare import compare_buffers
from .device import Device, DeviceError, get_device
from .device.base import run_then_release
from .device.gpus import gpu_lease, hardware_identity, require_gpu_for
from .device.isolated import ChildFailure, run_isolated
from .device.launch import LaunchSpec, run_launch, run_launches
from .device.probe import ProbeRun, probe_difference, run_probe
from .errors import AsmEvoError, LaunchSpecError
from .input_sets import SPECIAL_SETS, input_sets
from .launches import VerifyLaunch
from .static_checks import static_differences

KINDS = ("equivalent", "different", "invalid", "crashed")
# K1's emulator instruction budget: this many times K0's executed wave-instructions, at least the floor.
BUDGET_FACTOR = 8
BUDGET_FLOOR = 100_000
# Finding kinds that do not invalidate a launch of K0: compiled code reads never-written register
# lanes it does not use (checked mode reports them); K1 may show no more of them than K0.
TOLERATED_IN_K0 = frozenset({"uninitialized"})
# Input sets K1 runs on alone before any wide launch: the first round rejects nearly every wrong
# candidate (151 of the mutation benchmark's 152 rejections after the static checks), at one launch.
FIRST_ROUND = frozenset({0})


@dataclass
class Verdict:
    """The outcome of verifying K1 against K0.

    `kind`: equivalent, different (a buffer, guard band, strictness finding or static check
    differs), invalid (K0 itself misbehaves on a launch, so it proves nothing) or crashed (K1
    could not run). `evidence` says where; `trials` counts the input-set rounds completed on
    every launch spec (all of them when equivalent);
    `k0_sha256`/`k1_sha256` identify the code objects the verdict is about.
    """

    kind: str
    reason: str
    evidence: dict = field(default_factory=dict)
    trials: int = 0
    launches: int = 0
    seconds: float = 0.0
    k0_sha256: str = ""
    k1_sha256: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise AsmEvoError(f"unknown verdict kind {self.kind!r} (valid: {', '.join(KINDS)})")

    @property
    def equivalent(self) -> bool:
        return self.kind == "equivalent"

    def to_json(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        return f"{self.kind}: {self.reason} ({self.launches} launch(es) x {self.trials} input set(s), {self.seconds:.2f} s)"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _decoders(spec: LaunchSpec) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    return {n: b.dtype.decode for n, b in spec.buffers.items()
            if b.dtype.kind == "float" and b.dtype.storage.kind != "f"}


def _findings_text(findings: list[dict]) -> str:
    f = findings[0]
    where = f" at pc 0x{f['pc']:x}" if f.get("pc") is not None else ""
    more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
    return f"{f['kind']}{where}: {f['message']}{more}"


class ReferenceCache:
    """K0's results per (K0 content, launch spec, input set): verifying many candidates against one
    K0 runs K0 once per input set. K0 is deterministic on identical inputs, so reuse is exact."""

    def __init__(self) -> None:
        self._store: dict[tuple, tuple[dict[str, np.ndarray], list[dict], bool, int | None]] = {}

    def get(self, key: tuple):
        return self._store.get(key)

    def put(self, key: tuple, value) -> None:
        self._store[key] = value


def _probing(device: Device, spec: LaunchSpec) -> bool:
    """Whether `spec` runs as a probe (a few workgroups on sparse memory): on devices that can."""
    return device.supports_probes and spec.probe > 0


def _sets(device: Device, spec: LaunchSpec, trials: int, special: bool) -> list[tuple[str, object]]:
    """(label, inputs) per input set; a probe's inputs are its seed (pages are generated on demand),
    and it runs the random trials only."""
    if _probing(device, spec):
        return [(f"trial {t} (seed {spec.seed + t}), probe of {spec.probe} workgroups", spec.seed + t)
                for t in range(trials)]
    return list(_input_sets(spec, trials, special))


@functools.lru_cache(maxsize=32)
def _input_sets(spec: LaunchSpec, trials: int, special: bool) -> tuple[tuple[str, dict[str, np.ndarray]], ...]:
    """`input_sets`, generated once per spec (deterministic; every launch gets copies)."""
    return tuple(input_sets(spec, trials, special))


def _run(device: Device, data: bytes, spec: LaunchSpec, inputs):
    """(buffers or a ProbeRun, findings, ok, executed wave-instructions or None off the emulator)."""
    if _probing(device, spec):
        run = run_probe(device, data, spec, inputs)
        return run, run.findings, run.ok, run.instructions
    outputs, result = run_launch(device, data, spec, {k: v.copy() for k, v in inputs.items()})
    return _outcome(outputs, result)


def _outcome(outputs: dict[str, np.ndarray], result) -> tuple:
    executed = result.report.instructions if result.report is not None else None
    return outputs, list(result.findings), bool(result.ok), executed


class _Launches:
    """The outcomes of one code object's launches on the input sets of one verify launch, computed
    when first asked for: together with every other pending input set of that launch the device can
    run in the same wide launch (`run_launches`), one at a time otherwise. An outcome is `_run`'s
    tuple or the AsmEvoError the launch raised."""

    def __init__(self, data: bytes, vl: VerifyLaunch, sets: list[tuple[str, object]], devices: list[Device],
                 alone: frozenset[int] = frozenset()):
        self.data, self.vl, self.sets, self.devices, self.alone = data, vl, sets, devices, alone
        self.done: dict[int, tuple | AsmEvoError] = {}

    def get(self, n_set: int, device_of: Callable[[int], Device | None] | None = None):
        """The outcome on set `n_set`. `device_of(n)` is set n's device when it depends on more than
        the set (K1's budget comes from K0's count), None for a set that cannot run yet."""
        if n_set not in self.done:
            device_of = device_of or self.devices.__getitem__
            device = device_of(n_set)
            key = device.wide_key()
            group = [n_set]
            if key is not None and n_set not in self.alone and not _probing(device, self.vl.spec):
                group += [n for n in range(len(self.sets)) if n != n_set and n not in self.done and n not in self.alone
                          and self.devices[n].wide_key() == key and device_of(n) is not None]
            self.run(sorted(group), [device_of(n) for n in sorted(group)])
        return self.done[n_set]

    def run(self, group: list[int], devices: list[Device]) -> None:
        if len(group) == 1:
            try:
                self.done[group[0]] = _run(devices[0], self.data, self.vl.spec, self.sets[group[0]][1])
            except AsmEvoError as exc:
                self.done[group[0]] = exc
            return
        inputs = [{k: v.copy() for k, v in self.sets[n][1].items()} for n in group]
        for n, result in zip(group, run_launches(devices, self.data, self.vl.spec, inputs)):
            self.done[n] = result if isinstance(result, AsmEvoError) else _outcome(*result)


def _k1_device(k0_runs: _Launches, n: int) -> Device | None:
    """K1's device on set n: on the emulator K1 may run BUDGET_FACTOR times K0's instructions there
    (None while K0's outcome on set n is unknown or an error)."""
    done = k0_runs.done.get(n)
    if done is None or isinstance(done, AsmEvoError):
        return None
    executed = done[3]
    base = k0_runs.devices[n]
    return base if executed is None else base.bounded(max(BUDGET_FLOOR, BUDGET_FACTOR * executed))


def _new_findings(findings0: list[dict], findings1: list[dict]) -> list[dict]:
    """K1's findings beyond K0's: per kind, K1 may show at most as many as K0 (addresses move
    when code is edited, so findings are matched by kind and count)."""
    allowance = Counter(f["kind"] for f in findings0)
    out = []
    for f in findings1:
        if allowance[f["kind"]]:
            allowance[f["kind"]] -= 1
        else:
            out.append(f)
    return out


def verify(k0: CodeObject, k1: CodeObject, launches: list[VerifyLaunch], *, trials: int = 3,
           special: bool = True, device: Device | None = None, static: bool = True,
           reference: ReferenceCache | None = None) -> Verdict:
    """Verify `k1` against `k0` on every launch (see the module docstring). Input sets run in
    rounds (set 1 on every launch, then set 2, ...) so a wrong candidate fails early; `reference`
    reuses K0's results across calls. On the emulator K1 may execute at most BUDGET_FACTOR times
    K0's instructions per launch. With a hardware `device` an equivalent verdict is confirmed there."""
    if not launches:
        raise AsmEvoError("verification needs at least one launch spec")
    if trials < 1:
        raise AsmEvoError(f"trials must be >= 1, got {trials}")
    target = device or get_device("emu")
    if not target.sandboxed:
        require_gpu_for(k0.target, getattr(target, "device_id", None))  # fail before the emulator's work
    verdict = _emulated(k0, k1, launches, trials, special, target if target.sandboxed else get_device("emu"),
                        static, reference)
    if target.sandboxed or not verdict.equivalent:
        return verdict
    return confirm_on_hardware(verdict, k0, k1, launches, target, trials=trials, special=special)


def _emulated(k0: CodeObject, k1: CodeObject, launches: list[VerifyLaunch], trials: int, special: bool,
              device: Device, static: bool, reference: ReferenceCache | None) -> Verdict:
    start = time.perf_counter()
    dev = device.verifying()
    sets_per_launch = trials + (len(SPECIAL_SETS) if special else 0)
    k0_sha = sha256(k0.data)

    def verdict(kind: str, reason: str, evidence: dict, done_sets: int = 0) -> Verdict:
        return Verdict(kind, reason, evidence, done_sets, len(launches), time.perf_counter() - start,
                       k0_sha, sha256(k1.data))

    if static:
        problems = static_differences(k0, k1)
        if problems:
            return verdict("different", f"static check: {problems[0]}", {"stage": "static", "findings": problems})
    plans = []
    for vl in launches:
        sets = _sets(dev, vl.spec, trials, special)
        variants = [dev.for_input_set(n) for n in range(len(sets))]
        devices = [d for d, _ in variants]
        k0_runs = _Launches(k0.data, vl, sets, devices)
        for n, (label, _) in enumerate(sets):  # K0's outcomes already known (`reference`)
            cached = reference.get((k0_sha, vl.spec, label + variants[n][1])) if reference is not None else None
            if cached is not None:
                k0_runs.done[n] = cached
        plans.append((vl, sets, [v for _, v in variants], _decoders(vl.spec), k0_runs,
                      _Launches(k1.data, vl, sets, devices, alone=FIRST_ROUND)))
    try:
        for n_set in range(sets_per_launch):
            for vl, sets, variants, decoders, k0_runs, k1_runs in plans:
                if n_set >= len(sets):
                    continue
                set_label = sets[n_set][0] + variants[n_set]
                where = {"launch": vl.label, "inputs": set_label}
                cached = k0_runs.get(n_set)
                if isinstance(cached, AsmEvoError):
                    return verdict("invalid", f"K0 cannot run {vl.label} ({set_label}): {cached}", where, n_set)
                out0, findings0, ok0, _ = cached
                unknown0 = [f for f in findings0 if f["kind"] not in vl.known_findings | TOLERATED_IN_K0]
                if unknown0 or (not ok0 and not findings0):
                    return verdict("invalid", f"K0 has findings on {vl.label} ({set_label}): "
                                   f"{_findings_text(unknown0) if unknown0 else 'launch failed'}",
                                   {**where, "findings": unknown0}, n_set)
                result = k1_runs.get(n_set, lambda n, k0_runs=k0_runs: _k1_device(k0_runs, n))
                if isinstance(result, AsmEvoError):
                    return verdict("crashed", f"K1 failed on {vl.label} ({set_label}): {result}", where, n_set)
                out1, findings1, ok1, _ = result
                new1 = _new_findings(findings0, findings1)
                if new1 or (not ok1 and not findings1):
                    text = _findings_text(new1) if new1 else "launch failed"
                    return verdict("different", f"K1 strictness finding on {vl.label} ({set_label}): {text}",
                                   {**where, "findings": new1}, n_set)
                diff = probe_difference(out0, out1, vl.tolerance, decoders) if isinstance(out0, ProbeRun) else \
                    compare_buffers(out0, out1, vl.tolerance, decoders)
                if diff is not None:
                    return verdict("different", f"{vl.label} ({set_label}): {diff.describe()}",
                                   {**where, "difference": asdict(diff)}, n_set)
    finally:  # every outcome of K0 computed, also beyond the first difference, serves later candidates
        if reference is not None:
            for vl, sets, variants, _, k0_runs, _ in plans:
                for n, done in k0_runs.done.items():
                    if not isinstance(done, AsmEvoError):
                        reference.put((k0_sha, vl.spec, sets[n][0] + variants[n]), done)
    return verdict("equivalent", "every buffer agrees on every launch and input set", {}, sets_per_launch)


def confirm_on_hardware(verdict: Verdict, k0: CodeObject, k1: CodeObject, launches: list[VerifyLaunch],
                        device: Device, *, trials: int = 3, special: bool = True,
                        timeout: float | None = None) -> Verdict:
    """Run an emulator-verified K1 and K0 on the GPU (see the module docstring); the verdict that results.
    A GPU that cannot start raises DeviceError."""
    start = time.perf_counter()
    real = [vl for vl in launches if not vl.spec.probe]
    with gpu_lease(getattr(device, "device_id", None)) as gid:
        try:
            found = run_isolated("asmevo.verify:hardware_check", gid, k0.data, k1.data, real, trials, special,
                                 timeout=timeout)
        except ChildFailure as exc:
            note = exc.note or ""
            if not note.startswith(("K0 ", "K1 ")):
                raise DeviceError(f"GPU {gid} failed before any kernel ran: {exc}") from None
            found = {"kind": "invalid" if note.startswith("K0 ") else "crashed",
                     "reason": f"{note.split()[0]} crashed on hardware: {exc}", "evidence": {"step": note}}
        identity = hardware_identity(gid)
    seconds = verdict.seconds + time.perf_counter() - start
    if found["kind"] == "equivalent":
        hardware = {"gpu": identity, "launches": [vl.label for vl in real], "input_sets": found["sets"],
                    "seconds": round(time.perf_counter() - start, 3)}
        return Verdict("equivalent", f"{verdict.reason}; confirmed on GPU {gid} ({identity['gpu']})",
                       {**verdict.evidence, "hardware": hardware}, verdict.trials, verdict.launches, seconds,
                       verdict.k0_sha256, verdict.k1_sha256)
    return Verdict(found["kind"], f"hardware confirmation on GPU {gid}: {found['reason']}",
                   {"stage": "hardware", **found["evidence"], "gpu": identity, "emulator": verdict.reason},
                   verdict.trials, verdict.launches, seconds, verdict.k0_sha256, verdict.k1_sha256)


def hardware_check(device_id: int, k0: bytes, k1: bytes, launches: list[VerifyLaunch], trials: int,
                   special: bool, *, progress: Callable[[str], None]) -> dict:
    """(Runs in the isolated child.) K0 then K1 on every launch and input set on GPU `device_id`:
    {"kind": "equivalent", "sets": n} or the first failure {"kind", "reason", "evidence"}."""
    from .device.hip import HipDevice

    progress(f"initialising GPU {device_id}")
    device = HipDevice(device_id=device_id)
    device.unload(device.load(k0))  # a target the GPU cannot run is the environment's error, not K0's

    def body() -> dict:
        done = 0
        for vl in launches:
            decoders = _decoders(vl.spec)
            for label, inputs in input_sets(vl.spec, trials, special):
                where = {"launch": vl.label, "inputs": label}
                progress(f"K0 on {vl.label} ({label})")
                try:
                    out0, r0 = run_launch(device, k0, vl.spec, {k: v.copy() for k, v in inputs.items()})
                except LaunchSpecError as exc:
                    return {"kind": "invalid", "reason": f"K0 cannot run {vl.label} ({label}): {exc}", "evidence": where}
                if not r0.ok:
                    return {"kind": "invalid", "reason": f"K0 failed on {vl.label} ({label}): "
                            f"{_findings_text(r0.findings)}", "evidence": where}
                progress(f"K1 on {vl.label} ({label})")
                try:
                    out1, r1 = run_launch(device, k1, vl.spec, inputs)
                except AsmEvoError as exc:
                    return {"kind": "crashed", "reason": f"K1 failed on {vl.label} ({label}): {exc}", "evidence": where}
                if not r1.ok:
                    return {"kind": "crashed", "reason": f"K1 failed on {vl.label} ({label}): "
                            f"{_findings_text(r1.findings)}", "evidence": where}
                diff = compare_buffers(out0, out1, vl.tolerance, decoders)
                if diff is not None:
                    return {"kind": "different", "reason": f"{vl.label} ({label}): {diff.describe()}",
                            "evidence": {**where, "difference": asdict(diff)}}
                done += 1
        return {"kind": "equivalent", "sets": done}

    return run_then_release(body, [device.close])
