"""A recovered assembly source seen as one kernel's editable body.

Lines are numbered from 1, as in recovery.json and profile windows. The body of kernel `K` is
the lines after `K:` up to its end label `.Lend_K:` (or the next function, `.size` or section
directive). Inside the body a line is an instruction, a label definition, a directive (`.long`
raw words, `.p2align` padding) or blank/comment.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from ..errors import AsmEvoError
from ..isa.instruction import Instruction, parse_instruction

_LABEL_RE = re.compile(r"^([A-Za-z_.$][\w.$]*):$")
_SECTION = (".text", ".rodata", ".data", ".bss", ".section", ".size", ".type", ".globl", ".protected",
            ".hidden", ".weak", ".local")


class SourceError(AsmEvoError):
    """The recovered source has no usable body for the kernel."""


def strip_comment(line: str) -> str:
    """The code part of an assembly line (comments start with `;` or `//`)."""
    return line.split(";", 1)[0].split("//", 1)[0].strip()


def instruction_line(text: str) -> str:
    """Canonical source spelling of an instruction line."""
    return "\t" + text.strip()


@dataclass(frozen=True)
class SourceInstr:
    """An instruction of the body and the source line (1-based) it is on."""

    line: int
    ins: Instruction


def parse_line(code: str) -> Instruction:
    """An instruction from a code line; a branch's label operand becomes `Instruction.label`."""
    ins = parse_instruction(code)
    if ins.is_branch and ins.operands and ins.operands[0].kind == "expr":
        ins.label = ins.operands[0].text
    return ins


class KernelSource:
    """The source text of a recovered code object, focused on one kernel's body."""

    def __init__(self, text: str, kernel: str):
        self.text = text
        self.kernel = kernel
        self.lines = text.splitlines()
        self.body = self._find_body()

    def _find_body(self) -> tuple[int, int]:
        start = None
        for n, raw in enumerate(self.lines, 1):
            code = strip_comment(raw)
            if start is None:
                if code == f"{self.kernel}:":
                    start = n + 1
                continue
            if code == f".Lend_{self.kernel}:" or code.startswith(_SECTION) or (
                    _LABEL_RE.match(code) and not code.startswith(".")):
                return start, n - 1
        if start is None:
            raise SourceError(f"kernel {self.kernel}: no `{self.kernel}:` label in the source")
        return start, len(self.lines)

    def line(self, n: int) -> str:
        return self.lines[n - 1]

    @cached_property
    def parsed(self) -> tuple[list[SourceInstr], dict[str, int], dict[str, int], list[int]]:
        """(instructions, label -> instruction index, label -> line, lines of raw `.long` words)."""
        instrs: list[SourceInstr] = []
        labels: dict[str, int] = {}
        label_lines: dict[str, int] = {}
        raw: list[int] = []
        lo, hi = self.body
        for n in range(lo, hi + 1):
            code = strip_comment(self.lines[n - 1])
            if not code:
                continue
            m = _LABEL_RE.match(code)
            if m:
                labels[m.group(1)] = len(instrs)
                label_lines[m.group(1)] = n
            elif code.startswith(".long") or code.startswith(".fill"):
                raw.append(n)
            elif not code.startswith("."):
                instrs.append(SourceInstr(n, parse_line(code)))
        return instrs, labels, label_lines, raw

    @property
    def instrs(self) -> list[SourceInstr]:
        return self.parsed[0]

    @property
    def instructions(self) -> list[Instruction]:
        return [si.ins for si in self.parsed[0]]

    @property
    def labels(self) -> dict[str, int]:
        return self.parsed[1]

    @property
    def label_lines(self) -> dict[str, int]:
        return self.parsed[2]

    @property
    def raw_lines(self) -> list[int]:
        return self.parsed[3]

    def referenced_labels(self, exclude: tuple[int, int] | None = None) -> set[str]:
        """Labels named by branches (and any other operand) outside the line range `exclude`."""
        out = set()
        for n, raw in enumerate(self.lines, 1):
            if exclude and exclude[0] <= n <= exclude[1]:
                continue
            code = strip_comment(raw)
            if not code or code.endswith(":"):
                continue
            for token in re.findall(r"[A-Za-z_.$][\w.$]*", code):
                if token in self.label_lines:
                    out.add(token)
        return out

    def window_text(self, lo: int, hi: int, numbered: bool = True) -> str:
        """Lines lo..hi (inclusive), optionally prefixed with their numbers."""
        out = []
        for n in range(lo, hi + 1):
            text = self.lines[n - 1].expandtabs(4)
            out.append(f"{n:5d}  {text}" if numbered else text)
        return "\n".join(out)
