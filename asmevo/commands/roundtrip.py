"""`asmevo roundtrip K.co... [--json FILE]`: recover + rebuild without edits and compare.
Exit 0 iff no file failed."""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import AsmEvoError
from ..roundtrip import roundtrip_many

BATCH = 16  # files per llvm-objdump run


def register(subparsers) -> None:
    p = subparsers.add_parser("roundtrip", help="check recover+rebuild reproduces code objects",
                              description=__doc__.splitlines()[0])
    p.add_argument("code_objects", nargs="+", help="code objects (.co)")
    p.add_argument("--json", help="write the per-file results to this file")
    p.set_defaults(handler=run)


def run(args) -> int:
    paths = args.code_objects
    results = [r for i in range(0, len(paths), BATCH) for r in roundtrip_many(paths[i:i + BATCH])]
    for r in results:
        print(f"{r.status:10s} {r.path} ({r.seconds:.2f}s)" + (f": {r.reason}" if r.reason else ""))
    counts = {s: sum(r.status == s for r in results) for s in ("identical", "patch-only", "failed")}
    print(", ".join(f"{n} {s}" for s, n in counts.items()))
    if args.json:
        try:
            Path(args.json).write_text(json.dumps([r.as_dict() for r in results], indent=1) + "\n")
        except OSError as exc:
            raise AsmEvoError(f"cannot write {args.json}: {exc.strerror}") from None
    return 1 if counts["failed"] else 0
