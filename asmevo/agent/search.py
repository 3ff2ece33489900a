"""The offline search agent: beam search over rewrite operators, preferring hot windows, with a
budget counted in verified evaluations. Deterministic for a seed; no network.

Each expansion profiles the parent (verified candidates only), applies every operator at the
hottest instructions, and ranks the proposals by the cycle model applied statically to the
rearranged code with the parent's per-instruction execution counts. Only proposals predicted to
be faster are sent through the gates (static checks -> verify on every verify shape -> timing);
the timing that decides is always the measured one. The final best is re-verified on the
held-out shape (gates.Evaluator.confirm_heldout).
"""
from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable

from ..cycle_model import CycleModelError, estimate
from ..errors import AsmEvoError
from ..isa.instruction import Instruction
from ..profile import Profile
from .body import Body
from .edit import Window
from .gates import Evaluator
from .lineage import Candidate
from .operators import OPERATORS, Operator, Proposal, propose
from .ops_const import constant_key


@dataclass
class Heat:
    """Per body-instruction execution counts of a verified candidate on each verify launch."""

    counts: list[dict[int, int]]  # per launch: id(Instruction) -> count
    cycles: dict[int, float]      # id(Instruction) -> modelled cycles summed over launches


def heat_of(body: Body, profiles: list[Profile]) -> Heat | None:
    """Map profiles (in binary address order) onto the body's instructions; None if they differ."""
    instrs = body.instructions
    counts, cycles = [], {id(x): 0.0 for x in instrs}
    for prof in profiles:
        if len(prof.instructions) != len(instrs) or any(
                a.mnemonic != b.mnemonic for a, b in zip(prof.instructions, instrs)):
            return None
        per = {}
        for a, b in zip(prof.instructions, instrs):
            pc = prof.estimate.per_pc[a.address]
            per[id(b)] = pc.count
            cycles[id(b)] += pc.cycles
        counts.append(per)
    return Heat(counts, cycles)


def _addressed(body: Body) -> list[Instruction]:
    """Copies of the body's instructions at synthetic addresses with resolved branch targets."""
    instrs, labels, _ = body.index
    out = []
    for n, ins in enumerate(instrs):
        target = 4 * labels[ins.label] if ins.is_branch and ins.label in labels else None
        out.append(replace(ins, address=4 * n, target=target))
    return out


def predict(ev: Evaluator, body: Body, heat: Heat) -> float | None:
    """Modelled cycles of `body` over the verify launches, assuming the parent's execution counts
    (a new or rewritten instruction counts as its block's first known one; k copies of one, after
    unrolling, count 1/k each). None when not modellable."""
    addressed = _addressed(body)
    instrs = body.instructions
    copies = Counter(id(ins) for ins in instrs)  # an unrolled instruction shares its parent's count
    total = 0.0
    kernel = ev.k0.kernel(ev.kernel)
    for vl, per in zip(ev.launches, heat.counts):
        pc_counts = {}
        for blk in body.cfg.blocks:
            known = [per[id(instrs[n])] / copies[id(instrs[n])] for n in range(blk.start, blk.end) if id(instrs[n]) in per]
            for n in range(blk.start, blk.end):
                c = per.get(id(instrs[n]))
                pc_counts[4 * n] = c / copies[id(instrs[n])] if c is not None else known[0] if known else 0
        spec = vl.spec
        waves = math.prod(spec.grid) * -(-math.prod(spec.block) // 64)
        try:
            est = estimate(addressed, kernel, pc_counts, waves=waves, grid=spec.grid, block=spec.block,
                           dynamic_lds=spec.dynamic_lds, footprint_bytes=sum(b.nbytes for b in spec.buffers.values()))
        except (CycleModelError, AsmEvoError):
            return None
        total += est.model_cycles
    return total


@dataclass
class _Node:
    cid: int
    body: Body
    heat: Heat | None
    baseline: float | None
    queue: list[tuple[float, float, Proposal]] = field(default_factory=list)


@dataclass
class SearchConfig:
    """`budget`: verified evaluations; `sites`: hottest instructions tried per expansion; `beam`:
    verified candidates kept for expansion; `explore`: chance of trying a random proposal."""

    budget: int = 16
    seed: int = 0
    sites: int = 48
    beam: int = 4
    explore: float = 0.1
    operators: tuple[Operator, ...] = OPERATORS
    max_attempts: int = 200


def search(ev: Evaluator, config: SearchConfig, log: Callable[[str], None] = lambda s: None) -> Candidate:
    """Run the search; returns the best verified candidate (before the held-out re-check)."""
    rng = random.Random(config.seed)
    nodes: dict[int, _Node] = {}
    step = 0

    def node(cid: int) -> _Node:
        if cid not in nodes:
            body = ev.body_of(cid)
            heat = heat_of(body, ev.profile(cid))
            nodes[cid] = _Node(cid, body, heat, predict(ev, body, heat) if heat else None)
            nodes[cid].queue = _ranked(ev, nodes[cid], config, rng)
            log(f"expand #{cid}: {len(nodes[cid].queue)} proposals predicted faster")
        return nodes[cid]

    def verified_evals() -> int:
        return sum(1 for c in ev.lineage.candidates if c.verdict is not None)

    while verified_evals() < config.budget and step < config.max_attempts:
        beam = sorted((c for c in ev.lineage.candidates if c.verified), key=lambda c: (c.cycles, c.id))
        parent = next((node(c.id) for c in beam[:config.beam] if node(c.id).queue), None)
        if parent is None:
            log("no proposal predicted to be faster: search converged")
            break
        k = rng.randrange(len(parent.queue)) if rng.random() < config.explore else 0
        predicted, _, prop = parent.queue.pop(k)
        edit = prop.body.edit(parent.body, prop.operator, prop.note)
        if edit is None or ev.seen(ev.lineage.get(parent.cid).source, edit):
            continue
        step += 1
        window = Window(*ev.source_of(parent.cid).body)
        cand = ev.evaluate(parent.cid, edit, window, agent="search", step=step)
        log(f"step {step}: {cand.summary()} (predicted {predicted:.0f}, parent #{parent.cid})")
    return ev.best


def _ranked(ev: Evaluator, node: _Node, config: SearchConfig, rng: random.Random) -> list:
    """Proposals at the hottest sites, predicted faster than the node, best predicted first."""
    body, heat = node.body, node.heat
    if body.opaque:
        return []
    try:
        body.cfg
    except AsmEvoError:
        return []
    order = list(range(len(body.instructions)))[:config.sites]
    if heat is not None:
        order = _hot_sites(body, heat, config.sites)
    out, seen = [], set()
    for prop in propose(body, order, config.operators):
        code = tuple(it.text for it in prop.body.items)
        if code in seen:
            continue
        seen.add(code)
        predicted = predict(ev, prop.body, heat) if heat is not None else None
        faster = predicted is None or node.baseline is None or predicted < node.baseline
        if faster and prop.body.no_worse(body):
            out.append((predicted if predicted is not None else math.inf, rng.random(), prop))
    out.sort(key=lambda t: (t[0], t[1]))
    return out


def _hot_sites(body: Body, heat: Heat, limit: int, blocks: int = 3, loads: int = 16) -> list[int]:
    """The `limit` hottest executed instructions, then the memory instructions of the hottest
    blocks (their loads feed the hot waits even when the loads themselves are cheap), then every
    executed `s_nop` (each is a whole issue slot a filler can save), scalar load (a late one
    stalls a wait far from it) and scalar constant definition (copies elsewhere can go)."""
    instrs, cfg = body.instructions, body.cfg
    cyc = lambda i: heat.cycles[id(instrs[i])]
    order = sorted((i for i in range(len(instrs)) if cyc(i) > 0), key=lambda i: -cyc(i))[:limit]
    ranked = sorted(cfg.blocks, key=lambda b: -sum(cyc(i) for i in range(b.start, b.end)))
    extra = [i for b in ranked[:blocks] for i in range(b.start, b.end)
             if body.infos[i].family in ("smem", "flat", "mubuf", "ds") and cyc(i) > 0 and i not in order]
    sites = order + extra[:loads]
    cheap = [i for i in range(len(instrs)) if cyc(i) > 0 and i not in sites
             and (instrs[i].mnemonic == "s_nop" or body.infos[i].family == "smem" or constant_key(body, i))]
    return sites + cheap
