"""`asmevo optimize K.co --launch L.json [--launch ...] [--heldout H.json] [--timing T.json] [--gpu G]
[--agent search|llm] [--model M] [--api-base URL] [--llm-cache off|read|readwrite] [--budget N] [--seed S]
[--memory F] -o DIR`: optimise a kernel with an agent; candidates are timed on T (the shape users run;
default the largest --launch). Writes DIR/<name>.co (best verified candidate, K0 if nothing faster
held up), DIR/<name>.diff (recovered-source diff against K0), DIR/<name>.s and DIR/lineage.json (every
candidate). The LLM agent's replies are cached in $ASMEVO_HOME's artifact store (a rerun replays
them without the provider). Exit 0 even without an improvement; bad input exits 2."""
from __future__ import annotations

import argparse
import sys

from ..agent.llm import CACHE_MODES, cache_mode
from ..agent.optimize import AGENTS, optimize
from .args import add_gpu_option, positive_int


def register(subparsers) -> None:
    p = subparsers.add_parser("optimize", help="optimise a kernel's hot windows with an agent",
                              description=__doc__.splitlines()[0])
    p.add_argument("kernel", help="the original code object (K0)")
    p.add_argument("--launch", action="append", required=True, help="verify launch spec; repeat per shape")
    p.add_argument("--heldout", action="append", default=[],
                   help="held-out launch spec, used only to re-verify the final best")
    p.add_argument("--timing", help="launch spec candidates are timed on (the bench shape: large launches are "
                                    "modelled from a sample of their workgroups); default the largest --launch")
    add_gpu_option(p)
    p.add_argument("--agent", choices=AGENTS, default="search", help="search (offline, default) or llm")
    p.add_argument("--model", help="litellm model string for --agent llm (default: $ASMEVO_MODEL)")
    p.add_argument("--api-base", help="API base URL for the model (default: $ASMEVO_API_BASE)")
    p.add_argument("--llm-cache", choices=CACHE_MODES,
                   help="reuse (read) and store (write) model replies in the artifact store "
                        "(default: $ASMEVO_LLM_CACHE, else readwrite)")
    p.add_argument("--budget", type=positive_int, default=16,
                   help="verified evaluations (search) or model steps (llm); default 16")
    p.add_argument("--seed", type=int, default=0, help="search seed (default 0)")
    p.add_argument("--memory", help="search memory file: orders the proposals and records the outcome "
                                    "(e.g. $ASMEVO_HOME/memory/<suite>.json; default: none)")
    p.add_argument("-o", "--output", required=True, help="output directory")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    log = (lambda s: None) if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    mode = cache_mode(args.llm_cache)
    cache = None
    if args.agent == "llm" and mode != "off":
        from artifacts import default_store
        from artifacts.replies import ReplyStore

        cache = ReplyStore(default_store(), mode)
    result = optimize(args.kernel, args.launch, heldout=args.heldout, timing=args.timing, gpu_name=args.gpu,
                      outdir=args.output, agent=args.agent, budget=args.budget, seed=args.seed, model=args.model,
                      api_base=args.api_base, llm_cache=cache, memory=args.memory, log=log)
    print(result.summary())
    usage = result.lineage.config.get("llm_usage")
    if usage:
        print(f"  llm: {usage['steps']} replies ({usage['cached']} from the cache), cost ${usage['cost_spent']:.4f} "
              f"spent, ${usage['cost_saved']:.4f} saved by the cache")
    for kind, path in result.paths.items():
        print(f"  {kind}: {path}")
    return 0
