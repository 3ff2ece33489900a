"""Launch specs as verification reads them: a spec file (JSON/YAML, `asmevo.device.launch`'s format)
plus its optional `"tolerance"` key (the K0-vs-K1 comparison policy), and a suite problem's launches
by role (verify, held-out, probe, bench)."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from .compare import TolerancePolicy
from .device.launch import LaunchSpec
from .errors import LaunchSpecError


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
    emulator runs a few workgroups of) when `probes`. Inputs the problem generates are part of each
    launch (`Problem.launch_with_inputs`). A problem may declare the K0-vs-K1
    comparison policy as `semantics: {verify_tolerance: {...}}` (bitwise otherwise); its
    `known_findings` kinds carry over to every launch."""
    roles = ("verify",) + (("heldout",) if heldout else ()) + (("probe",) if probes else ())
    return _role_launches(problem, roles)


def _role_launches(problem, roles: tuple[str, ...]) -> list[VerifyLaunch]:
    semantics = problem.extra.get("semantics")
    tol = semantics.get("verify_tolerance") if isinstance(semantics, dict) else None
    known = frozenset(problem.extra.get("known_findings") or {})
    out = []
    for shape in problem.shapes:
        if shape.role in roles:
            data = problem.launch_with_inputs(shape)
            if tol is not None and "tolerance" not in data:
                data["tolerance"] = tol
            vl = launch_from_dict(data, shape.launch_path.parent, f"{problem.name}:{shape.name}")
            out.append(VerifyLaunch(vl.spec, vl.tolerance, vl.label, known))
    return out


def largest(launches: list[VerifyLaunch]) -> VerifyLaunch:
    """The launch with the most work-items (ties: the first)."""
    return max(launches, key=lambda vl: math.prod(vl.spec.grid) * math.prod(vl.spec.block))


def timing_launch(problem) -> tuple[VerifyLaunch, str]:
    """The launch a suite problem is timed on and its role: its `bench` shape (the shape users run;
    timed from a sample of its workgroups), else its largest verify shape."""
    bench = _role_launches(problem, ("bench",))
    if bench:
        return bench[0], "bench"
    return largest(suite_launches(problem)), "largest verify (no bench shape)"
