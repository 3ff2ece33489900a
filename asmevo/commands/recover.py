"""`asmevo recover K.co -o DIR`: write DIR/<name>.s (assembly llvm-mc accepts) and DIR/recovery.json."""
from __future__ import annotations

import sys

from ..recover import recover


def register(subparsers) -> None:
    p = subparsers.add_parser("recover", help="recover a code object as an assembly source",
                              description=__doc__.splitlines()[0])
    p.add_argument("code_object", help="the code object (.co)")
    p.add_argument("-o", "--out", required=True, help="output directory")
    p.set_defaults(handler=run)


def run(args) -> int:
    rec = recover(args.code_object)
    src = rec.write(args.out)
    for w in rec.warnings:
        print(f"warning: {w}", file=sys.stderr)
    for raw in rec.info["raw_words"]:
        print(f"raw: 0x{raw['address']:x} {raw['text']} ({raw['reason']})", file=sys.stderr)
    print(f"{src}: {len(rec.info['kernels'])} kernel(s), {len(rec.info['instructions'])} text items, "
          f"{len(rec.info['raw_words'])} raw")
    return 0
