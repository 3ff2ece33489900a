"""Which instructions gfx950 (CDNA4) AITer code objects use that the emulator's gfx942 table lacks.

Disassembles every gfx950 code object of the pinned amd-aiter wheel (asmevo.calibrate.aiter_wheel) and
counts, per base mnemonic (encoding suffix stripped) absent from the gfx942 instruction table, the
objects that contain it, plus whether the emulator runs each such object (none of its instructions
raise `UnsupportedInstruction` when prepared for gfx950).

    python benchmarks/production/aiter_gfx950_mnemonics.py [--limit N]

Record: aiter_gfx950_mnemonics.txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.calibrate.aiter_wheel import extract, fetch_wheel  # noqa: E402
from asmevo.codeobj import parsed  # noqa: E402
from asmevo.errors import AsmEvoError  # noqa: E402
from asmevo.isa.table import mnemonics, split_mnemonic  # noqa: E402
from benchmarks import record  # noqa: E402


def new_mnemonics(path: Path, known: frozenset[str]) -> set[str]:
    """Base mnemonics of one code object that `known` lacks."""
    listing = parsed(path.read_bytes()).listing
    return {split_mnemonic(i.mnemonic)[0] for i in listing.instructions if not i.is_data} - known


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="only the first N files (path order)")
    args = parser.parse_args(argv)
    try:
        files = extract(fetch_wheel(), "gfx950")
    except AsmEvoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    files = files[:args.limit] if args.limit else files
    known = mnemonics("gfx942")
    objects: collections.Counter[str] = collections.Counter()
    without = 0
    for path in files:
        new = new_mnemonics(path, known)
        objects.update(new)
        without += not new
    print(f"gfx950 code objects: {len(files)}; using only gfx942 mnemonics: {without}")
    print(f"{'objects':>7}  mnemonic (absent from gfx942)")
    for name, count in sorted(objects.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{count:7d}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record.default_path(__file__)))
