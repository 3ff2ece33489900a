"""The ISA facts the LLM agent's prompt carries for the kernel's processor (gfx942 / CDNA3, gfx950 /
CDNA4), rendered from the tables the gates and the cost model use, so the prompt states exactly what
the checks enforce and the model charges:

- memory latencies: `model.costs.DEFAULT_LATENCIES` (each cited in docs/cycle_model.md);
- `s_waitcnt` rules: the counters and maxima of `target.processor(name).waitcnt` and the rules the
  static check (`isa.waitcnt`) applies;
- hazards: `isa.hazards.FIXED_WAITS` (the CDNA3 ISA guide's manually inserted wait states and LLVM's
  GCNHazardRecognizer, gfx940 and gfx950) and `isa.hazards.mfma_result_wait` for the processor;
- MFMA register layouts of the MFMAs the kernel issues: `emu.mfma` (README_mfma.md derives and checks
  them), with the shapes and passes of the processor's instruction table, and the VALU an FP32/FP64 MFMA
  holds (`model.costs.VALU_HOLD_SLOTS`).
"""
from __future__ import annotations

from ..isa.hazards import FIXED_WAITS, mfma_result_wait
from ..isa.instruction import Instruction
from ..isa.table import instr_info
from ..model.costs import DEFAULT_LATENCIES, SLOT, VALU_HOLD_SLOTS
from ..target import gpus_of, processor


def target_text(name: str) -> str:
    """How the prompt names processor `name`: e.g. `gfx942 (MI300X, CDNA3, wave64)` (its first GPU record)."""
    proc = processor(name)
    return f"{name} ({gpus_of(name)[0].name.upper()}, {proc.family}, wave{proc.wave_size})"


def cdna3_facts(instructions: list[Instruction]) -> str:
    """The facts section of the prompt for a gfx942 kernel issuing `instructions`."""
    return isa_facts(instructions, "gfx942")


def isa_facts(instructions: list[Instruction], name: str) -> str:
    """The facts section of the prompt for a kernel of processor `name` issuing `instructions`."""
    lat = DEFAULT_LATENCIES
    proc = processor(name)
    maxima = proc.waitcnt.maxima
    out = [f"{proc.family} facts (what the static checks enforce and the cycle model charges):",
           f"- Latencies (cycles, issue to done): global load missing the caches {lat.hbm:g}, L2 hit {lat.l2:g}, "
           f"L1 hit {lat.l1:g}; global store {lat.store:g}; scalar load {lat.smem:g}; LDS {lat.lds:g}. "
           f"A wave64 VALU instruction occupies its SIMD for {SLOT} cycles.",
           f"- s_waitcnt: vmcnt (max {maxima['vmcnt']}) counts global/buffer/flat loads, stores and atomics, which "
           f"complete in issue order, so vmcnt(N) waits until at most the N newest are pending. lgkmcnt (max "
           f"{maxima['lgkmcnt']}) counts LDS (in order) and scalar loads/messages (out of order: only lgkmcnt(0) "
           f"guarantees a scalar load). A register must not be read, nor overwritten, while a load writing it may "
           f"be pending; LDS accesses must be waited for before s_barrier.",
           "- Hazards: wait states (independent instructions, or s_nop N = N+1 states) required between:"]
    out += [f"  {states}: {text}" for states, text in FIXED_WAITS.values()]
    mfmas = sorted({ins.mnemonic for ins in instructions if instr_info(ins.mnemonic, name).mfma is not None})
    for mnemonic in mfmas:
        out.append(_mfma_line(mnemonic, name))
    return "\n".join(out)


def _mfma_line(mnemonic: str, name: str = "gfx942") -> str:
    """Shape, passes, result hazard and register layouts of one MFMA of processor `name` (as `emu.mfma`
    implements them)."""
    f = instr_info(mnemonic, name).mfma
    head = (f"- {mnemonic}: D[{f.m}x{f.n}] = A[{f.m}x{f.k}] B[{f.k}x{f.n}] + C per block, {f.blocks} block(s), "
            f"{f.passes} passes; its result may be read {mfma_result_wait(mnemonic, processor=name)} wait states "
            f"after issue ({mfma_result_wait(mnemonic, memory=True, processor=name)} by a memory instruction).")
    if not f.xdl:
        head += (f" FP32/FP64 inputs: no VALU co-executes, none issues until {f.passes + VALU_HOLD_SLOTS} slots after "
                 f"it (the cost model charges this).")
    if f.sparse:
        return head
    if f.in_type == "f8f6f4":  # the operand formats, and so the registers per lane, are cbsz / blgp's
        return head + (f" A and B hold {f.m * f.k * f.blocks // 64} elements per lane in the formats cbsz and blgp "
                       f"name (0 fp8, 1 bf8, 2 fp6, 3 bf6, 4 fp4); see asmevo/emu/README_mfma.md.")
    e = f.m * f.k * f.blocks // 64
    inputs = (f" A[b][i][k] is element k%{e} of lane i + {f.m}*b + {f.m * f.blocks}*(k//{e}) in {f.a_regs} VGPR(s) "
              f"(B likewise with column j for row i).")
    if f.out_type == "f64":
        return head + inputs + " D (f64) uses register pairs; see asmevo/emu/README_mfma.md."
    slots, groups = 64 // f.n, f.m // 4
    t = f"b*{groups} + i//4" if groups >= slots else f"(i//4)*{slots // groups} + b"
    return head + inputs + (f" D[b][i][j] is in register 4*(t//{slots}) + i%4 of {f.cd_regs}, lane {f.n}*(t%{slots}) + j, "
                            f"with t = {t}.")
