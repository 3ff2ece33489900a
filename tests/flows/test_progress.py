"""The run display: one plain line per progress event off a terminal; on a terminal a status block of
the stages running (kernel, stage, candidates evaluated against the budget, elapsed), redrawn in place
under the finished kernels' lines."""
from __future__ import annotations

import io

from flows.progress import Display


def _event(kind: str, label: str, stage: str, call: str, t: float, **fields) -> dict:
    return {"event": kind, "label": label, "stage": stage, "call": call, "time": t, **fields}


def test_plain_lines_one_per_event():
    out = io.StringIO()
    d = Display(2, out, live=False)
    d.event(_event("start", "19_ReLU", "edit", "a", 0.0))
    d.event(_event("candidate", "19_ReLU", "edit", "a", 1.0, evaluated=3, budget=16, tried=5, status="verified",
                   best=1.25))
    d.event(_event("finish", "19_ReLU", "edit", "a", 2.0, seconds=2.0, error=False))
    d.kernel_done("[  1/2] 19_ReLU ok")
    lines = out.getvalue().splitlines()
    assert [line.split(" ", 1)[1] for line in lines[:3]] == [
        "19_ReLU edit started", "19_ReLU edit candidate 5: verified, 3/16 evaluated, best x1.250",
        "19_ReLU edit finished in 2.0 s"]
    assert lines[3] == "[  1/2] 19_ReLU ok"


def test_live_block_shows_running_stages_and_keeps_kernel_lines():
    out = io.StringIO()
    d = Display(2, out, live=True)
    d.event(_event("start", "19_ReLU", "edit", "a", d.started))
    d.event(_event("start", "19_ReLU", "verify", "b", d.started))
    d.event(_event("candidate", "19_ReLU", "edit", "a", d.started, evaluated=2, budget=16, tried=4, status="rejected",
                   best=1.0))
    d.event(_event("finish", "19_ReLU", "verify", "b", d.started, seconds=0.5, error=False))
    d.kernel_done("[  1/2] 20_LeakyReLU ok")
    d.close()
    text = out.getvalue()
    last_block = text.rsplit("\x1b[J", 1)[0].rsplit("\x1b[J", 1)[-1]
    assert "19_ReLU" in last_block and "2/16 evaluated (4 tried)" in last_block and "verify" not in last_block
    assert "[1/2 kernels done, 1 stage(s) running" in text
    assert "[  1/2] 20_LeakyReLU ok\n" in text
    assert text.endswith("\x1b[J")  # closing erases the block
