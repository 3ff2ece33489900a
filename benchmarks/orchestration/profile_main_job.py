#!/usr/bin/env python3
"""Where the main job's time goes: every stage of `asmevo suite run kernelbench --agent search` for a
few KernelBench kernels, run in this process (no Prefect: the stage bodies only), with the time
attributed exclusively to what ran.

    python benchmarks/orchestration/profile_main_job.py [--problems 21_Sigmoid,23_Softmax]
        [--budget 16] [--seed 0] [--cprofile 25]

Per kernel and stage (recover, rebuild, profile, verify, time, edit, verify_best, time_best) the
wall seconds; inside `edit`, the time of each phase of the agent (setup: recovery and K0's profiles;
profile: profiling a verified parent; rank: proposing
and ranking edits of it; build: edit, rebuild and static gates; verify;
time; heldout: the final re-verification) split by activity (rebuild = llvm-mc + ld.lld, static
checks, emulation = emulated launches, program = decoding and compiling a code object for the
emulator, comparison, inputs = input-set generation, model = the cycle model on a launch,
prediction = the agent's static cycle predictions and operators, disassembly, other). Every
second is charged to the innermost activity running (exclusive time). Also the evaluation
seconds of each candidate (build + verify + time) and their median, and with `--cprofile N` the
N functions with the most own time. Record: profile_main_job.txt beside it.
"""
from __future__ import annotations

import argparse
import cProfile
import functools
import inspect
import io
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks import record  # noqa: E402

GPU = "mi308x"  # the main job's (scripts/main.sh)
DEFAULT_PROBLEMS = "21_Sigmoid,23_Softmax,29_Softplus,67_conv_standard_1D"
STAGES = ("recover", "rebuild", "profile", "verify", "time", "edit", "verify_best", "time_best")

# (module, attribute) -> label. Phases are the agent's steps inside `edit`; activities are what runs.
PHASES = {
    ("asmevo.agent.gates", "Evaluator.__init__"): "setup",
    ("asmevo.agent.gates", "Evaluator.profile"): "profile",
    ("asmevo.agent.search", "_ranked"): "rank",
    ("asmevo.agent.gates", "Evaluator.build"): "build",
    ("asmevo.agent.gates", "Evaluator.verify_candidate"): "verify",
    ("asmevo.agent.gates", "Evaluator.time_candidate"): "time",
    ("asmevo.agent.gates", "Evaluator.confirm_heldout"): "heldout",
}
ACTIVITIES = {
    ("asmevo.rebuild", "rebuild_source"): "rebuild",
    ("asmevo.recover", "recover"): "recover",
    ("asmevo.static_checks", "static_differences"): "static checks",
    ("asmevo.abi", "abi_differences"): "static checks",
    ("asmevo.emu", "run_kernel"): "emulation",
    ("asmevo.emu", "run_kernel_wide"): "emulation",
    ("asmevo.emu.program", "program_for"): "program",
    ("asmevo.emu.program", "Program.hazards"): "static checks",
    ("asmevo.compare", "compare_buffers"): "comparison",
    ("asmevo.device.probe", "probe_difference"): "comparison",
    ("asmevo.verify", "_sets"): "inputs",
    ("asmevo.device.launch", "make_inputs"): "inputs",
    ("asmevo.model.sample", "model_spec"): "model",
    ("asmevo.model.launch", "estimate"): "model",
    ("asmevo.agent.search", "predict"): "prediction",
    ("asmevo.agent.operators", "propose"): "prediction",
    ("asmevo.isa.disasm", "disassemble"): "disassembly",
    ("asmevo.codeobj.elf", "CodeObject.__init__"): "ELF parsing",
    ("asmevo.emu.memory", "Memory.__init__"): "memory",
    ("asmevo.emu.memory", "Memory.alloc"): "memory",
    ("asmevo.emu.memory", "Memory.write"): "memory",
    ("asmevo.emu.memory", "Memory.read"): "memory",
    ("asmevo.emu.memory", "Memory.guard_violations"): "memory",
}


class Attribution:
    """Exclusive wall time per (stage, phase, activity): wrapped functions push their label."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[str, str, str], float] = defaultdict(float)
        self.stage = "-"
        self.phases: list[str] = []
        self.activities: list[str] = []
        self.last = time.perf_counter()

    def _charge(self) -> None:
        now = time.perf_counter()
        key = (self.stage, self.phases[-1] if self.phases else "-", self.activities[-1] if self.activities else "other")
        self.seconds[key] += now - self.last
        self.last = now

    def wrap(self, fn, label: str, stack: str):
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn, label, stack)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            self._charge()
            getattr(self, stack).append(label)
            try:
                return fn(*args, **kwargs)
            finally:
                self._charge()
                getattr(self, stack).pop()
        return wrapper

    def _wrap_generator(self, fn, label: str, stack: str):
        """A generator's time is its iteration: each step is charged to `label`."""
        step = self.wrap(next, label, stack)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            it = fn(*args, **kwargs)
            while True:
                try:
                    yield step(it)
                except StopIteration:
                    return
        return wrapper

    def set_stage(self, stage: str) -> None:
        self._charge()
        self.stage = stage


def install(att: Attribution) -> None:
    """Wrap every listed function wherever it is bound: its module, classes, and modules that
    imported it by name."""
    import importlib

    for module in ("asmevo.agent.optimize", "asmevo.verify", "asmevo.timing", "asmevo.profile", "asmevo.device.emu"):
        importlib.import_module(module)  # bind every by-name import before wrapping
    for table, stack in ((PHASES, "phases"), (ACTIVITIES, "activities")):
        for (module, attr), label in table.items():
            mod = importlib.import_module(module)
            owner, name = (getattr(mod, attr.split(".")[0]), attr.split(".")[1]) if "." in attr else (mod, attr)
            original = getattr(owner, name)
            wrapped = att.wrap(original, label, stack)
            setattr(owner, name, wrapped)
            if owner is mod:
                for other in list(sys.modules.values()):
                    if other is not None and getattr(other, name, None) is original:
                        setattr(other, name, wrapped)


EVALUATIONS: list[tuple[float, float, bool]] = []  # (wall s, CPU s, reached verification) per candidate


def time_evaluations() -> None:
    """Record wall and CPU seconds of every `Evaluator.evaluate` call (one candidate through the gates)."""
    from asmevo.agent.gates import Evaluator

    original = Evaluator.evaluate

    @functools.wraps(original)
    def evaluate(self, *args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        cand = original(self, *args, **kwargs)
        EVALUATIONS.append((time.perf_counter() - wall, time.process_time() - cpu, cand.verdict is not None))
        return cand
    Evaluator.evaluate = evaluate


def run_kernel_job(problem, att: Attribution, budget: int, seed: int) -> dict:
    """Every stage of the main job for one problem, as `flows.pipeline.submit_kernel` runs them."""
    from asmevo.agent.optimize import optimize
    from asmevo.codeobj import CodeObject
    from asmevo.device import get_device
    from asmevo.launches import suite_launches, timing_launch
    from asmevo.profile import profile_launch
    from asmevo.rebuild import rebuild_source
    from asmevo.recover import recover
    from asmevo.timing import time_candidate
    from asmevo.verify import verify

    emu = get_device("emu")
    every = suite_launches(problem, heldout=True, probes=True)
    verify_l = [vl for vl in every if vl.label in {x.label for x in suite_launches(problem)}]
    probes = [vl for vl in every if vl.spec.probe]
    heldout = [vl for vl in every if vl not in verify_l and vl not in probes]
    timing_l, _ = timing_launch(problem)  # the bench shape
    k0 = CodeObject.from_path(problem.code_object)
    stage_s = {}

    def stage(name, fn):
        att.set_stage(name)
        started = time.perf_counter()
        out = fn()
        stage_s[name] = time.perf_counter() - started
        att.set_stage("-")
        return out

    with tempfile.TemporaryDirectory(prefix="asmevo-prof-") as tmp:
        rec = stage("recover", lambda: recover(problem.code_object))
        rebuilt = stage("rebuild", lambda: CodeObject(rebuild_source(rec.source, rec.info).data, "rebuilt.co"))
        stage("profile", lambda: profile_launch(k0, timing_l.spec, gpu_name=GPU,
                                                 known_findings=timing_l.known_findings))
        verdict = stage("verify", lambda: verify(k0, rebuilt, verify_l + probes, device=emu))
        stage("time", lambda: time_candidate(verdict, k0, rebuilt, timing_l, emu, gpu_name=GPU))
        result = stage("edit", lambda: optimize(problem.code_object, verify_l + probes, outdir=Path(tmp) / "out",
                                                agent="search", budget=budget, seed=seed, heldout=heldout,
                                                timing=timing_l, gpu_name=GPU, device=emu))
        best = CodeObject(result.best.data, "best.co")
        verdict = stage("verify_best", lambda: verify(k0, best, verify_l + heldout + probes, device=emu))
        decision = stage("time_best", lambda: time_candidate(verdict, k0, best, timing_l, emu, gpu_name=GPU))
    cands = [c for c in result.lineage.candidates[1:]]
    return {"stages": stage_s, "speedup": decision.speedup if decision.accepted else 1.0,
            "candidates": [(c.status, c.reason, c.seconds, c.verdict is not None) for c in cands]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", default=DEFAULT_PROBLEMS)
    ap.add_argument("--budget", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cprofile", type=int, default=0, metavar="N", help="print the N functions with most own time")
    args = ap.parse_args(argv)
    from asmevo.suites import load_suite

    suite = load_suite("kernelbench")
    att = Attribution()
    install(att)
    time_evaluations()
    prof = cProfile.Profile() if args.cprofile else None
    lines = []
    per_kernel = {}
    started, cpu_started = time.perf_counter(), time.process_time()
    for name in args.problems.split(","):
        t0 = time.perf_counter()
        if prof:
            prof.enable()
        job = run_kernel_job(suite.problem(name), att, args.budget, args.seed)
        if prof:
            prof.disable()
        per_kernel[name] = job
        tried = len(job["candidates"])
        print(f"{name}: {time.perf_counter() - t0:.1f} s, {tried} candidates, speedup {job['speedup']:.3f}", flush=True)
    total = time.perf_counter() - started
    lines.append(f"kernels: {len(per_kernel)}, budget {args.budget}, seed {args.seed}; wall {total:.1f} s, CPU "
                 f"{time.process_time() - cpu_started:.1f} s; load average at the end {os.getloadavg()[0]:.2f}\n")
    lines.append("## seconds per stage\n")
    lines.append(f"{'kernel':<36}" + "".join(f"{s:>12}" for s in STAGES) + f"{'cands':>7}{'speedup':>9}")
    for name, job in per_kernel.items():
        lines.append(f"{name:<36}" + "".join(f"{job['stages'].get(s, 0):>12.1f}" for s in STAGES)
                     + f"{len(job['candidates']):>7}{job['speedup']:>9.3f}")
    sums = {s: sum(j["stages"].get(s, 0) for j in per_kernel.values()) for s in STAGES}
    lines.append(f"{'total':<36}" + "".join(f"{sums[s]:>12.1f}" for s in STAGES))
    lines.append(f"{'share':<36}" + "".join(f"{100 * sums[s] / total:>11.1f}%" for s in STAGES))
    for stage in STAGES:
        cells = {(p, a): v for (s, p, a), v in att.seconds.items() if s == stage}
        if not cells or sum(cells.values()) < 0.05:
            continue
        phases = sorted({p for p, _ in cells}, key=lambda p: -sum(v for (q, _), v in cells.items() if q == p))
        acts = sorted({a for _, a in cells}, key=lambda a: -sum(v for (_, b), v in cells.items() if b == a))
        lines.append(f"\n## {stage}: seconds by phase (rows) and activity (columns), exclusive\n")
        lines.append(f"{'phase':<10}" + "".join(f"{a[:12]:>13}" for a in acts) + f"{'total':>10}{'share':>8}")
        whole = sum(cells.values())
        for p in phases + ["total"]:
            row = [sum(v for (q, b), v in cells.items() if b == a and (p == "total" or q == p)) for a in acts]
            lines.append(f"{p:<10}" + "".join(f"{v:>13.2f}" for v in row) + f"{sum(row):>10.1f}"
                         f"{100 * sum(row) / whole:>7.1f}%")
    lines.append("\n## candidate evaluations (one candidate through the gates: build, static checks, verify, time)\n")
    for label, rows in (("reached verification", [e for e in EVALUATIONS if e[2]]),
                        ("rejected before verification", [e for e in EVALUATIONS if not e[2]])):
        if not rows:
            continue
        walls, cpus = [w for w, _, _ in rows], [c for _, c, _ in rows]
        q = statistics.quantiles(walls, n=10, method="inclusive") if len(walls) > 1 else [walls[0]] * 9
        lines.append(f"{len(rows)} {label}: wall median {statistics.median(walls):.2f} s (p10 {q[0]:.2f}, p90 {q[-1]:.2f}, "
                     f"max {max(walls):.2f}, sum {sum(walls):.1f}); CPU median {statistics.median(cpus):.2f} s "
                     f"(sum {sum(cpus):.1f})")
    if prof:
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.cprofile)
        body = out.getvalue()
        lines.append("\n## cProfile, own time (edit and every other stage)\n")
        lines.append(body[body.index("ncalls"):].rstrip())
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record.default_path(__file__)))
