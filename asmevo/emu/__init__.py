"""Strict gfx942 (CDNA3) wave64 emulator: runs real code objects on the CPU with numpy.

Entry points: `run_kernel` (one launch) and `run_kernel_wide` (several launches of one kernel with the
same geometry, as one batch of waves where that is exact). See README.md in this package for
semantics and strictness rules.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..codeobj import CodeObject, Kernel
from ..errors import AsmEvoError, EmulationError
from ..target import processor
from .dispatch import PRELOAD_SKIP, batch_waves, host_buffers, init_batch, waves_per_group
from .executor import Stats, run_batch
from .float_mode import check_descriptor
from .memory import Memory, WideMemory
from .program import Program, program_for
from .report import Finding, RunReport
from .state import Machine
from .trace import LaunchTrace

__all__ = ["run_kernel", "run_kernel_wide", "WideLaunch", "RunReport", "Finding", "Memory"]
# Instructions whose results depend on how many instructions the whole batch executed (they read the
# launch's instruction clock): kernels using them never run wide.
CLOCKED = frozenset({"s_memtime", "s_memrealtime"})


@dataclass(frozen=True)
class _Launch:
    """What every batch of one launch shares."""

    prog: Program
    kernel: Kernel
    float_mode: int  # MODE's float bits at wave start (float_mode.py)
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    lds: int
    entry: int
    nvgpr: int
    wpg: int
    per_batch: int  # workgroups per batch

    @property
    def nwg(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


def _launch(code_object: CodeObject, kernel: str, grid, block, dynamic_lds: int, checked: bool) -> _Launch:
    k = code_object.kernel(kernel)
    grid = tuple(int(v) for v in grid) + (1,) * (3 - len(grid))
    block = tuple(int(v) for v in block) + (1,) * (3 - len(block))
    if min(grid) < 1 or min(block) < 1 or block[0] * block[1] * block[2] > 1024 or \
            max(g * b for g, b in zip(grid, block)) >= 1 << 32:
        raise EmulationError(f"bad launch geometry grid={grid} block={block}")
    prog = program_for(code_object)
    desc = k.descriptor
    entry = k.entry_address + (PRELOAD_SKIP if desc.fields["kernarg_preload_spec_length"] else 0)
    nvgpr = max(prog.nvgpr, desc.accum_offset) if prog.indexed else prog.nvgpr
    wpg = waves_per_group(block)
    return _Launch(prog, k, check_descriptor(desc), grid, block, desc.group_segment_fixed_size + int(dynamic_lds),
                   entry, nvgpr, wpg, batch_waves(k, block, nvgpr, prog.nagpr, checked) // wpg)


def _lds_refusal(launch: _Launch) -> RunReport | None:
    limit = processor(launch.prog.processor).lds_bytes
    if launch.lds <= limit:
        return None
    return RunReport(findings=[Finding("lds_limit", launch.entry, 0, f"launch needs {launch.lds} bytes of LDS, "
                                       f"more than {launch.prog.processor}'s {limit}")])


def _machine(launch: _Launch, nwaves: int, memory: Memory, checked: bool, faithful: bool, wave_ids: np.ndarray,
             launch_of_wave: np.ndarray | None = None) -> Machine:
    desc = launch.kernel.descriptor
    return Machine(nwaves=nwaves, nvgpr=launch.nvgpr, nagpr=launch.prog.nagpr, waves_per_group=launch.wpg,
                   lds_bytes=launch.lds, scratch_bytes=desc.private_segment_fixed_size, memory=memory,
                   checked=checked, wave_ids=wave_ids, entry=launch.entry, faithful=faithful,
                   launch_of_wave=launch_of_wave, float_mode=launch.float_mode)


def _hazards(launch: _Launch, executed: dict[int, int]) -> list[Finding]:
    return [Finding("hazard", pc, -1, f"executed {executed[pc]} times without the required wait states ({msg})")
            for pc, msg in sorted(launch.prog.hazards(launch.kernel).items()) if executed.get(pc)]


def run_kernel(code_object: CodeObject, kernel: str, *, grid: tuple[int, int, int], block: tuple[int, int, int],
               dynamic_lds: int, kernarg: bytes, memory: Memory, budget: int = 50_000_000,
               checked: bool = False, faithful: bool = False, workgroups: Sequence[int] | None = None,
               trace: LaunchTrace | None = None) -> RunReport:
    """Emulate one launch of `kernel`: `grid` in workgroups, `block` in work-items. Global memory is
    `memory` (buffers the kernargs point to must be allocated there). `faithful` rounds half of the
    f32 transcendental results away from the nearest value (`valu.faithful`). `workgroups` (flat ids,
    x fastest) runs only those workgroups of the grid, as if the others had not touched memory.
    `trace` records every wave's CFG edges and the global-memory traffic per instruction.
    Returns the run report; findings (strictness violations) make `report.ok` False."""
    launch = _launch(code_object, kernel, grid, block, dynamic_lds, checked)
    refused = _lds_refusal(launch)
    if refused is not None:
        return refused
    addrs = host_buffers(memory, launch.kernel, kernarg, launch.grid, launch.block, launch.lds)
    return _run_alone(launch, kernarg, memory, addrs, budget, checked, faithful, workgroups, trace)


def _run_alone(launch: _Launch, kernarg: bytes, memory: Memory, addrs: dict[str, int], budget: int, checked: bool,
               faithful: bool, workgroups: Sequence[int] | None = None, trace: LaunchTrace | None = None) -> RunReport:
    """One launch whose host buffers (`addrs`) are allocated, batch after batch."""
    wpg, report, stats = launch.wpg, RunReport(), Stats(budget)
    memory.begin_launch()
    ids = np.arange(launch.nwg, dtype=np.int64) if workgroups is None else _selected(workgroups, launch.nwg)
    with np.errstate(all="ignore"):
        for at in range(0, len(ids), launch.per_batch):
            batch = ids[at:at + launch.per_batch]
            wave_ids = (batch[:, None] * wpg + np.arange(wpg)).reshape(-1)
            m = _machine(launch, len(wave_ids), memory, checked, faithful, wave_ids)
            init_batch(m, launch.kernel, batch, launch.grid, launch.block, addrs, kernarg)
            if trace is not None:
                m.trace = trace
                trace.begin_batch(wave_ids)
            run_batch(m, launch.prog, stats)
            report.findings.extend(m.findings)
            if stats.stopped:
                break
    report.findings.extend(_hazards(launch, stats.pc_counts))
    report.instructions = stats.instructions
    report.lane_instructions = stats.lane_instructions
    report.waves = len(ids) * wpg
    report.pc_counts = stats.pc_counts
    return report


@dataclass(frozen=True)
class WideLaunch:
    """One launch of a wide run: its packed kernarg segment, its global memory (buffers allocated and
    filled, as for `run_kernel`) and its instruction budget."""

    kernarg: bytes
    memory: Memory
    budget: int = 50_000_000


def run_kernel_wide(code_object: CodeObject, kernel: str, launches: Sequence[WideLaunch], *,
                    grid: tuple[int, int, int], block: tuple[int, int, int], dynamic_lds: int,
                    checked: bool = False, faithful: bool = False) -> list[RunReport | AsmEvoError]:
    """`run_kernel` of each launch (same kernel, geometry and settings; own kernargs, memory and
    budget), with the same outcome for each as on its own: its report (findings, counts), memory
    contents, or the error it raises, returned in its place rather than raised.

    Launches that each fit in one batch run together as one batch of waves, launch after launch, so
    every instruction is one numpy pass over all of them. That is exact: each launch's waves still
    execute in the order they would alone (the lowest PC first; nothing merges their waves with
    another launch's in a way they can observe), each address is translated and bounds-checked in
    its own launch's memory (`WideMemory`), LDS and scratch are per wave. Wherever a launch's outcome
    alone is not certain to be the same — a finding whose message names one lane of several launches,
    a budget running out, an error — the launches concerned are run again on their own, from their
    untouched memory. Kernels that read the instruction clock (`CLOCKED`) always run alone."""
    launch = _launch(code_object, kernel, grid, block, dynamic_lds, checked)
    out: list[RunReport | AsmEvoError | None] = [None] * len(launches)
    refused = _lds_refusal(launch)
    if refused is not None:
        return [RunReport(findings=list(refused.findings)) for _ in launches]
    addrs = [host_buffers(w.memory, launch.kernel, w.kernarg, launch.grid, launch.block, launch.lds) for w in launches]
    per_machine = launch.per_batch // launch.nwg
    together = per_machine >= 2 and len(launches) >= 2 and \
        not any(ins.mnemonic in CLOCKED for ins in launch.prog.instructions)
    if together:
        for at in range(0, len(launches), per_machine):
            chunk = list(range(at, min(len(launches), at + per_machine)))
            if len(chunk) > 1:
                out[at:at + len(chunk)] = _run_together(launch, [launches[i] for i in chunk], [addrs[i] for i in chunk],
                                                        checked, faithful)
    for i, w in enumerate(launches):
        if out[i] is None:
            try:
                out[i] = _run_alone(launch, w.kernarg, w.memory, addrs[i], w.budget, checked, faithful)
            except AsmEvoError as exc:
                out[i] = exc
    return out


def _run_together(launch: _Launch, launches: list[WideLaunch], addrs: list[dict[str, int]], checked: bool,
                  faithful: bool) -> list[RunReport | None]:
    """Run whole single-batch launches as one batch; None for each launch that must run alone."""
    n, wpg, nwg = len(launches), launch.wpg, launch.nwg
    memory = WideMemory([w.memory for w in launches])
    per_launch = nwg * wpg
    launch_of_wave = np.repeat(np.arange(n), per_launch)
    wave_ids = np.tile(np.arange(per_launch, dtype=np.int64), n)
    budgets = np.array([w.budget for w in launches], np.int64)
    stats = Stats(int(budgets.min()), budgets)
    m = _machine(launch, n * per_launch, memory, checked, faithful, wave_ids, launch_of_wave)
    ids = np.arange(nwg, dtype=np.int64)
    for k, w in enumerate(launches):
        init_batch(m, launch.kernel, ids, launch.grid, launch.block, addrs[k], w.kernarg, k * per_launch)
    try:
        with np.errstate(all="ignore"):
            run_batch(m, launch.prog, stats)
    except AsmEvoError:
        return [None] * n  # whichever launch raised raises again on its own
    instructions, lanes, pcs = stats.per_launch()
    out: list[RunReport | None] = []
    for k in range(n):
        if k in m.tainted:
            out.append(None)
            continue
        executed = {pc: int(c[k]) for pc, c in pcs.items() if c[k]}
        findings = [f for f, owner in zip(m.findings, m.finding_launch) if owner == k]
        out.append(RunReport(instructions=int(instructions[k]), lane_instructions=int(lanes[k]), waves=per_launch,
                             findings=findings + _hazards(launch, executed), pc_counts=executed))
        memory.release(k)
    return out


def _selected(workgroups: Sequence[int], nwg: int) -> np.ndarray:
    """The distinct `workgroups`, ascending (a batch may hold workgroups that are not neighbours)."""
    ids = np.unique(np.asarray(list(workgroups), np.int64))
    if not len(ids) or ids[0] < 0 or ids[-1] >= nwg:
        raise EmulationError(f"selected workgroup ids must be some of 0 .. {nwg - 1}")
    return ids
