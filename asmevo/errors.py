"""Named errors. Every error AsmEvo raises for bad input is one of these; the CLI prints
`error: <message>` on one line and exits non-zero, never a traceback."""


class AsmEvoError(Exception):
    """Base of every expected failure; its message is one actionable line."""


class ToolchainError(AsmEvoError):
    """LLVM tools missing, too old, or a tool invocation failed."""


class ToolchainTooOld(ToolchainError):
    """The toolchain found is older than the processor needs (e.g. gfx950 needs LLVM >= 21)."""


class CodeObjectError(AsmEvoError):
    """The input is not a usable AMDGPU code object (not ELF, wrong machine, truncated, ...)."""


class DisassemblyError(AsmEvoError):
    """LLVM's disassembly could not be parsed into the instruction model."""


class RebuildError(AsmEvoError):
    """Reassembly or linking failed, or the rebuilt object would change the frozen ABI."""


class AbiChange(RebuildError):
    """The rebuilt object would change K0's frozen ABI (`asmevo.abi`): kernels, metadata,
    descriptor, or scratch use K0 does not enable."""


class PatchError(AsmEvoError):
    """An in-place patch was refused (size, resources, range)."""


class UnsupportedInstruction(AsmEvoError):
    """The emulator (or another analysis) met an instruction it does not implement."""

    def __init__(self, mnemonic: str, pc: int | None = None, detail: str = ""):
        where = f" at pc 0x{pc:x}" if pc is not None else ""
        extra = f" ({detail})" if detail else ""
        super().__init__(f"unsupported: {mnemonic}{where}{extra}")
        self.mnemonic = mnemonic
        self.pc = pc


class LaunchSpecError(AsmEvoError):
    """A launch spec is malformed or disagrees with the kernel's metadata."""


class EmulationError(AsmEvoError):
    """The emulated launch could not run to completion."""
