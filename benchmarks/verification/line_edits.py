"""Rebuild a recovered kernel with some of its instructions replaced or deleted, by address."""
from __future__ import annotations

from asmevo.rebuild import rebuild_source


def build(lines: list[str], info: dict, edits: dict[int, tuple[str, str | None]]) -> bytes:
    """The code object of the recovered source `lines` with the instruction at each address of
    `edits` (which must start with the old text given) replaced by the new text, or deleted when
    the new text is None."""
    out: list[str] = []
    found = set()
    for line in lines:
        address = next((a for a in edits if line.rstrip().endswith(f"; 0x{a:x}")), None)
        if address is None:
            out.append(line)
            continue
        old, new = edits[address]
        if not line.strip().startswith(old):
            raise SystemExit(f"0x{address:x} holds {line.strip()!r}, not {old!r}: another kernel build")
        found.add(address)
        if new is not None:
            out.append(f"\t{new}")
    missing = sorted(set(edits) - found)
    if missing:
        raise SystemExit(f"no instruction at {', '.join(hex(a) for a in missing)}")
    return rebuild_source("\n".join(out) + "\n", info).data
