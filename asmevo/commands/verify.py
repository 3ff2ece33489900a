"""`asmevo verify K0.co K1.co --launch L.json [--launch L2.json ...] [--trials N] [--device emu|hip]
[--json FILE]`: differential verification of candidate K1 against K0. Exit 0 equivalent, 1 not
equivalent (different, invalid or crashed; the reason is printed), 2 for bad input or an unusable
device. The emulator always verifies and decides; with `--device hip` an equivalent K1 is then run
with K0 on the GPU, in an isolated child, as a confirmation whose failure is the verdict."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..codeobj import CodeObject
from ..device import DEVICES, get_device
from ..errors import AsmEvoError
from ..launches import load_launch
from ..verify import verify
from .args import positive_int


def register(subparsers) -> None:
    p = subparsers.add_parser("verify", help="verify a candidate kernel against the original",
                              description=__doc__.splitlines()[0])
    p.add_argument("k0", help="the original code object")
    p.add_argument("k1", help="the candidate code object")
    p.add_argument("--launch", action="append", required=True,
                   help="launch spec (.json/.yaml; optional \"tolerance\" key); repeat for every shape")
    p.add_argument("--trials", type=positive_int, default=3, help="seeded random input sets per launch (default 3)")
    p.add_argument("--no-special", action="store_true", help="skip the special-value input sets")
    p.add_argument("--device", choices=DEVICES, default="emu",
                   help="emu (default), or hip: after the emulator, confirm on the GPU (any free one)")
    p.add_argument("--json", help="write the verdict record here")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    k0, k1 = CodeObject.from_path(args.k0), CodeObject.from_path(args.k1)
    launches = [load_launch(path) for path in args.launch]
    verdict = verify(k0, k1, launches, trials=args.trials, special=not args.no_special, device=get_device(args.device))
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(verdict.to_json(), indent=2, default=str) + "\n")
        except OSError as exc:
            raise AsmEvoError(f"cannot write {args.json} ({exc.strerror})") from None
    print(verdict.summary())
    return 0 if verdict.equivalent else 1
