"""Batched assembler / ld.lld calls: per-line encodings, object assembly and linking.

Every helper runs one subprocess for a whole list of lines or a whole source, never one per
instruction. The toolchain is the one `find_toolchain` gives for the target's processor; its
assembler is llvm-mc, or clang's integrated assembler (`clang -cc1as`, the same MC layer and
output) where the toolchain ships no llvm-mc (the PyPI one).
"""
from __future__ import annotations

import functools
import re
import tempfile

from ..target import TargetId
from ..errors import ToolchainError
from ..toolchain import Toolchain, find_toolchain

TRIPLE = "amdgcn-amd-amdhsa"
_ENC_RE = re.compile(r";\s*encoding:\s*\[([^\]]*)\]")
_ERR_RE = re.compile(r"^<stdin>:(\d+):\d+: error: (.*)$")


def _features(target: TargetId) -> list[str]:
    return [f"{'+' if state == 'on' else '-'}{name}"
            for name, state in (("sramecc", target.sramecc), ("xnack", target.xnack)) if state in ("on", "off")]


def assembler_command(target: TargetId, *, obj: bool) -> tuple[Toolchain, str, list[str]]:
    """(toolchain, tool, arguments) that assemble stdin for `target`: an object on stdout when
    `obj`, else the listing with `; encoding: [...]` per instruction."""
    tc = find_toolchain(target.processor)
    feats = _features(target)
    if "llvm-mc" in tc.paths:
        args = [f"-triple={TRIPLE}", f"-mcpu={target.processor}"] + ([f"-mattr={','.join(feats)}"] if feats else [])
        return tc, "llvm-mc", args + (["-filetype=obj", "-o", "-", "-"] if obj else ["-show-encoding"])
    args = ["-cc1as", "-triple", TRIPLE, "-target-cpu", target.processor]
    args += [arg for feat in feats for arg in ("-target-feature", feat)]
    return tc, "clang", args + (["-filetype", "obj"] if obj else ["-filetype", "asm", "-show-encoding"]) + ["-o", "-", "-"]


def encode_lines(lines: list[str], target: TargetId) -> tuple[list[bytes | None], dict[int, str]]:
    """Encode each line (one instruction each, no labels) with one llvm-mc call.

    Returns the encoding per line (None where llvm-mc rejected the line, or where the encoding
    needs a fixup) and the error message per rejected line index.
    """
    source = "\n".join(lines) + "\n"
    tc, tool, args = assembler_command(target, obj=False)
    proc = tc.run_unchecked(tool, args, input=source.encode())
    errors: dict[int, str] = {}
    for ln in proc.stderr.decode(errors="replace").splitlines():
        m = _ERR_RE.match(ln)
        if m:
            errors.setdefault(int(m.group(1)) - 1, m.group(2))
    encs = []
    for ln in proc.stdout.decode(errors="replace").splitlines():
        m = _ENC_RE.search(ln)
        if m:
            items = m.group(1).split(",") if m.group(1) else []
            encs.append(None if any(not x.startswith("0x") for x in items) else bytes(int(x, 16) for x in items))
    ok = [i for i in range(len(lines)) if i not in errors]
    if len(encs) != len(ok):
        raise ToolchainError(f"{tool} printed {len(encs)} encodings for {len(ok)} accepted lines")
    out: list[bytes | None] = [None] * len(lines)
    for i, enc in zip(ok, encs):
        out[i] = enc
    return out, errors


@functools.lru_cache(maxsize=2)
def assemble(source: str, target: TargetId) -> bytes:
    """Assemble a complete source into a relocatable object (bytes). The last results are
    cached: a round trip assembles the same source to verify it and to rebuild."""
    tc, tool, args = assembler_command(target, obj=True)
    return tc.run(tool, args, input=source.encode())


@functools.lru_cache(maxsize=2)
def link(obj: bytes, target: TargetId) -> bytes:
    """Link one relocatable object for `target` into a shared code object with ld.lld (last
    results cached)."""
    with tempfile.NamedTemporaryFile(prefix="asmevo-ld-", suffix=".o") as src:
        src.write(obj)
        src.flush()
        return find_toolchain(target.processor).run(
            "ld.lld", ["-shared", "--no-undefined", "--threads=1", "-o", "-", src.name])
