"""`asmevo rebuild DIR/<name>.s -o K2.co [--shrink]`: reassemble and link a recovered source."""
from __future__ import annotations

from ..rebuild import rebuild


def register(subparsers) -> None:
    p = subparsers.add_parser("rebuild", help="rebuild a code object from a recovered source",
                              description=__doc__.splitlines()[0])
    p.add_argument("source", help="DIR/<name>.s written by `asmevo recover` (DIR/recovery.json beside it)")
    p.add_argument("-o", "--out", required=True, help="output code object")
    p.add_argument("--shrink", action="store_true",
                   help="declare exactly the rescanned register counts (default keeps K0's when larger)")
    p.set_defaults(handler=run)


def run(args) -> int:
    result = rebuild(args.source, args.out, shrink=args.shrink)
    for name, a in result.allocations.items():
        print(f"{name}: next_free_vgpr {a.next_free_vgpr} next_free_sgpr {a.next_free_sgpr} "
              f"accum_offset {a.accum_offset} vgpr_count {a.vgpr_count} sgpr_count {a.sgpr_count} "
              f"agpr_count {a.agpr_count}")
    print(f"wrote {args.out}")
    return 0
