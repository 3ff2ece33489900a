"""Reading the recovered assembly source: the parts recovery and rebuild must agree on."""
from __future__ import annotations

import hashlib
import re

_CALLS = re.compile(r"^s_(swappc|setpc)_b64\b", re.M)


def strip_comment(line: str) -> str:
    """The line without its `;` or `//` comment, stripped."""
    cut = line.find(";")
    if cut >= 0:
        line = line[:cut]
    if "//" in line:
        line = line[:line.index("//")]
    return line.strip()


def scanned_lines(body: list[str], helpers: list[str]) -> list[str]:
    """What a kernel's resource scan covers: its own instructions, plus every non-kernel
    function's when it calls or jumps through a register (s_swappc_b64 / s_setpc_b64)."""
    text = "\n".join(body)
    calls = ("s_swappc_b64" in text or "s_setpc_b64" in text) and _CALLS.search(text)
    return body + helpers if calls else body


def digest(lines: list[str]) -> str:
    """Identity of a scanned instruction list (lets an unedited rebuild skip the rescan)."""
    return hashlib.sha1("\n".join(lines).encode()).hexdigest()
