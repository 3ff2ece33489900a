"""Static safety checks of one kernel's instructions: wait-state hazards and s_waitcnt coverage.

`run_static_checks` returns one-line `Finding`s. Further checks (ABI, resources against the
kernel descriptor) plug in through `register_check`; they receive the instructions and the
descriptor and return findings of their own.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .codeobj import CodeObject, KernelDescriptor
from .isa.cfg import build_cfg
from .isa.hazards import check_hazards
from .isa.instruction import Instruction
from .isa.waitcnt import check_waitcnt


@dataclass(frozen=True)
class Finding:
    """`check` is 'hazard', 'waitcnt' or a registered check's name; `message` is one line."""

    check: str
    rule: str
    index: int
    pc: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.check}/{self.rule}: {self.message}"


Check = Callable[[list[Instruction], "KernelDescriptor | None"], list[Finding]]
_EXTRA_CHECKS: dict[str, Check] = {}


def register_check(name: str, check: Check) -> None:
    """Add a check (e.g. ABI or register budget) to every `run_static_checks` call."""
    _EXTRA_CHECKS[name] = check


def run_static_checks(instructions: list[Instruction], descriptor: KernelDescriptor | None = None,
                      labels: dict[str, int] | None = None, xnack: bool = True) -> list[Finding]:
    """Hazards + waitcnt (+ registered checks) for one kernel, ordered by instruction index."""
    if not instructions:
        return []
    cfg = build_cfg(instructions, labels)
    findings = [Finding("hazard", v.rule, v.index, v.pc, v.message)
                for v in check_hazards(instructions, cfg=cfg, xnack=xnack)]
    findings += [Finding("waitcnt", v.counter, v.index, v.pc, v.message)
                 for v in check_waitcnt(instructions, cfg=cfg)]
    for check in _EXTRA_CHECKS.values():
        findings += check(instructions, descriptor)
    return sorted(findings, key=lambda f: f.index)


def check_code_object(path: str | Path) -> list[Finding]:
    """`run_static_checks` over every kernel of a code object (xnack per its target id)."""
    co = CodeObject.from_path(path)
    xnack = co.target.xnack != "off"
    out: list[Finding] = []
    for k in co.kernels:
        out += run_static_checks(co.kernel_instructions(k.name, data=True), k.descriptor, xnack=xnack)
    return out
