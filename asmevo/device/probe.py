"""Probe launches: a few workgroups of a launch too large for host memory, on the emulator.

Bugs in index arithmetic (a 32-bit offset that wraps, an integer division whose reciprocal estimate
is one short only for large dividends) show only at giant shapes, whose buffers the emulator cannot
hold. A probe runs N chosen workgroups of such a launch on `SparseMemory`: buffers keep their full
size, and only the pages the chosen workgroups touch exist, generated on first touch from the spec's
init (`lazy_fill`). The choice favours the workgroups where integer arithmetic breaks: the first and
last ones, and those around every power of two; a quarter are drawn at random. Workgroups are
assumed independent (as in the kernels probed): K0 and K1 run the same subset on identical memory,
and any difference on a page either touched is a difference.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import Callable

import numpy as np

from ..codeobj import parsed
from ..compare import Difference, TolerancePolicy, compare_buffer
from ..emu import run_kernel
from ..emu.memory import HeapBuffer
from ..emu.memory import SparseMemory
from ..emu.trace import LaunchTrace
from .base import Buffer, Module
from .emu import EmuDevice, launch_outcome
from .launch import LaunchSpec, launch_args, lazy_fill


@dataclass
class ProbeRun:
    """One probe: the sparse memory afterwards, the spec buffers in it, the workgroups run, the
    findings (dicts as in `LaunchResult`) and the executed wave-instructions."""

    spec: LaunchSpec
    memory: SparseMemory
    buffers: dict[str, HeapBuffer]
    workgroups: list[int]
    findings: list[dict]
    ok: bool
    instructions: int


def probe_workgroups(total: int, count: int, seed: int) -> list[int]:
    """`count` distinct flat workgroup ids of a `total`-workgroup grid (all when count >= total),
    ascending: first the first two and last two, then 2^j - 1, 2^j, 2^j + 1 for j from the highest
    power below `total` down, and a quarter of `count` at random (seeded)."""
    if count >= total:
        return list(range(total))
    powers = [(1 << j) + d for j in range(total.bit_length() - 1, 0, -1) for d in (-1, 0, 1)]
    fixed = [w for w in dict.fromkeys([0, 1, total - 1, total - 2] + powers) if 0 <= w < total]
    chosen = set(fixed[:count - count // 4])
    rng = np.random.default_rng([seed, 0x9B0BE])
    while len(chosen) < count:
        chosen.add(int(rng.integers(total)))
    return sorted(chosen)


def run_probe(device: EmuDevice, data: bytes, spec: LaunchSpec, seed: int, *, workgroups: list[int] | None = None,
              trace: LaunchTrace | None = None) -> ProbeRun:
    """Run `spec`'s probe (spec.probe workgroups, or the given `workgroups`) of `data` with the inputs
    of `seed`, under the emulator settings of `device` (budget, checked, layout, faithful); `trace`
    records the run for the timing model."""
    module = Module(parsed(data))
    kernel = module.kernel(spec.kernel)
    spec.check(kernel, module.code_object.target.processor)
    memory = SparseMemory(layout=device.layout)
    for name, buf in spec.buffers.items():
        memory.alloc(buf.nbytes, name, fill=lazy_fill(buf, seed))
    heap = {b.name: b for b in memory.buffers()}
    args = launch_args(spec, kernel, {n: Buffer(n, heap[n].address, heap[n].nbytes) for n in heap})
    _, geometry, kernarg = device.prepare(module, spec.kernel, spec.grid, spec.block, spec.dynamic_lds, args)
    if workgroups is None:
        workgroups = probe_workgroups(prod(geometry.grid), spec.probe, seed)
    report = run_kernel(module.code_object, kernel.name, grid=geometry.grid, block=geometry.block,
                        dynamic_lds=geometry.dynamic_lds, kernarg=kernarg, memory=memory, budget=device.budget,
                        checked=device.checked, faithful=device.faithful, workgroups=workgroups, trace=trace)
    findings, ok = launch_outcome(report, memory)
    return ProbeRun(spec, memory, heap, workgroups, findings, ok, report.instructions)


def _touched(run0: ProbeRun, run1: ProbeRun, name: str) -> list[tuple[int, int]]:
    """Byte ranges of buffer `name` materialized in either run, merged."""
    spans = sorted(run0.memory.touched(run0.buffers[name]) + run1.memory.touched(run1.buffers[name]))
    out: list[tuple[int, int]] = []
    for lo, hi in spans:
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def probe_difference(run0: ProbeRun, run1: ProbeRun, policy: TolerancePolicy = TolerancePolicy(),
                     decoders: dict[str, Callable[[np.ndarray], np.ndarray]] | None = None) -> Difference | None:
    """The first difference between two probes of the same spec and seed over every page of every
    buffer that either touched (untouched pages hold the same generated contents in both), with the
    element index in the buffer's own shape; `count` counts differing elements on those pages."""
    decoders = decoders or {}
    for name, buf in run0.spec.buffers.items():
        ranges = _touched(run0, run1, name)
        if not ranges:
            continue
        item, storage = buf.dtype.itemsize, buf.dtype.storage

        def elements(run: ProbeRun) -> np.ndarray:
            address = run.buffers[name].address
            return np.concatenate([np.frombuffer(run.memory.read(address + lo, hi - lo), storage)
                                   for lo, hi in ranges])
        diff = compare_buffer(name, elements(run0), elements(run1), policy.for_buffer(name), decoders.get(name))
        if diff is not None:
            index = np.concatenate([np.arange(lo // item, hi // item) for lo, hi in ranges])[diff.index[0]]
            return replace(diff, index=tuple(int(i) for i in np.unravel_index(int(index), buf.shape)))
    return None
