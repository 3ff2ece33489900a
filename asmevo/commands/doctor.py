"""`asmevo doctor`: what this machine offers AsmEvo (LLVM, Triton, hip-python, ROCm, GPUs) and whether each
device (`emu`, `hip`) is usable, with the fix for what is not. Exit 0 when the emulator works."""
from __future__ import annotations

import argparse

from ..doctor import run_checks


def register(subparsers) -> None:
    p = subparsers.add_parser("doctor", help="check LLVM, Triton, hip-python, ROCm, GPUs and the devices",
                              description=__doc__.splitlines()[0])
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    checks = run_checks()
    for check in checks:
        print(check.line())
    emu = next(c for c in checks if c.name == "device emu")
    return 0 if emu.ok else 1
