"""Helpers for tests that run `asmevo suite run` as a subprocess and compare its result tables."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

TIMEOUT_S = 600


def finish(proc: subprocess.Popen) -> str:
    """The run's output, once it exited 0."""
    out, _ = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 0, out
    return out


def table(home: Path, output: str) -> list[dict]:
    """The run's rows by kernel, without the per-stage compute seconds (wall-clock, never reproducible)."""
    run_id = re.search(r"^run (\S+):", output, re.M).group(1)
    rows = json.loads((home / "runs" / run_id / "results.json").read_text())
    return sorted(({k: v for k, v in row.items() if not k.endswith("_s")} for row in rows), key=lambda r: r["kernel"])
