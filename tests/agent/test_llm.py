"""The LLM agent driven through litellm's real client against a scripted local server
(127.0.0.1, no network), including hostile and malformed responses."""
from __future__ import annotations

import json

import pytest

from asmevo.agent.llm import LLMConfig, LLMError, run_llm_agent
from asmevo.agent.llm_tools import Workbench
from agenttools import evaluator
from scripted_server import ScriptedServer, tool_call


def config(srv: ScriptedServer, **kw) -> LLMConfig:
    return LLMConfig(**{"model": "openai/scripted", "api_base": srv.api_base, "api_key": "test", "backoff": 0.01, **kw})


def hot_window_edit(ev) -> tuple[int, int, int, str]:
    """(window, start, end, text): swap two independent instructions inside window 1."""
    bench = Workbench(ev)
    w = bench.windows(0)[0]
    src = ev.source_of(0)
    for n in range(w.lo, w.hi):
        a, b = (src.line(k).split(";")[0].strip() for k in (n, n + 1))
        if a.startswith("v_mul_f32") and b.startswith("v_cmp_le_f32"):
            return 1, n, n + 1, f"{b}\n{a}"
    raise AssertionError("no swappable pair in window 1")


@pytest.fixture(scope="module")
def ev():
    return evaluator("20_LeakyReLU")


def test_end_to_end_with_hostile_responses(ev):
    window, start, end, text = hot_window_edit(ev)
    script = [
        tool_call("list_windows", {}),
        tool_call("view_window", {"window": window}),
        "garbage",                                                        # text without a tool call
        tool_call("view_window", "{not json"),                            # invalid JSON arguments
        tool_call("no_such_tool", {}),                                    # unknown tool
        tool_call("propose_edit", {"window": window, "start_line": 1, "end_line": 3, "new_text": "s_nop 0"}),
        tool_call("propose_edit", {"window": window, "start_line": start, "end_line": start - 1,
                                   "new_text": ".amdhsa_kernarg_size 4"}),  # ABI-breaking directive
        tool_call("propose_edit", {"window": window, "start_line": start, "end_line": start - 1,
                                   "new_text": "scratch_store_dword off, v6, s0"}),  # enables scratch: ABI
        tool_call("propose_edit", {"window": window, "start_line": start}),  # missing arguments
        500,                                                              # provider error, then success
        tool_call("propose_edit", {"window": window, "start_line": start, "end_line": end, "new_text": text}),
        tool_call("verify", {}),
        tool_call("verify", {"candidate": 999}),
        tool_call("time", {}),
        tool_call("profile", {}),
        tool_call("revert", {"candidate": 0}),
        tool_call("finish", {"reason": "done"}),
    ]
    script[2] = {"content": "Let me think about MFMA scheduling in general terms..."}
    with ScriptedServer(script) as srv:
        bench = run_llm_agent(ev, config(srv))
    answers = {m["content"] for req in srv.requests for m in req["messages"] if m["role"] == "tool"}
    joined = "\n".join(sorted(answers))
    assert "not valid JSON" in joined and "unknown tool" in joined and "bad arguments" in joined
    assert "rejected (outside-window)" in joined and "rejected (directive)" in joined
    assert "rejected (abi)" in joined and "is equivalent to K0" in joined and "no candidate #999" in joined
    reasons = [c.reason for c in ev.lineage.candidates if c.agent == "llm"]
    assert reasons[:3] == ["outside-window", "directive", "abi"]
    verified = [c for c in ev.lineage.candidates if c.agent == "llm" and c.status == "verified"]
    assert len(verified) == 1 and verified[0].timing["unit"] == "model_us"
    assert bench.finished == "done" and bench.current == 0
    usage = ev.lineage.config["llm_usage"]
    assert usage["retries"] >= 1 and usage["tokens"] > 0
    assert srv.requests[0]["tools"] and srv.requests[0]["model"] == "scripted"


def test_step_budget_and_idle_stop(ev):
    with ScriptedServer([tool_call("list_windows", {})]) as srv:
        run_llm_agent(ev, config(srv, max_steps=3))
    assert len(srv.requests) == 3
    with ScriptedServer([{"content": "no tools today"}]) as srv:
        run_llm_agent(ev, config(srv, max_idle=2))
    assert len(srv.requests) == 2


def test_provider_keeps_failing_raises_one_line_error(ev):
    with ScriptedServer([503]) as srv:
        with pytest.raises(LLMError, match="failed 3 times"):
            run_llm_agent(ev, config(srv, retries=2))


def hot_window_script(ev) -> list:
    """A conversation that lists windows, swaps two instructions, verifies, times and finishes."""
    window, start, end, text = hot_window_edit(ev)
    return [tool_call("list_windows", {}),
            tool_call("propose_edit", {"window": window, "start_line": start, "end_line": end, "new_text": text}),
            tool_call("verify", {}), tool_call("time", {}), tool_call("finish", {"reason": "done"})]


def lineage_of(ev) -> list[tuple]:
    return [(c.parent, c.diff, c.status, c.cycles) for c in ev.lineage.candidates]


def test_replies_replay_from_the_store_without_the_provider(tmp_path):
    from artifacts import Store
    from artifacts.replies import ReplyStore

    store = Store(tmp_path / "store")
    first = evaluator("20_LeakyReLU")
    priced = dict(model="openai/gpt-4o-mini", seed=7)  # in litellm's local cost map: the replies cost money
    with ScriptedServer(hot_window_script(first)) as srv:
        run_llm_agent(first, config(srv, **priced), cache=ReplyStore(store, "readwrite"))
    assert len(srv.requests) == 5 and all(r["seed"] == 7 for r in srv.requests)
    spent = first.lineage.config["llm_usage"]
    assert spent["cost_spent"] > 0 and spent["cost_saved"] == 0 and spent["cached"] == 0
    replayed = evaluator("20_LeakyReLU")
    with ScriptedServer([500]) as srv:
        run_llm_agent(replayed, config(srv, **priced), cache=ReplyStore(store, "readwrite"))
        assert srv.requests == []
    usage = replayed.lineage.config["llm_usage"]
    assert lineage_of(replayed) == lineage_of(first) and [c.status for c in first.lineage.candidates] == [
        "baseline", "verified"]
    assert (usage["steps"], usage["cached"], usage["tokens"]) == (5, 5, spent["tokens"])
    assert usage["cost_spent"] == 0 and usage["cost_saved"] == pytest.approx(spent["cost_spent"])
    assert store.check() == []


def test_cache_modes(tmp_path):
    from artifacts import Store
    from artifacts.replies import ReplyStore

    store = Store(tmp_path / "store")
    ev = evaluator("20_LeakyReLU")

    def provider_calls(mode: str) -> int:
        with ScriptedServer([tool_call("list_windows", {}), tool_call("finish", {})]) as srv:
            run_llm_agent(ev, config(srv), cache=ReplyStore(store, mode))
            return len(srv.requests)

    assert provider_calls("read") == 2        # reads, never writes
    assert provider_calls("readwrite") == 2   # stores both replies
    assert provider_calls("off") == 2         # neither reads nor writes
    assert provider_calls("read") == 0
    with pytest.raises(Exception, match="unknown LLM cache mode"):
        ReplyStore(store, "sometimes")


def test_config_from_env(monkeypatch):
    monkeypatch.setenv("ASMEVO_MODEL", "anthropic/claude-x")
    monkeypatch.setenv("ASMEVO_MAX_STEPS", "7")
    cfg = LLMConfig.from_env(api_base="http://127.0.0.1:1")
    assert (cfg.model, cfg.max_steps, cfg.api_base) == ("anthropic/claude-x", 7, "http://127.0.0.1:1")
    monkeypatch.setenv("ASMEVO_MAX_STEPS", "many")
    with pytest.raises(Exception, match="ASMEVO_MAX_STEPS"):
        LLMConfig.from_env()
    assert json.dumps(LLMConfig().__dict__)


def test_operators_as_tools_with_the_search_memory(tmp_path):
    """list_operators ranks the search's proposals (ordered by the memory's prior), apply_operator
    builds one; bad proposal numbers are answered, and every call lands in the lineage's llm_calls."""
    from asmevo.agent.memory import SearchMemory
    from asmevo.agent.search import SearchConfig, expand
    import random

    ev = evaluator("20_LeakyReLU")
    plain = [p.operator for _, _, p in expand(ev, 0, SearchConfig(), random.Random(0)).queue]
    assert len(set(plain)) >= 2
    loser = plain[0]  # a memory where the first-ranked operator always lost moves it down the list
    memory = SearchMemory([{"kernel": "other", "features": {}, "operators": {loser: [1000, 0]}, "pairs": {}}])
    script = [tool_call("list_operators", {}), tool_call("apply_operator", {"proposal": 99}),
              tool_call("apply_operator", {"proposal": 1}), tool_call("verify", {}), tool_call("time", {}),
              tool_call("finish", {})]
    with ScriptedServer(script) as srv:
        bench = run_llm_agent(ev, config(srv), memory=memory, features={})
    listing = srv.requests[1]["messages"][-1]["content"]
    assert "search memory of 1 kernel record" in listing and f"1. {loser} " not in listing
    applied = ev.lineage.candidates[1]
    assert applied.operator != loser and applied.operator in plain and applied.agent == "llm"
    assert applied.status == "verified" and bench.current == 1
    calls = ev.lineage.config["llm_calls"]
    assert [c["tool"] for c in calls] == ["list_operators", "apply_operator", "apply_operator", "verify", "time",
                                          "finish"]
    assert calls[1]["answer"].startswith("error: proposal must be 1..") and calls[1]["step"] == 2


def test_prompt_carries_the_facts_and_the_bottleneck(ev):
    with ScriptedServer([tool_call("finish", {})]) as srv:
        run_llm_agent(ev, config(srv))
    task = srv.requests[0]["messages"][1]["content"]
    assert "bound latency" in task and "waves/SIMD" in task          # the cost model's report at the bench shape
    assert "5: VALU writes an SGPR -> a VMEM instruction reads it" in task and "vmcnt (max 63)" in task
    assert ev.lineage.config["llm_calls"] == [{"step": 1, "tool": "finish", "answer": "finished"}]
