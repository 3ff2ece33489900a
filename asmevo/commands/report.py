"""`asmevo report RUN`: print (or write) a suite run's report as Markdown, CSV or HTML."""
from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser("report", help="show a suite run's result table", description=__doc__.splitlines()[0])
    p.add_argument("run", help="run id (see `asmevo runs`) or run directory")
    p.add_argument("--format", choices=("md", "csv", "html"), default="md", help="output format (default md)")
    p.add_argument("-o", "--output", help="write to this file instead of standard output")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from flows.report import build_report
    from flows.runs import load_run

    text = build_report(load_run(args.run)).render(args.format)
    if args.output:
        Path(args.output).write_text(text)
    else:
        print(text, end="" if text.endswith("\n") else "\n")
    return 0
