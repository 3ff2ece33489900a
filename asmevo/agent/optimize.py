"""`optimize`: one kernel through an agent (offline search or LLM) and the gates; writes the best
verified candidate, its recovered-source diff against K0, and the lineage of every candidate."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..device import Device
from ..errors import AsmEvoError
from ..launches import VerifyLaunch, load_launch
from ..target import DEFAULT_GPU
from .edit import unified_diff
from .gates import Evaluator
from .lineage import Candidate, Lineage
from .llm import ReplyCache
from .memory import SearchMemory, features, update
from .outcome import Evaluations
from .search import ExpansionCache, SearchConfig, search

AGENTS = ("search", "llm")


@dataclass
class OptimizeResult:
    """What an optimisation produced: the winner (K0 when nothing faster held up) and its files."""

    best: Candidate
    lineage: Lineage
    speedup: float
    improved: bool
    paths: dict[str, Path]

    def summary(self) -> str:
        lin = self.lineage
        n = len(lin.candidates) - 1
        ok = lin.verified_count()
        if not self.improved:
            return f"{lin.kernel}: no improvement found ({n} candidates, {ok} verified); K0 kept"
        return (f"{lin.kernel}: {self.speedup:.3f}x ({lin.unit}) with candidate #{self.best.id} "
                f"({n} candidates, {ok} verified, held-out re-verified)")


def _launches(items: list) -> list[VerifyLaunch]:
    return [x if isinstance(x, VerifyLaunch) else load_launch(x) for x in items]


def optimize(kernel_co: str | Path, launches: list, *, outdir: str | Path, agent: str = "search",
             budget: int = 16, seed: int = 0, heldout: list = (), timing=None, device: Device | None = None,
             trials: int = 3, gpu_name: str = DEFAULT_GPU, model: str | None = None, api_base: str | None = None,
             llm_options: dict | None = None, llm_cache: ReplyCache | None = None, evaluations: Evaluations | None = None,
             memory: str | Path | None = None, expansions: ExpansionCache | None = None,
             log: Callable[[str], None] = lambda s: None,
             on_candidate: Callable[[Candidate, Lineage], None] | None = None) -> OptimizeResult:
    """Optimise the kernel of `kernel_co` on `launches` (verify shapes; paths or VerifyLaunch) with
    `agent`, every candidate timed on `timing` (the bench shape; default: the largest verify launch)
    for `gpu_name`; `heldout` launches, and probe launches among `launches` (too large to profile),
    are used only for the final re-verification. `evaluations` gives K0's baseline and the candidates'
    outcomes (default: computed here; see `gates.Evaluator`); `llm_cache` (`llm.ReplyCache`) the LLM
    agent's replies; `expansions` (`search.ExpansionCache`) the search's expansions; `memory` a search
    memory file (`agent.memory`) that orders the operators' proposals (the search's and the LLM agent's
    `list_operators`) and records this kernel's outcome afterwards;
    `on_candidate(candidate, lineage)` hears of every candidate the agent had evaluated."""
    if agent not in AGENTS:
        raise AsmEvoError(f"unknown agent {agent!r} (valid: {', '.join(AGENTS)})")
    if budget < 1:
        raise AsmEvoError(f"budget must be at least 1, got {budget}")
    given = _launches(list(launches))
    probes = [vl for vl in given if vl.spec.probe]
    ev = Evaluator(kernel_co, [vl for vl in given if not vl.spec.probe], heldout=_launches(list(heldout)) + probes,
                   timing=_launches([timing])[0] if timing is not None else None, device=device, gpu_name=gpu_name,
                   trials=trials, evaluations=evaluations)
    if on_candidate is not None:
        ev.on_candidate = lambda cand: on_candidate(cand, ev.lineage)
    ev.lineage.config = {"agent": agent, "budget": budget, "seed": seed, "gpu": gpu_name, "timing": ev.timing.label,
                         "launches": [vl.label for vl in ev.launches],
                         "heldout": [vl.label for vl in ev.heldout]}
    log(f"K0 {ev.kernel}: {ev.baseline.cycles:.4g} {ev.lineage.unit} on {ev.timing.label} ({gpu_name})")
    kernel_features = features(ev.body_of(0), ev.baseline.profile.estimate) if memory is not None else {}
    known = SearchMemory.load(memory) if memory is not None else None
    if known is not None:
        ev.lineage.config["memory"] = {"path": str(memory), "records": len(known.records), "features": kernel_features}
    if agent == "search":
        search(ev, SearchConfig(budget=budget, seed=seed, memory=known, features=kernel_features,
                                expansions=expansions), log)
    else:
        from .llm import LLMConfig, run_llm_agent
        overrides = {"seed": seed, **(llm_options or {}), "max_steps": budget}
        overrides.update({k: v for k, v in (("model", model), ("api_base", api_base)) if v is not None})
        config = LLMConfig.from_env(**overrides)
        ev.lineage.config["model"] = config.model
        run_llm_agent(ev, config, log, llm_cache, known, kernel_features)
    best = ev.confirm_heldout()
    if memory is not None:
        update(memory, ev.lineage, kernel_features, {k: ev.lineage.config[k] for k in ("agent", "budget", "seed", "gpu",
                                                                                     "timing")})
    return _write(ev, best, Path(outdir))


def _write(ev: Evaluator, best: Candidate, out: Path) -> OptimizeResult:
    try:
        out.mkdir(parents=True, exist_ok=True)
        paths = {"code_object": out / f"{ev.name}.co", "diff": out / f"{ev.name}.diff",
                 "lineage": out / "lineage.json", "source": out / f"{ev.name}.s"}
        paths["code_object"].write_bytes(best.data)
        paths["diff"].write_text(unified_diff(ev.lineage.candidates[0].source, best.source, ev.name))
        paths["source"].write_text(best.source)
        ev.lineage.write(paths["lineage"])
    except OSError as exc:
        raise AsmEvoError(f"cannot write results to {out}: {exc.strerror}") from None
    speedup = best.speedup or 1.0
    return OptimizeResult(best, ev.lineage, speedup, best.id != 0, paths)
