"""The LLM agent: a long-horizon tool-calling loop through litellm (any model string).

Budgets: steps (model calls), tokens, cost (litellm's cost tracking; models missing from the local
cost map count as free) and wall time. Provider errors and timeouts are retried with exponential
backoff; malformed tool calls and replies without a tool call are answered, never raised. When
the conversation grows past `context_chars`, the oldest turns are dropped and replaced by a compact
memory of every attempt (diff excerpt, verdict, speedup).

Replies go through a `ReplyCache` (in a run: the artifact store, `artifacts.replies`) keyed by the
canonical request (model, messages, tools, parameters, seed; not the endpoint): a reply is stored
before it is used, and a cached one is used instead of calling the provider, so a resumed or
replayed run continues the same conversation without the provider. Budgets count cached replies
like fresh ones (a replay stops where the original did); `Usage` tells the cost spent from the cost
the cache saved.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from ..errors import AsmEvoError
from .facts import isa_facts, target_text
from .gates import Evaluator
from .llm_tools import TOOLS, Workbench
from .memory import SearchMemory

PROMPTS = Path(__file__).parent / "prompts"
_ENV = {"model": "ASMEVO_MODEL", "api_base": "ASMEVO_API_BASE", "api_key": "ASMEVO_API_KEY",
        "max_steps": "ASMEVO_MAX_STEPS", "max_tokens": "ASMEVO_MAX_TOKENS", "max_cost": "ASMEVO_MAX_COST",
        "max_seconds": "ASMEVO_MAX_SECONDS", "temperature": "ASMEVO_TEMPERATURE", "timeout": "ASMEVO_LLM_TIMEOUT"}
# Fields that change what the model answers (part of a run's cache key); the rest say how to reach it.
IDENTITY = ("model", "max_steps", "max_tokens", "max_cost", "max_seconds", "temperature", "context_chars", "max_idle",
            "seed", "extra")
CACHE_MODES = ("off", "read", "readwrite")
CACHE_ENV = "ASMEVO_LLM_CACHE"


class LLMError(AsmEvoError):
    """The model provider kept failing after every retry."""


@dataclass
class LLMConfig:
    """How to reach the model and how much the run may spend."""

    model: str = "openai/gpt-4o-mini"
    api_base: str | None = None
    api_key: str | None = None
    max_steps: int = 40
    max_tokens: int = 400_000
    max_cost: float = 5.0
    max_seconds: float = 3600.0
    temperature: float = 0.2
    timeout: float = 120.0
    retries: int = 4
    backoff: float = 1.0
    context_chars: int = 60_000
    max_idle: int = 3
    seed: int | None = None
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_env(cls, **overrides: Any) -> "LLMConfig":
        """Defaults, then ASMEVO_* environment variables, then explicit non-None overrides."""
        values: dict[str, Any] = {}
        types = {k: type(v) for k, v in cls().__dict__.items()}
        for key, var in _ENV.items():
            raw = os.environ.get(var)
            if raw:
                try:
                    values[key] = types[key](raw) if types[key] in (int, float) else raw
                except ValueError:
                    raise AsmEvoError(f"{var}={raw!r} is not a valid {types[key].__name__}") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        unknown = set(values) - set(types)
        if unknown:
            raise AsmEvoError(f"unknown LLM option(s): {', '.join(sorted(unknown))}")
        return cls(**values)

    def identity(self) -> dict:
        """The fields that determine the conversation (`IDENTITY`), as JSON."""
        return {k: getattr(self, k) for k in IDENTITY}


class ReplyCache(Protocol):
    """Model replies by canonical request: `{"message", "tokens", "cost"}` entries."""

    def get(self, request: dict) -> dict | None:
        """The entry stored for `request`, or None."""

    def put(self, request: dict, entry: dict) -> dict:
        """Store `entry` for `request` (unless the cache is read-only); returns the entry to use (the
        first one stored for the request, when two runs raced)."""


def cache_mode(mode: str | None = None) -> str:
    """`mode`, or $ASMEVO_LLM_CACHE, or readwrite; an unknown mode is a one-line error."""
    mode = mode or os.environ.get(CACHE_ENV) or "readwrite"
    if mode not in CACHE_MODES:
        raise AsmEvoError(f"unknown LLM cache mode {mode!r} (valid: {', '.join(CACHE_MODES)})")
    return mode


def _litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm
    litellm.suppress_debug_info = True
    return litellm


def prompt(name: str, **values: Any) -> str:
    return (PROMPTS / f"{name}.md").read_text().format(**values)


@dataclass
class Usage:
    """`steps` replies used (`cached` of them from the cache), their `tokens`; `cost_spent` on provider
    calls and `cost_saved` (what the cached replies cost when they were made)."""

    steps: int = 0
    tokens: int = 0
    cost_spent: float = 0.0
    cost_saved: float = 0.0
    retries: int = 0
    cached: int = 0

    @property
    def cost(self) -> float:
        """The cost of every reply used, cached or not (what the cost budget counts)."""
        return self.cost_spent + self.cost_saved


class Client:
    """litellm.completion with retries, backoff, usage/cost accounting and a reply cache."""

    def __init__(self, config: LLMConfig, log: Callable[[str], None], cache: ReplyCache | None = None):
        self.config = config
        self.log = log
        self.cache = cache
        self.usage = Usage()

    def request(self, messages: list[dict]) -> dict:
        """The canonical request for `messages`: what determines the answer (no endpoint or key)."""
        c = self.config
        seed = {} if c.seed is None else {"seed": c.seed}
        return {"model": c.model, "messages": messages, "tools": TOOLS, "tool_choice": "auto",
                "temperature": c.temperature, **seed, **c.extra}

    def complete(self, messages: list[dict]) -> dict:
        """One assistant message as a plain dict (role, content, tool_calls)."""
        req = self.request(messages)
        entry = self.cache.get(req) if self.cache is not None else None
        if entry is not None:
            self.usage.cached += 1
            self.usage.cost_saved += entry["cost"]
        else:
            entry = self._call(req)
            self.usage.cost_spent += entry["cost"]
            if self.cache is not None:
                entry = self.cache.put(req, entry)
        self.usage.steps += 1
        self.usage.tokens += entry["tokens"]
        return entry["message"]

    def _call(self, req: dict) -> dict:
        """A provider call for `req`, retried: {"message", "tokens", "cost"}."""
        litellm = _litellm()
        last: Exception | None = None
        for attempt in range(self.config.retries + 1):
            try:
                resp = litellm.completion(**req, api_base=self.config.api_base, api_key=self.config.api_key,
                                          timeout=self.config.timeout, max_retries=0, drop_params=True)
                break
            except (litellm.exceptions.BadRequestError, litellm.exceptions.AuthenticationError,
                    litellm.exceptions.NotFoundError) as exc:
                raise LLMError(f"model {self.config.model}: {type(exc).__name__}: {str(exc)[:300]}") from None
            except Exception as exc:  # provider errors, timeouts, connection errors: retried
                last = exc
                self.usage.retries += 1
                delay = self.config.backoff * 2 ** attempt
                self.log(f"llm: {type(exc).__name__} ({str(exc)[:120]}); retry {attempt + 1} in {delay:.1f}s")
                time.sleep(delay)
        else:
            raise LLMError(f"model {self.config.model} failed {self.config.retries + 1} times: "
                           f"{type(last).__name__}: {str(last)[:300]}")
        usage = getattr(resp, "usage", None)
        try:
            cost = float(litellm.completion_cost(completion_response=resp) or 0.0)
        except Exception:  # model absent from the cost map: no price known, counted as free
            cost = 0.0
        msg = resp.choices[0].message
        out = {"role": "assistant", "content": msg.content or ""}
        calls = getattr(msg, "tool_calls", None) or []
        if calls:
            out["tool_calls"] = [{"id": tc.id, "type": "function", "function": {
                "name": tc.function.name, "arguments": tc.function.arguments or ""}} for tc in calls]
        return {"message": out, "tokens": int(getattr(usage, "total_tokens", 0) or 0), "cost": cost}


def _trim(messages: list[dict], bench: Workbench, limit: int) -> list[dict]:
    """Keep the system and task messages and the newest turns within `limit` characters; dropped
    turns are replaced by the compact memory of attempts."""
    head = messages[:2]
    size = lambda ms: sum(len(json.dumps(m)) for m in ms)
    if size(messages) <= limit:
        return messages
    tail = messages[2:]
    while tail and size(head + tail) > limit // 2:
        tail = tail[1:]
        while tail and tail[0]["role"] == "tool":
            tail = tail[1:]
    ev = bench.ev
    memory = prompt("memory", current=bench.current, best=ev.best.id, best_speedup=ev.best.speedup or 1.0,
                    attempts=bench.memory())
    return head + [{"role": "user", "content": memory}] + tail


def run_llm_agent(ev: Evaluator, config: LLMConfig, log: Callable[[str], None] = lambda s: None,
                  cache: ReplyCache | None = None, memory: SearchMemory | None = None,
                  features: dict[str, str] | None = None) -> Workbench:
    """Run the tool-calling loop until finish or a budget runs out; every candidate is in ev.lineage,
    and every tool call (or reply without one) with the first line of its answer in the lineage's
    `config["llm_calls"]`. Replies come from `cache` when it has them and go into it (when writable)
    before they are used. `memory` and `features` (K0's, `memory.features`) order the operator
    proposals the agent lists, as in the search."""
    bench = Workbench(ev, memory, features or {}, config.seed or 0)
    client = Client(config, log, cache)
    start = time.monotonic()
    windows = bench.tool_list_windows()
    facts = isa_facts(ev.body_of(0).instructions, ev.processor)
    messages = [{"role": "system", "content": prompt("system", target=target_text(ev.processor))},
                {"role": "user", "content": prompt("task", kernel=ev.kernel, k0_cycles=f"{ev.baseline.cycles:.4g}",
                                                   unit=ev.lineage.unit, launches=len(ev.launches),
                                                   max_steps=config.max_steps, current=bench.current,
                                                   windows=windows, facts=facts)}]
    idle = 0
    transcript: list[dict] = []  # one entry per tool call or reply without one: what the loop answered
    while not bench.finished:
        u = client.usage
        stop = ("steps" if u.steps >= config.max_steps else "tokens" if u.tokens >= config.max_tokens else
                "cost" if u.cost >= config.max_cost else
                "time" if time.monotonic() - start >= config.max_seconds else "")
        if stop:
            log(f"llm: {stop} budget exhausted")
            break
        bench.step = u.steps + 1
        reply = client.complete(_trim(messages, bench, config.context_chars))
        messages.append(reply)
        calls = reply.get("tool_calls") or []
        if not calls:
            transcript.append({"step": bench.step, "tool": None, "answer": "error: no tool call"})
            idle += 1
            if idle >= config.max_idle:
                log("llm: no tool call in several replies; stopping")
                break
            messages.append({"role": "user", "content": "error: no tool call. Answer with exactly one tool call "
                                                        "(" + ", ".join(t["function"]["name"] for t in TOOLS) + ")."})
            continue
        idle = 0
        for call in calls:
            fn = call.get("function") or {}
            answer = bench.call(str(fn.get("name")), fn.get("arguments"))
            first = answer.splitlines()[0] if answer else ""
            transcript.append({"step": bench.step, "tool": str(fn.get("name")), "answer": first})
            log(f"llm step {bench.step}: {fn.get('name')} -> {first}")
            messages.append({"role": "tool", "tool_call_id": call.get("id") or "call", "content": answer})
    bench.settle()
    ev.lineage.config["llm_usage"] = {**client.usage.__dict__, "cost": client.usage.cost}
    ev.lineage.config["llm_calls"] = transcript
    return bench
