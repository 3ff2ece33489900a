"""Timing a launch from a sample of its workgroups, run on sparse memory (the probe machinery).

The grid's workgroups fall into classes by position along each dimension (first, interior, last:
edges hold the partial tiles). A pilot runs one workgroup of every class (two of the largest) and
measures a workgroup's work; more workgroups, shared among the classes in proportion to their size,
follow while the run stays within the instruction budget. Each sampled workgroup stands for its
class's share of the grid. K0 and every candidate are timed on the same workgroups and inputs
(`seed`). A launch of at most `max_samples` workgroups runs whole.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..codeobj import CodeObject
from ..device.emu import EmuDevice
from ..device.launch import LaunchSpec
from ..device.probe import run_probe
from ..emu.trace import LaunchTrace
from ..isa.cfg import build_cfg
from ..target import GPU
from .costs import DEFAULT_LATENCIES, Latencies
from .launch import Estimate, ModelError, TracedLaunch, estimate

MAX_SAMPLES = 24
INSTRUCTION_BUDGET = 1_500_000  # wave-instructions the run beyond the pilot may execute
# The emulator's runaway guard for one sampled run. A launch of at most MAX_SAMPLES workgroups runs
# whole, however long its waves are (LayerNorm's bench shape: some tens of millions); a
# candidate reaches timing only after verification, whose budget (verify.BUDGET_FACTOR x K0's)
# already stops runaway loops, so this only has to admit legal candidates that issue more.
RUN_BUDGET = 400_000_000
Grid = tuple[int, int, int]


def _coords(grid: Grid, w: int) -> tuple[int, int, int]:
    return w % grid[0], w // grid[0] % grid[1], w // (grid[0] * grid[1])


def grid_class(grid: Grid, w: int) -> tuple[int, ...]:
    """Workgroup `w`'s class: per dimension 0 (first), 1 (interior) or 2 (last)."""
    return tuple(0 if i == 0 else (2 if i == n - 1 else 1) for i, n in zip(_coords(grid, w), grid))


def _members(grid: Grid, cls: tuple[int, ...]) -> list[range]:
    return [range(0, 1) if c == 0 else (range(n - 1, n) if c == 2 else range(1, n - 1)) for c, n in zip(cls, grid)]


def class_sizes(grid: Grid) -> dict[tuple[int, ...], int]:
    classes = {tuple(grid_class(grid, x + grid[0] * (y + grid[1] * z)))
               for x, y, z in itertools.product(*[sorted({0, n // 2, n - 1}) for n in grid])}
    return {c: math.prod(len(r) for r in _members(grid, c)) for c in sorted(classes)}


def weights(grid: Grid, workgroups: list[int]) -> dict[int, float]:
    """Full-grid workgroups each of `workgroups` stands for: its class's size over the number of
    sampled workgroups of the class."""
    sizes = class_sizes(grid)
    per_class: dict[tuple, int] = {}
    for w in workgroups:
        per_class[grid_class(grid, w)] = per_class.get(grid_class(grid, w), 0) + 1
    return {w: sizes[grid_class(grid, w)] / per_class[grid_class(grid, w)] for w in workgroups}


def choose(grid: Grid, count: int, seed: int, *, pilot: bool = False) -> list[int]:
    """Workgroups to sample: every workgroup when the grid has at most `count`; else at least one
    per class, the rest in proportion to class size (random members, seeded); a `pilot` takes one
    per class and a second of the largest."""
    total = math.prod(grid)
    if total <= count and not pilot:
        return list(range(total))
    sizes = class_sizes(grid)
    want = {c: 1 for c in sizes}
    largest = max(sizes, key=lambda c: (sizes[c], c))
    if pilot:
        want[largest] = min(2, sizes[largest])
    else:
        spare, big = max(0, count - len(sizes)), sum(sizes.values())
        want = {c: min(n, 1 + int(spare * n / big)) for c, n in sizes.items()}
    rng = np.random.default_rng([seed, 0x5A3])
    out = []
    for c, n in sizes.items():
        members = _members(grid, c)
        chosen = {0} if want[c] >= n or n == 1 else set()
        while len(chosen) < want[c]:
            chosen.add(int(rng.integers(n)))
        for k in sorted(chosen):
            idx = []
            for r in members:
                idx.append(r[k % len(r)])
                k //= len(r)
            out.append(idx[0] + grid[0] * (idx[1] + grid[1] * idx[2]))
    return sorted(out)


def _run(code_object: CodeObject, spec: LaunchSpec, workgroups: list[int], seed: int, trace: LaunchTrace,
         known_findings: frozenset[str]) -> int:
    """Run `workgroups` of `spec` traced into `trace`; the executed wave-instructions."""
    run = run_probe(EmuDevice(budget=RUN_BUDGET), code_object.data, spec, seed, workgroups=workgroups, trace=trace)
    unknown = [f for f in run.findings if f["kind"] not in known_findings]
    if unknown:
        f = unknown[0]
        raise ModelError(f"{spec.kernel} has strictness findings on its timing launch: {f['kind']}: {f['message']}")
    # every allocation, in the order the trace's buffer indices count them: the spec's buffers, then the
    # dispatch's own (the kernarg segment a kernel may read with vector loads)
    trace.buffer_bytes = [b.nbytes for b in run.memory.buffers()]
    return run.instructions


def trace_sample(code_object: CodeObject, spec: LaunchSpec, seed: int, *, max_samples: int = MAX_SAMPLES,
                 budget: int = INSTRUCTION_BUDGET, known_findings: frozenset[str] = frozenset(),
                 workgroups: list[int] | None = None) -> TracedLaunch:
    """Run the sampled workgroups of `spec` (see the module docstring), or exactly `workgroups` (another
    object's sample), and collect the trace."""
    grid = tuple(spec.grid)
    instructions = code_object.kernel_instructions(spec.kernel)
    cfg = build_cfg(instructions)
    trace = LaunchTrace({instructions[b.start].address: b.index for b in cfg.blocks})
    if workgroups is not None:
        ran = sorted(set(workgroups))
        _run(code_object, spec, ran, seed, trace, known_findings)
    elif math.prod(grid) <= max_samples:
        ran = choose(grid, max_samples, seed)
        _run(code_object, spec, ran, seed, trace, known_findings)
    else:
        ran = choose(grid, max_samples, seed, pilot=True)
        per_wg = _run(code_object, spec, ran, seed, trace, known_findings) / len(ran)
        affordable = len(ran) + int(budget / max(per_wg, 1.0))
        more = [w for w in choose(grid, min(max_samples, affordable), seed) if w not in set(ran)]
        if more:
            _run(code_object, spec, more, seed, trace, known_findings)
            ran = sorted(set(ran) | set(more))
    waves, counts = trace.edge_counts()
    wg = waves // -(-math.prod(spec.block) // 64)
    share = weights(grid, ran)
    memory = {pc: (st.bytes, st.lines, st.by_buffer) for pc, st in trace.memory.items()}
    return TracedLaunch(list(trace.edges), counts, wg, np.array([share[int(w)] for w in wg]), memory,
                        trace.buffer_bytes, grid, tuple(spec.block), spec.dynamic_lds,
                        {w: grid_class(grid, w) for w in ran})


def model_spec(code_object: CodeObject, spec: LaunchSpec, gpu: GPU, *, seed: int | None = None,
               max_samples: int = MAX_SAMPLES, budget: int = INSTRUCTION_BUDGET,
               known_findings: frozenset[str] = frozenset(), latencies: Latencies = DEFAULT_LATENCIES,
               workgroups: list[int] | None = None) -> Estimate:
    """Model `spec` of `code_object` on `gpu` from a sample of at most `max_samples` workgroups (or
    exactly `workgroups`: another object's `Estimate.sample`, so two objects are compared on the same
    workgroups)."""
    gpu.require(code_object.target.processor)
    traced = trace_sample(code_object, spec, spec.seed if seed is None else seed, max_samples=max_samples,
                          budget=budget, known_findings=known_findings, workgroups=workgroups)
    return estimate(code_object.kernel_instructions(spec.kernel), code_object.kernel(spec.kernel), traced, gpu,
                    latencies)
