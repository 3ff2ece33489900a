"""LLVM as the oracle for the instruction table: every gfx942 instruction LLVM knows, one example each.

`examples()` sweeps the opcode field of every gfx9 encoding format through LLVM's disassembler (in
process, `asmevo.llvm_c`), with operand bits drawn from a fixed-seed generator (sparse patterns
first, so low, aligned registers come first), and keeps per base mnemonic the first texts that
`llvm-mc` assembles again. `mca_info(texts)` is llvm-mca's instruction info for those texts.
Formats and opcode fields: the "Microcode Formats" chapter of AMD's CDNA3 ISA guide.
"""
from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass

from asmevo.isa.regs import base_mnemonic
from asmevo.llvm_c import Disassembler
from asmevo.toolchain import find_toolchain

# format: (fixed bits, mask of the fixed bits, opcode shift, opcode count, dwords)
# SOPP, SOPC and SOP1 sit inside SOPK's opcode space and SOPK inside SOP2's, VOPC and VOP1 inside
# VOP2's (opcodes 62, 63), VOP3P inside VOP3's: the narrower first. FLAT's segment field picks flat/scratch/global.
FORMATS = {
    "sopp": (0x17F << 23, 0x1FF << 23, 16, 128, 1), "sopc": (0x17E << 23, 0x1FF << 23, 16, 128, 1),
    "sop1": (0x17D << 23, 0x1FF << 23, 8, 256, 1), "sopk": (0xB << 28, 0xF << 28, 23, 29, 1),
    "sop2": (2 << 30, 3 << 30, 23, 128, 1), "smem": (0x30 << 26, 0x3F << 26, 18, 256, 2),
    "vop1": (0x3F << 25, 0x7F << 25, 9, 256, 1), "vopc": (0x3E << 25, 0x7F << 25, 17, 256, 1),
    "vop2": (0, 1 << 31, 25, 62, 1), "vop3p": (0x1A7 << 23, 0x1FF << 23, 16, 128, 2),
    "vop3": (0x34 << 26, 0x3F << 26, 16, 1024, 2), "ds": (0x36 << 26, 0x3F << 26, 17, 256, 2),
    "mubuf": (0x38 << 26, 0x3F << 26, 18, 128, 2), "mtbuf": (0x3A << 26, 0x3F << 26, 15, 16, 2),
    "flat": (0x37 << 26, 0x3F << 26 | 3 << 14, 18, 128, 2),
    "scratch": (0x37 << 26 | 1 << 14, 0x3F << 26 | 3 << 14, 18, 128, 2),
    "global": (0x37 << 26 | 2 << 14, 0x3F << 26 | 3 << 14, 18, 128, 2),
}
_SPARSE = (0, 0x01010101, 0x07070707, 0x0F0F0F0F, 0x3F3F3F3F, 0xFFFFFFFF)
# Second dwords tried first: aligned VGPR operands (VOP3/VOP3P sources v8, v16, v0; FLAT address v[2:3],
# data v[4:7], vdst v[8:11], with and without an SGPR base).
_TEMPLATES = (0x108 | 0x110 << 9 | 0x100 << 18, 0x108 | 0x110 << 9 | 0x120 << 18,
              0x02 | 0x04 << 8 | 0x7F << 16 | 0x08 << 24, 0x02 | 0x04 << 8 | 0x00 << 16 | 0x08 << 24)
_LITERAL = b"\x00\x00\x80\x3f"  # 1.0f: a trailing 32-bit literal (1.0f) for forms that take one
TRIES = 400
KEEP = 24


@dataclass(frozen=True)
class Example:
    """One decoded instruction: the format it was decoded from and its text."""

    fmt: str
    text: str


@functools.lru_cache(maxsize=None)
def decoded(processor: str = "gfx942") -> dict[str, list[Example]]:
    """Base mnemonic -> up to KEEP distinct decoded examples (in sweep order)."""
    dis = Disassembler(processor)
    rng = random.Random(0)
    out: dict[str, list[Example]] = {}
    for fmt, (fixed, mask, shift, count, dwords) in FORMATS.items():
        opmask = ((1 << (count - 1).bit_length()) - 1) << shift
        for op in range(count):
            for k in range(-len(_TEMPLATES), TRIES):
                sparse = _SPARSE[k % len(_SPARSE)] if k >= 0 else 0
                first = fixed | (op << shift) | (rng.getrandbits(32) & sparse & ~(mask | opmask) & 0xFFFFFFFF)
                rest = [_TEMPLATES[k] if k < 0 else rng.getrandbits(32) & sparse for _ in range(dwords - 1)]
                data = first.to_bytes(4, "little") + b"".join(r.to_bytes(4, "little") for r in rest) + _LITERAL
                size, text = dis.decode(data)
                if size in (4 * dwords, 4 * dwords + 4):
                    text = text.split(";")[0].strip()
                    seen = out.setdefault(base_mnemonic(text.split()[0])[0], [])
                    if len(seen) < KEEP and all(e.text != text for e in seen):
                        seen.append(Example(fmt, text))
    return out


@functools.lru_cache(maxsize=None)
def examples(processor: str = "gfx942") -> dict[str, Example]:
    """Base mnemonic -> the first decoded example that llvm-mc assembles again."""
    flat = [(base, ex) for base, exs in decoded(processor).items() for ex in exs]
    flat += [(base, Example(ex.fmt, _plain(ex.text))) for base, ex in flat if _plain(ex.text) != ex.text]
    source = "\n".join(ex.text for _, ex in flat) + "\n"
    proc = find_toolchain().run_unchecked("llvm-mc", ["-triple=amdgcn-amd-amdhsa", f"-mcpu={processor}",
                                                      "-filetype=null"], input=source.encode())
    bad = {int(m.group(1)) for m in re.finditer(r"<stdin>:(\d+):\d+: error", proc.stderr.decode())}
    out: dict[str, Example] = {}
    for line, (base, ex) in enumerate(flat, start=1):
        if line not in bad:
            out.setdefault(base, ex)
    return out


def _plain(text: str) -> str:
    """`text` without its `name:value` modifiers and with a 16-bit literal (forms the disassembler
    prints but the assembler wants spelled otherwise)."""
    return " ".join(t for t in text.split(" ") if ":" not in t or t.startswith(("v[", "s[", "a["))) \
        .replace("0x3f800000", "0x3c00").rstrip(",")


@dataclass(frozen=True)
class McaInfo:
    """llvm-mca's instruction info: latency and reciprocal throughput in its cycles, memory flags."""

    latency: int
    rthroughput: float
    may_load: bool
    may_store: bool


def mca_info(texts: list[str], processor: str = "gfx942") -> list[McaInfo]:
    """llvm-mca `-instruction-info` for each text, in order."""
    source = "\n".join(texts) + "\n"
    out = find_toolchain().run("llvm-mca", ["-mtriple=amdgcn-amd-amdhsa", f"-mcpu={processor}",
                                            "-instruction-info", "-iterations=1"], input=source.encode()).decode()
    table = out.split("Instruction Info:", 1)[1]
    header = next(line for line in table.splitlines() if line.startswith("[1]") and "[6]" in line)
    col = {n: header.index(f"[{n}]") for n in range(1, 7)}
    rows = [line for line in table.split(header, 1)[1].split("\n\n", 1)[0].splitlines() if line.strip()]
    if len(rows) != len(texts):
        raise AssertionError(f"llvm-mca gave {len(rows)} rows for {len(texts)} instructions")
    return [McaInfo(int(r[col[2]:col[3]]), float(r[col[3]:col[4]]), r[col[4]:col[5]].strip() == "*",
                    r[col[5]:col[6]].strip() == "*") for r in rows]
