"""Helpers for the agent tests: evaluators on KernelBench problems, windows, line lookups."""
from __future__ import annotations

from asmevo.agent.edit import Window
from asmevo.agent.gates import Evaluator
from asmevo.suites import load_suite
from asmevo.verify import suite_launches


def evaluator(problem: str, launches: int = 1) -> Evaluator:
    p = load_suite("kernelbench").problem(problem)
    return Evaluator(p.code_object, suite_launches(p)[:launches])


def body_window(ev: Evaluator, cid: int = 0) -> Window:
    return Window(*ev.source_of(cid).body)


def line_of(ev: Evaluator, text: str, cid: int = 0) -> int:
    """The first source line of candidate `cid` whose code is `text`."""
    src = ev.source_of(cid)
    for n in range(src.body[0], src.body[1] + 1):
        if src.line(n).split(";")[0].strip() == text:
            return n
    raise AssertionError(f"no line {text!r}")
