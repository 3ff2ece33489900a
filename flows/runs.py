"""Suite runs on disk: `$ASMEVO_HOME/runs/<run-id>/` holds run.json (what was run, by whom, how it
ended, cache statistics), results.json (one row per kernel) and the reports."""
from __future__ import annotations

import json
import os
import secrets
import socket
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from artifacts import asmevo_home
from artifacts.files import write_atomic
from asmevo.errors import AsmEvoError

RUN_FILE = "run.json"
RESULTS_FILE = "results.json"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_run_id(suite: str) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{Path(suite).name}-{stamp}-{secrets.token_hex(2)}"


@dataclass
class Run:
    """One suite run. `status` is running, completed or failed; a run whose process died shows as
    interrupted (see `state`)."""

    run_id: str
    suite: str
    config: dict
    status: str = "running"
    pid: int = field(default_factory=os.getpid)
    host: str = field(default_factory=socket.gethostname)
    started: str = field(default_factory=now)
    finished: str | None = None
    elapsed_s: float | None = None
    kernels: int = 0
    cache: dict = field(default_factory=dict)
    flow_run_id: str | None = None

    @property
    def dir(self) -> Path:
        return asmevo_home().runs / self.run_id

    @property
    def state(self) -> str:
        if self.status == "running" and self.host == socket.gethostname() and not _alive(self.pid):
            return "interrupted"
        return self.status

    def save(self) -> None:
        write_atomic(self.dir / RUN_FILE, json.dumps(asdict(self), indent=1).encode())

    def save_results(self, rows: list[dict]) -> None:
        write_atomic(self.dir / RESULTS_FILE, json.dumps(rows, indent=1).encode())

    def results(self) -> list[dict]:
        try:
            return json.loads((self.dir / RESULTS_FILE).read_text())
        except FileNotFoundError:
            raise AsmEvoError(f"run {self.run_id} has no results yet (state: {self.state})") from None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def load_run(run_id: str) -> Run:
    """The run named `run_id` (or a directory path of one)."""
    path = Path(run_id)
    run_dir = path if (path / RUN_FILE).is_file() else asmevo_home().runs / run_id
    try:
        return Run(**json.loads((run_dir / RUN_FILE).read_text()))
    except FileNotFoundError:
        raise AsmEvoError(f"no run {run_id!r} in {asmevo_home().runs} (see `asmevo runs`)") from None


def list_runs() -> list[Run]:
    """Every run under ASMEVO_HOME, oldest first."""
    root = asmevo_home().runs
    runs = [load_run(str(p.parent)) for p in root.glob(f"*/{RUN_FILE}")] if root.is_dir() else []
    return sorted(runs, key=lambda r: (r.started, r.run_id))
