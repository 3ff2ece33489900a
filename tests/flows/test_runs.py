"""Suite runs as a user runs them (`asmevo suite run` in a subprocess): two runs at once against
one store, a run killed with SIGKILL and resumed, and a Dask LocalCluster run all end in the same
table; the killed run's private API server dies with it and nothing wedges the next run."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_runs import TIMEOUT_S, finish, table

REPO = Path(__file__).resolve().parents[2]
PROBLEMS = "19_ReLU,20_LeakyReLU,31_ELU"


def start(home: Path, *extra: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(ASMEVO_HOME=str(home), PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "asmevo.cli", "suite", "run", "kernelbench", "--problems",
                             PROBLEMS, "--workers", "2", *extra], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def cache_hits(output: str) -> tuple[int, int]:
    m = re.search(r"(\d+)/(\d+) stage calls were cache hits", output)
    return int(m.group(1)), int(m.group(2))


def api_servers(pid: int) -> list[int]:
    """The uvicorn (Prefect API server) children of process `pid`."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in map(int, (task / "children").read_text().split()):
            if b"uvicorn" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
    return found


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, their children, ...)."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in map(int, (task / "children").read_text().split()):
            out += [child] + _descendants(child)
    return out


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture(scope="module")
def concurrent(tmp_path_factory) -> tuple[Path, list[str]]:
    """Two identical runs started together against one fresh ASMEVO_HOME."""
    home = tmp_path_factory.mktemp("concurrent")
    procs = [start(home), start(home)]
    return home, [finish(p) for p in procs]


def test_concurrent_runs_agree_and_leave_the_store_intact(concurrent):
    from artifacts import Store

    home, outputs = concurrent
    first, second = (table(home, out) for out in outputs)
    assert first == second
    assert [row["status"] for row in first] == ["ok"] * 3
    assert all(row["roundtrip"] == "equivalent" and row["unit"] == "model_us" for row in first)
    assert all(row["bound"] in ("latency", "simd_issue", "hbm_bandwidth", "l2_bandwidth", "vmem_path", "lds")
               for row in first)  # what limits K0 at its timing shape, by the model
    store = Store(home / "store")
    assert store.check() == []
    assert len(store.records) > 0


def test_killed_run_resumes_to_the_same_table(concurrent, tmp_path):
    home = tmp_path / "home"
    proc = start(home)
    deadline = time.monotonic() + TIMEOUT_S
    for line in proc.stdout:  # kill -9 once one kernel is done and the others are mid-flight
        if line.startswith("[  1/3]") or time.monotonic() > deadline:
            break
    servers = api_servers(proc.pid)
    children = _descendants(proc.pid)  # the API server, the stage workers' fork server and the workers
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert servers, "the run had no API server child"
    for _ in range(600):
        if not any(alive(pid) for pid in children):
            break
        time.sleep(0.1)
    assert not any(alive(pid) for pid in servers), "the killed run orphaned its API server"
    assert not any(alive(pid) for pid in children), "the killed run orphaned processes"

    runs = subprocess.run([sys.executable, "-m", "asmevo.cli", "runs"], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "ASMEVO_HOME": str(home), "PYTHONPATH": str(REPO)})
    assert "interrupted" in runs.stdout

    resumed = finish(start(home))
    hits, calls = cache_hits(resumed)
    assert calls == 15 and hits >= 5, resumed
    assert table(home, resumed) == table(concurrent[0], concurrent[1][0])
    again = finish(start(home))
    assert cache_hits(again) == (15, 15)


def test_dask_local_cluster_run_equals_the_thread_run(concurrent, tmp_path):
    out = finish(start(tmp_path / "home", "--dask", "local"))
    assert table(tmp_path / "home", out) == table(concurrent[0], concurrent[1][0])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_run_at_once_and_it_resumes(concurrent, tmp_path, sig):
    home = tmp_path / "home"
    proc = start(home)
    deadline = time.monotonic() + TIMEOUT_S
    for line in proc.stdout:  # stop once one kernel is done, while the others compute in the workers
        if line.startswith("[  1/3]") or time.monotonic() > deadline:
            break
    children = _descendants(proc.pid)
    sent = time.monotonic()
    proc.send_signal(sig)
    while proc.poll() is None and time.monotonic() - sent < 10:
        proc.stdout.read(1 << 16)  # keep the pipe drained: a full pipe would block the run's writes
    assert time.monotonic() - sent < 2.0
    assert proc.returncode == 128 + sig
    for _ in range(100):
        if not any(alive(pid) for pid in children):
            break
        time.sleep(0.1)
    assert not any(alive(pid) for pid in children), "the stopped run left processes behind"
    resumed = finish(start(home))
    hits, calls = cache_hits(resumed)
    assert calls == 15 and hits >= 5, resumed
    assert table(home, resumed) == table(concurrent[0], concurrent[1][0])
