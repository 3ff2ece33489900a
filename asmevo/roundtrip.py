"""Round-trip check: recover + rebuild with no edit, then compare with the original (K0).

Compared: the whole text (every kernel's and function's instruction bytes), each kernel's
offset in the text, descriptor bytes (the entry offset by meaning: it must point at the same
code), the decoded metadata, target and code-object version. A file is `identical`,
`patch-only` (full rebuild not exact: the reason is given; in-place patching still applies) or
`failed` (the input itself cannot be handled).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from .codeobj.elf import CodeObject
from .errors import AsmEvoError, PatchError
from .patch import patch
from .rebuild import rebuild_source
from .recover import disassemble_text, recover


@dataclass
class RoundTrip:
    """Outcome for one file."""

    path: str
    status: str  # identical | patch-only | failed
    reason: str = ""
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"path": self.path, "status": self.status, "reason": self.reason,
                "seconds": round(self.seconds, 3), "notes": self.notes}


def _first_diff(a, b, path: str = "") -> str | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            found = _first_diff(a.get(key), b.get(key), f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            found = _first_diff(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{path}: {a!r} != {b!r}"


def compare(k0: CodeObject, k2: CodeObject) -> str | None:
    """The first difference between two code objects that the round trip must preserve."""
    if str(k0.target) != str(k2.target) or k0.code_object_version != k2.code_object_version:
        return f"target/version {k2.target} v{k2.code_object_version} != {k0.target} v{k0.code_object_version}"
    t0 = k0.read(k0.text["address"], k0.text["size"])
    t2 = k2.read(k2.text["address"], k2.text["size"])
    if t0 != t2:
        at = next((i for i in range(min(len(t0), len(t2))) if t0[i] != t2[i]), min(len(t0), len(t2)))
        return f"text differs at 0x{k0.text['address'] + at:x} (sizes {len(t0)} vs {len(t2)})"
    if k0.kernel_names != k2.kernel_names:
        return f"kernels {k2.kernel_names} != {k0.kernel_names}"
    for a, b in zip(k0.kernels, k2.kernels):
        if a.entry_address - k0.text["address"] != b.entry_address - k2.text["address"]:
            return f"kernel {a.name}: entry moved within the text"
        da, db = a.descriptor.as_dict(), b.descriptor.as_dict()
        da["kernel_code_entry_byte_offset"] = db["kernel_code_entry_byte_offset"] = 0
        if da != db or a.descriptor.reserved != b.descriptor.reserved:
            return f"kernel {a.name}: descriptor {_first_diff(da, db) or 'reserved bytes'}"
    if k0.metadata == k2.metadata:  # the walk below only names the first difference
        return None
    return f"metadata {_first_diff(k0.metadata, k2.metadata)}"


def roundtrip(path: str | Path) -> RoundTrip:
    """Recover and rebuild `path` without edits, and classify the result."""
    start = time.perf_counter()
    path = str(path)
    try:
        k0 = CodeObject.from_path(path)
        rec = recover(path, code_object=k0)
    except AsmEvoError as exc:
        return RoundTrip(path, "failed", str(exc), time.perf_counter() - start)
    notes = list(rec.warnings)
    if rec.info["raw_words"]:
        kinds = sorted({word["text"].split(None, 1)[0] for word in rec.info["raw_words"]})
        notes.append(f"{len(rec.info['raw_words'])} instruction(s) kept as raw words ({', '.join(kinds)})")
    try:
        k2 = rebuild_source(rec.source, rec.info, origin=f"{rec.name}.s").code_object
    except AsmEvoError as exc:
        return RoundTrip(path, "patch-only", f"rebuild failed: {exc}", time.perf_counter() - start, notes)
    diff = compare(k0, k2)
    if diff and rec.info["metadata_lossy"] and diff.startswith("metadata"):
        diff += f" (YAML cannot carry {', '.join(rec.info['metadata_lossy'][:3])})"
    if not diff:
        return RoundTrip(path, "identical", "", time.perf_counter() - start, notes)
    return _patch_only(path, k0, diff, start, notes)


def roundtrip_many(paths: list[str | Path]) -> list[RoundTrip]:
    """`roundtrip` of each path."""
    return [roundtrip(path) for path in paths]


def _patch_only(path: str, k0: CodeObject, reason: str, start: float, notes: list[str]) -> RoundTrip:
    """`patch-only` once a no-op in-place patch of each kernel's first instruction reproduces
    K0 (so the fallback really applies), else `failed`."""
    try:
        first = {item.address: item for item in disassemble_text(k0)}
        for kernel in k0.kernels:
            item = first[kernel.entry_address]
            if item.text is not None and patch(path, item.address, item.address + item.size, item.original) != k0.data:
                raise PatchError(f"no-op patch at 0x{item.address:x} changed the file")
    except (AsmEvoError, KeyError) as exc:
        return RoundTrip(path, "failed", f"{reason}; in-place patching fails too: {exc}",
                         time.perf_counter() - start, notes)
    return RoundTrip(path, "patch-only", reason, time.perf_counter() - start, notes)
