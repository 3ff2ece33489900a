"""Resuming inside an agent's search, as a user runs it (`asmevo suite run` in a subprocess): a run
killed with SIGKILL mid-search resumes with its finished candidates as cache hits and its stored expansions
replayed, and ends in the uninterrupted run's table and lineage; a finished LLM-agent run replayed from its artifact store,
with the provider (a scripted local server) stopped, gives the same table and spends nothing."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from cli_runs import TIMEOUT_S, finish, table

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    """A one-problem suite: KernelBench's LeakyReLU on two verify shapes, benched on the larger (a
    cheap timing launch the search finds several faster candidates on)."""
    root = tmp_path_factory.mktemp("suite")
    shutil.copytree(REPO / "benchmarks" / "kernelbench" / "20_LeakyReLU", root / "leaky")
    problem = yaml.safe_load((root / "leaky" / "problem.yaml").read_text())
    shapes = {s["name"]: s for s in problem["shapes"]}
    problem["shapes"] = [shapes["v_4x1024"], shapes["v_16x4096"], shapes["h_5x777"],
                         {**shapes["v_16x4096"], "name": "bench", "role": "bench"}]
    (root / "leaky" / "problem.yaml").write_text(yaml.safe_dump(problem, sort_keys=False))
    (root / "suite.yaml").write_text("name: mini\nproblems:\n  - leaky\n")
    return root


def start(home: Path, suite: Path, *extra: str, env: dict | None = None) -> subprocess.Popen:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "ASMEVO_"))}
    base.update(ASMEVO_HOME=str(home), PYTHONPATH=str(REPO), **(env or {}))
    return subprocess.Popen([sys.executable, "-m", "asmevo.cli", "suite", "run", str(suite), *extra], cwd=REPO,
                            env=base, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def lineage(home: Path) -> list[dict]:
    """The newest edit stage's lineage without measurements (seconds) and cache flags."""
    from artifacts import Store

    store = Store(home / "store")
    records = sorted((store.record(k) for k in store.records.iterkeys()), key=lambda r: r.created)
    found = [store.get_json(r.sha256)["lineage"] for r in records if r.kind == "optimization"]
    store.close()
    strip = lambda d: {k: v for k, v in d.items() if k not in ("seconds", "cached")}
    return [{**strip(c), "verdict": c["verdict"] and strip(c["verdict"])} for c in found[-1]["candidates"]]


def candidate_records(home: Path) -> int:
    from artifacts import Store

    if not (home / "store" / "records").is_dir():
        return 0
    store = Store(home / "store")
    n = sum(1 for k in store.records.iterkeys() if store.record(k).kind == "candidate")
    store.close()
    return n


def hits(output: str, what: str) -> tuple[int, int]:
    m = re.search(rf"(\d+)/(\d+) {what} were cache hits", output)
    return int(m.group(1)), int(m.group(2))


def replayed(output: str) -> tuple[int, int]:
    m = re.search(r"(\d+)/(\d+) search expansions replayed from the store", output)
    return int(m.group(1)), int(m.group(2))


@pytest.mark.slow  # three suite runs, about 100 s on a loaded 2-core machine (mostly process start-up)
def test_a_search_killed_mid_way_resumes_with_its_candidates_cached(suite, tmp_path):
    args = ("--agent", "search", "--budget", "8", "--workers", "2")
    reference = tmp_path / "reference"
    whole = finish(start(reference, suite, *args))
    assert hits(whole, "candidate evaluations") == (0, hits(whole, "candidate evaluations")[1])
    assert replayed(whole)[0] == 0 and replayed(whole)[1] >= 2

    home = tmp_path / "home"
    proc = start(home, suite, *args)
    deadline = time.monotonic() + TIMEOUT_S
    while candidate_records(home) < 3 and time.monotonic() < deadline:  # two outcomes committed, a third done
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert "run " not in proc.stdout.read()  # killed inside the search, before the run ended

    resumed = finish(start(home, suite, *args))
    cached, calls = hits(resumed, "candidate evaluations")
    assert cached >= 2 and calls > cached, resumed
    assert calls == hits(whole, "candidate evaluations")[1]
    stored, expanded = replayed(resumed)  # the expansions done before the kill are not computed again
    assert stored >= 1 and expanded == replayed(whole)[1], resumed
    assert table(home, resumed) == table(reference, whole)
    assert table(home, resumed)[0]["candidates_tried"] >= 4 and table(home, resumed)[0]["speedup"] > 1
    assert lineage(home) == lineage(reference)


def swap_in_a_hot_window(problem) -> tuple[int, int, int, str]:
    """(window, start, end, text): two adjacent independent instructions of a hot window, swapped, as
    the edit stage's evaluator numbers windows and lines (timed on the suite's bench shape)."""
    from asmevo.agent.gates import Evaluator
    from asmevo.agent.llm_tools import Workbench
    from asmevo.launches import suite_launches, timing_launch

    ev = Evaluator(problem.code_object, suite_launches(problem), timing=timing_launch(problem)[0])
    src = ev.source_of(0)
    for number, w in enumerate(Workbench(ev).windows(0), 1):
        for n in range(w.lo, w.hi):
            a, b = (src.line(k).split(";")[0].strip() for k in (n, n + 1))
            if a.startswith("v_mul_f32") and b.startswith("v_cmp_le_f32"):
                return number, n, n + 1, f"{b}\n{a}"
    raise AssertionError("no swappable pair in a hot window")


@pytest.mark.slow  # two suite runs, about 80 s
def test_an_llm_run_replays_from_its_store_with_the_provider_stopped(suite, tmp_path):
    from asmevo.suites import load_suite
    from scripted_server import ScriptedServer, tool_call

    window, first, last, text = swap_in_a_hot_window(load_suite(str(suite)).problem("20_LeakyReLU"))
    script = [tool_call("list_windows", {}), tool_call("view_window", {"window": window}),
              tool_call("propose_edit", {"window": window, "start_line": first, "end_line": last, "new_text": text}),
              tool_call("verify", {}), tool_call("time", {}), tool_call("finish", {"reason": "done"})]
    args = ("--agent", "llm", "--budget", "8")
    home = tmp_path / "home"
    with ScriptedServer(script) as srv:
        env = {"ASMEVO_MODEL": "openai/gpt-4o-mini", "ASMEVO_API_BASE": srv.api_base, "ASMEVO_API_KEY": "test"}
        original = finish(start(home, suite, *args, env=env))
    assert len(srv.requests) == 6
    spent = float(re.search(r"LLM cost \$([\d.]+) spent, \$0\.0000 saved", original).group(1))
    assert spent > 0
    rows = table(home, original)
    assert rows[0]["candidates_tried"] == 1 and rows[0]["status"] == "ok"

    replay = tmp_path / "replay"  # a fresh home with only the artifact store: every stage recomputes
    shutil.copytree(home / "store", replay / "store")
    again = finish(start(replay, suite, *args, env=env))  # env names the stopped server
    assert hits(again, "stage calls")[0] == 0
    m = re.search(r"LLM cost \$([\d.]+) spent, \$([\d.]+) saved", again)
    assert float(m.group(1)) == 0 and float(m.group(2)) == pytest.approx(spent, abs=1e-4)
    assert table(replay, again) == rows
    assert lineage(replay) == lineage(home)
