"""The emulator's timing: a deterministic cycle model of an MI300X (gfx942) launch, in `model_cycles`.

Per basic block, one wave's in-order issue is simulated with per-class issue costs, result
latencies and `s_waitcnt`/barrier stalls; the block schedules are weighted by the emulator's
per-PC counts and combined with occupancy, per-SIMD/per-CU unit throughput and an HBM/L2
bandwidth floor. Numbers and sources are in docs/cycle_model.md. It ranks candidates; it is not
a prediction of milliseconds.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .codeobj import CodeObject, Kernel
from .device.launch import LaunchSpec
from .emu.mfma import info as mfma_info
from .errors import AsmEvoError
from .isa.cfg import CFG, build_cfg
from .isa.instruction import Instruction
from .isa.regs import base_mnemonic as _split_mnemonic
from .isa.regs import is_trans, reg_info


class CycleModelError(AsmEvoError):
    """The cycle model cannot cost this kernel (unknown instruction shape, inconsistent counts)."""


@dataclass(frozen=True)
class Machine:
    """One MI300X: numbers from the CDNA3 whitepaper / ISA guide, latencies as documented."""

    name: str = "MI300X"
    cus: int = 304
    simds_per_cu: int = 4
    clock_hz: float = 2.1e9
    hbm_bytes_per_s: float = 5.3e12
    l2_bytes_per_cycle: float = 8 * 16 * 128      # 8 XCDs x 16 channels x 128 B/clk
    vgprs_per_lane: int = 512                      # unified VGPR+AGPR file per SIMD lane
    vgpr_granule: int = 8
    sgprs_per_simd: int = 800
    sgpr_granule: int = 16
    max_waves_per_simd: int = 8
    max_workgroups_per_cu: int = 16
    lds_bytes_per_cu: int = 65536
    lds_granule: int = 512
    lds_bytes_per_cycle: int = 128                 # per CU
    vmem_bytes_per_cycle: int = 64                 # per CU, vector L1 / texture-address path
    issue: int = 4                                 # a wave issues at most once per 4 cycles
    trans: int = 16                                # quarter-rate VALU ops
    smem_latency: int = 200
    vmem_latency: int = 700
    lds_latency: int = 64
    branch: int = 8
    barrier: int = 32

    @property
    def hbm_bytes_per_cycle(self) -> float:
        return self.hbm_bytes_per_s / self.clock_hz


MI300X = Machine()

# 32-bit integer multiplies run at quarter rate like the transcendentals (GCN/CDNA VALU).
_QUARTER_RATE_INT = frozenset({"v_mul_lo_u32", "v_mul_hi_u32", "v_mul_hi_i32", "v_mad_u64_u32", "v_mad_i64_i32"})
_WIDTH_RE = re.compile(r"(dwordx(\d)|dword|b128|b96|b64|b32|b16|b8|u16|i16|u8|i8|short|ushort|sshort|byte|ubyte|sbyte)")
_WIDTH = {"dword": 4, "b128": 16, "b96": 12, "b64": 8, "b32": 4, "b16": 2, "b8": 1, "u16": 2, "i16": 2,
          "u8": 1, "i8": 1, "short": 2, "ushort": 2, "sshort": 2, "byte": 1, "ubyte": 1, "sbyte": 1}
_WAITCNT_RE = re.compile(r"^(vmcnt|lgkmcnt|expcnt)\((\d+)\)$")


def base_mnemonic(mnemonic: str) -> str:
    """The mnemonic without its encoding suffix, gfx90a MFMA spellings mapped to gfx940 names."""
    return _split_mnemonic(mnemonic)[0]


def mfma_passes(mnemonic: str) -> int:
    """Matrix-core passes (4 cycles each) of an MFMA, from the emulator's CDNA3 MFMA table."""
    return mfma_info(base_mnemonic(mnemonic)).passes


def access_bytes(mnemonic: str) -> int:
    """Bytes per lane (VMEM, LDS) or per wave (SMEM) that a memory instruction moves."""
    name = base_mnemonic(mnemonic)
    m = _WIDTH_RE.search(name.split("_", 1)[1])
    if not m:
        return 4
    n = int(m.group(2)) * 4 if m.group(2) else _WIDTH[m.group(1)]
    return 2 * n if "read2" in name or "write2" in name else n


@dataclass(frozen=True)
class Cost:
    """How one instruction occupies a wave and the machine.

    `cls` is its class; `issue` the cycles the wave is busy issuing it; `latency` when its
    results are ready (from issue); `unit` the cycles it holds a shared unit (`valu`/`mfma`/`salu`
    per SIMD, `lds`/`vmem` per CU); `counters` the waitcnt counters it increments; `bytes` the
    bytes per lane it moves (memory only).
    """

    cls: str
    issue: int
    latency: int
    unit: int
    counters: tuple[str, ...] = ()
    bytes: int = 0


def cost(ins: Instruction, machine: Machine = MI300X) -> Cost:
    """The cost of one instruction on `machine`."""
    name = base_mnemonic(ins.mnemonic)
    m = machine
    if name.startswith(("v_mfma", "v_smfmac")):
        cycles = 4 * mfma_passes(name)
        return Cost("mfma", m.issue, cycles + 4 * m.issue, cycles)
    if name.startswith(("global_", "buffer_", "scratch_", "flat_")):
        nbytes = access_bytes(name)
        counters = ("vm", "lgkm") if name.startswith("flat_") else ("vm",)
        store = "store" in name or ("atomic" in name and "glc" not in ins.modifiers)
        busy = max(m.issue, 64 * nbytes // m.vmem_bytes_per_cycle)
        return Cost("vmem_store" if store else "vmem_load", m.issue, m.vmem_latency, busy, counters, nbytes)
    if name.startswith("ds_"):
        nbytes = access_bytes(name)
        busy = max(m.issue, 64 * nbytes // m.lds_bytes_per_cycle)
        return Cost("lds", m.issue, m.lds_latency + busy, busy, ("lgkm",), nbytes)
    if name.startswith(("s_load", "s_buffer_load", "s_store", "s_buffer_store", "s_atomic", "s_buffer_atomic",
                        "s_memtime", "s_memrealtime", "s_dcache", "s_scratch")):
        return Cost("smem", m.issue, m.smem_latency, m.issue, ("lgkm",), access_bytes(name) if "load" in name else 0)
    if name.startswith("s_waitcnt"):
        return Cost("waitcnt", m.issue, 0, 0)
    if name == "s_barrier":
        return Cost("barrier", m.issue + m.barrier, 0, 0)
    if name in ("s_nop", "s_sleep"):
        n = int(ins.operands[0].value) if ins.operands and ins.operands[0].kind == "imm" else 0
        busy = n + 1 if name == "s_nop" else 64 * n
        return Cost("nop", max(m.issue, busy), 0, 0)
    if ins.is_branch or name in ("s_setpc_b64", "s_swappc_b64", "s_getpc_b64"):
        return Cost("branch", m.branch, m.branch, m.issue)
    if name == "s_sendmsg":
        return Cost("salu", m.issue, m.issue, m.issue, ("lgkm",))
    if name.startswith("s_"):
        return Cost("salu", m.issue, m.issue, m.issue)
    if is_trans(name) or name in _QUARTER_RATE_INT:
        return Cost("trans", m.trans, m.trans, m.trans)
    if name.startswith("v_"):
        return Cost("valu", m.issue, m.issue, m.issue)
    raise CycleModelError(f"no cost class for {ins.mnemonic}")


def waitcnt_limits(ins: Instruction) -> dict[str, int]:
    """Counter limits of an `s_waitcnt` ({"vm": n, "lgkm": n}); counters it leaves alone are absent."""
    limits: dict[str, int] = {}
    for mod in ins.modifiers:
        m = _WAITCNT_RE.match(mod)
        if m:
            if m.group(1) != "expcnt":
                limits[m.group(1)[:-3]] = int(m.group(2))
            continue
        try:
            imm = int(mod, 0)
        except ValueError:
            raise CycleModelError(f"unparsed s_waitcnt operand {mod!r}") from None
        limits = {"vm": (imm & 0xF) | ((imm >> 14) & 3) << 4, "lgkm": (imm >> 8) & 0xF}
    for op in ins.operands:
        if op.kind == "imm":
            imm = int(op.value)
            limits = {"vm": (imm & 0xF) | ((imm >> 14) & 3) << 4, "lgkm": (imm >> 8) & 0xF}
    if not ins.modifiers and not ins.operands:
        limits = {"vm": 0, "lgkm": 0}
    return limits


@dataclass
class SlotCost:
    """One instruction in a block schedule: busy cycles, stall cycles before it, and why it stalled."""

    pc: int
    cls: str
    issue: float
    stall: float
    cause: str


@dataclass
class WaveState:
    """Outstanding work at a point of a wave's schedule, times relative to that point."""

    pending: dict[str, list[tuple[float, str]]] = field(default_factory=lambda: {"vm": [], "lgkm": []})
    ready: dict[tuple[str, int], float] = field(default_factory=dict)
    xdl_free: float = 0.0

    def shifted(self, dt: float) -> "WaveState":
        """The same state seen `dt` cycles later (finished work dropped)."""
        return WaveState({k: [(t - dt, c) for t, c in v if t > dt] for k, v in self.pending.items()},
                         {r: t - dt for r, t in self.ready.items() if t > dt}, max(0.0, self.xdl_free - dt))


def schedule_block(instructions: list[Instruction], entry: WaveState | None = None,
                   machine: Machine = MI300X) -> tuple[list[SlotCost], WaveState, float]:
    """Simulate one wave issuing `instructions` in order from `entry`; returns per-instruction
    costs, the state at the block's end and the block's length in cycles."""
    st = entry.shifted(0.0) if entry else WaveState()
    t = 0.0
    out: list[SlotCost] = []
    for ins in instructions:
        c = cost(ins, machine)
        info = reg_info(ins)
        defs, uses = info.defs, info.uses
        start, cause = t, "dependency"
        ready = max((st.ready.get(r, 0.0) for r in uses), default=0.0)
        if c.cls == "waitcnt":
            for counter, limit in waitcnt_limits(ins).items():
                queue = sorted(st.pending[counter])
                if len(queue) > limit:
                    need, source = queue[len(queue) - limit - 1]
                    if need > ready:
                        ready, cause = need, f"waitcnt {source}"
                    st.pending[counter] = queue[len(queue) - limit:]
        if c.cls == "mfma" and st.xdl_free > ready:
            ready, cause = st.xdl_free, "matrix core busy"
        at = max(t, ready)
        stall = at - start
        for counter in c.counters:
            st.pending[counter].append((at + c.latency, c.cls))
        if c.cls == "mfma":
            st.xdl_free = at + c.unit
        if not c.counters:
            for r in defs:
                st.ready[r] = at + c.latency
        t = at + c.issue
        out.append(SlotCost(ins.address or 0, c.cls, float(c.issue), stall, cause if stall else ""))
    return out, st.shifted(t), t


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


def occupancy(kernel: Kernel, block: tuple[int, int, int], dynamic_lds: int = 0,
              machine: Machine = MI300X) -> Occupancy:
    """Occupancy of `kernel` launched with `block` work-items per workgroup.

    VGPRs: the descriptor's unified count ((g+1) x 8 on gfx90a/gfx942, arch + acc); waves/SIMD =
    min(8, 512 // vgprs). SGPRs: (g+1) x 8 rounded to 16, 800 per SIMD. LDS: fixed + dynamic,
    512-byte granules, 64 KiB per CU. Workgroups per CU: at most 16 (barrier slots) unless one wave.
    """
    f = kernel.descriptor.fields
    m = machine
    vgprs = (f["granulated_workitem_vgpr_count"] + 1) * m.vgpr_granule
    sgprs = -(-(f["granulated_wavefront_sgpr_count"] + 1) * 8 // m.sgpr_granule) * m.sgpr_granule
    lds = kernel.descriptor.group_segment_fixed_size + dynamic_lds
    lds = -(-lds // m.lds_granule) * m.lds_granule
    wpg = -(-(block[0] * block[1] * block[2]) // 64)
    limits = {"waves": m.max_waves_per_simd, "vgprs": m.vgprs_per_lane // vgprs,
              "sgprs": m.sgprs_per_simd // sgprs}
    per_simd_limiter = min(limits, key=lambda k: (limits[k], k != "waves"))
    per_simd = limits[per_simd_limiter]
    if per_simd == 0:
        raise CycleModelError(f"kernel {kernel.name} cannot be resident ({vgprs} VGPRs, {sgprs} SGPRs)")
    wg_limits = {per_simd_limiter: (per_simd * m.simds_per_cu) // wpg,
                 "barriers": m.max_workgroups_per_cu if wpg > 1 else per_simd * m.simds_per_cu}
    if lds:
        wg_limits["lds"] = m.lds_bytes_per_cu // lds
    limiter = min(wg_limits, key=lambda k: (wg_limits[k], k != per_simd_limiter))
    wgs = wg_limits[limiter]
    if wgs == 0:
        raise CycleModelError(f"kernel {kernel.name}: a workgroup of {wpg} waves does not fit on a CU "
                              f"({limiter})")
    return Occupancy(vgprs, sgprs, lds, wpg, wgs, wgs * wpg / m.simds_per_cu, limiter)


@dataclass
class PcCost:
    """Modelled cost of one instruction address over the whole launch (summed over waves)."""

    count: int
    cls: str
    cycles: float
    stall: float
    cause: str


@dataclass
class CycleEstimate:
    """The model's answer for one launch: `model_cycles` and the terms it is the maximum of."""

    model_cycles: int
    bound: str
    terms: dict[str, float]
    occupancy: Occupancy
    per_wave_cycles: float
    unit_cycles: dict[str, float]
    stall_cycles: dict[str, float]
    per_pc: dict[int, PcCost]
    machine: str = MI300X.name
    unit: str = "model_cycles"

    def to_json(self) -> dict:
        return {"unit": self.unit, "model_cycles": self.model_cycles, "bound": self.bound,
                "machine": self.machine, "terms": self.terms, "per_wave_cycles": self.per_wave_cycles,
                "occupancy": self.occupancy.__dict__, "unit_cycles": self.unit_cycles,
                "stall_cycles": self.stall_cycles}


def edge_count(cfg: CFG, counts: list[int], p: int, b: int) -> int:
    """Executions of the CFG edge p -> b, from block counts: all of p's when b is its only successor;
    p's minus those of its other successor when that successor is entered only from p (a skipped
    `s_cbranch_execz` block or a loop exit); otherwise p's count (an upper bound)."""
    others = [s for s in cfg.blocks[p].succs if s != b]
    if len(others) == 1 and cfg.blocks[others[0]].preds == [p]:
        return max(0, counts[p] - counts[others[0]])
    return counts[p]


def _block_schedules(cfg: CFG, counts: list[int], machine: Machine) -> list[tuple[list[SlotCost], float]]:
    """Schedule every block; a block starts from the end state of the predecessor on its most
    executed incoming edge (two passes in address order, so loop back edges carry their outstanding
    memory operations)."""
    ins = cfg.instructions
    ends: dict[int, WaveState] = {}
    out: list[tuple[list[SlotCost], float]] = [([], 0.0)] * len(cfg.blocks)
    for _ in range(2):
        for b in cfg.blocks:
            preds = [p for p in b.preds if p in ends]
            key = lambda p: (edge_count(cfg, counts, p, b.index), counts[p], -p)
            entry = ends[max(preds, key=key)] if preds else None
            slots, end, length = schedule_block(ins[b.start:b.end], entry, machine)
            ends[b.index] = end
            out[b.index] = (slots, length)
    return out


def estimate(instructions: list[Instruction], kernel: Kernel, pc_counts: dict[int, int], *, waves: int,
             grid: tuple[int, int, int], block: tuple[int, int, int], dynamic_lds: int = 0,
             footprint_bytes: int = 0, machine: Machine = MI300X) -> CycleEstimate:
    """Model one launch from its instructions, the emulator's per-PC counts (summed over waves) and
    its geometry. `footprint_bytes` is the distinct global memory the launch touches (its buffers),
    the least HBM traffic it can cause."""
    if waves <= 0:
        raise CycleModelError("cannot model a launch that ran no waves")
    cfg = build_cfg(instructions)
    counts = [pc_counts.get(instructions[b.start].address, 0) for b in cfg.blocks]
    schedules = _block_schedules(cfg, counts, machine)
    per_pc: dict[int, PcCost] = {}
    units = {"valu": 0.0, "mfma": 0.0, "salu": 0.0, "lds": 0.0, "vmem": 0.0}
    stalls: dict[str, float] = {}
    total = 0.0
    vmem_bytes = 0.0
    for b, (slots, length) in zip(cfg.blocks, schedules):
        n = counts[b.index]
        total += n * length
        for ins, slot in zip(instructions[b.start:b.end], slots):
            c = cost(ins, machine)
            n_pc = pc_counts.get(ins.address, 0)
            per_pc[ins.address] = PcCost(n_pc, c.cls, n_pc * (slot.issue + slot.stall), n_pc * slot.stall, slot.cause)
            if slot.stall:
                stalls[slot.cause] = stalls.get(slot.cause, 0.0) + n_pc * slot.stall
            key = {"trans": "valu", "vmem_load": "vmem", "vmem_store": "vmem", "smem": "salu",
                   "branch": "salu"}.get(c.cls, c.cls)
            if key in units:
                units[key] += n_pc * c.unit
            if c.cls.startswith("vmem"):
                vmem_bytes += n_pc * c.bytes * 64
    occ = occupancy(kernel, block, dynamic_lds, machine)
    m = machine
    num_wg = grid[0] * grid[1] * grid[2]
    wg_per_cu = -(-num_wg // m.cus)
    rounds = -(-wg_per_cu // occ.workgroups_per_cu)
    per_wave = total / waves
    waves_per_cu = wg_per_cu * occ.waves_per_workgroup
    waves_per_simd = -(-waves_per_cu // m.simds_per_cu)
    simd_unit = max(units["valu"], units["mfma"], units["salu"]) / waves
    cu_unit = max(units["lds"], units["vmem"]) / waves
    terms = {
        "latency": rounds * per_wave,
        "simd_throughput": waves_per_simd * simd_unit,
        "cu_throughput": waves_per_cu * cu_unit,
        "hbm_bandwidth": footprint_bytes / m.hbm_bytes_per_cycle,
        "l2_bandwidth": vmem_bytes / m.l2_bytes_per_cycle,
    }
    bound = max(terms, key=lambda k: terms[k])
    return CycleEstimate(int(math.ceil(terms[bound])), bound, terms, occ, per_wave,
                         {k: v / waves for k, v in units.items()}, stalls, per_pc, machine.name)


def model_launch(code_object: CodeObject, spec: LaunchSpec, report, *, instructions: list[Instruction] | None = None,
                 machine: Machine = MI300X) -> CycleEstimate:
    """Model an emulated launch of `spec` from its RunReport (per-PC counts and waves); the
    footprint is the total size of the spec's buffers. `instructions` saves a disassembly."""
    footprint = sum(b.nbytes for b in spec.buffers.values())
    instructions = instructions or code_object.kernel_instructions(spec.kernel)
    return estimate(instructions, code_object.kernel(spec.kernel),
                    report.pc_counts, waves=report.waves, grid=spec.grid, block=spec.block,
                    dynamic_lds=spec.dynamic_lds, footprint_bytes=footprint, machine=machine)
