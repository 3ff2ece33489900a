"""Argument types shared by the subcommands."""
from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """argparse type: a positive integer, else a one-line usage error."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value
