"""Run a suite's problems on the emulator and compare them with their numpy references.

    for r in check_suite(load_suite("triton"), roles=("verify", "heldout")):
        print(r.problem, r.shape, r.status, r.message)

Each shape is launched from its spec with generic inputs, the problem's `generate()` overrides (rng seeded
with the spec's seed), and compared with `reference(inputs, scalars)` under the problem's tolerance. Bench
shapes are for hardware only and are refused here.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..device import get_device
from ..device.launch import LaunchSpec, ScalarArg, StructArg, make_inputs, run_launch
from ..errors import AsmEvoError
from ..compare import compare_to_reference
from .manifest import Problem, Shape, Suite

CHECK_ROLES = ("verify", "heldout")


@dataclass(frozen=True)
class CheckResult:
    """One shape's outcome: status is ok, mismatch (kernel ran, output differs), fault (the emulator
    reported findings the problem does not list in `known_findings`) or error (the launch could not be set
    up or run, e.g. `unsupported: <mnemonic>`)."""

    problem: str
    shape: str
    role: str
    status: str
    message: str
    seconds: float
    instructions: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def spec_scalars(spec: LaunchSpec) -> list:
    """The reference's `scalars`: each scalar's value, and for a struct a dict of its named scalar fields."""
    out: list = []
    for a in spec.args:
        if isinstance(a, ScalarArg):
            out.append(a.value)
        elif isinstance(a, StructArg):
            out.append(a.scalar_values)
    return out


def problem_inputs(problem: Problem, spec: LaunchSpec, launch: dict) -> dict[str, np.ndarray]:
    """Initial buffers: the spec's inits, then the problem's generate() overrides (the same arrays
    `Problem.launch_with_inputs` puts in the launch)."""
    inputs = make_inputs(spec)
    gen = problem.generator_fn()
    if gen is not None:
        inputs = make_inputs(spec, {**inputs, **gen(launch, np.random.default_rng(spec.seed))})
    return inputs


def check_shape(problem: Problem, shape: Shape, *, budget: int = 200_000_000) -> CheckResult:
    if shape.role in ("bench", "probe"):
        raise AsmEvoError(f"{problem.name}/{shape.name}: {shape.role} shapes are too large to check against the "
                          f"reference on the emulator (bench shapes are for hardware; probes run in verification)")
    start = time.perf_counter()

    def result(status: str, message: str, instructions: int = 0) -> CheckResult:
        return CheckResult(problem.name, shape.name, shape.role, status, message,
                           time.perf_counter() - start, instructions)

    try:
        spec = LaunchSpec.load(shape.launch_path)
        launch = problem.launch(shape)
        inputs = problem_inputs(problem, spec, launch)
        outputs, run = run_launch(get_device("emu", budget=budget), problem.code_object, spec, inputs)
    except AsmEvoError as exc:
        return result("error", str(exc))
    unknown = [f for f in run.findings if f["kind"] not in problem.known_findings]
    if unknown:
        first = unknown[0]
        return result("fault", f"{len(unknown)} finding(s), first: {first['kind']}: {first['message']}",
                      run.report.instructions)
    expected = problem.reference_fn()(inputs, spec_scalars(spec))
    ok, message = compare_to_reference(outputs, expected, problem.tolerance, problem.output_dtypes(shape))
    if ok and run.findings:
        kinds = sorted({f["kind"] for f in run.findings})
        message = f"ok with {len(run.findings)} known finding(s) ({', '.join(kinds)}; see known_findings)"
    return result("ok" if ok else "mismatch", message, run.report.instructions)


def check_suite(suite: Suite, *, roles: tuple[str, ...] = CHECK_ROLES, problems: list[str] | None = None,
                budget: int = 200_000_000) -> Iterator[CheckResult]:
    """Prepare the suite (fetch/build), then check every selected problem's shapes of `roles`."""
    suite.prepare()
    for p in suite.problems:
        if problems and p.name not in problems:
            continue
        for s in p.shapes:
            if s.role in roles:
                yield check_shape(p, s, budget=budget)
