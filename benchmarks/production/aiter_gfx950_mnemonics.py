"""Which instructions gfx950 (CDNA4) AITer code objects use that the emulator's gfx942 table lacks.

Disassembles every gfx950 code object of the pinned amd-aiter wheel (asmevo.calibrate.aiter_wheel) and
counts, per base mnemonic (encoding suffix stripped) absent from the gfx942 instruction table, the
objects that contain it and whether the emulator prepares every one of its instructions for gfx950
(`emulated`); and the objects none of whose instructions the emulator refuses to prepare (an
instruction it prepares may still raise at run time for operands it does not model, e.g. a
`v_permlane16_swap` under partial EXEC).

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
from asmevo.emu.ops import Context  # noqa: E402
from asmevo.emu.program import compile_family  # noqa: E402
from asmevo.errors import AsmEvoError, UnsupportedInstruction  # noqa: E402
from asmevo.isa.table import mnemonics, split_mnemonic  # noqa: E402
from benchmarks import record  # noqa: E402


def survey(path: Path, known: frozenset[str]) -> tuple[set[str], set[str]]:
    """(base mnemonics of one code object that `known` lacks, base mnemonics (or `.long`) of its
    instructions the emulator refuses to prepare for gfx950)."""
    listing = parsed(path.read_bytes()).listing
    ctx = Context(str(path), "gfx950")
    refused = set()
    for ins in listing.instructions:
        try:
            if ins.is_data:
                raise UnsupportedInstruction(".long")
            compile_family(ins, ctx)
        except UnsupportedInstruction:
            refused.add(".long" if ins.is_data else split_mnemonic(ins.mnemonic)[0])
    return {split_mnemonic(i.mnemonic)[0] for i in listing.instructions if not i.is_data} - known, refused


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
    refusing: collections.Counter[str] = collections.Counter()
    without = prepared = 0
    for path in files:
        new, refused = survey(path, known)
        objects.update(new)
        refusing.update(refused)
        without += not new
        prepared += not refused
    print(f"gfx950 code objects: {len(files)}; using only gfx942 mnemonics: {without}; "
          f"every instruction prepared by the emulator: {prepared}")
    print(f"{'objects':>7}  {'emulated':>8}  mnemonic (absent from gfx942)")
    for name, count in sorted(objects.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{count:7d}  {'no' if name in refusing else 'yes':>8}  {name}")
    print(f"{'objects':>7}  instruction the emulator refuses to prepare (gfx942's included)")
    for name, count in sorted(refusing.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{count:7d}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record.default_path(__file__)))
