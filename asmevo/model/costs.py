"""What one instruction costs a wave and the machine, in GPU clock cycles.

Compute instructions take their latency and throughput from the instruction table (LLVM's gfx940
scheduling model, in 4-cycle issue slots: a wave64 instruction occupies a SIMD16 for 4 cycles).
Memory latencies are `Latencies`; every number is cited in docs/cycle_model.md.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..isa.hazards import instruction_passes
from ..isa.instruction import Instruction
from ..isa.table import InstrInfo, instr_info

SLOT = 4  # cycles per issue slot: one wave64 instruction on a SIMD16 (ROCm HIP "hardware implementation")


@dataclass(frozen=True)
class Latencies:
    """Memory-system latencies in cycles from issue to completion (docs/cycle_model.md cites each).

    `hbm`: a vector load that misses the caches (pyhip mem_latency.md: 500-800 on MI308X).
    `l2`: a vector load hitting L2; `l1`: hitting the CU's vector L1 (Chips and Cheese, MI300X).
    `store`: a vector store until vmcnt counts it done (the write-back L2 acknowledges it).
    `smem`: a scalar load from the scalar cache (LLVM WriteSMEM, 5 slots).
    `lds`: an LDS access (pyhip: 50-55 cycles). The fixed launch cost is the GPU's (`GPU.launch_us`).
    """

    hbm: float = 650.0
    l2: float = 230.0
    l1: float = 120.0
    store: float = 300.0
    smem: float = 5 * SLOT
    lds: float = 52.0


DEFAULT_LATENCIES = Latencies()
# A branch issues in one slot like any scalar instruction; taking it redirects instruction fetch, which
# costs LLVM SISchedule's WriteBranch (8 slots, a heuristic; no CDNA3 measurement exists) in all. A
# branch that falls through keeps the sequential fetch and costs its issue slot only (charging every
# branch 8 slots let the search "win" by deleting never-taken skip branches; see docs/cycle_model.md).
TAKEN_BRANCH_SLOTS = 8
BARRIER_SLOTS = 8       # a workgroup barrier's release, as a taken branch (assumption: waves arrive together)
LDS_BYTES_PER_CYCLE = 128  # per CU: 32 banks x 4 B (ROCm Compute Profiler "Pipeline descriptions")
# An MFMA with FP32 or FP64 inputs (SGEMM, DGEMM: not the XDL pipeline) cannot co-execute with VALU work (AMD
# Matrix Instruction Calculator, CDNA3 table: `coexec` false for exactly these); its SIMD issues no VALU
# instruction until its passes + 2 slots after its issue (LLVM PR #233721, getVALUIssueCycle: rules fitted to
# ATT thread traces on MI308X and MI350X), so its SIMD's VALU issue and its passes never overlap.
VALU_HOLD_SLOTS = 2


@dataclass(frozen=True)
class Cost:
    """How one instruction occupies a wave and the machine.

    `cls`: its class (valu, trans, mfma, salu, smem, vmem_load, vmem_store, lds, branch, waitcnt,
    nop, barrier, sleep). `issue`: cycles the wave is busy issuing it. `latency`: cycles from issue
    until its register results can be read (memory: until its counter retires it, the memory
    model's). `unit`: cycles it holds the SIMD unit of its class. `counters`: waitcnt counters it
    increments. `bytes`: bytes per lane (vector memory, LDS) it moves. `holds_valu`: cycles from its
    issue during which its SIMD issues no VALU instruction (an FP32/FP64 MFMA's, `VALU_HOLD_SLOTS`)."""

    cls: str
    issue: float
    latency: float
    unit: float
    counters: tuple[str, ...] = ()
    bytes: int = 0
    holds_valu: float = 0.0


def _memory_cost(info: InstrInfo, ins: Instruction, lat: Latencies) -> Cost:
    counters = tuple(c for c, _ in info.counters)
    if info.family == "ds":
        busy = max(SLOT, 64 * info.access_bytes / LDS_BYTES_PER_CYCLE)
        return Cost("lds", SLOT, lat.lds + busy, busy, counters, info.access_bytes)
    if info.family == "smem":
        return Cost("smem", SLOT, lat.smem, SLOT, counters, info.access_bytes)
    store = info.is_store or (info.memory == "atomic" and ins.modifier("sc0") is None and ins.modifier("glc") is None)
    if store:
        return Cost("vmem_store", SLOT, lat.store, SLOT, counters, info.access_bytes)
    return Cost("vmem_load", SLOT, lat.hbm, SLOT, counters, info.access_bytes)


def cost(ins: Instruction, lat: Latencies = DEFAULT_LATENCIES, processor: str = "gfx942") -> Cost:
    """The cost of one instruction of `processor` (vector loads at the cache-miss latency; the launch
    model replaces it with each instruction's measured mix of hits and misses)."""
    info = instr_info(ins.mnemonic, processor)
    base = info.base
    if info.mfma is not None:
        # the table's passes are an f8f6f4 MFMA's with an 8-bit operand; with fp4/fp6 A and B it takes
        # half (LLVM SISchedule.td PredIsF8_MFMA_SCALE; MI355X data sheet: 10 PFLOPS dense MXFP4/MXFP6
        # against 5 PFLOPS dense FP8)
        passes = instruction_passes(ins, processor)
        fewer = info.mfma.passes - passes
        hold = 0.0 if info.mfma.xdl else SLOT * (passes + VALU_HOLD_SLOTS)
        return Cost("mfma", SLOT, SLOT * (info.latency - fewer), SLOT * (info.throughput - fewer), holds_valu=hold)
    if info.counters and info.family in ("flat", "mubuf", "ds", "smem"):
        return _memory_cost(info, ins, lat)
    if base == "s_waitcnt":
        return Cost("waitcnt", SLOT, 0, 0)
    if base == "s_barrier":
        return Cost("barrier", SLOT * BARRIER_SLOTS, 0, 0)
    if base == "s_nop":
        n = int(ins.operands[0].value) if ins.operands and ins.operands[0].kind == "imm" else 0
        return Cost("nop", SLOT * (n + 1), 0, 0)  # N+1 wait states, one issue slot each (CDNA3 ISA S_NOP)
    if base == "s_sleep":
        n = int(ins.operands[0].value) if ins.operands and ins.operands[0].kind == "imm" else 0
        return Cost("sleep", max(SLOT, 64 * n), 0, 0)  # CDNA3 ISA S_SLEEP: 64 x N clocks
    if ins.is_branch or base in ("s_setpc_b64", "s_swappc_b64"):
        return Cost("branch", SLOT, SLOT, SLOT)  # falling through; `schedule` adds the taken redirect
    if info.family in ("salu", "sopp", "smem"):
        return Cost("salu", SLOT, SLOT * info.latency, SLOT, tuple(c for c, _ in info.counters))
    return Cost("trans" if info.trans else "valu", SLOT * info.throughput, SLOT * info.latency, SLOT * info.throughput)


def lds_bytes(c: Cost, wave_size: int = 64) -> float:
    """Bytes one wave's execution of an instruction costing `c` moves through its CU's LDS: every lane's,
    whatever EXEC holds (ROCm Compute Profiler's LDS bandwidth example: a one-lane `ds_read_b32` takes two
    LDS cycles, 64 lanes x 4 B at 128 B per cycle); 0 for anything but an LDS instruction. Bank
    conflicts are not modelled: this is the conflict-free (the profiler's "theoretical") volume."""
    return wave_size * c.bytes if c.cls == "lds" else 0.0
