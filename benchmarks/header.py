"""The header every benchmark output file starts with: commit, command, machine and date (and the load
average, on a machine other jobs share)."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def header() -> str:
    """`# commit ...; command: ...` and `# machine: ...; date ...` lines. ASMEVO_COMMIT names the commit
    of a frozen checkout (no .git)."""
    commit = os.environ.get("ASMEVO_COMMIT")
    if not commit:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                text=True).stdout.strip() or "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True).stdout.strip()
        commit += " (uncommitted changes)" if dirty else ""
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    script = Path(sys.argv[0]).resolve()
    command = " ".join(["python", str(script.relative_to(REPO)) if script.is_relative_to(REPO) else str(script)]
                       + sys.argv[1:])
    return (f"# commit {commit}; command: {command}\n"
            f"# machine: {os.cpu_count()} CPUs, {cpu}; load average {os.getloadavg()[0]:.2f} at the start; "
            f"date {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}\n")
