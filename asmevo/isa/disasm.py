"""Disassembly of a code object's text with llvm-objdump into per-symbol instruction lists."""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Iterator

from ..errors import DisassemblyError
from ..toolchain import find_toolchain
from .instruction import Instruction, parse_instruction

_SYMBOL_RE = re.compile(r"^([0-9a-fA-F]+) <(.+)>:$")


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


def objdump_texts(paths: list[str]) -> list[str]:
    """`llvm-objdump -d --section=.text` output per file, from one llvm-objdump run over all of
    `paths` (split at the per-file headers); raises ToolchainError when a file cannot be read."""
    out = find_toolchain().run("llvm-objdump", ["-d", "--section=.text", *paths]).decode(errors="replace")
    starts = []
    for path in paths:
        at = out.find(f"\n{path}:\tfile format ", starts[-1] + 1 if starts else 0)
        if at < 0:
            raise DisassemblyError(f"llvm-objdump printed no disassembly of {path}")
        starts.append(at)
    return [out[a:b] for a, b in zip(starts, starts[1:] + [len(out)])]


def iter_objdump(text: str, image: bytes | None = None,
                 base: int = 0) -> Iterator[tuple[int, str, bytes] | tuple[str, int]]:
    """Raw records of `llvm-objdump -d` output: `(address, asm text, encoding)` per instruction
    (asm is '' for undecodable words) and `(symbol, address)` per symbol header. With `image`
    (the section's bytes, at address `base`) encodings are sliced from it instead of parsed."""
    for line in text.splitlines():
        if line[:1] in (" ", "\t"):
            asm, cut, rest = line.partition("//")
            field, colon, tail = rest.partition(":")
            words = tail.partition("<")[0].split()
            try:
                address = int(field, 16)
                if image is None:
                    encoding = struct.pack(f"<{len(words)}I", *[int(w, 16) for w in words])
                else:
                    encoding = image[address - base:address - base + 4 * len(words)]
            except (ValueError, struct.error):
                raise DisassemblyError(f"unparsed llvm-objdump line: {line.strip()!r}") from None
            if not cut or not colon or not encoding:
                raise DisassemblyError(f"unparsed llvm-objdump line: {line.strip()!r}")
            asm = asm.strip()
            yield address, "" if asm.startswith(("<unknown>", ".long")) else asm, encoding
        elif line and not line.startswith("Disassembly of section") and "file format" not in line:
            m = _SYMBOL_RE.match(line.strip())
            if not m:
                raise DisassemblyError(f"unparsed llvm-objdump line: {line.strip()!r}")
            yield m.group(2), int(m.group(1), 16)


def parse_objdump(text: str) -> Listing:
    """Parse `llvm-objdump -d` output for an AMDGPU object."""
    instructions: list[Instruction] = []
    symbols: dict[str, int] = {}
    for record in iter_objdump(text):
        if isinstance(record[0], str):
            symbols[record[0]] = record[1]
            continue
        address, asm, encoding = record
        if not asm:
            ins = Instruction(".long", address=address, encoding=encoding)
        else:
            ins = parse_instruction(asm)
            ins.address, ins.encoding = address, encoding
        if ins.is_branch:
            ins.target = branch_target(address, encoding)
        instructions.append(ins)
    return Listing(instructions, symbols)


def branch_target(address: int, encoding: bytes) -> int:
    """A SOPP branch jumps to address + 4 + 4 * simm16 (simm16 = low half of the word; LLVM
    prints it as a number, or as a symbol name when the object has one there)."""
    simm = int.from_bytes(encoding[:2], "little", signed=True)
    return address + 4 + 4 * simm
