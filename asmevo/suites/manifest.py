"""Benchmark suite format: `suite.yaml` + one directory per problem (see FORMAT.md).

    suite = load_suite("kernelbench")            # or a path to a suite directory / suite.yaml
    p = suite.problem("19_ReLU")
    spec = p.launch(p.shapes_by_role("verify")[0])   # launch-spec dict (the public JSON contract)
    expected = p.reference_fn()(inputs, scalars)
    ok, msg = compare_to_reference(actual, expected, p.tolerance, dtypes=p.output_dtypes(shape))
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable

import numpy as np
import yaml

from ..errors import AsmEvoError

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLCHAINS = ("hip-clang19", "triton", "aiter-asm")
CACHE_PREFIX = "cache:"  # code_object/source paths under benchmarks/.cache (fetched or built, never committed)
CACHE_ROOT = REPO_ROOT / "benchmarks" / ".cache"
ROLES = ("verify", "heldout", "bench", "probe")
PROBLEM_KEYS = {"name", "level", "kernel", "code_object", "source", "toolchain", "dtype", "tolerance", "shapes",
                "outputs"}
OPTIONAL_PROBLEM_KEYS = {"description", "notes", "tolerance_reason", "semantics", "known_findings"}


class SuiteError(AsmEvoError):
    """A suite, problem, launch spec or reference module is missing or malformed."""


@dataclass(frozen=True)
class Shape:
    """One launch configuration of a problem: `role` is verify, heldout, bench or probe."""

    name: str
    role: str
    launch_path: Path


@dataclass(frozen=True)
class Problem:
    """A kernel, its reference and its shapes; paths are absolute."""

    name: str
    level: int
    kernel: str
    dir: Path
    code_object: Path
    source: Path
    toolchain: str
    dtype: str
    tolerance: dict
    outputs: tuple[str, ...]
    shapes: tuple[Shape, ...]
    description: str = ""
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def known_findings(self) -> dict[str, str]:
        """Emulator finding kinds this (unmodified, third-party) binary is known to trigger, with the reason."""
        return self.extra.get("known_findings", {})

    def shape(self, name: str) -> Shape:
        for s in self.shapes:
            if s.name == name:
                return s
        raise SuiteError(f"problem {self.name}: no shape named {name!r}")

    def shapes_by_role(self, role: str) -> list[Shape]:
        return [s for s in self.shapes if s.role == role]

    def launch(self, shape: Shape | str) -> dict:
        """The launch spec of `shape` as a dict (JSON as committed)."""
        s = self.shape(shape) if isinstance(shape, str) else shape
        try:
            data = json.loads(s.launch_path.read_text())
        except FileNotFoundError:
            raise SuiteError(f"problem {self.name}: launch spec {s.launch_path} not found") from None
        except json.JSONDecodeError as exc:
            raise SuiteError(f"problem {self.name}: launch spec {s.launch_path.name} is not JSON ({exc.msg})") from None
        if not isinstance(data, dict) or not isinstance(data.get("args"), list):
            raise SuiteError(f"problem {self.name}: launch spec {s.launch_path.name} has no args list")
        return data

    def output_dtypes(self, shape: Shape | str) -> dict[str, str]:
        """dtype names of the output buffers in `shape`'s launch spec."""
        args = self.launch(shape)["args"]
        fields = [f for a in args if isinstance(a.get("struct"), list) for f in a["struct"] if isinstance(f, dict)]
        return {a["buffer"]: a["dtype"] for a in [*args, *fields]
                if "buffer" in a and "dtype" in a and a["buffer"] in self.outputs}

    @cached_property
    def _module(self):
        path = self.dir / "reference.py"
        if not path.exists():
            raise SuiteError(f"problem {self.name}: reference.py not found")
        spec = importlib.util.spec_from_file_location(f"asmevo_ref_{self.dir.parent.name}_{self.name}", path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception as exc:  # a broken reference module is bad suite input
            raise SuiteError(f"problem {self.name}: reference.py failed to import ({type(exc).__name__}: {exc})") from None
        if not callable(getattr(mod, "reference", None)):
            raise SuiteError(f"problem {self.name}: reference.py defines no reference(inputs, scalars)")
        return mod

    def reference_fn(self) -> Callable[[dict[str, np.ndarray], list], dict[str, np.ndarray]]:
        return self._module.reference

    def generator_fn(self, role: str = "verify") -> Callable[[dict, np.random.Generator], dict[str, np.ndarray]] | None:
        """The optional input override for shapes of `role`, or None: `generate(launch, rng)` for verify and
        held-out shapes; for bench and probe shapes (too large to fill densely) `generate_bench(launch, rng)`,
        which returns only the small buffers that steer control flow (lengths, page tables, routing)."""
        fn = getattr(self._module, "generate_bench" if role in ("bench", "probe") else "generate", None)
        return fn if callable(fn) else None

    def launch_with_inputs(self, shape: Shape | str) -> dict:
        """`launch(shape)` with the buffers its generator (`generator_fn`) fills read from `file:` .npy inits
        (content-addressed under benchmarks/.cache/generated), so every run of the spec, verification and
        timing alike, sees the inputs the reference was written for; `file:` inits of the committed spec
        become absolute paths."""
        s = self.shape(shape) if isinstance(shape, str) else shape
        data = self.launch(s)
        fields = [f for a in data["args"] for f in (a["struct"] if isinstance(a.get("struct"), list) else [a])]
        inits = {f["buffer"]: f for f in fields if isinstance(f, dict) and "init" in f}
        for f in inits.values():  # committed .npy inputs beside the spec: absolute, so the spec runs anywhere
            if isinstance(f["init"], str) and f["init"].startswith("file:"):
                f["init"] = f"file:{(s.launch_path.parent / f['init'][5:]).resolve()}"
        gen = self.generator_fn(s.role)
        if gen is None:
            return data
        arrays = gen(data, np.random.default_rng(int(data.get("seed", 0))))
        missing = sorted(set(arrays) - set(inits))
        if missing:
            raise SuiteError(f"problem {self.name}: generate() returns {', '.join(missing)}, which {s.name} does not "
                             f"declare with an init")
        for name, array in arrays.items():
            inits[name]["init"] = f"file:{_stored(np.ascontiguousarray(array))}"
        return data


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    root: Path
    problems: tuple[Problem, ...]
    prepare_script: Path | None = None

    def problem(self, name: str) -> Problem:
        for p in self.problems:
            if p.name == name:
                return p
        raise SuiteError(f"suite {self.name}: no problem named {name!r}")

    def __len__(self) -> int:
        return len(self.problems)

    def prepare(self) -> None:
        """Fetch or build what the problems need (suite.yaml `prepare: script.py` defining `prepare()`);
        a no-op for suites whose code objects are committed."""
        if self.prepare_script is None:
            return
        spec = importlib.util.spec_from_file_location(f"asmevo_prepare_{self.name}", self.prepare_script)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except FileNotFoundError:
            raise SuiteError(f"suite {self.name}: prepare script {self.prepare_script} not found") from None
        if not callable(getattr(mod, "prepare", None)):
            raise SuiteError(f"suite {self.name}: {self.prepare_script.name} defines no prepare()")
        mod.prepare()


def _stored(array: np.ndarray) -> Path:
    """`array` saved as benchmarks/.cache/generated/<sha256 of its dtype, shape and bytes>.npy."""
    digest = hashlib.sha256(f"{array.dtype.str}{array.shape}".encode() + array.tobytes()).hexdigest()
    path = CACHE_ROOT / "generated" / f"{digest}.npy"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
        np.save(tmp, array)
        tmp.replace(path)
    return path


def _read_yaml(path: Path, what: str) -> dict:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise SuiteError(f"{what} {path} not found") from None
    except yaml.YAMLError as exc:
        raise SuiteError(f"{what} {path} is not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise SuiteError(f"{what} {path} must be a mapping")
    return data


def _resolve_root(name_or_path: str | Path) -> Path:
    p = Path(name_or_path)
    if p.name == "suite.yaml":
        return p.parent.resolve()
    if p.is_dir():
        return p.resolve()
    named = REPO_ROOT / "benchmarks" / str(name_or_path)
    production = REPO_ROOT / "benchmarks" / "production" / str(name_or_path)
    if "/" not in str(name_or_path):
        for candidate in (named, production):
            if (candidate / "suite.yaml").is_file():
                return candidate
    raise SuiteError(f"suite {name_or_path!r} not found (looked for a directory, {named} and {production})")


def _problem_path(pdir: Path, rel: str) -> Path:
    """A problem file: relative to its directory, or `cache:REL` under benchmarks/.cache."""
    if rel.startswith(CACHE_PREFIX):
        return CACHE_ROOT / rel[len(CACHE_PREFIX):]
    return pdir / rel


def _check_tolerance(tol: object, where: str) -> dict:
    if not isinstance(tol, dict) or not tol:
        raise SuiteError(f"{where}: tolerance must be {{exact: true}}, {{atol, rtol}} or {{max_ulp}}")
    if tol.get("exact") is True and set(tol) == {"exact"}:
        return tol
    if set(tol) == {"max_ulp"} and isinstance(tol["max_ulp"], int) and tol["max_ulp"] >= 0:
        return tol
    if set(tol) <= {"atol", "rtol"} and all(isinstance(v, (int, float)) and v >= 0 for v in tol.values()):
        return {"atol": float(tol.get("atol", 0.0)), "rtol": float(tol.get("rtol", 0.0))}
    raise SuiteError(f"{where}: unrecognised tolerance {tol!r}")


def _load_problem(root: Path, rel: str) -> Problem:
    pdir = (root / rel).resolve()
    path = pdir / "problem.yaml"
    d = _read_yaml(path, "problem file")
    where = f"{rel}/problem.yaml"
    missing = PROBLEM_KEYS - set(d)
    if missing:
        raise SuiteError(f"{where}: missing {', '.join(sorted(missing))}")
    unknown = set(d) - PROBLEM_KEYS - OPTIONAL_PROBLEM_KEYS
    if unknown:
        raise SuiteError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
    if d["toolchain"] not in TOOLCHAINS:
        raise SuiteError(f"{where}: toolchain must be one of {', '.join(TOOLCHAINS)}, got {d['toolchain']!r}")
    if not isinstance(d["level"], int):
        raise SuiteError(f"{where}: level must be an integer")
    outputs = d["outputs"]
    if not isinstance(outputs, list) or not outputs or not all(isinstance(o, str) for o in outputs):
        raise SuiteError(f"{where}: outputs must be a non-empty list of buffer names")
    shapes = []
    if not isinstance(d["shapes"], list):
        raise SuiteError(f"{where}: shapes must be a list")
    for i, s in enumerate(d["shapes"]):
        if not isinstance(s, dict) or set(s) != {"name", "role", "launch"}:
            raise SuiteError(f"{where}: shapes[{i}] must have exactly name, role and launch")
        if s["role"] not in ROLES:
            raise SuiteError(f"{where}: shapes[{i}] role must be one of {', '.join(ROLES)}, got {s['role']!r}")
        shapes.append(Shape(str(s["name"]), s["role"], pdir / s["launch"]))
    roles = [s.role for s in shapes]
    if roles.count("heldout") != 1 or roles.count("bench") != 1 or roles.count("verify") < 1:
        raise SuiteError(f"{where}: needs >= 1 verify, exactly 1 heldout and exactly 1 bench shape")
    if len({s.name for s in shapes}) != len(shapes):
        raise SuiteError(f"{where}: shape names must be unique")
    known = d.get("known_findings", {})
    if not isinstance(known, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in known.items()):
        raise SuiteError(f"{where}: known_findings must map a finding kind to the reason it is expected")
    extra = {k: d[k] for k in OPTIONAL_PROBLEM_KEYS if k in d}
    return Problem(name=str(d["name"]), level=d["level"], kernel=str(d["kernel"]), dir=pdir,
                   code_object=_problem_path(pdir, str(d["code_object"])), source=_problem_path(pdir, str(d["source"])), toolchain=d["toolchain"],
                   dtype=str(d["dtype"]), tolerance=_check_tolerance(d["tolerance"], where),
                   outputs=tuple(outputs), shapes=tuple(shapes), description=str(d.get("description", "")),
                   extra=extra)


def load_suite(name_or_path: str | Path) -> Suite:
    """Load a suite by name (`benchmarks/<name>` under the repo root) or by path."""
    root = _resolve_root(name_or_path)
    d = _read_yaml(root / "suite.yaml", "suite file")
    if not isinstance(d.get("name"), str) or not isinstance(d.get("problems"), list):
        raise SuiteError(f"suite file {root / 'suite.yaml'}: needs a name and a problems list")
    problems = tuple(_load_problem(root, str(rel)) for rel in d["problems"])
    names = [p.name for p in problems]
    if len(set(names)) != len(names):
        raise SuiteError(f"suite {d['name']}: duplicate problem names")
    prepare = d.get("prepare")
    if prepare is not None and not isinstance(prepare, str):
        raise SuiteError(f"suite file {root / 'suite.yaml'}: prepare must be a script path")
    return Suite(d["name"], str(d.get("description", "")).strip(), root, problems,
                 root / prepare if prepare else None)
