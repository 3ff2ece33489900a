"""asmevo: make compiled AMD GPU kernels faster at the assembly level, proving every change safe.

Each subcommand lives in `asmevo/commands/<name>.py` and exposes `register(subparsers)`; its
handler returns the exit code. Expected failures (AsmEvoError) print
one line `error: ...` and exit 2; finished results already written are never removed."""
from __future__ import annotations

import argparse
import importlib
import sys

from .errors import AsmEvoError

COMMAND_MODULES: list[str] = [
    "emulate",
    "recover",
    "rebuild",
    "roundtrip",
    "patch",
    "verify",
    "profile",
    "suite",
    "report",
    "runs",
    "serve",
    "optimize",
    "doctor",
    "time",
    "calibrate",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="asmevo", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"asmevo.commands.{name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except AsmEvoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
