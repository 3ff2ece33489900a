"""Strict gfx942 (CDNA3) wave64 emulator: runs real code objects on the CPU with numpy.

Entry point: `run_kernel`. See README.md in this package for semantics and strictness rules.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..codeobj import CodeObject
from ..errors import EmulationError
from .dispatch import MAX_LDS, PRELOAD_SKIP, batch_waves, host_buffers, init_batch, waves_per_group
from .executor import Stats, run_batch
from .memory import Memory
from .program import program_for
from .report import Finding, RunReport
from .state import Machine
from .trace import LaunchTrace

__all__ = ["run_kernel", "RunReport", "Finding", "Memory"]


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
    k = code_object.kernel(kernel)
    grid = tuple(int(v) for v in grid) + (1,) * (3 - len(grid))
    block = tuple(int(v) for v in block) + (1,) * (3 - len(block))
    if min(grid) < 1 or min(block) < 1 or block[0] * block[1] * block[2] > 1024 or \
            max(g * b for g, b in zip(grid, block)) >= 1 << 32:
        raise EmulationError(f"bad launch geometry grid={grid} block={block}")
    prog = program_for(code_object)
    desc = k.descriptor
    lds = desc.group_segment_fixed_size + int(dynamic_lds)
    report = RunReport()
    entry = k.entry_address + (PRELOAD_SKIP if desc.fields["kernarg_preload_spec_length"] else 0)
    if lds > MAX_LDS:
        report.findings.append(Finding("lds_limit", entry, 0, f"launch needs {lds} bytes of LDS, more than {MAX_LDS}"))
        return report
    addrs = host_buffers(memory, k, kernarg, grid, block, lds)
    memory.begin_launch()
    wpg = waves_per_group(block)
    nwg = grid[0] * grid[1] * grid[2]
    nvgpr = max(prog.nvgpr, desc.accum_offset) if prog.indexed else prog.nvgpr
    per_batch = batch_waves(k, block, nvgpr, prog.nagpr, checked) // wpg
    stats = Stats(budget)
    ids = np.arange(nwg, dtype=np.int64) if workgroups is None else _selected(workgroups, nwg)
    with np.errstate(all="ignore"):
        for at in range(0, len(ids), per_batch):
            batch = ids[at:at + per_batch]
            wave_ids = (batch[:, None] * wpg + np.arange(wpg)).reshape(-1)
            m = Machine(nwaves=len(wave_ids), nvgpr=nvgpr, nagpr=prog.nagpr, waves_per_group=wpg,
                        lds_bytes=lds, scratch_bytes=desc.private_segment_fixed_size, memory=memory,
                        checked=checked, wave_ids=wave_ids, entry=entry, faithful=faithful)
            init_batch(m, k, batch, grid, block, addrs, kernarg)
            if trace is not None:
                m.trace = trace
                trace.begin_batch(wave_ids)
            run_batch(m, prog, stats)
            report.findings.extend(m.findings)
            if stats.stopped:
                break
    report.findings.extend(Finding("hazard", pc, -1, f"executed {stats.pc_counts[pc]} times without the "
                                                     f"required wait states ({msg})")
                           for pc, msg in sorted(prog.hazards(k).items()) if pc in stats.pc_counts)
    report.instructions = stats.instructions
    report.lane_instructions = stats.lane_instructions
    report.waves = len(ids) * wpg
    report.pc_counts = stats.pc_counts
    return report


def _selected(workgroups: Sequence[int], nwg: int) -> np.ndarray:
    """The distinct `workgroups`, ascending (a batch may hold workgroups that are not neighbours)."""
    ids = np.unique(np.asarray(list(workgroups), np.int64))
    if not len(ids) or ids[0] < 0 or ids[-1] >= nwg:
        raise EmulationError(f"selected workgroup ids must be some of 0 .. {nwg - 1}")
    return ids
