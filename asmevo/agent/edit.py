"""Edits: a window of the recovered source replaced by new instruction text.

An `Edit` replaces source lines `start..end` (1-based, inclusive; `end == start - 1` inserts
before `start`) with `text`. `precheck` rejects, with a reason and never an exception, edits that
leave their window, carry directives, break labels or do not assemble line by line; the gates
(gates.py) then rebuild, check the ABI and the static rules, verify and time. The one directive an
edit may carry is a copy of one of the kernel's `.long` raw-words instruction lines (so an
instruction LLVM cannot re-encode can be moved or duplicated with its bytes, never written anew).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import asdict, dataclass

from ..target import TargetId
from ..errors import AsmEvoError
from ..isa.assemble import encode_lines
from ..isa.instruction import parse_instruction
from ..source import instruction_line, strip_comment
from .source import KernelSource

# Why an edit or candidate was rejected.
REASONS = ("no-op", "outside-window", "directive", "label", "assemble", "abi", "static", "different",
           "invalid", "crashed", "not-faster", "error")
_LABEL_DEF = re.compile(r"^([A-Za-z_.$][\w.$]*):$")


@dataclass(frozen=True)
class Window:
    """A line range lo..hi (inclusive) of the recovered source an edit may change."""

    lo: int
    hi: int

    def contains(self, start: int, end: int) -> bool:
        return self.lo <= start and end <= self.hi and start <= end + 1


@dataclass(frozen=True)
class Edit:
    """Replace lines start..end with `text`; `operator` names who made it, `note` says what."""

    start: int
    end: int
    text: str
    operator: str = "manual"
    note: str = ""

    def new_lines(self) -> list[str]:
        return normalise(self.text)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Rejection:
    """An edit or candidate refused: `reason` is one of REASONS, `detail` one line."""

    reason: str
    detail: str

    def __str__(self) -> str:
        return f"{self.reason}: {self.detail}"


def normalise(text: str) -> list[str]:
    """Replacement text as source lines: labels flush left, instructions tab-indented."""
    out = []
    for raw in text.splitlines():
        code = strip_comment(raw)
        if not code:
            if raw.strip():
                out.append(raw.rstrip())
            continue
        out.append(code if _LABEL_DEF.match(code) else raw.rstrip() if raw.startswith("\t") else
                   instruction_line(raw))
    return out


def apply_edit(lines: list[str], edit: Edit) -> list[str]:
    """The source lines with `edit` applied."""
    return lines[:edit.start - 1] + edit.new_lines() + lines[edit.end:]


def edit_between(old: list[str], new: list[str], offset: int, operator: str, note: str) -> Edit | None:
    """The smallest Edit turning lines `old` (starting at source line `offset`) into `new`."""
    a = 0
    while a < len(old) and a < len(new) and old[a] == new[a]:
        a += 1
    b = 0
    while b < len(old) - a and b < len(new) - a and old[-1 - b] == new[-1 - b]:
        b += 1
    if a == len(old) == len(new):
        return None
    return Edit(offset + a, offset + len(old) - b - 1, "\n".join(new[a:len(new) - b]), operator, note)


def unified_diff(old: str, new: str, name: str) -> str:
    """A unified diff of two sources (K0 side named a/, candidate side b/)."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        f"a/{name}.s", f"b/{name}.s"))


def precheck(src: KernelSource, edit: Edit, window: Window, target: TargetId) -> Rejection | None:
    """Cheap checks before a rebuild: window, directives, labels, per-line assembly."""
    if not window.contains(edit.start, edit.end):
        return Rejection("outside-window", f"edit of lines {edit.start}-{edit.end} leaves window "
                                           f"{window.lo}-{window.hi}")
    body_lo, body_hi = src.body
    if not (body_lo <= window.lo and window.hi <= body_hi):
        return Rejection("outside-window", f"window {window.lo}-{window.hi} is not inside kernel "
                                           f"{src.kernel}'s body (lines {body_lo}-{body_hi})")
    new = edit.new_lines()
    old = src.lines[edit.start - 1:edit.end]
    if [strip_comment(x) for x in new] == [strip_comment(x) for x in old]:
        return Rejection("no-op", "the edit changes no code")
    defined, code_lines = [], []
    raw = {strip_comment(src.line(n)) for n in src.raw_lines if strip_comment(src.line(n)).startswith(".long")}
    for line in new:
        code = strip_comment(line)
        if not code or code in raw:
            continue
        m = _LABEL_DEF.match(code)
        if m:
            defined.append(m.group(1))
        elif code.startswith("."):
            return Rejection("directive", f"directives are not allowed in an edit: {code!r}")
        else:
            code_lines.append(code)
    problem = _label_problem(src, edit, defined, code_lines)
    if problem:
        return Rejection("label", problem)
    if code_lines:
        try:
            encs, errors = encode_lines([_encodable(c) for c in code_lines], target)
        except AsmEvoError as exc:
            return Rejection("assemble", str(exc))
        if errors:
            k = min(errors)
            return Rejection("assemble", f"{code_lines[k]!r}: {errors[k]}")
    return None


def _encodable(code: str) -> str:
    """A branch to a label is encoded with a placeholder offset (labels resolve at rebuild)."""
    ins = parse_instruction(code)
    return f"{ins.mnemonic} 0" if ins.is_branch else code


def _label_problem(src: KernelSource, edit: Edit, defined: list[str], code_lines: list[str]) -> str | None:
    removed = {name for name, n in src.label_lines.items() if edit.start <= n <= edit.end}
    kept_elsewhere = set(src.label_lines) - removed
    dup = [d for d in defined if d in kept_elsewhere or defined.count(d) > 1]
    if dup:
        return f"label {dup[0]} is already defined"
    used_outside = src.referenced_labels(exclude=(edit.start, edit.end))
    lost = sorted((removed - set(defined)) & used_outside)
    if lost:
        return f"label {lost[0]} is used outside the edit but the edit removes it"
    known = kept_elsewhere | set(defined) | {src.kernel}
    for code in code_lines:
        ins = parse_instruction(code)
        if ins.is_branch and ins.operands and ins.operands[0].kind == "expr" and ins.operands[0].text not in known:
            return f"branch to undefined label {ins.operands[0].text}"
    return None
