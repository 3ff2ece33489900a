"""The recovered-source format (docs/recovery.md): how its lines are written and how they are read.

`recover.py` writes a source with the line builders here; `parse_source` reads any source (recovered
or edited) into one typed model, `SourceFile`, that the rebuild and the agents read. Rules:

- a line's code is the text before a `;` or `//` comment; it is an instruction, a label (`name:`), a
  directive (starts with `.`) or blank;
- a function is a symbol declared `.type NAME,@function`; its body is the lines after `NAME:` up to
  its end label `.Lend_NAME:`, or else up to the next function's label or section directive;
- inside a body every other label (`.Lbb_...` or K0's own local symbols) is a branch target, never
  a boundary; `.long`/`.fill` lines are raw words, other directives (`.p2align`) padding;
- a `.long` line of an instruction LLVM would not re-encode to its bytes has the instruction as
  disassembled in its comment: `; 0x<address>: <instruction>` (`<unknown>` when not decodable), then
  optionally two spaces and `(<reason>)` (`raw_instruction` reads it).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from .errors import AsmEvoError
from .isa.instruction import Instruction, parse_instruction

_CALLS = re.compile(r"^s_(swappc|setpc)_b64\b", re.M)
_RAW_NOTE = re.compile(r"^\s*0x[0-9a-f]+: (.+?)(?:  \(.*\))?$")
_FUNCTION_TYPE = re.compile(r"^\.type\s+([^,\s]+)\s*,\s*@function$")
_SECTIONS = (".text", ".rodata", ".data", ".bss", ".section")
INSTRUCTION_COLUMN = 47


class SourceError(AsmEvoError):
    """A source has no usable body for a function."""


def strip_comment(line: str) -> str:
    """The line's code: without its `;` or `//` comment, stripped."""
    return line.partition(";")[0].partition("//")[0].strip()


# ---- writing --------------------------------------------------------------------------------

def instruction_line(text: str, address: int | None = None, note: str = "") -> str:
    """An instruction line: tab-indented, with its K0 address (and a note) as the comment."""
    if address is None:
        return "\t" + text.strip()
    return f"\t{text:<{INSTRUCTION_COLUMN}}; 0x{address:x}" + (f": {note}" if note else "")


def label_line(name: str) -> str:
    return f"{name}:"


def end_label(function: str) -> str:
    """The label recovery writes right after a function's last instruction."""
    return f".Lend_{function}"


# ---- reading --------------------------------------------------------------------------------

def parse_line(code: str) -> Instruction:
    """An instruction from a code line; a branch's label operand becomes `Instruction.label`."""
    ins = parse_instruction(code)
    if ins.is_branch and ins.operands and ins.operands[0].kind == "expr":
        ins.label = ins.operands[0].text
    return ins


def raw_instruction(line: str) -> str | None:
    """The instruction a `.long` raw-words line stands for, as its comment names it; None for other
    lines and for words recovery could not decode."""
    code, _, comment = line.partition(";")
    if not code.strip().startswith(".long"):
        return None
    m = _RAW_NOTE.match(comment)
    return m.group(1).strip() if m and m.group(1) != "<unknown>" else None


def label_of(code: str) -> str | None:
    """The label a code line defines (`name:`), if it is a label."""
    return code[:-1] if code.endswith(":") and " " not in code and "\t" not in code else None


@dataclass(frozen=True)
class Function:
    """A text function: the line of its label and its body's first and last line (1-based,
    inclusive; last < first when the body is empty)."""

    name: str
    label: int
    first: int
    last: int


@dataclass(frozen=True)
class BodyInstruction:
    """An instruction of a body and the source line (1-based) it is on."""

    line: int
    ins: Instruction


class SourceFile:
    """A parsed source: its lines, functions, `.amdhsa_kernel` blocks and metadata block (all line
    numbers 1-based)."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines()
        self.functions: dict[str, Function] = {}
        self.blocks: dict[str, tuple[int, int]] = {}  # kernel -> (.amdhsa_kernel line, .end_amdhsa_kernel line)
        self.metadata: tuple[int, int] | None = None   # (.amdgpu_metadata line, .end_amdgpu_metadata line)
        self._scan()

    def _scan(self) -> None:
        codes = [strip_comment(raw) for raw in self.lines]
        names = {m.group(1) for code in codes if code.startswith(".type") and (m := _FUNCTION_TYPE.match(code))}
        open_fn: tuple[str, int] | None = None
        in_text, meta_start, block = True, None, None

        def close(last: int) -> None:
            nonlocal open_fn
            if open_fn is not None:
                name, label = open_fn
                self.functions[name] = Function(name, label, label + 1, last)
                open_fn = None

        for n, code in enumerate(codes, 1):
            if not code:
                continue
            if meta_start is not None:
                if code == ".end_amdgpu_metadata":
                    self.metadata, meta_start = (meta_start, n), None
                continue
            if code[0] != "." and code[-1] != ":":  # an instruction: the common case first
                continue
            if code == ".amdgpu_metadata":
                close(n - 1)
                meta_start = n
            elif code.startswith(".amdhsa_kernel "):
                block = (code.split(None, 1)[1].strip(), n)
            elif code == ".end_amdhsa_kernel" and block:
                self.blocks[block[0]] = (block[1], n)
                block = None
            elif code.startswith(_SECTIONS):
                close(n - 1)
                in_text = code == ".text" or code.startswith(".section .text")
            elif in_text and (name := label_of(code)) is not None:
                if name in names:
                    close(n - 1)
                    open_fn = (name, n)
                elif open_fn is not None and name == end_label(open_fn[0]):
                    close(n - 1)
        close(len(codes))

    def function(self, name: str) -> Function:
        try:
            return self.functions[name]
        except KeyError:
            raise SourceError(f"function {name}: no `.type {name},@function` with a `{name}:` label in the source") \
                from None

    def code(self, n: int) -> str:
        return strip_comment(self.lines[n - 1])

    def instruction_lines(self, name: str) -> list[str]:
        """The code of every instruction line of function `name` (what the resource scan reads)."""
        f = self.function(name)
        out = []
        for n in range(f.first, f.last + 1):
            code = self.code(n)
            if code and code[0] != "." and code[-1] != ":":
                out.append(code)
        return out

    def body(self, name: str) -> "FunctionBody":
        """Function `name`'s body as instructions, labels and raw-word lines."""
        return FunctionBody(self, self.function(name))


class FunctionBody:
    """The parsed body of one function: instructions with their lines, labels (-> index of the
    next instruction, and -> line), and the lines holding raw words."""

    def __init__(self, source: SourceFile, function: Function):
        self.source = source
        self.function = function
        self.instructions: list[BodyInstruction] = []
        self.labels: dict[str, int] = {}
        self.label_lines: dict[str, int] = {}
        self.raw_lines: list[int] = []
        for n in range(function.first, function.last + 1):
            code = source.code(n)
            if not code:
                continue
            if (name := label_of(code)) is not None:
                self.labels[name] = len(self.instructions)
                self.label_lines[name] = n
            elif code.startswith((".long", ".fill")):
                self.raw_lines.append(n)
            elif code[0] != ".":
                self.instructions.append(BodyInstruction(n, parse_line(code)))


def parse_source(text: str) -> SourceFile:
    return SourceFile(text)


def scanned_lines(body: list[str], helpers: list[str]) -> list[str]:
    """What a kernel's resource scan covers: its own instructions, plus every non-kernel
    function's when it calls or jumps through a register (s_swappc_b64 / s_setpc_b64)."""
    text = "\n".join(body)
    calls = ("s_swappc_b64" in text or "s_setpc_b64" in text) and _CALLS.search(text)
    return body + helpers if calls else body


def digest(lines: list[str]) -> str:
    """Identity of a scanned instruction list (lets an unedited rebuild skip the rescan)."""
    return hashlib.sha1("\n".join(lines).encode()).hexdigest()
