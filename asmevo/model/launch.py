"""The model of a whole launch from a traced sample of its workgroups (docs/cycle_model.md).

Every sampled wave carries its own CFG path (edge counts); each block is scheduled per incoming
edge (`schedule.edge_schedules`), so a wave's length is its edge counts times the edge lengths,
stores drained at its end. Sampled workgroups stand for the workgroups of their grid class
(`weights`). The launch then takes the longest of:

- latency: the busiest CU's rounds of resident workgroups, each round as long as a mean
  workgroup, plus the slowest workgroup's excess (the kernel ends when its last wave ends);
- SIMD issue: the busiest of VALU, MFMA and scalar issue per SIMD over every wave of the launch;
- CU memory paths: LDS bytes and vector-memory cache lines per CU;
- L2 and HBM bandwidth: cache lines over L2 bandwidth; bytes HBM must supply (each buffer's
  touched bytes, once) over achievable HBM bandwidth;

plus a fixed launch overhead. A vector load's latency mixes L2 hits and HBM misses by how often
the launch re-reads its buffer (requested bytes / buffer bytes).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ..codeobj import Kernel
from ..errors import AsmEvoError
from ..isa.cfg import build_cfg
from ..isa.instruction import Instruction
from ..target import GPU, gpu, processor as target_processor
from .costs import DEFAULT_LATENCIES, LDS_BYTES_PER_CYCLE, Cost, Latencies, cost, lds_bytes
from .schedule import ENTRY, edge_schedules

L2_BYTES_PER_CYCLE_PER_XCD = 16 * 128  # 16 channels x 128 B/clk per XCD (CDNA3 white paper)
VMEM_BYTES_PER_CYCLE_PER_CU = 64       # vector L1 -> CU path, 64 B/clk (CDNA3 white paper)
LINE_BYTES = 128
# Issue units per SIMD. Branches have their own (LLVM SISchedule: WriteBranch on HWBranch, WriteSALU on
# HWSALU): a branch does not take a scalar-ALU slot, so deleting branches cannot relieve SALU issue.
_UNIT_OF = {"valu": "valu", "trans": "valu", "mfma": "mfma", "salu": "salu", "smem": "salu", "branch": "branch",
            "vmem_load": "vmem", "vmem_store": "vmem", "lds": "lds"}


def _cost_with(load_latency: dict[int, float], latencies: Latencies, processor: str) -> Callable[[Instruction], Cost]:
    """`cost` of an instruction of `processor`, with each vector load in `load_latency` (by address) taking
    that latency; each instruction object's cost is computed once (a block is scheduled once per incoming
    edge and pass)."""
    known: dict[int, tuple[Instruction, Cost]] = {}

    def cost_of(ins: Instruction) -> Cost:
        hit = known.get(id(ins))
        if hit is not None and hit[0] is ins:
            return hit[1]
        c = cost(ins, latencies, processor)
        if c.cls == "vmem_load" and ins.address in load_latency:
            c = replace(c, latency=load_latency[ins.address])
        known[id(ins)] = (ins, c)
        return c
    return cost_of


def _add_units(units: dict[str, float], c: Cost, n: float) -> None:
    """Add `n` executions of an instruction costing `c` to the SIMD unit cycles of the classes `units`
    counts. An FP32/FP64 MFMA (`Cost.holds_valu`) counts as VALU too: no VALU instruction issues while it
    runs (the 2 slots its hold outlasts it are the wave schedule's, where a VALU instruction follows)."""
    unit = _UNIT_OF.get(c.cls)
    if unit in units:
        units[unit] += n * c.unit
    if c.holds_valu:
        units["valu"] += n * c.unit


class ModelError(AsmEvoError):
    """The timing model cannot cost this launch."""


@dataclass(frozen=True)
class Occupancy:
    """Resident waves from the kernel's resources: per SIMD, workgroups per CU, and the limiter."""

    vgprs: int
    sgprs: int
    lds_bytes: int
    waves_per_workgroup: int
    workgroups_per_cu: int
    waves_per_simd: float
    limiter: str


def occupancy(kernel: Kernel, block: tuple[int, int, int], dynamic_lds: int, gpu: GPU) -> Occupancy:
    """Workgroups of `kernel` one CU holds at once: the unified VGPR file ((g+1) x 8 per lane,
    512 per SIMD lane), SGPRs ((g+1) x 8 rounded to 16, 800 per SIMD), wave slots (8 per SIMD),
    LDS (fixed + dynamic in 512-byte granules, 64 KiB per CU) and 16 workgroups per CU."""
    f = kernel.descriptor.fields
    vgprs = (f["granulated_workitem_vgpr_count"] + 1) * gpu.processor.vgpr_granule
    sgprs = -(-(f["granulated_wavefront_sgpr_count"] + 1) * gpu.processor.sgpr_granule // gpu.sgpr_alloc_granule) \
        * gpu.sgpr_alloc_granule
    lds = kernel.descriptor.group_segment_fixed_size + dynamic_lds
    lds = -(-lds // gpu.lds_alloc_granule) * gpu.lds_alloc_granule
    wpg = -(-(block[0] * block[1] * block[2]) // gpu.processor.wave_size)
    try:
        return resident(vgprs, sgprs, lds, wpg, gpu)
    except ModelError as exc:
        raise ModelError(f"kernel {kernel.name}: {exc}") from None


def resident(vgprs: int, sgprs: int, lds: int, wpg: int, gpu: GPU) -> Occupancy:
    """Occupancy of workgroups of `wpg` waves allocating `vgprs` VGPRs and `sgprs` SGPRs per wave
    (granule-rounded) and `lds` bytes (granule-rounded) per workgroup."""
    limits = {"waves": gpu.max_waves_per_simd, "vgprs": gpu.vgprs_per_lane // vgprs, "sgprs": gpu.sgprs_per_simd // sgprs}
    per_simd_limiter = min(limits, key=lambda k: (limits[k], k != "waves"))
    per_simd = limits[per_simd_limiter]
    if per_simd == 0:
        raise ModelError(f"cannot be resident ({vgprs} VGPRs, {sgprs} SGPRs)")
    wg_limits = {per_simd_limiter: (per_simd * gpu.simds_per_cu) // wpg,
                 "barriers": gpu.max_workgroups_per_cu if wpg > 1 else per_simd * gpu.simds_per_cu}
    if lds:
        wg_limits["lds"] = gpu.lds_bytes_per_cu // lds
    limiter = min(wg_limits, key=lambda k: (wg_limits[k], k != per_simd_limiter))
    wgs = wg_limits[limiter]
    if wgs == 0:
        raise ModelError(f"a workgroup of {wpg} waves does not fit on a CU ({limiter})")
    return Occupancy(vgprs, sgprs, lds, wpg, wgs, wgs * wpg / gpu.simds_per_cu, limiter)


@dataclass
class PcCost:
    """Modelled cost of one instruction address over the whole launch (summed over waves)."""

    count: float
    cls: str
    cycles: float
    stall: float
    cause: str


@dataclass
class TracedLaunch:
    """A traced run of some workgroups of a launch, and the launch.

    `edges`: the CFG edges (column order of `counts`); `counts[w, e]`: how often sampled wave w took
    edge e; `wave_workgroup[w]`: its flat workgroup id; `weight[w]`: full-grid waves it stands for.
    `memory[pc]`: (bytes, lines, {buffer index: bytes}) its global accesses moved in the sample;
    `buffer_bytes`: the launch's buffer sizes by allocation index; `classes`: each sampled
    workgroup's grid class (for the sampling error)."""

    edges: list[tuple[int, int]]
    counts: np.ndarray
    wave_workgroup: np.ndarray
    weight: np.ndarray
    memory: dict[int, tuple[int, int, dict[int, int]]]
    buffer_bytes: list[int]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_lds: int = 0
    classes: dict[int, tuple] = field(default_factory=dict)

    @property
    def workgroups(self) -> int:
        return math.prod(self.grid)

    @property
    def sampled_workgroups(self) -> int:
        return len(np.unique(self.wave_workgroup))


@dataclass
class Estimate:
    """The model's answer for one launch; times in cycles of `gpu` unless named `_us`."""

    gpu: str
    model_cycles: float
    predicted_us: float
    bound: str
    terms: dict[str, float]
    occupancy: Occupancy
    mean_wave_cycles: float
    max_wave_cycles: float
    unit_cycles: dict[str, float]
    stall_cycles: dict[str, float]
    per_pc: dict[int, PcCost]
    hbm_bytes: float
    hbm_floor_us: float
    compute_floor_us: float
    sampled_workgroups: int
    workgroups: int
    sampling_error: float
    sample: list[int] = field(default_factory=list)
    overhead_cycles: float = 0.0
    load_latency: dict[int, float] = field(default_factory=dict)
    lines_per_execution: dict[int, float] = field(default_factory=dict)  # pc -> cache lines one execution touched
    traced: TracedLaunch | None = field(default=None, repr=False)  # the trace it was costed from
    unit: str = "model_us"

    def rescaled(self, latency: float, issue: float, lines: float = 1.0, vgprs: int | None = None,
                 lds: float = 1.0) -> float:
        """The prediction, in model_us, with the latency term scaled by `latency` and the SIMD issue
        term by `issue`, the cache-line terms (vector memory path, L2) by `lines`, the LDS term by
        `lds` (the ratio of LDS bytes), and, given a different VGPR allocation `vgprs`, the latency
        term's rounds of resident workgroups recounted (an edit's predicted effect; the HBM term
        unchanged)."""
        rounds = 1.0
        if vgprs is not None and vgprs != self.occupancy.vgprs:
            g, occ = gpu(self.gpu), self.occupancy
            per_cu = -(-self.workgroups // g.cus)
            fewer = resident(vgprs, occ.sgprs, occ.lds_bytes, occ.waves_per_workgroup, g).workgroups_per_cu
            rounds = -(-per_cu // fewer) / -(-per_cu // occ.workgroups_per_cu)
        terms = dict(self.terms, latency=self.terms["latency"] * latency * rounds,
                     simd_issue=self.terms["simd_issue"] * issue, vmem_path=self.terms["vmem_path"] * lines,
                     l2_bandwidth=self.terms["l2_bandwidth"] * lines, lds=self.terms["lds"] * lds)
        return (max(terms.values()) + self.overhead_cycles) / self.model_cycles * self.predicted_us

    def at(self, clock_hz: float, hbm_bytes_per_s: float, launch_us: float) -> float:
        """The prediction, in model_us, on the same GPU run at another sustained clock, achievable HBM
        bandwidth and launch overhead: every term but HBM's is in cycles and does not depend on them
        (for fitting those constants without re-costing the trace)."""
        terms = dict(self.terms, hbm_bandwidth=self.hbm_bytes * clock_hz / hbm_bytes_per_s)
        return (max(terms.values()) / clock_hz + launch_us * 1e-6) * 1e6

    def to_json(self) -> dict:
        return {"unit": self.unit, "gpu": self.gpu, "predicted_us": self.predicted_us,
                "model_cycles": self.model_cycles, "bound": self.bound, "terms": self.terms,
                "hbm_floor_us": self.hbm_floor_us, "compute_floor_us": self.compute_floor_us,
                "hbm_bytes": self.hbm_bytes, "sampled_workgroups": self.sampled_workgroups,
                "workgroups": self.workgroups, "sampling_error": self.sampling_error,
                "mean_wave_cycles": self.mean_wave_cycles, "max_wave_cycles": self.max_wave_cycles,
                "occupancy": self.occupancy.__dict__, "unit_cycles": self.unit_cycles,
                "stall_cycles": self.stall_cycles}

    def to_dict(self) -> dict:
        """Every field but `traced`, as JSON-serialisable values (`to_json` is the report's summary);
        `Estimate.from_dict` reads it back to an equal Estimate without its trace."""
        return {"gpu": self.gpu, "model_cycles": self.model_cycles, "predicted_us": self.predicted_us,
                "bound": self.bound, "terms": self.terms, "occupancy": self.occupancy.__dict__,
                "mean_wave_cycles": self.mean_wave_cycles, "max_wave_cycles": self.max_wave_cycles,
                "unit_cycles": self.unit_cycles, "stall_cycles": self.stall_cycles,
                "per_pc": [[pc, c.count, c.cls, c.cycles, c.stall, c.cause] for pc, c in self.per_pc.items()],
                "hbm_bytes": self.hbm_bytes, "hbm_floor_us": self.hbm_floor_us,
                "compute_floor_us": self.compute_floor_us, "sampled_workgroups": self.sampled_workgroups,
                "workgroups": self.workgroups, "sampling_error": self.sampling_error, "sample": list(self.sample),
                "overhead_cycles": self.overhead_cycles, "load_latency": [[pc, v] for pc, v in self.load_latency.items()],
                "lines_per_execution": [[pc, v] for pc, v in self.lines_per_execution.items()], "unit": self.unit}

    @classmethod
    def from_dict(cls, d: dict) -> "Estimate":
        """The Estimate `to_dict` wrote (`traced` None)."""
        return cls(**{**d, "occupancy": Occupancy(**d["occupancy"]),
                      "per_pc": {pc: PcCost(*rest) for pc, *rest in d["per_pc"]},
                      "load_latency": {pc: v for pc, v in d["load_latency"]},
                      "lines_per_execution": {pc: v for pc, v in d["lines_per_execution"]}})


def _block_counts(cfg, edges, counts) -> np.ndarray:
    """Per wave, executions of each block: [waves, blocks]."""
    out = np.zeros((counts.shape[0], len(cfg.blocks)), np.float64)
    for col, (_, b) in enumerate(edges):
        out[:, b] += counts[:, col]
    return out


def estimate(instructions: list[Instruction], kernel: Kernel, run: TracedLaunch, gpu: GPU,
             latencies: Latencies = DEFAULT_LATENCIES) -> Estimate:
    """Model the launch `run` samples on `gpu`."""
    if not len(run.counts):
        raise ModelError("cannot model a launch that ran no waves")
    cfg = build_cfg(instructions)
    block_of_pc = {ins.address: cfg.block_of[i] for i, ins in enumerate(instructions)}
    blocks = _block_counts(cfg, run.edges, run.counts)                  # sampled [waves, blocks]
    full_blocks = run.weight @ blocks                                    # full-grid executions per block
    sample_blocks = blocks.sum(axis=0)

    requested = np.zeros(len(run.buffer_bytes))
    load_latency: dict[int, float] = {}
    lines_per_execution: dict[int, float] = {}
    traffic = {"bytes": 0.0, "lines": 0.0}
    for pc, (nbytes, lines, by_buffer) in run.memory.items():
        b = block_of_pc.get(pc)
        if b is None or not sample_blocks[b]:
            continue
        scale = full_blocks[b] / sample_blocks[b]
        lines_per_execution[pc] = float(lines / sample_blocks[b])
        traffic["bytes"] += nbytes * scale
        traffic["lines"] += lines * scale
        for buf, n in by_buffer.items():
            requested[buf] += n * scale
    sizes = np.asarray(run.buffer_bytes, np.float64)
    reuse = np.where(sizes > 0, requested / np.maximum(sizes, 1), 0.0)
    for pc, (_, _, by_buffer) in run.memory.items():
        total = sum(by_buffer.values())
        if total:
            hit = sum(n * (1 - 1 / max(reuse[buf], 1.0)) for buf, n in by_buffer.items()) / total
            load_latency[pc] = hit * latencies.l2 + (1 - hit) * latencies.hbm

    processor = gpu.processor.name
    cost_of = _cost_with(load_latency, latencies, processor)

    taken = {e: float(run.counts[:, col].sum()) for col, e in enumerate(run.edges)}
    schedules = edge_schedules(cfg, taken, cost_of, processor)
    lengths = np.array([schedules[e].length if e in schedules else 0.0 for e in run.edges])
    wave_cycles = run.counts @ lengths                                    # per sampled wave

    # Per-instruction costs over the full grid, and per-wave unit occupancy.
    full_edges = run.weight @ run.counts
    per_pc: dict[int, PcCost] = {}
    stalls: dict[str, float] = {}
    units = {"valu": 0.0, "mfma": 0.0, "salu": 0.0, "branch": 0.0, "lds": 0.0, "vmem": 0.0}
    lds_volume = 0.0
    wave_size = gpu.processor.wave_size
    for col, e in enumerate(run.edges):
        sch = schedules.get(e)
        n = float(full_edges[col])
        if sch is None or not n:
            continue
        blk = cfg.blocks[e[1]]
        for ins, slot in zip(instructions[blk.start:blk.end], sch.slots):
            c = cost_of(ins)
            pc = per_pc.setdefault(ins.address, PcCost(0.0, slot.cls, 0.0, 0.0, ""))
            pc.count += n
            pc.cycles += n * (slot.issue + slot.stall)
            pc.stall += n * slot.stall
            if slot.stall:
                pc.cause = pc.cause or slot.cause
                stalls[slot.cause] = stalls.get(slot.cause, 0.0) + n * slot.stall
            _add_units(units, c, n)
            lds_volume += n * lds_bytes(c, wave_size)
    for ins in instructions:
        per_pc.setdefault(ins.address, PcCost(0.0, cost(ins, latencies, processor).cls, 0.0, 0.0, ""))

    occ = occupancy(kernel, run.block, run.dynamic_lds, gpu)
    wg_ids = np.unique(run.wave_workgroup)
    wg_cycles = np.array([wave_cycles[run.wave_workgroup == w].max() for w in wg_ids])
    wg_weight = np.array([run.weight[run.wave_workgroup == w][0] for w in wg_ids])
    mean_wg = float(np.average(wg_cycles, weights=wg_weight))
    per_cu = -(-run.workgroups // gpu.cus)
    rounds = -(-per_cu // occ.workgroups_per_cu)
    simds = gpu.cus * gpu.simds_per_cu
    hbm_bytes = float(np.minimum(requested, sizes).sum())
    hbm_per_cycle = gpu.hbm_bytes_per_s / gpu.clock_hz
    terms = {
        "latency": rounds * mean_wg + float(wg_cycles.max()) - mean_wg,
        "simd_issue": max(units["valu"], units["mfma"], units["salu"], units["branch"]) / simds,
        "lds": lds_volume / (LDS_BYTES_PER_CYCLE * gpu.cus),
        "vmem_path": traffic["lines"] * LINE_BYTES / (VMEM_BYTES_PER_CYCLE_PER_CU * gpu.cus),
        "l2_bandwidth": traffic["lines"] * LINE_BYTES / (L2_BYTES_PER_CYCLE_PER_XCD * gpu.xcds),
        "hbm_bandwidth": hbm_bytes / hbm_per_cycle,
    }
    bound = max(terms, key=lambda k: terms[k])
    overhead = gpu.us_to_cycles(gpu.launch_us)
    cycles = terms[bound] + overhead
    compute_floor = max(units["valu"], units["mfma"]) / simds
    return Estimate(gpu.name, cycles, gpu.cycles_to_us(cycles), bound, terms, occ,
                    float(np.average(wave_cycles, weights=run.weight)), float(wave_cycles.max()),
                    {k: v / max(float(run.weight.sum()), 1.0) for k, v in units.items()}, stalls, per_pc,
                    hbm_bytes, gpu.cycles_to_us(terms["hbm_bandwidth"]), gpu.cycles_to_us(compute_floor),
                    run.sampled_workgroups, run.workgroups, sampling_error(run, wg_ids, wg_cycles, wg_weight),
                    sorted(run.classes), overhead, load_latency, lines_per_execution, run)


def sampling_error(run: TracedLaunch, wg_ids: np.ndarray, wg_cycles: np.ndarray, wg_weight: np.ndarray) -> float:
    """Relative standard error of the extrapolated total workgroup time: per grid class, the
    variance of its sampled workgroups' times scaled to the class (with the finite-population
    correction); a class sampled once, or wholly, adds none."""
    total = float((wg_cycles * wg_weight).sum())
    if not total:
        return 0.0
    by_class: dict[tuple, list[float]] = {}
    size: dict[tuple, float] = {}
    for w, c, wt in zip(wg_ids, wg_cycles, wg_weight):
        key = run.classes.get(int(w), ())
        by_class.setdefault(key, []).append(float(c))
        size[key] = size.get(key, 0.0) + float(wt)
    var = 0.0
    for key, xs in by_class.items():
        n, big_n = len(xs), size[key]
        if n > 1 and big_n > n:
            var += big_n ** 2 * float(np.var(xs, ddof=1)) / n * (1 - n / big_n)
    return math.sqrt(var) / total


def _edge_counts(cfg, counts: list[float]) -> dict[tuple[int, int], float]:
    """Edge counts from block counts alone (a prediction has no trace): p -> b gets all of p's when
    b is p's only successor, p's minus its other successor's when that one is entered only from p
    (a skipped block, a loop exit), else p's, and never more than b's (both upper bounds); the entry
    block gets one entry per execution not explained by its predecessors. A block those rules leave
    entered fewer times than it ran gets the rest on the edge from the predecessor with the most
    executions not yet leaving it (from the kernel's entry when it has none): every execution of every
    block is costed, so a layout edit cannot predict a loop's iterations away."""
    out: dict[tuple[int, int], float] = {}
    for b in cfg.blocks:
        for p in b.preds:
            others = [s for s in cfg.blocks[p].succs if s != b.index]
            if len(others) == 1 and cfg.blocks[others[0]].preds == [p]:
                n = min(max(0.0, counts[p] - counts[others[0]]), counts[b.index])
            else:
                n = min(counts[p], counts[b.index])
            if n:
                out[(p, b.index)] = n
    entered = sum(n for (p, b), n in out.items() if b == 0)
    out[(ENTRY, 0)] = max(counts[0] - entered, 1.0 if counts[0] else 0.0)
    into, leaving = [0.0] * len(counts), [0.0] * len(counts)
    for (p, b), n in out.items():
        into[b] += n
        if p != ENTRY:
            leaving[p] += n
    for b in cfg.blocks[1:]:
        rest = counts[b.index] - into[b.index]
        if rest <= 0:
            continue
        p = max(b.preds, key=lambda q: (counts[q] - leaving[q], counts[q], -q)) if b.preds else ENTRY
        out[(p, b.index)] = out.get((p, b.index), 0.0) + rest
        if p != ENTRY:
            leaving[p] += rest
    return out


def static_cost(instructions: list[Instruction], pc_counts: dict[int, float], latencies: Latencies = DEFAULT_LATENCIES,
                load_latency: dict[int, float] | None = None,
                processor: str = "gfx942") -> tuple[float, dict[str, float], float]:
    """(issue + stall cycles summed over executions, unit cycles per class, LDS bytes) of `instructions`
    (of `processor`) run the given number of times per address, with no trace: for predicting an edit
    from its parent's counts. The LDS bytes are counted as `estimate` counts its LDS term's, so at a
    launch's own counts they over 128 B per cycle per CU are that term. `load_latency` overrides
    vector-load latencies by address."""
    cfg = build_cfg(instructions)
    counts = [float(pc_counts.get(instructions[b.start].address, 0.0)) for b in cfg.blocks]
    cost_of = _cost_with(load_latency or {}, latencies, processor)
    edges = _edge_counts(cfg, counts)
    schedules = edge_schedules(cfg, edges, cost_of, processor)
    total = sum(n * schedules[e].length for e, n in edges.items() if e in schedules)
    units = {"valu": 0.0, "mfma": 0.0, "salu": 0.0, "branch": 0.0}
    lds, wave_size = 0.0, target_processor(processor).wave_size
    for b, n in zip(cfg.blocks, counts):
        for ins in instructions[b.start:b.end]:
            c = cost_of(ins)
            _add_units(units, c, n)
            lds += n * lds_bytes(c, wave_size)
    return total, units, lds
