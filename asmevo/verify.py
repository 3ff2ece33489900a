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

import hashlib
import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import yaml

from .codeobj import CodeObject
from .compare import TolerancePolicy, compare_buffers
from .cycle_model import kernel_instructions
from .device import Device, DeviceError, get_device
from .device.base import run_then_release
from .device.dtypes import DType
from .device.gpus import gpu_lease, hardware_identity, require_gpu_for
from .device.isolated import ChildFailure, run_isolated
from .device.launch import LaunchSpec, make_inputs, run_launch
from .device.probe import ProbeRun, probe_difference, run_probe
from .emu.dispatch import PRELOAD_SKIP
from .emu.memory import LAYOUTS
from .errors import AsmEvoError, LaunchSpecError
from .isa.resources import declared, required, scan
from .static_checks import Finding as StaticFinding
from .static_checks import run_static_checks

KINDS = ("equivalent", "different", "invalid", "crashed")
# K1's emulator instruction budget: this many times K0's executed wave-instructions, at least the floor.
BUDGET_FACTOR = 8
BUDGET_FLOOR = 100_000
# Finding kinds that do not invalidate a launch of K0: compiled code reads never-written register
# lanes it does not use (checked mode reports them); K1 may show no more of them than K0.
TOLERATED_IN_K0 = frozenset({"uninitialized"})
SPECIAL_SETS = ("zeros", "ones", "negatives", "large", "nan_inf", "denormals", "magnitudes")
# Mantissa bits of the float formats, for building subnormal bit patterns.
_MANTISSA_BITS = {"float16": 10, "bfloat16": 7, "float32": 23, "float64": 52,
                  "float8_e4m3fnuz": 3, "float8_e5m2fnuz": 2}
_MAX_FINITE = {"float16": 65504.0, "bfloat16": 3.3895e38, "float32": 3.4028e38, "float64": 1.7976e308,
               "float8_e4m3fnuz": 240.0, "float8_e5m2fnuz": 57344.0}


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


@dataclass(frozen=True)
class VerifyLaunch:
    """A launch spec plus the comparison policy to verify it under; `label` names it in verdicts.
    `known_findings` are finding kinds K0 is known to trigger on it (a suite's `known_findings`):
    they do not make the launch invalid, and K1 may show no more of each kind than K0 does."""

    spec: LaunchSpec
    tolerance: TolerancePolicy
    label: str
    known_findings: frozenset[str] = frozenset()


def load_launch(path: str | Path) -> VerifyLaunch:
    """Read a launch spec file; its optional `"tolerance"` key is the K0-vs-K1 comparison policy."""
    p = Path(path)
    try:
        text = p.read_text()
        data = yaml.safe_load(text) if p.suffix in (".yaml", ".yml") else json.loads(text)
    except FileNotFoundError:
        raise LaunchSpecError(f"launch spec {p}: no such file") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError, json.JSONDecodeError) as exc:
        raise LaunchSpecError(f"launch spec {p}: unreadable ({type(exc).__name__})") from None
    return launch_from_dict(data, p.resolve().parent, p.name)


def launch_from_dict(data: object, base_dir: str | Path = ".", label: str = "launch") -> VerifyLaunch:
    """A VerifyLaunch from a launch-spec mapping that may carry `"tolerance"`."""
    if not isinstance(data, dict):
        raise LaunchSpecError(f"launch spec {label}: must be a mapping")
    rest = dict(data)
    tolerance = TolerancePolicy.from_dict(rest.pop("tolerance", None))
    try:
        spec = LaunchSpec.from_dict(rest, base_dir)
    except LaunchSpecError as exc:
        raise LaunchSpecError(f"launch spec {label}: {exc}") from None
    return VerifyLaunch(spec, tolerance, label)


def suite_launches(problem, *, heldout: bool = False, probes: bool = False) -> list[VerifyLaunch]:
    """The verify shapes of a suite problem (`asmevo.suites.Problem`), plus its held-out shape when
    `heldout` (final acceptance only: agents never see it) and its probe shapes (giant launches the
    emulator runs a few workgroups of) when `probes`. A problem may declare the K0-vs-K1
    comparison policy as `semantics: {verify_tolerance: {...}}` (bitwise otherwise); its
    `known_findings` kinds carry over to every launch."""
    roles = ("verify",) + (("heldout",) if heldout else ()) + (("probe",) if probes else ())
    semantics = problem.extra.get("semantics")
    tol = semantics.get("verify_tolerance") if isinstance(semantics, dict) else None
    known = frozenset(problem.extra.get("known_findings") or {})
    out = []
    for shape in problem.shapes:
        if shape.role in roles:
            data = dict(problem.launch(shape))
            if tol is not None and "tolerance" not in data:
                data["tolerance"] = tol
            vl = launch_from_dict(data, shape.launch_path.parent, f"{problem.name}:{shape.name}")
            out.append(VerifyLaunch(vl.spec, vl.tolerance, vl.label, known))
    return out


def _magnitudes(dtype: DType, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` values of both signs, a quarter each: log-uniform over the whole normal range; log-uniform
    in [2^-12, 2^12]; 1 and the integers and half-integers up to 64, each exact or about an ulp off
    (rounding boundaries); within 1% of the exp/exp2/log range limits (ln and log2 of the largest
    finite, the smallest normal and the smallest subnormal value)."""
    emax = int(np.floor(np.log2(_MAX_FINITE[dtype.name])))
    mbits = _MANTISSA_BITS[dtype.name]
    kind = rng.integers(0, 4, n)
    wide = 2.0 ** rng.uniform(1 - emax, emax + 1, n)
    moderate = 2.0 ** rng.uniform(-12, 12, n)
    steps = np.where(rng.random(n) < 0.25, 1.0, rng.integers(0, 129, n) / 2.0)
    boundary = steps * (1 + rng.integers(-1, 2, n) * 2.0 ** -mbits)
    limits = np.array([emax + 1, 1 - emax, 1 - emax - mbits], float)
    edges = np.concatenate([limits, limits * np.log(2)])
    near = rng.choice(edges, n) * rng.uniform(0.99, 1.01, n)
    values = np.choose(kind, [wide, moderate, boundary, near])
    return np.minimum(values, _MAX_FINITE[dtype.name]) * rng.choice([-1.0, 1.0], n)


def _special(dtype: DType, name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` storage values of the special set `name` for a float dtype."""
    if name == "denormals":
        mbits, nbits = _MANTISSA_BITS[dtype.name], dtype.itemsize * 8
        mant = rng.integers(1, 1 << mbits, n, dtype=np.uint64)
        sign = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(nbits - 1)
        return (mant | sign).astype(f"u{dtype.itemsize}").view(dtype.storage)
    if name == "zeros":
        values = np.zeros(n)
    elif name == "ones":
        values = np.ones(n)
    elif name == "negatives":
        values = -rng.uniform(0.5, 4.0, n)
    elif name == "large":
        values = rng.choice([-1.0, 1.0], n) * _MAX_FINITE[dtype.name] * rng.uniform(0.01, 0.5, n)
    elif name == "nan_inf":
        values = rng.uniform(-1.0, 1.0, n)
        pick = rng.integers(0, 16, n)
        values[pick == 0] = np.nan
        values[pick == 1] = np.inf
        values[pick == 2] = -np.inf
    elif name == "magnitudes":
        values = _magnitudes(dtype, n, rng)
    else:
        raise AsmEvoError(f"unknown special-value set {name!r} (valid: {', '.join(SPECIAL_SETS)})")
    with np.errstate(over="ignore", invalid="ignore"):
        return dtype.encode(values)


def input_sets(spec: LaunchSpec, trials: int, special: bool = True) -> Iterator[tuple[str, dict[str, np.ndarray]]]:
    """(label, inputs) for `trials` seeded random sets (seed = spec seed + trial) and, when
    `special`, one set per special-value kind: float buffers (outputs too, so unwritten elements
    show) get the special values, other buffers keep their spec initialisation."""
    for t in range(trials):
        yield f"trial {t} (seed {spec.seed + t})", make_inputs(spec, seed=spec.seed + t)
    if not special:
        return
    for k, name in enumerate(SPECIAL_SETS):
        rng = np.random.default_rng([spec.seed, 0x5EC1A1, k])
        base = make_inputs(spec)
        for buf_name, buf in spec.buffers.items():
            if buf.dtype.kind == "float":
                n = int(np.prod(buf.shape, dtype=np.int64))
                base[buf_name] = _special(buf.dtype, name, n, rng).reshape(buf.shape)
        yield f"special {name}", base


# Metadata keys and descriptor fields that describe resources, which a candidate may change.
RESOURCE_METADATA = frozenset({".vgpr_count", ".sgpr_count", ".agpr_count", ".vgpr_spill_count",
                               ".sgpr_spill_count", ".group_segment_fixed_size", ".private_segment_fixed_size"})
RESOURCE_FIELDS = frozenset({"granulated_workitem_vgpr_count", "granulated_wavefront_sgpr_count", "accum_offset"})


def abi_differences(k0: CodeObject, k1: CodeObject) -> list[str]:
    """How K1's frozen ABI differs from K0's: target, code-object version, kernel symbols, metadata
    (kernarg layout and every other non-resource key), non-resource descriptor fields and, for a
    kernarg-preloading kernel, its compatibility preamble (the first 256 bytes: firmware without
    preloading runs them, hardware with it starts after them)."""
    out = []
    if str(k0.target) != str(k1.target) or k0.code_object_version != k1.code_object_version:
        out.append(f"target {k1.target} v{k1.code_object_version} != {k0.target} v{k0.code_object_version}")
    if k0.kernel_names != k1.kernel_names:
        out.append(f"kernels {k1.kernel_names} != {k0.kernel_names}")
        return out
    for a, b in zip(k0.kernels, k1.kernels):
        for key in sorted((set(a.metadata) | set(b.metadata)) - RESOURCE_METADATA):
            if a.metadata.get(key) != b.metadata.get(key):
                out.append(f"kernel {a.name}: metadata {key} {b.metadata.get(key)!r} != {a.metadata.get(key)!r}")
        da, db = a.descriptor, b.descriptor
        if da.kernarg_size != db.kernarg_size:
            out.append(f"kernel {a.name}: descriptor kernarg_size {db.kernarg_size} != {da.kernarg_size}")
        for name in sorted(set(da.fields) - RESOURCE_FIELDS):
            if da.fields[name] != db.fields.get(name):
                out.append(f"kernel {a.name}: descriptor {name} {db.fields.get(name)} != {da.fields[name]}")
        if da.fields["kernarg_preload_spec_length"] and \
                k0.read(a.code_address, PRELOAD_SKIP) != k1.read(b.code_address, PRELOAD_SKIP):
            out.append(f"kernel {a.name}: kernarg-preload preamble (first {PRELOAD_SKIP} bytes) changed")
    return out


def resource_findings(co: CodeObject) -> list[str]:
    """Registers and scratch the code uses beyond what each kernel's descriptor declares."""
    out = []
    proc = co.target.processor
    for k in co.kernels:
        use = scan(kernel_instructions(co, k.name))
        need = required(use, k.descriptor, proc)
        have = declared(k.descriptor, k.metadata, proc)
        if need.next_free_vgpr > have.next_free_vgpr:
            out.append(f"kernel {k.name}: uses {need.next_free_vgpr} VGPRs+AGPRs, descriptor declares "
                       f"{have.next_free_vgpr}")
        if use.agprs and use.vgprs > have.accum_offset:
            out.append(f"kernel {k.name}: uses v{use.vgprs - 1}, at or past accum_offset {have.accum_offset}")
        if need.next_free_sgpr > have.next_free_sgpr:
            out.append(f"kernel {k.name}: uses {need.next_free_sgpr} SGPRs, descriptor declares {have.next_free_sgpr}")
        if use.scratch and not k.descriptor.fields["enable_private_segment"]:
            out.append(f"kernel {k.name}: uses scratch but enables no private segment")
    return out


def code_findings(co: CodeObject) -> dict[str, list[StaticFinding]]:
    """Hazard and s_waitcnt findings of each kernel (`asmevo.static_checks`)."""
    xnack = co.target.xnack != "off"
    return {k.name: run_static_checks(kernel_instructions(co, k.name), k.descriptor, xnack=xnack)
            for k in co.kernels}


def static_differences(k0: CodeObject, k1: CodeObject) -> list[str]:
    """Every static reason to reject K1 before running it: ABI changes, then resource overruns,
    hazards and s_waitcnt gaps that K0 does not already have (K0's own findings, counted per
    kernel, check and rule, are the analyses' false positives or K0's accepted behaviour)."""
    abi = abi_differences(k0, k1)
    if abi:
        return abi
    known = set(resource_findings(k0))
    out = [f for f in resource_findings(k1) if f not in known]
    before, after = code_findings(k0), code_findings(k1)
    for name, found in after.items():
        allowance = Counter((f.check, f.rule) for f in before.get(name, []))
        for f in found:
            key = (f.check, f.rule)
            if allowance[key]:
                allowance[key] -= 1
            else:
                out.append(f"kernel {name}: {f}")
    return out


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
    """Whether `spec` runs as a probe (a few workgroups on sparse memory): on the emulator only."""
    return device.name == "emu" and spec.probe > 0


def _sets(device: Device, spec: LaunchSpec, trials: int, special: bool) -> list[tuple[str, object]]:
    """(label, inputs) per input set; a probe's inputs are its seed (pages are generated on demand),
    and it runs the random trials only."""
    if _probing(device, spec):
        return [(f"trial {t} (seed {spec.seed + t}), probe of {spec.probe} workgroups", spec.seed + t)
                for t in range(trials)]
    return list(input_sets(spec, trials, special))


def _run(device: Device, data: bytes, spec: LaunchSpec, inputs):
    """(buffers or a ProbeRun, findings, ok, executed wave-instructions or None off the emulator)."""
    if _probing(device, spec):
        run = run_probe(device, data, spec, inputs)
        return run, run.findings, run.ok, run.instructions
    outputs, result = run_launch(device, data, spec, {k: v.copy() for k, v in inputs.items()})
    executed = result.report.instructions if result.report is not None else None
    return outputs, list(result.findings), bool(result.ok), executed


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


def _strict(device: Device) -> Device:
    """Verification runs the emulator in checked mode (uninitialized reads are findings too)."""
    if device.name == "emu" and not device.checked:
        return get_device("emu", budget=device.budget, checked=True, layout=device.layout, faithful=device.faithful)
    return device


def _candidate_device(device: Device, k0_instructions: int | None) -> Device:
    """The device K1 runs on: on the emulator, one whose instruction budget is BUDGET_FACTOR x what
    K0 executed on the same launch (a candidate stuck in a loop fails in bounded time)."""
    if device.name != "emu" or k0_instructions is None:
        return device
    return get_device("emu", budget=max(BUDGET_FLOOR, BUDGET_FACTOR * k0_instructions), checked=device.checked,
                      layout=device.layout, faithful=device.faithful)


def _set_device(device: Device, n_set: int) -> Device:
    """The device input set `n_set` runs on: on the emulator, even sets use the packed memory
    layout and odd sets the crossing one (every buffer straddles a 4 GiB boundary, with distinct
    high and low address bits), and sets 2, 3, 6, 7, ... round f32 transcendentals faithfully
    instead of correctly (as hardware does: a deleted refinement step shows); other devices place
    buffers and round themselves."""
    if device.name != "emu":
        return device
    layout, faithful = LAYOUTS[n_set % len(LAYOUTS)], n_set // 2 % 2 == 1
    if (device.layout, device.faithful) == (layout, faithful):
        return device
    return get_device("emu", budget=device.budget, checked=device.checked, layout=layout, faithful=faithful)


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
    dev = _strict(device)
    sets_per_launch = trials + (len(SPECIAL_SETS) if special else 0)
    k0_sha = sha256(k0.data)

    def verdict(kind: str, reason: str, evidence: dict, done_sets: int = 0) -> Verdict:
        return Verdict(kind, reason, evidence, done_sets, len(launches), time.perf_counter() - start,
                       k0_sha, sha256(k1.data))

    if static:
        problems = static_differences(k0, k1)
        if problems:
            return verdict("different", f"static check: {problems[0]}", {"stage": "static", "findings": problems})
    plans = [(vl, _sets(dev, vl.spec, trials, special), _decoders(vl.spec)) for vl in launches]
    for n_set in range(sets_per_launch):
        set_dev = _set_device(dev, n_set)
        for vl, sets, decoders in plans:
            if n_set >= len(sets):
                continue
            set_label, inputs = sets[n_set]
            if set_dev.name == "emu":
                set_label += f", {set_dev.layout} memory" + (", faithful transcendentals" if set_dev.faithful else "")
            where = {"launch": vl.label, "inputs": set_label}
            key = (k0_sha, vl.spec, set_label)
            cached = reference.get(key) if reference is not None else None
            if cached is None:
                try:
                    cached = _run(set_dev, k0.data, vl.spec, inputs)
                except AsmEvoError as exc:
                    return verdict("invalid", f"K0 cannot run {vl.label} ({set_label}): {exc}", where, n_set)
                if reference is not None:
                    reference.put(key, cached)
            out0, findings0, ok0, executed0 = cached
            unknown0 = [f for f in findings0 if f["kind"] not in vl.known_findings | TOLERATED_IN_K0]
            if unknown0 or (not ok0 and not findings0):
                return verdict("invalid", f"K0 has findings on {vl.label} ({set_label}): "
                               f"{_findings_text(unknown0) if unknown0 else 'launch failed'}",
                               {**where, "findings": unknown0}, n_set)
            try:
                out1, findings1, ok1, _ = _run(_candidate_device(set_dev, executed0), k1.data, vl.spec, inputs)
            except AsmEvoError as exc:
                return verdict("crashed", f"K1 failed on {vl.label} ({set_label}): {exc}", where, n_set)
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
