"""Where AsmEvo keeps its state: `$ASMEVO_HOME` (default `~/.asmevo`).

    store/            content-addressed blobs and artifact records (diskcache)
    prefect/results/  Prefect's persisted task results
    prefect/keys/     Prefect's cache-key (result metadata) storage, apart from the results
    prefect/home/     PREFECT_HOME: the ephemeral API server's database and profiles
    runs/<run-id>/    one directory per suite run: run.json, results.json and the reports
    memory/<suite>.json  the search agent's memory of a suite (asmevo.agent.memory)
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Home:
    """The directory layout under one ASMEVO_HOME."""

    root: Path

    @property
    def store(self) -> Path:
        return self.root / "store"

    @property
    def results(self) -> Path:
        return self.root / "prefect" / "results"

    @property
    def keys(self) -> Path:
        return self.root / "prefect" / "keys"

    @property
    def prefect_home(self) -> Path:
        return self.root / "prefect" / "home"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    def memory(self, suite: str) -> Path:
        """The search memory file of `suite`."""
        return self.root / "memory" / f"{suite}.json"

    def prefect_env(self) -> dict[str, str]:
        """Environment for Prefect (and the litellm/Dask it may load) under this home. Prefect reads its settings when it is first
        imported, so apply these (`os.environ.update`) before importing it."""
        return {
            "PREFECT_HOME": str(self.prefect_home),
            "PREFECT_LOCAL_STORAGE_PATH": str(self.results),
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_SERVER_LOGGING_LEVEL": "CRITICAL",
            "PREFECT_LOGGING_LEVEL": "WARNING",
            "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "DASK_LOGGING__DISTRIBUTED": "warning",
        }


def configure_prefect(home: Home | None = None) -> None:
    """Point Prefect at `home` (default: the current ASMEVO_HOME) unless the environment already
    says otherwise (e.g. PREFECT_API_URL, PREFECT_HOME). Call before Prefect is first imported."""
    home = home or asmevo_home()
    for key, value in home.prefect_env().items():
        os.environ.setdefault(key, value)
    Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)


def asmevo_home() -> Home:
    """The layout under `$ASMEVO_HOME`, or `~/.asmevo` when it is unset."""
    root = os.environ.get("ASMEVO_HOME") or str(Path.home() / ".asmevo")
    return Home(Path(root).expanduser().resolve())
