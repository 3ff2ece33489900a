"""The float controls of the MODE register, as the emulator implements them.

MODE[3:0] is FP_ROUND (f32 in [1:0], f16/f64 in [3:2]; 0 rounds to nearest even), MODE[7:4] FP_DENORM (f32
in [5:4], f16/f64 in [7:6]; 0 flushes input and output denormals, 1 flushes outputs, 2 inputs, 3 neither, so
bit 0 keeps inputs and bit 1 outputs), bit 8 DX10_CLAMP, bit 9 IEEE (LLVM SIDefines.h: ModeRegisterMasks,
FP_DENORM_FLUSH_*). A wave
starts with the kernel descriptor's COMPUTE_PGM_RSRC1 fields (LLVM AMDGPUUsage, compute_pgm_rsrc1).
Semantics (LLVM SIModeRegisterDefaults.h): with IEEE set, min/max quiet and propagate a signalling NaN
input; with DX10_CLAMP set, the `clamp` modifier turns NaN into 0, otherwise NaN passes through.

Implemented: round to nearest even only; f16/f64 denormals kept only; the f32 denormal field, IEEE and
DX10_CLAMP as the descriptor sets them (11 of AITer's 12 gfx942 kernels flush f32 denormals with IEEE and
DX10_CLAMP clear). A flushed denormal becomes a zero of its sign. `s_setreg` may change the f32 denormal
field, the one float setting the emulator tracks per wave (no suite kernel writes it: the one suite
`s_setreg`, in Triton's per_token_group_quant_fp8, sets FP16_OVFL, bit 23); any other float setting, from
the descriptor or from `s_setreg`, raises UnsupportedInstruction."""
from __future__ import annotations

import numpy as np

from ..codeobj.descriptor import KernelDescriptor
from ..errors import UnsupportedInstruction

FLOAT_BITS = 0x3FF
F32_DENORM_SHIFT = 4
F32_DENORM = 3 << F32_DENORM_SHIFT
DX10_CLAMP, IEEE = 1 << 8, 1 << 9
COMPUTE_DEFAULT = 0x3F0  # LLVM's default for compute kernels: nearest even, denormals kept, DX10_CLAMP, IEEE
_FIXED_MASK, _FIXED = 0x0CF, 0x0C0  # FP_ROUND and the f16/f64 FP_DENORM field: nearest even, denormals kept
_TINY32 = np.float32(np.finfo(np.float32).tiny)


def descriptor_mode(desc: KernelDescriptor) -> int:
    """The float bits of MODE a wave of `desc`'s kernel starts with."""
    f = desc.fields
    return (f["float_round_mode_32"] | f["float_round_mode_16_64"] << 2 | f["float_denorm_mode_32"] << 4
            | f["float_denorm_mode_16_64"] << 6 | f["enable_dx10_clamp"] << 8 | f["enable_ieee_mode"] << 9)


def _unsupported(mode: int, what: str, pc: int | None, detail: str) -> UnsupportedInstruction:
    return UnsupportedInstruction(what, pc, f"float MODE 0x{mode:03x}: {detail}")


def check_descriptor(desc: KernelDescriptor) -> int:
    """The kernel's initial float MODE bits; raises UnsupportedInstruction for a rounding mode other than
    nearest-even or flushed f16/f64 denormals."""
    mode = descriptor_mode(desc)
    if mode & _FIXED_MASK != _FIXED:
        raise _unsupported(mode, "kernel descriptor", None, "the emulator rounds to nearest even and keeps "
                           "f16/f64 denormals only")
    return mode


def check_write(before: np.ndarray, after: np.ndarray, mnemonic: str, pc: int) -> None:
    """Raise UnsupportedInstruction when an `s_setreg` changed float MODE bits other than the f32 denormal field."""
    changed = (before ^ after) & np.uint32(FLOAT_BITS & ~F32_DENORM)
    if changed.any():
        raise _unsupported(int(after[changed != 0][0]) & FLOAT_BITS, mnemonic, pc,
                           "an s_setreg may change only the f32 denormal field here")


def f32_denorm(m, g) -> int | np.ndarray:
    """The f32 FP_DENORM field of group g's waves: the launch's (an int) until an `s_setreg` changed it, then
    per wave (uint32 [G, 1])."""
    if not m.mode_written:
        return (m.float_mode >> F32_DENORM_SHIFT) & 3
    return ((m.mode[g.sel] >> np.uint32(F32_DENORM_SHIFT)) & np.uint32(3))[:, None]


def _denormals(x) -> np.ndarray:
    """Where the f32 values `x` are denormal."""
    x = np.asarray(x, np.float32)
    return (np.abs(x) < _TINY32) & (x != 0)


def flush_f32(x, field: int | np.ndarray, bit: int) -> np.ndarray:
    """f32 values `x` with denormals replaced by a zero of their sign where FP_DENORM `field` has `bit`
    (1: inputs, 2: outputs) clear."""
    if isinstance(field, int) and field & bit:
        return x
    x = np.asarray(x, np.float32)
    den = _denormals(x)
    if not isinstance(field, int):
        den = den & ((field & np.uint32(bit)) == 0)
    return np.where(den, np.copysign(np.float32(0), x), x) if den.any() else x


def refuse_flushed(m, g, ins, *xs) -> None:
    """Raise UnsupportedInstruction when a wave of group g flushes f32 denormals and one of the f32 arrays `xs`
    ([G, 64]: inputs or results of `ins`) holds a denormal in an active lane: for `ins` the emulator follows the
    ISA pseudocode, which it has for kept denormals only."""
    field = f32_denorm(m, g)
    if isinstance(field, int) and field == 3:
        return
    active, _, _ = g.exec_info(m)
    for x in xs:
        den = _denormals(x) & active
        if not isinstance(field, int):
            den = den & (field != 3)
        if den.any():
            raise UnsupportedInstruction(ins.mnemonic, ins.address, "a denormal f32 operand while MODE flushes "
                                         "f32 denormals")
