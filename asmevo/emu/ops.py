"""The prepared form of one instruction and the context instruction families compile against."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..isa.instruction import Instruction
from ..target import processor as processor_info

NORMAL, BRANCH, JUMP, END, BARRIER = range(5)


@dataclass(slots=True)
class Op:
    """`fn(machine, group)` executes the instruction for a group. For BRANCH it returns the per-wave
    taken mask (bool [G]) towards `target`; for JUMP the per-wave next PCs (uint64 [G]).
    `vreads`/`vwrites` etc. list registers for the waitcnt and uninitialized-read checks."""

    ins: Instruction
    fn: Callable
    kind: int = NORMAL
    target: int = 0
    next_pc: int = 0
    loads: tuple = ()           # (file, first, count) destinations of a load; filled by the family
    counter: str = ""           # waitcnt class of a load/store: vm, lds, smem (out-of-order lgkm)
    is_store: bool = False
    reads: list = field(default_factory=list)    # [(file, index)] file in "v", "a", "s"
    writes: list = field(default_factory=list)
    chk_reads: list = field(default_factory=list)   # reads/writes of registers some load writes
    chk_writes: list = field(default_factory=list)
    s_writes: list = field(default_factory=list)    # SGPRs written (checked mode marks them written)
    lanes: Callable | None = None   # (machine, group, exec mask) -> bool [G, 64]: the lanes of its VGPR
                                    # operands a cross-lane op reads (uninitialized check); None: every active one


@dataclass
class Context:
    """Launch-independent facts the families may consult while preparing instructions: the code
    object's path and its processor (which selects the instruction table and the fp8/bf8 formats)."""

    source: str
    processor: str = "gfx942"

    def fp8_format(self, isa_type: str) -> str:
        """The `asmevo.emu.numeric` format of the ISA's "fp8" or "bf8" type on this processor."""
        return dict(zip(("fp8", "bf8"), processor_info(self.processor).fp8_formats))[isa_type]
