"""Disassembly of a code object's text with llvm-objdump into per-symbol instruction lists."""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Iterator

from ..errors import DisassemblyError
from ..toolchain import find_toolchain
from .instruction import Instruction, parse_instruction


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


# One alternative per kind of line llvm-objdump prints: an instruction (asm, address, words, an
# optional `<symbol+offset>` note), a symbol header, the file and section headers, a blank line.
_LINE_RE = re.compile(
    r"^(?:[ \t]+([^/\n]*(?:/(?!/)[^/\n]*)*)// ([0-9A-Fa-f]+):((?: [0-9A-Fa-f]{8})+)[ \t]*(?:<[^\n]*)?"
    r"|([0-9a-fA-F]+) <([^\n]+)>:|Disassembly of section [^\n]*|[^ \t\n][^\n]*file format[^\n]*|)$", re.M)


def objdump_records(text: str) -> list[tuple[str, str, str, str, str]]:
    """`(asm, address, words, symbol address, symbol)` per line of `llvm-objdump -d` output (the
    fields a line does not have are ''; asm keeps trailing blanks); raises on any other line."""
    records = _LINE_RE.findall(text)
    if len(records) != text.count("\n") + 1:  # each match is one whole line: one did not match
        line = next(ln for ln in text.split("\n") if not _LINE_RE.fullmatch(ln))
        raise DisassemblyError(f"unparsed llvm-objdump line: {line.strip()!r}")
    return records


def iter_objdump(text: str) -> Iterator[tuple[int, str, bytes] | tuple[str, int]]:
    """Raw records of `llvm-objdump -d` output: `(address, asm text, encoding)` per instruction
    (asm is '' for undecodable words) and `(symbol, address)` per symbol header."""
    for asm, field, words, sym_address, symbol in objdump_records(text):
        if field:
            encoding = struct.pack(f"<{len(words) // 9}I", *[int(w, 16) for w in words.split()])
            asm = asm.rstrip()
            yield int(field, 16), "" if asm.startswith(("<unknown>", ".long")) else asm, encoding
        elif symbol:
            yield symbol, int(sym_address, 16)


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
