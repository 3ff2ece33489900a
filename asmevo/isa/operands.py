"""Operands of gfx9-family instructions in LLVM's assembly syntax, parsed into a small model."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import DisassemblyError

# Special scalar registers of gfx9 (CDNA) and the SGPR-file index they alias, where they have one.
SPECIAL_SGPR_INDEX = {
    "flat_scratch_lo": 102, "flat_scratch_hi": 103, "xnack_mask_lo": 104, "xnack_mask_hi": 105,
    "vcc_lo": 106, "vcc_hi": 107, "m0": 124, "exec_lo": 126, "exec_hi": 127,
}
SPECIAL_PAIRS = {"flat_scratch": 102, "xnack_mask": 104, "vcc": 106, "exec": 126}
SPECIAL_OTHER = {
    "scc", "vccz", "execz", "src_vccz", "src_execz", "src_scc", "src_shared_base", "src_shared_limit",
    "src_private_base", "src_private_limit", "src_pops_exiting_wave_id", "src_lds_direct", "lds_direct",
    "off", "null",
}
TTMP_BASE = 108

_REG_RE = re.compile(r"^(v|s|a|ttmp)(?:(\d+)|\[(\d+):(\d+)\])$")
_INT_RE = re.compile(r"^-?(?:0x[0-9a-fA-F]+|\d+)$")
_FLOAT_RE = re.compile(r"^-?\d+\.\d*(?:e[-+]?\d+)?$")


@dataclass(frozen=True, slots=True)
class Operand:
    """One operand. `kind` is one of: vgpr, sgpr, agpr, ttmp, special, imm, float, expr.

    Registers carry `index` and `count` (dwords). `special` carries its `name`; `imm` an int
    `value`, `float` a float `value`. Source modifiers `neg`/`abs`/`sext` are flags.
    `expr` is anything else (hwreg(...), sendmsg(...), a label) kept as text.
    """

    kind: str
    text: str
    index: int = 0
    count: int = 1
    name: str = ""
    value: int | float = 0
    neg: bool = False
    abs: bool = False
    sext: bool = False

    @property
    def is_reg(self) -> bool:
        return self.kind in ("vgpr", "sgpr", "agpr", "ttmp") or (
            self.kind == "special" and (self.name in SPECIAL_SGPR_INDEX or self.name in SPECIAL_PAIRS))

    def sgpr_range(self) -> range | None:
        """The SGPR-file indices this operand reads or writes (specials mapped), if any."""
        if self.kind == "sgpr":
            return range(self.index, self.index + self.count)
        if self.kind == "ttmp":
            return range(TTMP_BASE + self.index, TTMP_BASE + self.index + self.count)
        if self.kind == "special":
            if self.name in SPECIAL_SGPR_INDEX:
                return range(SPECIAL_SGPR_INDEX[self.name], SPECIAL_SGPR_INDEX[self.name] + 1)
            if self.name in SPECIAL_PAIRS:
                return range(SPECIAL_PAIRS[self.name], SPECIAL_PAIRS[self.name] + 2)
        return None


def split_top(text: str, sep: str) -> list[str]:
    """Split `text` at `sep` characters outside (), [] and ||."""
    parts, depth, cur, in_abs = [], 0, [], False
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "|":
            in_abs = not in_abs
        if ch == sep and depth == 0 and not in_abs:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def parse_operand(text: str) -> Operand:
    """Parse one operand token as LLVM prints it for gfx9 targets."""
    t = text.strip()
    neg = absf = sext = False
    core = t
    if core.startswith("sext(") and core.endswith(")"):
        sext, core = True, core[5:-1]
    if core.startswith("-") and not _INT_RE.match(core) and not _FLOAT_RE.match(core):
        neg, core = True, core[1:]
    if core.startswith("|") and core.endswith("|"):
        absf, core = True, core[1:-1]
    elif core.startswith("abs(") and core.endswith(")"):
        absf, core = True, core[4:-1]
    if core.startswith("neg(") and core.endswith(")"):
        neg, core = True, core[4:-1]
    mods = dict(neg=neg, abs=absf, sext=sext)
    m = _REG_RE.match(core)
    if m:
        file, single, lo, hi = m.groups()
        index = int(single) if single is not None else int(lo)
        count = 1 if single is not None else int(hi) - int(lo) + 1
        if count < 1:
            raise DisassemblyError(f"bad register range {text!r}")
        kind = {"v": "vgpr", "s": "sgpr", "a": "agpr", "ttmp": "ttmp"}[file]
        return Operand(kind, t, index=index, count=count, **mods)
    if core in SPECIAL_SGPR_INDEX or core in SPECIAL_PAIRS or core in SPECIAL_OTHER:
        count = 2 if core in SPECIAL_PAIRS else 1
        return Operand("special", t, name=core, count=count, **mods)
    if _INT_RE.match(core):
        return Operand("imm", t, value=int(core, 0), **mods)
    if _FLOAT_RE.match(core):
        return Operand("float", t, value=float(core), **mods)
    return Operand("expr", t, **mods)
