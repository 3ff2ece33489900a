#!/usr/bin/env python3
"""Prefect orchestration cost: overhead per stage task, and a finished suite run's resume time.

    python benchmarks/orchestration/bench_orchestration.py [--suite kernelbench] [--problems A,B]
        [--agent search] [--budget 16] [--gpu mi308x] [--home DIR] [--tasks 200]

1. Per task: a flow of N trivial content-cached stage tasks (misses, then hits) against calling
   the same stage bodies directly; the difference per call is Prefect's overhead.
2. Suite: `asmevo suite run` (by default scripts/main.sh's main job: search agent, budget 16, MI308X) on a
   fresh ASMEVO_HOME (first run; its kernel table is printed too), then the same command again (every stage
   a cache hit). `--home` keeps that home (e.g. for `asmevo report`). Orchestration overhead = process
   start-up before the first stage (imports, API server) + tasks x per-task overhead, as a share of the
   first run; the re-run's wall time as a share of the first run is the resume cost. Targets: < 10 % and
   < 5 %.

Record: orchestration_SUITE[-PROBLEMS][-AGENT][-budgetN][-GPU].txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks import record  # noqa: E402


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _unwaited_cpu_s(pid: int, seen: dict[int, float]) -> None:
    """Record the CPU seconds so far of every process below `pid` that runs a multiprocessing fork
    server's code (the stage workers and their fork server: nobody waits for them, so the run's
    resource usage does not include them)."""
    tick = os.sysconf("SC_CLK_TCK")
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += map(int, (task / "children").read_text().split())
            if p != pid and b"forkserver" in Path(f"/proc/{p}/cmdline").read_bytes():
                fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
                seen[p] = (int(fields[11]) + int(fields[12])) / tick
        except (FileNotFoundError, ProcessLookupError):
            continue


def cli_run(home: Path, suite: str, problems: str | None, agent: str, budget: int, gpu: str,
            run_id: str) -> tuple[float, float, str]:
    """(wall s, CPU s of the run's processes, stdout) of one `asmevo suite run`. The stage workers'
    CPU is sampled every half second (up to half a second of each worker's last moments is missed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(ASMEVO_HOME=str(home), PYTHONPATH=str(REPO))
    args = [sys.executable, "-m", "asmevo.cli", "suite", "run", suite, "--agent", agent, "--budget", str(budget),
            "--gpu", gpu, "--run-id", run_id]
    args += ["--problems", problems] if problems else []
    started, cpu_before = time.perf_counter(), children_cpu_s()
    proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers: dict[int, float] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.5):
            _unwaited_cpu_s(proc.pid, workers)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate()
    done.set()
    sampler.join()
    wall, cpu = time.perf_counter() - started, children_cpu_s() - cpu_before + sum(workers.values())
    if "stage calls were cache hits" not in stdout:
        sys.exit(f"suite run failed:\n{stdout}\n{stderr}")
    return wall, cpu, stdout


def per_task_overhead(n: int) -> tuple[float, float, float]:
    """(seconds per task on a miss, on a hit, API start-up seconds), measured in this process."""
    os.environ["ASMEVO_HOME"] = tempfile.mkdtemp(prefix="asmevo-bench-")
    from artifacts import configure_prefect

    configure_prefect()
    from flows.server import start_api

    started = time.perf_counter()
    start_api()()
    api_s = time.perf_counter() - started
    from prefect import flow

    from artifacts import default_store
    from tasks.policy import Output, stage

    @stage("bench-noop", ("tasks.policy",))
    def noop(data: str, config: dict) -> Output:
        return Output("bench", default_store().get(data) + str(config["i"]).encode())

    @flow(persist_result=False)
    def many(data: str, count: int) -> None:
        for f in [noop.submit(data, {"i": i}) for i in range(count)]:
            f.wait()

    data = default_store().put(b"x")
    many(data, 1)  # flow machinery warm-up
    direct_started = time.perf_counter()
    for i in range(n):
        noop.fn(data, {"i": i + n})
    direct = time.perf_counter() - direct_started
    timings = []
    for _ in range(2):  # misses, then hits
        started = time.perf_counter()
        many(data, n)
        timings.append(time.perf_counter() - started)
    return (timings[0] - direct) / n, (timings[1] - direct) / n, api_s


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="kernelbench")
    parser.add_argument("--problems", help="comma-separated subset (default: the whole suite)")
    parser.add_argument("--agent", default="search", help="editing agent of the suite run (default search)")
    parser.add_argument("--budget", type=int, default=16, help="candidate edits per kernel (default 16)")
    parser.add_argument("--gpu", default="mi308x", help="GPU the model predicts for (default mi308x, the main job's)")
    parser.add_argument("--home", type=Path, help="ASMEVO_HOME of the suite runs, kept (default: a temporary one)")
    parser.add_argument("--tasks", type=int, default=200, help="trivial tasks for the per-task measurement")
    return parser.parse_args(argv)


def record_path(argv: list[str]) -> Path:
    """orchestration_SUITE[-PROBLEMS][-AGENT][-budgetN][-GPU].txt beside this script."""
    args = parse_args(argv)
    return record.default_path(__file__, args.problems, args.agent != "search" and args.agent,
                               args.budget != 16 and f"budget{args.budget}", args.gpu != "mi308x" and args.gpu,
                               stem=f"orchestration_{args.suite}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    home = args.home or Path(tempfile.mkdtemp(prefix="asmevo-bench-suite-"))
    run = (args.suite, args.problems, args.agent, args.budget, args.gpu)
    first_s, first_cpu, first_out = cli_run(home, *run, f"{args.suite}-first")
    again_s, again_cpu, again_out = cli_run(home, *run, f"{args.suite}-again")
    calls = int(re.search(r"/(\d+) stage calls", first_out).group(1))
    hits = re.search(r"(\d+/\d+) stage calls", again_out).group(1)
    flow_s = float(re.search(r"cache hits, ([\d.]+) s", first_out).group(1))

    print("first run's kernels:")
    print("\n".join(line for line in first_out.splitlines() if line.startswith(("[", "run "))))
    miss_s, hit_s, api_s = per_task_overhead(args.tasks)
    startup_s = first_s - flow_s
    overhead_s = startup_s + calls * miss_s
    print(f"per task: {1000 * miss_s:.1f} ms on a miss, {1000 * hit_s:.1f} ms on a cache hit "
          f"({args.tasks} trivial tasks); API server start {api_s:.1f} s")
    print(f"first run: {first_s:.1f} s wall ({flow_s:.1f} s in the flow, {startup_s:.1f} s process start-up "
          f"and shutdown), {calls} stage calls")
    print(f"orchestration overhead: {overhead_s:.1f} s = {100 * overhead_s / first_s:.1f} % of the first run "
          f"(target < 10 %)")
    print(f"resume of the finished run: {again_s:.1f} s wall, {hits} cache hits = "
          f"{100 * again_s / first_s:.1f} % of the first run (target < 5 %)")
    print(f"CPU time: first run {first_cpu:.1f} s, re-run {again_cpu:.1f} s = {100 * again_cpu / first_cpu:.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record_path))
