#!/usr/bin/env python3
"""Fetch the gfx950 suite's inputs: the pinned amd-aiter wheel's gfx950 code objects and the host sources whose
packed `KernelArgs` structs the launch specs follow; check every code object against manifest.json.

    python benchmarks/production/aiter_gfx950/build.py            # fetch/extract what is missing, verify sha256
    python benchmarks/production/aiter_gfx950/build.py --update   # rewrite manifest.json from the extracted files

The gfx942 suite's build.py does the work (benchmarks/production/aiter/build.py), on this directory.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _gfx942_build():
    spec = importlib.util.spec_from_file_location("aiter_gfx942_build", HERE.parent / "aiter" / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


B = _gfx942_build()


def prepare() -> None:
    """The suite's prepare hook: fetch what is missing and check every code object's sha256."""
    B.prepare(HERE, "gfx950")


def main(argv: list[str] | None = None) -> int:
    return B.main(argv, HERE, "gfx950", "aiter_gfx950")


if __name__ == "__main__":
    sys.exit(main())
