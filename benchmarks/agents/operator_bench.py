"""Shared pieces of the single-operator benchmarks (bench_interleave_mfma.py, bench_list_schedule.py): an
evaluator timing at a problem's bench shape, one candidate's outcome through every gate, and the driver
that prints one row per kernel."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.agent.body import Body  # noqa: E402
from asmevo.agent.edit import Window  # noqa: E402
from asmevo.agent.gates import Evaluator  # noqa: E402
from asmevo.launches import suite_launches, timing_launch  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402


def bench_evaluator(suite: str, name: str, gpu: str) -> Evaluator:
    """An evaluator of problem `name` verifying on its verify shapes (its held-out one kept for the best)
    and timing at its bench shape on `gpu`."""
    s = load_suite(suite)
    s.prepare()
    p = s.problem(name)
    launches = suite_launches(p)
    labels = {vl.label for vl in launches}
    heldout = [vl for vl in suite_launches(p, heldout=True) if vl.label not in labels]
    return Evaluator(p.code_object, launches, heldout=heldout, timing=timing_launch(p)[0], gpu_name=gpu)


def k0_bound(ev: Evaluator) -> str | None:
    """What bounds K0 at the bench shape by the model."""
    return (ev.lineage.candidates[0].timing or {}).get("provenance", {}).get("config", {}).get("bound")


def outcome(ev: Evaluator, body: Body, new: Body, operator: str, note: str) -> str:
    """`new` (a rearrangement of K0's `body`) through every gate: 'after-us speedup  verified, held-out ...',
    or its status."""
    k0 = ev.lineage.candidates[0]
    cand = ev.evaluate(0, new.edit(body, operator, note), Window(*ev.source_of(0).body), agent="bench", step=1)
    if cand.status != "verified":
        return f"{'-':>10} {'-':>8}  {cand.status}: {cand.summary()}"
    if cand.accepted:
        held = "held-out ok" if ev.confirm_heldout().id == cand.id else "held-out REJECTED"
    else:
        held = "not faster (held-out shape not run)"
    return f"{cand.cycles:>10.2f} {k0.cycles / cand.cycles:>7.3f}x  verified, {held}"


def main_rows(argv: list[str] | None, description: str, header: str, kernels: tuple[tuple[str, str, str], ...],
              row: Callable[[str, str, str], str], footer: str) -> int:
    """Print `header`, then `row(suite, name, gpu)` per kernel (`--only NAME ...` selects), then `footer`."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args(argv)
    print(header, flush=True)
    for suite, name, gpu in kernels:
        if args.only and name not in args.only:
            continue
        try:
            print(row(suite, name, gpu), flush=True)
        except Exception as exc:  # one bad problem must not hide the others' numbers
            print(f"{name:32s} ERROR {type(exc).__name__}: {exc}", flush=True)
    print(footer)
    return 0
