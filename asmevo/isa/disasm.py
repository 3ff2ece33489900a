"""Disassembly of a code object's text with llvm-objdump into per-symbol instruction lists."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import DisassemblyError
from ..toolchain import find_toolchain
from .instruction import Instruction, parse_instruction

_SYMBOL_RE = re.compile(r"^([0-9a-fA-F]+) <(.+)>:$")
_LINE_RE = re.compile(r"^\s+(.*?)\s*//\s*([0-9A-Fa-f]+):((?:\s[0-9A-Fa-f]{8})+)(?:\s*<(.*)>)?\s*$")
_BRANCH_TARGET_RE = re.compile(r"^(.+)\+0x([0-9a-fA-F]+)$")


@dataclass
class Listing:
    """Instructions of one code object in address order, and the symbols that start runs."""

    instructions: list[Instruction]
    symbols: dict[str, int]

    def by_address(self) -> dict[int, Instruction]:
        return {ins.address: ins for ins in self.instructions}


def disassemble_file(path: str) -> Listing:
    """Disassemble every executable section of the code object at `path`."""
    out = find_toolchain().run("llvm-objdump", ["-d", path])
    return parse_objdump(out.decode(errors="replace"))


def parse_objdump(text: str) -> Listing:
    """Parse `llvm-objdump -d` output for an AMDGPU object."""
    instructions: list[Instruction] = []
    symbols: dict[str, int] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith(("Disassembly of section", "\n")) or "file format" in line:
            continue
        m = _SYMBOL_RE.match(line.strip())
        if m:
            symbols[m.group(2)] = int(m.group(1), 16)
            continue
        m = _LINE_RE.match(line)
        if not m:
            raise DisassemblyError(f"unparsed llvm-objdump line: {line.strip()!r}")
        asm, addr, words, target_sym = m.groups()
        encoding = b"".join(int(w, 16).to_bytes(4, "little") for w in words.split())
        address = int(addr, 16)
        if asm.startswith("<unknown>") or not asm:
            ins = Instruction(".long", address=address, encoding=encoding)
        else:
            ins = parse_instruction(asm)
            ins.address, ins.encoding = address, encoding
        if ins.is_branch:
            ins.target = _branch_target(ins, target_sym, symbols)
        instructions.append(ins)
    return Listing(instructions, symbols)


def _branch_target(ins: Instruction, target_sym: str | None, symbols: dict[str, int]) -> int:
    """A SOPP branch jumps to address + 4 + 4 * simm16."""
    simm = ins.operands[0].value if ins.operands and ins.operands[0].kind == "imm" else None
    if simm is None:
        raise DisassemblyError(f"branch without offset at 0x{ins.address:x}: {ins.text()}")
    simm = int(simm)
    if simm >= 0x8000:
        simm -= 0x10000
    return ins.address + 4 + 4 * simm
