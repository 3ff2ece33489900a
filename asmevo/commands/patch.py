"""`asmevo patch K0.co START END FILE -o K1.co`: replace K0's instructions in [START, END) with the
assembly in FILE (same total size, padded with s_nop 0), changing nothing else."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import AsmEvoError
from ..patch import patch


def _address(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an address like 0x1f00, got {text!r}") from None


def register(subparsers) -> None:
    p = subparsers.add_parser("patch", help="patch an instruction range of a code object in place",
                              description=__doc__.splitlines()[0])
    p.add_argument("code_object", help="K0 (.co)")
    p.add_argument("start", type=_address, help="first address of the range")
    p.add_argument("end", type=_address, help="address just past the range")
    p.add_argument("source", help="file with the replacement assembly ('-' for stdin)")
    p.add_argument("-o", "--out", required=True, help="patched code object")
    p.set_defaults(handler=run)


def run(args) -> int:
    try:
        text = Path("/dev/stdin" if args.source == "-" else args.source).read_text()
    except OSError as exc:
        raise AsmEvoError(f"cannot read {args.source}: {exc.strerror}") from None
    data = patch(args.code_object, args.start, args.end, text)
    try:
        Path(args.out).write_bytes(data)
    except OSError as exc:
        raise AsmEvoError(f"cannot write {args.out}: {exc.strerror}") from None
    print(f"wrote {args.out}: 0x{args.start:x}-0x{args.end:x} patched")
    return 0
