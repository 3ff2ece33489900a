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


def add_gpu_option(parser) -> None:
    """`--gpu NAME`: the GPU the timing model predicts for (asmevo.target.gpus)."""
    from ..target import DEFAULT_GPU, GPUS
    parser.add_argument("--gpu", default=DEFAULT_GPU, choices=sorted(GPUS), type=str.lower,
                        help=f"GPU the model predicts for (default {DEFAULT_GPU})")
