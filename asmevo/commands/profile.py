"""`asmevo profile K.co --launch L.json [--gpu G] [--recovery DIR] [--top N] [--json FILE]`: model one
launch (a sample of a large one's workgroups on the emulator) and print an annotated listing
(address, source line, count, share of modelled cycles, instruction) with the hot windows ranked and
explained."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..codeobj import CodeObject
from ..errors import AsmEvoError
from ..profile import profile_launch
from ..launches import load_launch
from .args import add_gpu_option, positive_int


def register(subparsers) -> None:
    p = subparsers.add_parser("profile", help="hot windows of a kernel from the emulator and the timing model",
                              description=__doc__.splitlines()[0])
    p.add_argument("code_object", help="the kernel's code object (.co)")
    p.add_argument("--launch", required=True, help="launch spec (.json, .yaml or .yml)")
    p.add_argument("--recovery", help="recovery directory (recovery.json) to map windows to source lines")
    p.add_argument("--top", type=positive_int, default=8, help="number of windows (default 8)")
    add_gpu_option(p)
    p.add_argument("--json", help="write the profile record here")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    co = CodeObject.from_path(args.code_object)
    vl = load_launch(args.launch)
    prof = profile_launch(co, vl.spec, gpu_name=args.gpu, recovery_dir=args.recovery, top=args.top,
                          known_findings=vl.known_findings)
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(prof.to_json(), indent=1, default=str) + "\n")
        except OSError as exc:
            raise AsmEvoError(f"cannot write {args.json} ({exc.strerror})") from None
    print(prof.listing())
    return 0
