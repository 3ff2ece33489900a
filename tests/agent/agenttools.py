"""Helpers for the agent tests: evaluators on KernelBench problems, windows, line lookups."""
from __future__ import annotations

from asmevo.agent.body import Body
from asmevo.agent.edit import Window
from asmevo.agent.gates import Evaluator
from asmevo.agent.lineage import Candidate
from asmevo.agent.source import KernelSource
from asmevo.source import strip_comment
from asmevo.suites import load_suite
from asmevo.launches import suite_launches, timing_launch
from prodcache import prepared_suite


def evaluator(problem: str, suite: str = "kernelbench", gpu: str | None = None) -> Evaluator:
    """An evaluator that verifies each candidate on every verify shape of `problem` and its held-out one (the
    shapes that tell tail paths apart, e.g. 20_LeakyReLU's n % 4 != 0 in v_3x99); with `gpu`, candidates are
    timed at the problem's bench shape by that GPU's model."""
    p = (load_suite(suite) if suite == "kernelbench" else prepared_suite(suite)).problem(problem)
    if gpu is None:
        return Evaluator(p.code_object, suite_launches(p, heldout=True))
    return Evaluator(p.code_object, suite_launches(p, heldout=True), timing=timing_launch(p)[0], gpu_name=gpu)


def evaluated(ev: Evaluator, body: Body, new: Body, operator: str, parent: int = 0) -> Candidate:
    """`new`, a rearrangement of candidate `parent`'s `body`, through every gate of `ev`; it must verify as
    equivalent."""
    cand = ev.evaluate(parent, new.edit(body, operator, "test"), body_window(ev, parent), agent="test", step=1)
    assert cand.status == "verified" and cand.verdict["kind"] == "equivalent", cand.summary()
    return cand


def body_window(ev: Evaluator, cid: int = 0) -> Window:
    return Window(*ev.source_of(cid).body)


def line_of(ev: Evaluator, text: str, cid: int = 0) -> int:
    """The first source line of candidate `cid` whose code is `text`."""
    src = ev.source_of(cid)
    for n in range(src.body[0], src.body[1] + 1):
        if src.line(n).split(";")[0].strip() == text:
            return n
    raise AssertionError(f"no line {text!r}")


def body_of(lines: list[str], **options) -> Body:
    """A body from hand-written lines (`name:` lines are labels) of a kernel `k` (`options`: Body.of's,
    e.g. kernarg=0 and buffers=frozenset({0}) for a kernel whose kernarg pointer is s[0:1] and whose
    argument at offset 0 is a buffer)."""
    text = "\t.text\n\t.type k,@function\nk:\n" + "\n".join(ln if ln.endswith(":") else "\t" + ln for ln in lines) + "\n.Lend_k:\n"
    return Body.of(KernelSource(text, "k"), **options)


def code(body: Body) -> list[str]:
    """The body's code lines without comments."""
    return [strip_comment(it.text) for it in body.items if strip_comment(it.text)]


def masked_region(n: int, mask: str, body: list[str], saved: str = "s[10:11]") -> list[str]:
    """`body` under EXEC &= `mask` (EXEC saved in `saved`), skipped when no lane is left (label `.Lj<n>`)."""
    return [f"s_and_saveexec_b64 {saved}, {mask}", f"s_cbranch_execz .Lj{n}", *body, f".Lj{n}:",
            f"s_or_b64 exec, exec, {saved}"]


def first_guard(body: Body) -> int:
    """The index of the body's first `s_and_saveexec_b64`."""
    return next(i for i, x in enumerate(body.instructions) if x.mnemonic == "s_and_saveexec_b64")


def best_versioned(ev: Evaluator) -> tuple[float, Body, Body]:
    """(predicted cycles, K0's body, the body) of the `version_full_exec` proposal on K0 the search predicts fastest
    at `ev`'s timing launch."""
    from asmevo.agent.ops_version import full_exec_head, version_full_exec
    from asmevo.agent.search import heat_of, predict

    body = ev.body_of(0)
    heat = heat_of(body, ev.profile(0), ev.lineage.get(0).cycles)
    options = [(predict(new, heat), i, new) for i in range(len(body.instructions))
               if full_exec_head(body, i) and (new := version_full_exec(body, i)) is not None]
    predicted, _, new = min(options, key=lambda o: o[0])
    return predicted, body, new
