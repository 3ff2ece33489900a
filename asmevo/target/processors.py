"""Processor (ISA) descriptions: what a code object for one AMDGPU processor may assume.

One `Processor` record per target: gfx942 (CDNA3, MI300) and gfx950 (CDNA4, MI350/MI355X). Sources:
AMD's "AMD Instinct MI300 ISA Reference Guide" (CDNA3; register files, special registers, `s_waitcnt`
encoding) and "AMD Instinct CDNA4 ISA Reference Guide" (the same gfx9 register files, `s_waitcnt`
and apertures; 160 KiB LDS), LLVM's AMDGPUUsage ("Processors" table: gfx950 with architected flat
scratch and kernarg preload; "Kernel Descriptor", "Code Object V5 Metadata", "Kernarg Preload")
and AMDGPUBaseInfo (getNumExtraSGPRs, architected flat scratch), LLVM's GCNSubtarget / AMDGPU.td
(FeatureAddressableLocalMemorySize163840 for gfx950), and ROCm's "GPU architecture specs" table
(LDS per workgroup: 64 KiB on MI300, 160 KiB on MI350 series).

`not_emulated`: why the emulator refuses this processor's code; empty when it runs it.
`emulation_gaps`: what of the processor's ISA the emulator does not model yet (its instructions raise
`UnsupportedInstruction` when executed). `fp8_formats`: the `asmevo.emu.numeric` formats of the ISA's
"fp8" and "bf8" types: FNUZ on CDNA3, the OCP E4M3/E5M2 formats on CDNA4 (AMD's HIP headers,
amd_hip_ocp_cxx.hpp: with HIP_ENABLE_GFX950_OCP_BUILTINS the OCP E4M3 type converts through gfx950's
`__builtin_amdgcn_cvt_pk_fp8_f32`; amd_hip_ocp_host.hpp models gfx950's OCP encodings).
`min_llvm`: the oldest LLVM whose assembler and disassembler round-trip the processor's code. LLVM 19
is the first to disassemble gfx94x kernel descriptors; gfx950 arrived in LLVM 20, but its scaled
MFMA (`v_mfma_scale_*_f8f6f4`) encodings were only fixed in LLVM 21 (found when AsmEvo's issue #21
compared LLVM releases on AITer's gfx950 objects), so LLVM 21 is its minimum.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import AsmEvoError


class UnsupportedTarget(AsmEvoError):
    """A processor (or GPU) AsmEvo has no description of."""


@dataclass(frozen=True)
class TargetId:
    """`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-` split into processor and feature states."""

    processor: str
    sramecc: str | None  # None (unsupported), "any", "on", "off"
    xnack: str | None

    def __str__(self) -> str:
        parts = [f"amdgcn-amd-amdhsa--{self.processor}"]
        for name, state in (("sramecc", self.sramecc), ("xnack", self.xnack)):
            if state in ("on", "off"):
                parts.append(f"{name}{'+' if state == 'on' else '-'}")
        return ":".join(parts)


@dataclass(frozen=True)
class WaitcntEncoding:
    """Bit fields of `s_waitcnt`'s simm16: vmcnt low/high, expcnt, lgkmcnt; counter maxima."""

    vm_lo: tuple[int, int] = (0, 4)    # (shift, bits)
    vm_hi: tuple[int, int] = (14, 2)
    exp: tuple[int, int] = (4, 3)
    lgkm: tuple[int, int] = (8, 4)

    @property
    def maxima(self) -> dict[str, int]:
        return {"vmcnt": (1 << (self.vm_lo[1] + self.vm_hi[1])) - 1, "expcnt": (1 << self.exp[1]) - 1,
                "lgkmcnt": (1 << self.lgkm[1]) - 1}

    def decode(self, simm16: int) -> dict[str, int]:
        """Counter limits of an encoded `s_waitcnt` (every counter; a maximum means 'not waited on')."""
        def get(f: tuple[int, int]) -> int:
            return (simm16 >> f[0]) & ((1 << f[1]) - 1)
        return {"vmcnt": get(self.vm_lo) | get(self.vm_hi) << self.vm_lo[1], "expcnt": get(self.exp),
                "lgkmcnt": get(self.lgkm)}


@dataclass(frozen=True)
class Processor:
    """ISA facts of one processor.

    Scalar registers: `addressable_sgprs` (s0..), the special registers' SGPR-file indices
    (`special_sgprs`), `ttmp_base`; vector: `arch_vgprs` + `acc_vgprs` in one `unified_vgprs` file
    when `unified_vgpr_file` (AGPRs start at accum_offset, a multiple of `accum_granule`).
    Allocation granules as the descriptor encodes them; `extra_sgprs` the SGPRs reserved after the
    last named one (6 with architected flat scratch). `lds_bytes`: LDS one workgroup may allocate.
    `preload_preamble_bytes`: the compatibility code before a kernarg-preloading kernel's entry.
    Apertures: the high dword of the LDS and scratch apertures in 64-bit flat addresses (KFD's
    MAKE_LDS_APP_BASE_V9 / MAKE_SCRATCH_APP_BASE_V9)."""

    name: str
    family: str
    wave_size: int = 64
    addressable_sgprs: int = 102
    sgpr_file: int = 128
    special_sgprs: dict = field(default_factory=lambda: {
        "flat_scratch": 102, "xnack_mask": 104, "vcc": 106, "m0": 124, "exec": 126})
    ttmp_base: int = 108
    arch_vgprs: int = 256
    acc_vgprs: int = 256
    unified_vgpr_file: bool = True
    vgpr_granule: int = 8
    sgpr_granule: int = 8
    accum_granule: int = 4
    architected_flat_scratch: bool = True
    lds_bytes: int = 65536
    preload_preamble_bytes: int = 256
    shared_aperture_hi: int = 0x0001_0000
    private_aperture_hi: int = 0x0002_0000
    waitcnt: WaitcntEncoding = WaitcntEncoding()
    min_llvm: int = 19
    not_emulated: str = ""
    emulation_gaps: str = ""
    fp8_formats: tuple[str, str] = ("fp8", "bf8")

    @property
    def unified_vgprs(self) -> int:
        return self.arch_vgprs + self.acc_vgprs if self.unified_vgpr_file else self.arch_vgprs

    def extra_sgprs(self, vcc: bool, flat_scratch: bool, xnack: bool) -> int:
        """SGPRs reserved after the last one the code names (LLVM getNumExtraSGPRs for gfx9)."""
        if flat_scratch or self.architected_flat_scratch:
            return 6
        return 4 if xnack else (2 if vcc else 0)


GFX942 = Processor("gfx942", "CDNA3")
GFX950 = Processor("gfx950", "CDNA4", lds_bytes=160 * 1024, min_llvm=21, fp8_formats=("e4m3fn", "e5m2"),
                   emulation_gaps=(
    "gfx950 instructions the emulator raises UnsupportedInstruction for: the 4- and 6-bit transposing LDS "
    "reads (ds_read_b64_tr_b4, ds_read_b96_tr_b6), ds_read_b64_tr_b8/b16 under partial EXEC, "
    "v_cvt_scalef32_pk_fp4_f32 with a scale that is not a "
    "normal power of two or a NaN/infinite input, "
    "v_mfma_scale with an SGPR or constant scale or with v_mfma_ld_scale prefix fields other than its two "
    "scale sources' and 0x6000 (vdst, neg_hi, clamp, src2, neg), v_permlane16/32_swap under partial EXEC or "
    "with fi/bound_ctrl, and every CDNA4 instruction the instruction table does not list (asmevo.isa.mnemonics.GFX950_ADDED), e.g. v_prng_b32, "
    "v_bitop3_b32, the new v_smfmac shapes"))
PROCESSORS: dict[str, Processor] = {p.name: p for p in (GFX942, GFX950)}


def processor(name: str) -> Processor:
    """The description of processor `name`; UnsupportedTarget names the ones there are."""
    try:
        return PROCESSORS[name]
    except KeyError:
        raise UnsupportedTarget(f"processor {name} is not supported (supported: {', '.join(PROCESSORS)})") from None
