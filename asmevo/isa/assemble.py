"""Batched llvm-mc / ld.lld calls: per-line encodings, object assembly and linking.

Every helper runs one subprocess for a whole list of lines or a whole source, never one per
instruction.
"""
from __future__ import annotations

import functools
import re
import tempfile

from ..target import TargetId
from ..errors import ToolchainError
from ..toolchain import find_toolchain

TRIPLE = "amdgcn-amd-amdhsa"
_ENC_RE = re.compile(r";\s*encoding:\s*\[([^\]]*)\]")
_ERR_RE = re.compile(r"^<stdin>:(\d+):\d+: error: (.*)$")


def mc_target_args(target: TargetId) -> list[str]:
    """llvm-mc options selecting the processor and the target id's feature states."""
    feats = [f"{'+' if state == 'on' else '-'}{name}"
             for name, state in (("sramecc", target.sramecc), ("xnack", target.xnack)) if state in ("on", "off")]
    args = [f"-triple={TRIPLE}", f"-mcpu={target.processor}"]
    return args + ([f"-mattr={','.join(feats)}"] if feats else [])


def encode_lines(lines: list[str], target: TargetId) -> tuple[list[bytes | None], dict[int, str]]:
    """Encode each line (one instruction each, no labels) with one llvm-mc call.

    Returns the encoding per line (None where llvm-mc rejected the line, or where the encoding
    needs a fixup) and the error message per rejected line index.
    """
    source = "\n".join(lines) + "\n"
    proc = find_toolchain().run_unchecked(
        "llvm-mc", [*mc_target_args(target), "-show-encoding"], input=source.encode())
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
        raise ToolchainError(f"llvm-mc printed {len(encs)} encodings for {len(ok)} accepted lines")
    out: list[bytes | None] = [None] * len(lines)
    for i, enc in zip(ok, encs):
        out[i] = enc
    return out, errors


@functools.lru_cache(maxsize=2)
def assemble(source: str, target: TargetId) -> bytes:
    """Assemble a complete source into a relocatable object (bytes). The last results are
    cached: a round trip assembles the same source to verify it and to rebuild."""
    return find_toolchain().run("llvm-mc", [*mc_target_args(target), "-filetype=obj", "-o", "-", "-"],
                                input=source.encode())


@functools.lru_cache(maxsize=2)
def link(obj: bytes) -> bytes:
    """Link one relocatable object into a shared code object with ld.lld (last results cached)."""
    with tempfile.NamedTemporaryFile(prefix="asmevo-ld-", suffix=".o") as src:
        src.write(obj)
        src.flush()
        return find_toolchain().run("ld.lld", ["-shared", "--no-undefined", "--threads=1", "-o", "-", src.name])
