"""A recovered assembly source seen as one kernel's editable body (the format is `asmevo.source`'s).

Lines are numbered from 1, as in recovery.json and profile windows. The body of kernel `K` is the
function body `asmevo.source` defines (the lines after `K:` up to `.Lend_K:`); inside it a line is
an instruction, a label definition, a directive (`.long` raw words, `.p2align` padding) or
blank/comment.
"""
from __future__ import annotations

import re
from functools import cached_property

from ..isa.instruction import Instruction
from ..source import BodyInstruction, FunctionBody, SourceError, parse_source, strip_comment

__all__ = ["KernelSource", "SourceError"]


class KernelSource:
    """The source text of a recovered code object, focused on one kernel's body."""

    def __init__(self, text: str, kernel: str):
        self.text = text
        self.kernel = kernel
        self.file = parse_source(text)
        self.lines = self.file.lines
        f = self.file.function(kernel)
        self.body = (f.first, f.last)

    def line(self, n: int) -> str:
        return self.lines[n - 1]

    @cached_property
    def parsed(self) -> FunctionBody:
        return self.file.body(self.kernel)

    @property
    def instrs(self) -> list[BodyInstruction]:
        return self.parsed.instructions

    @property
    def instructions(self) -> list[Instruction]:
        return [si.ins for si in self.parsed.instructions]

    @property
    def labels(self) -> dict[str, int]:
        return self.parsed.labels

    @property
    def label_lines(self) -> dict[str, int]:
        return self.parsed.label_lines

    @property
    def raw_lines(self) -> list[int]:
        return self.parsed.raw_lines

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
