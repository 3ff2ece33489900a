"""Static checks: every reason to reject a candidate before running it.

`run_static_checks` checks one kernel's instructions (wait-state hazards, s_waitcnt coverage, and
checks plugged in through `register_check`) and returns one-line `StaticFinding`s;
`static_differences` compares a candidate with K0: the frozen ABI (`asmevo.abi`), then registers
and scratch beyond the descriptor, hazards and waits that K0 does not already have.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .abi import abi_differences
from .codeobj import CodeObject, KernelDescriptor
from .isa.resources import declared, required, scan
from .isa.cfg import CFG, build_cfg
from .isa.hazards import check_hazards
from .isa.instruction import Instruction
from .isa.waitcnt import check_waitcnt


@dataclass(frozen=True)
class StaticFinding:
    """`check` is 'hazard', 'waitcnt' or a registered check's name; `message` is one line."""

    check: str
    rule: str
    index: int
    pc: int | None
    message: str
    missing: int = 0  # wait states a hazard lacks (needed - found); 0 for other checks

    def __str__(self) -> str:
        return f"{self.check}/{self.rule}: {self.message}"


Check = Callable[[list[Instruction], "KernelDescriptor | None"], list[StaticFinding]]
_EXTRA_CHECKS: dict[str, Check] = {}


def register_check(name: str, check: Check) -> None:
    """Add a check (e.g. ABI or register budget) to every `run_static_checks` call."""
    _EXTRA_CHECKS[name] = check


def run_static_checks(instructions: list[Instruction], descriptor: KernelDescriptor | None = None,
                      labels: dict[str, int] | None = None, xnack: bool = True,
                      processor: str = "gfx942", cfg: CFG | None = None) -> list[StaticFinding]:
    """Hazards (of `processor`) + waitcnt (+ registered checks) for one kernel, ordered by instruction index
    (`cfg`: the instructions' CFG when the caller has it)."""
    if not instructions:
        return []
    cfg = cfg or build_cfg(instructions, labels)
    findings = [StaticFinding("hazard", v.rule, v.index, v.pc, v.message, v.needed - v.found)
                for v in check_hazards(instructions, cfg=cfg, xnack=xnack, processor=processor)]
    findings += [StaticFinding("waitcnt", v.counter, v.index, v.pc, v.message)
                 for v in check_waitcnt(instructions, cfg=cfg, processor=processor)]
    for check in _EXTRA_CHECKS.values():
        findings += check(instructions, descriptor)
    return sorted(findings, key=lambda f: f.index)


def check_code_object(path: str | Path) -> list[StaticFinding]:
    """`run_static_checks` over every kernel of a code object (xnack per its target id)."""
    co = CodeObject.from_path(path)
    xnack = co.target.xnack != "off"
    out: list[StaticFinding] = []
    for k in co.kernels:
        out += run_static_checks(co.kernel_instructions(k.name, data=True), k.descriptor, xnack=xnack,
                                 processor=co.target.processor)
    return out


def resource_findings(co: CodeObject) -> list[str]:
    """Registers and scratch the code uses beyond what each kernel's descriptor declares."""
    out = []
    proc = co.target.processor
    for k in co.kernels:
        use = scan(co.kernel_instructions(k.name), proc)
        need = required(use, k.descriptor, proc)
        have = declared(k.descriptor, k.metadata, proc)
        if need.next_free_vgpr > have.next_free_vgpr:
            out.append(f"kernel {k.name}: uses {need.next_free_vgpr} VGPRs+AGPRs, descriptor declares "
                       f"{have.next_free_vgpr}")
        if use.agprs and use.vgprs > have.accum_offset:
            out.append(f"kernel {k.name}: uses v{use.vgprs - 1}, at or past accum_offset {have.accum_offset}")
        if need.next_free_sgpr > have.next_free_sgpr:
            out.append(f"kernel {k.name}: uses {need.next_free_sgpr} SGPRs, descriptor declares {have.next_free_sgpr}")
        if use.scratch and not k.descriptor.fields["enable_private_segment"]:
            out.append(f"kernel {k.name}: uses scratch but enables no private segment")
    return out


def code_findings(co: CodeObject) -> dict[str, list[StaticFinding]]:
    """Hazard and s_waitcnt findings of each kernel (`asmevo.static_checks`)."""
    xnack = co.target.xnack != "off"
    return {k.name: run_static_checks(co.kernel_instructions(k.name), k.descriptor, xnack=xnack,
                                      processor=co.target.processor)
            for k in co.kernels}


_K0_FINDINGS: dict[bytes, tuple[list[str], dict[str, list[StaticFinding]]]] = {}
_K0_KEPT = 16


def _findings_of_k0(k0: CodeObject) -> tuple[list[str], dict[str, list[StaticFinding]]]:
    """K0's resource and code findings, kept by content: every candidate is compared with one K0."""
    found = _K0_FINDINGS.get(k0.data)
    if found is None:
        if len(_K0_FINDINGS) >= _K0_KEPT:
            _K0_FINDINGS.clear()
        found = _K0_FINDINGS[k0.data] = (resource_findings(k0), code_findings(k0))
    return found


def static_differences(k0: CodeObject, k1: CodeObject) -> list[str]:
    """Every static reason to reject K1 before running it: ABI changes, then resource overruns,
    hazards and s_waitcnt gaps that K0 does not already have (K0's own findings, counted per
    kernel, check and rule, are the analyses' false positives or K0's accepted behaviour)."""
    abi = abi_differences(k0, k1)
    if abi:
        return abi
    k0_resources, before = _findings_of_k0(k0)
    known = set(k0_resources)
    out = [f for f in resource_findings(k1) if f not in known]
    after = code_findings(k1)
    for name, found in after.items():
        allowance = Counter((f.check, f.rule) for f in before.get(name, []))
        for f in found:
            key = (f.check, f.rule)
            if allowance[key]:
                allowance[key] -= 1
            else:
                out.append(f"kernel {name}: {f}")
    return out
