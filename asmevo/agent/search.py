"""The offline search agent: best-first search over rewrite operators, preferring hot windows, with a
budget counted in verified evaluations. Deterministic for a seed; no network.

The next proposal comes from the fastest verified candidate that still has one left, so the budget
goes to the best branches first and to the others (K0's other first steps included) once those are
exhausted, instead of ending while proposals predicted faster remain.

Each expansion profiles the parent on the timing launch (the bench shape; verified candidates only),
applies every operator at the hottest instructions, and ranks the proposals by a prediction at that
shape: the parent's estimate with its latency, issue and LDS terms scaled by a static model of the
rearranged code under the parent's per-instruction execution counts. Only proposals predicted to be
faster, by at least MIN_GAIN of the parent's time, are sent through the gates (static checks -> verify on every verify shape -> timing); the
timing that decides is always the measured (or, on the emulator, traced and modelled) one. A proposal
predicted no slower that relieves a resource the binding one hides is followed greedily by predictions for a
few steps, and the run, when predicted faster than every single proposal, is queued as one compound proposal
(a widening that pays only once packing has cut the VALU work). A K0 whose
VGPR declaration is padded past what its code needs, capping its waves per SIMD, is first tried with the
padding released (`ops_alloc`). The final best is re-verified on the held-out shape
(gates.Evaluator.confirm_heldout). With an `ExpansionCache` (in a run: the artifact store,
`artifacts.expansions`) each expansion's predicted-faster proposals are stored under its parent's source,
the timing launch, the search's settings and random state, so a resumed search re-expands nothing.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Protocol

from ..errors import AsmEvoError
from ..isa.instruction import Instruction
from ..isa.resources import scan
from ..isa.table import instr_info
from ..model import Estimate, ModelError
from ..model.launch import LINE_BYTES, static_cost
from ..profile import Profile
from ..target import processor
from ..verify import sha256
from .body import Body, loop_header
from .edit import Window
from .gates import Evaluator
from .lineage import Candidate
from .memory import START, SearchMemory
from .operators import OPERATORS, Operator, Proposal, propose
from .ops_broadcast import broadcast_reads
from .ops_canon import canonicalize
from .ops_const import constant_key, vector_constant_key
from .ops_coalesce import vector_copy
from .ops_range_selects import range_compare
from .ops_copies import accumulator_copy
from .ops_default import default_move
from .ops_ladder import ladder_head
from .ops_layout import loop_latch, placeable
from .ops_mul import signed_multiply
from .ops_select import all_or_nothing, scc_roundtrip, vcc_mask_branch


LOOKAHEAD = 1        # proposals per expansion predicted no slower that relieve a resource, followed greedily
LOOKAHEAD_STEPS = 3  # greedy steps after such a proposal (`_greedy`)
MIN_GAIN = 1e-4      # the share of its parent's time a proposal must be predicted to save to be tried: gains
                     # below it (one cold instruction in a large kernel) are a hundredth of the 1 % a hardware
                     # decision resolves (`outcome.make_setup`'s eps) and would spend the budget on noise


@dataclass
class Heat:
    """A verified candidate's profile on the timing launch mapped onto its body's instructions:
    executions and modelled cycles over the whole launch, its estimate, and its count-based static
    cost (the baseline a prediction is a ratio to: `static_cost`'s cycles, unit cycles and LDS bytes,
    then the cache lines)."""

    counts: dict[int, float]   # id(Instruction) -> executions
    cycles: dict[int, float]   # id(Instruction) -> modelled cycles
    estimate: Estimate
    time: float                # the candidate's time in the lineage's unit
    static: tuple[float, dict[str, float], float, float]
    lines: dict[int, float] = field(default_factory=dict)  # id(Instruction) -> cache lines per execution
    instructions: list[Instruction] = field(default_factory=list)  # the profiled body's
    blocks: list[float] = field(default_factory=list)  # executions of each of the profiled body's blocks
    block_of: dict[int, int] = field(default_factory=dict)  # id(Instruction) -> its block's index
    latency: dict[int, float] = field(default_factory=dict)  # id(Instruction) -> a vector load's latency


def heat_of(body: Body, profile: Profile, time: float) -> Heat | None:
    """Map a profile (in binary address order) onto the body's instructions; None if they differ."""
    instrs = body.instructions
    if len(profile.instructions) != len(instrs) or any(
            a.mnemonic != b.mnemonic for a, b in zip(profile.instructions, instrs)):
        return None
    per_pc = profile.estimate.per_pc
    counts = {id(b): per_pc[a.address].count for a, b in zip(profile.instructions, instrs)}
    cycles = {id(b): per_pc[a.address].cycles for a, b in zip(profile.instructions, instrs)}
    per_exec = profile.estimate.lines_per_execution
    lines = {id(b): per_exec.get(a.address, 0.0) for a, b in zip(profile.instructions, instrs)}
    blocks = [counts[id(instrs[b.start])] for b in body.cfg.blocks]
    block_of = {id(b): body.cfg.block_of[n] for n, b in enumerate(instrs)}
    latency = {id(b): profile.estimate.load_latency[a.address] for a, b in zip(profile.instructions, instrs)
               if a.address in profile.estimate.load_latency}
    heat = Heat(counts, cycles, profile.estimate, time, (0.0, {}, 0.0, 0.0), lines, list(instrs), blocks, block_of,
                latency)
    static = _static(body, heat)
    if static is None:
        return None
    heat.static = static
    return heat


Like = tuple[Instruction | None, float]   # a profiled instruction a new one behaves like, and a factor on its traffic


def _like(body: Body, heat: Heat, n: int) -> Like:
    """(the profiled instruction vector-memory instruction n of `body` behaves like, the factor on its traffic):
    itself when kept; the one an operator described it as (`Body.traffic`); one that differs from it in its data
    registers only (renamed), the one in the parent's block at its block's index first when the edit kept the
    number of blocks; None when there is no single such one."""
    ins, proc = body.instructions[n], body.processor
    if id(ins) in heat.lines:
        return ins, 1.0
    if n in body.traffic:
        parent, factor = body.traffic[n]
        return heat.instructions[parent], factor
    renamed = [p for p in heat.instructions if p.mnemonic == ins.mnemonic and p.modifiers == ins.modifiers
               and _address_text(p, proc) == _address_text(ins, proc)]
    same_shape = len(body.cfg.blocks) == len(heat.blocks)
    here = [p for p in renamed if same_shape and heat.block_of[id(p)] == body.cfg.block_of[n]]
    return ((here or renamed)[0] if len(here) == 1 or len(renamed) == 1 else None), 1.0


def _lines(body: Body, heat: Heat, counts: dict[int, float], likes: dict[int, Like]) -> float:
    """Cache lines the body's global-memory instructions touch over the launch, at the parent's
    counts: each like the profiled instruction it behaves like (`likes`, `_like`'s by instruction), else like the
    parent instructions with its address operands and direction (the most any of them touched), else as a
    contiguous access."""
    total, proc = 0.0, body.processor
    for n, (like, factor) in likes.items():
        ins = body.instructions[n]
        info = instr_info(ins.mnemonic, proc)
        if like is not None:
            per = heat.lines.get(id(like), 0.0) * factor
        else:
            same = [heat.lines.get(id(p), 0.0) for p in heat.instructions if instr_info(p.mnemonic, proc).vmem
                    and instr_info(p.mnemonic, proc).is_load == info.is_load
                    and _address_text(p, proc) == _address_text(ins, proc)]
            per = max(same) if same else info.access_bytes * 64 / LINE_BYTES
        total += counts.get(4 * n, 0.0) * per
    return total


def _load_latency(body: Body, heat: Heat, likes: dict[int, Like]) -> dict[int, float]:
    """Each vector load's latency (by `_addressed` address) as the parent's estimate gave the profiled load it
    behaves like (`likes`: between an L2 hit's and an HBM miss's by its buffer's reuse), else the longest of the
    profiled loads with its address operands; the model's default for another."""
    out, proc = {}, body.processor
    for n, (like, _) in likes.items():
        ins = body.instructions[n]
        same = [like] if like is not None else [p for p in heat.instructions if id(p) in heat.latency and
                                                _address_text(p, proc) == _address_text(ins, proc)]
        known = [heat.latency[id(p)] for p in same if id(p) in heat.latency]
        if known:
            out[4 * n] = max(known)
    return out


def _address_text(ins: Instruction, processor: str) -> tuple[str, ...]:
    """The operands of a vector memory instruction (of `processor`) other than its data."""
    info = instr_info(ins.mnemonic, processor)
    ops = [op.text for op in ins.operands]
    return tuple(ops[info.n_dst:]) if info.is_load else tuple(ops[:1] + ops[2:])


def _vgpr_allocation(body: Body) -> int:
    """VGPRs (granule-rounded, unified with AGPRs) a rebuild of the body allocates at least: the registers its
    operands name, as the rebuild scans them (`asmevo.isa.resources.scan`; not the register facts' widening
    of M0-indexed operands to the whole file, which would predict every edit of such a kernel at 256)."""
    used = scan(body.instructions, body.processor)
    top = {"v": used.vgprs, "a": used.agprs}
    p = processor(body.processor)
    named = -(-top["v"] // p.accum_granule) * p.accum_granule + top["a"] if top["a"] else top["v"]
    return -(-max(1, named) // p.vgpr_granule) * p.vgpr_granule


def _addressed(body: Body) -> list[Instruction]:
    """Copies of the body's instructions at synthetic addresses with resolved branch targets, each keeping its
    original's register facts (`reg_info_memo`: they name the same registers wherever the instruction is)."""
    instrs, labels, _ = body.index
    out = []
    for n, ins in enumerate(instrs):
        target = 4 * labels[ins.label] if ins.is_branch and ins.label in labels else None
        copy = replace(ins, address=4 * n, target=target)
        copy.reg_info_memo = ins.reg_info_memo
        out.append(copy)
    return out


def _static(body: Body, heat: Heat) -> tuple[float, dict[str, float], float, float] | None:
    """The body's count-based static cost, LDS bytes and cache lines, assuming the parent's execution counts (an
    instruction an operator described (`Body.counts`) as it said; a new or rewritten one counts as its block's
    first known one, or, in a block with none (a masked region of one renamed load), as the parent's block at
    its index when the edit kept the number of blocks; k copies of one, after unrolling, count 1/k each)."""
    instrs = body.instructions
    copies = Counter(id(ins) for ins in instrs)  # an unrolled instruction shares its parent's count
    per, pc_counts = heat.counts, {}

    def count(n: int) -> float | None:
        if n in body.counts:
            return max(0.0, sum(c * per.get(id(heat.instructions[p]), 0.0) for p, c in body.counts[n]))
        c = per.get(id(instrs[n]))
        return None if c is None else c / copies[id(instrs[n])]

    same_shape = len(body.cfg.blocks) == len(heat.blocks)
    for x, blk in enumerate(body.cfg.blocks):
        counted = {n: count(n) for n in range(blk.start, blk.end)}
        known = [c for c in counted.values() if c is not None]
        for n, c in counted.items():
            pc_counts[4 * n] = c if c is not None else known[0] if known else heat.blocks[x] if same_shape else 0
    try:
        vmem = [n for n, ins in enumerate(instrs) if instr_info(ins.mnemonic, body.processor).vmem]
        likes = {n: _like(body, heat, n) for n in vmem}
        cost = static_cost(_addressed(body), pc_counts, load_latency=_load_latency(body, heat, likes),
                           processor=body.processor)
        return (*cost, _lines(body, heat, pc_counts, likes))
    except AsmEvoError:
        return None


def ratios(body: Body, heat: Heat) -> dict[str, float] | None:
    """The body's count-based static cost over its parent's (`heat`), per term a prediction scales:
    `latency` (issue and stall cycles), `issue` (the busiest issue unit's cycles), `lines` (cache lines
    touched) and `lds` (LDS bytes moved); None when not modellable."""
    static = _static(body, heat)
    if static is None or not heat.static[0]:
        return None
    (total, units, lds, lines), (total0, units0, lds0, lines0) = static, heat.static
    issue0 = max(units0.values(), default=0.0)
    return {"latency": total / total0, "issue": max(units.values(), default=0.0) / issue0 if issue0 else 1.0,
            "lines": lines / lines0 if lines0 else 1.0, "lds": lds / lds0 if lds0 else 1.0}


def predict(body: Body, heat: Heat) -> float | None:
    """Predicted time (the lineage's unit) of `body` on the timing launch: the parent's time scaled as
    its estimate is when the latency term follows the static-cost ratio, the issue term the
    issue-cycle ratio, the cache-line terms the ratio of lines touched, the LDS term the ratio of LDS
    bytes (`ratios`), and the rounds of resident workgroups the body's VGPR allocation (the HBM term
    unchanged). None when not modellable."""
    r = ratios(body, heat)
    return None if r is None else _predicted(body, heat, r)


def _predicted(body: Body, heat: Heat, r: dict[str, float]) -> float | None:
    """`predict` from the body's `ratios` r."""
    try:
        scaled = heat.estimate.rescaled(r["latency"], r["issue"], r["lines"], _vgpr_allocation(body), r["lds"])
    except ModelError:
        return None
    return heat.time * scaled / heat.estimate.predicted_us


@dataclass
class Node:
    """A verified candidate the search expands: its body, heat, predicted time and ranked proposals."""

    cid: int
    body: Body
    heat: Heat | None
    baseline: float | None
    queue: list[tuple[float, float, Proposal]] = field(default_factory=list)


class ExpansionCache(Protocol):
    """An expansion's proposals by canonical request (`expansion_request`): `{"proposals": [...]}` entries."""

    def get(self, request: dict) -> dict | None:
        """The entry stored for `request`, or None."""

    def put(self, request: dict, entry: dict) -> dict:
        """Store `entry` for `request`; returns the entry to use (the first one stored, when two runs raced)."""


@dataclass
class SearchConfig:
    """`budget`: verified evaluations; `sites`: hottest instructions tried per expansion; `explore`:
    chance of trying a random proposal; `memory`/`features`: the suite's search memory and the kernel's
    features (proposals are tried in order of predicted gain times the memory's prior for their operator)."""

    budget: int = 16
    seed: int = 0
    sites: int = 48
    explore: float = 0.1
    operators: tuple[Operator, ...] = OPERATORS
    max_attempts: int = 200
    memory: SearchMemory | None = None      # orders proposals by predicted gain x the memory's prior
    features: dict[str, str] = field(default_factory=dict)  # K0's features (memory.features)
    expansions: ExpansionCache | None = None  # stored expansions (a resumed search re-expands nothing)


def search(ev: Evaluator, config: SearchConfig, log: Callable[[str], None] = lambda s: None) -> Candidate:
    """Run the search; returns the best verified candidate (before the held-out re-check)."""
    rng = random.Random(config.seed)
    nodes: dict[int, Node] = {}
    step = 0

    def node(cid: int) -> Node:
        if cid not in nodes:
            nodes[cid] = expand(ev, cid, config, rng)
            log(f"expand #{cid}: {len(nodes[cid].queue)} proposals predicted faster")
        return nodes[cid]

    def verified_evals() -> int:
        return sum(1 for c in ev.lineage.candidates if c.verdict is not None)

    released = ev.release_padding(0, agent="search", step=1) if config.budget > 0 else None
    if released is not None:
        step += 1
        log(f"step {step}: {released.summary()} (K0's VGPR declaration is padded)")
    while verified_evals() < config.budget and step < config.max_attempts:
        ranked = sorted((c for c in ev.lineage.candidates if c.verified), key=lambda c: (c.cycles, c.id))
        parent = next((node(c.id) for c in ranked if node(c.id).queue), None)
        if parent is None:
            log("no proposal predicted to be faster: search converged")
            break
        k = rng.randrange(len(parent.queue)) if rng.random() < config.explore else 0
        predicted, _, prop = parent.queue.pop(k)
        edit = prop.body.edit(parent.body, prop.operator, prop.note)
        # the full static checks cost about a second on a large kernel: run them on the proposals tried only
        if edit is None or ev.seen(ev.lineage.get(parent.cid).source, edit) or not prop.body.no_worse(parent.body):
            continue
        step += 1
        window = Window(*ev.source_of(parent.cid).body)
        cand = ev.evaluate(parent.cid, edit, window, agent="search", step=step)
        log(f"step {step}: {cand.summary()} (predicted {predicted:.0f}, parent #{parent.cid})")
    return ev.best


def expand(ev: Evaluator, cid: int, config: SearchConfig, rng: random.Random) -> Node:
    """Verified candidate `cid` with its heat on the timing launch, predicted time, and `queue`: the
    operators' proposals at its hottest sites predicted faster, in the order the search tries them
    (entries (predicted time, seeded tie, Proposal))."""
    body = ev.body_of(cid)
    heat = heat_of(body, ev.profile(cid), ev.lineage.get(cid).cycles)
    node = Node(cid, body, heat, predict(body, heat) if heat else None)
    node.queue = _ranked(ev, node, config, rng)
    return node


def _ranked(ev: Evaluator, node: Node, config: SearchConfig, rng: random.Random) -> list:
    """Proposals at the hottest sites, predicted faster than the node, best predicted first (the search
    drops one that fails the static checks when it gets to it)."""
    request = expansion_request(ev, node.cid, config, rng)
    entry = config.expansions.get(request) if config.expansions is not None else None
    parent = [it.text for it in node.body.items]
    if entry is None:
        found = _faster(ev, node, config)
        if config.expansions is not None:
            config.expansions.put(request, {"proposals": [
                {"predicted": None if p == math.inf else p, "operator": prop.operator, "site": prop.site,
                 "note": prop.note, "change": _change(parent, [it.text for it in prop.body.items])}
                for p, prop in found]})
    else:
        found = [(math.inf if e["predicted"] is None else e["predicted"],
                  Proposal(node.body.with_lines(_changed(parent, e["change"])), e["operator"], e["site"], e["note"]))
                 for e in entry["proposals"]]
    cand = ev.lineage.get(node.cid)
    previous = cand.operator if cand.parent is not None else START
    out = [(predicted, rng.random(), prop) for predicted, prop in found]
    out.sort(key=lambda t: _order(t, node.baseline, config, previous))
    return out


def _change(old: list[str], new: list[str]) -> dict:
    """`new` as `old` with lines `keep[0]`..len(old)-`keep[1]`-1 replaced by `lines`."""
    n, a, b = min(len(old), len(new)), 0, 0
    while a < n and old[a] == new[a]:
        a += 1
    while b < n - a and old[-1 - b] == new[-1 - b]:
        b += 1
    return {"keep": [a, b], "lines": new[a:len(new) - b]}


def _changed(old: list[str], change: dict) -> list[str]:
    """The lines `_change` described."""
    a, b = change["keep"]
    return old[:a] + change["lines"] + old[len(old) - b:]


def expansion_request(ev: Evaluator, cid: int, config: SearchConfig, rng: random.Random) -> dict:
    """What determines candidate `cid`'s expansion: K0, the candidate's source, the timing launch and
    GPU, the sites and operators tried, and the random state its ties are drawn from."""
    return {"kind": "search_expansion", "k0": ev.lineage.k0_sha256, "kernel": ev.kernel,
            "source": sha256(ev.lineage.get(cid).source.encode()), "timing": ev.timing.label, "gpu": ev.gpu_name,
            "sites": config.sites, "operators": [op.name for op in config.operators],
            "random": sha256(repr(rng.getstate()).encode())}


def _faster(ev: Evaluator, node: Node, config: SearchConfig) -> list[tuple[float, Proposal]]:
    """(predicted time, proposal) of every distinct proposal at the node's hottest sites predicted
    faster than the node by at least MIN_GAIN of its time (inf: not modellable), in the operators' order."""
    body, heat = node.body, node.heat
    if body.opaque:
        return []
    try:
        body.cfg
    except AsmEvoError:
        return []
    order = list(range(len(body.instructions)))[:config.sites]
    if heat is not None:
        order = hot_sites(body, heat, config.sites)
    out, seen, neutral = [], set(), []
    hidden = _hidden(heat) if heat is not None else None
    bar = None if node.baseline is None else node.baseline * (1 - MIN_GAIN)    # faster by enough to try
    for prop in propose(body, order, config.operators):
        code = tuple(it.text for it in prop.body.items)
        if code in seen:
            continue
        seen.add(code)
        r = ratios(prop.body, heat) if heat is not None else None
        predicted = _predicted(prop.body, heat, r) if r is not None else None
        if predicted is None or bar is None or predicted < bar:
            out.append((predicted if predicted is not None else math.inf, prop))
        elif hidden is not None and predicted <= node.baseline and r[hidden] < 1.0:
            neutral.append((r[hidden], len(neutral), prop))  # no slower, relieves the term binding next
    best = min((p for p, _ in out), default=bar)
    for _, _, first in sorted(neutral)[:LOOKAHEAD]:
        steps = _greedy(first, node.baseline, heat, config)
        if not steps or steps[-1][0] >= best:
            continue
        predicted, last = steps[-1]
        code = tuple(it.text for it in last.body.items)
        if code not in seen:
            seen.add(code)
            run = [first, *(q for _, q in steps)]
            out.append((predicted, Proposal(last.body, "+".join(q.operator for q in run), first.site,
                                            "; then ".join(q.note for q in run))))
    return out


def _greedy(first: Proposal, baseline: float, heat: Heat, config: SearchConfig) -> list[tuple[float, Proposal]]:
    """Up to LOOKAHEAD_STEPS proposals after `first`, each the one predicted fastest at the hottest sites of
    the one before, while that is predicted faster than the one before (predictions only, nothing verified)."""
    steps: list[tuple[float, Proposal]] = []
    cur, last = first.body, baseline
    for _ in range(LOOKAHEAD_STEPS):
        found = [(predict(_rebase(p.body, cur, heat), heat), n, p) for n, p in
                 enumerate(propose(cur, hot_sites(cur, heat, config.sites), config.operators))]
        found = [f for f in found if f[0] is not None and f[0] < last]
        if not found:
            break
        last, _, prop = min(found, key=lambda f: (f[0], f[1]))
        steps.append((last, prop))
        cur = prop.body
    return steps


def _rebase(body: Body, parent: Body, heat: Heat) -> Body:
    """`body`, a proposal on `parent` (an edit of the profiled body), with its prediction descriptions
    (`Body.traffic`, `Body.counts`) made to index the profiled body's instructions, as `predict` reads them:
    each composed with the parent's description of the instruction it names, and the parent's kept for
    the instructions `body` kept; a description naming an instruction of neither goes."""
    profiled = {id(ins): n for n, ins in enumerate(heat.instructions)}
    kept: dict[int, list[int]] = {}     # an instruction the parent holds more than once (a versioned copy's) is
    for m, ins in enumerate(parent.instructions):   # matched occurrence by occurrence, in order
        kept.setdefault(id(ins), []).append(m)
    traffic: dict[int, tuple[int, float]] = {}
    counts: dict[int, tuple[tuple[int, float], ...]] = {}
    for n, ins in enumerate(body.instructions):
        at = kept.get(id(ins))
        m = at.pop(0) if at else None
        if m is not None and m in parent.traffic:
            traffic[n] = parent.traffic[m]
        if m is not None and m in parent.counts:
            counts[n] = parent.counts[m]
    for n, (m, factor) in body.traffic.items():
        if m in parent.traffic:
            traffic[n] = (parent.traffic[m][0], parent.traffic[m][1] * factor)
        elif id(parent.instructions[m]) in profiled:
            traffic[n] = (profiled[id(parent.instructions[m])], factor)
    for n, terms in body.counts.items():
        composed: list[tuple[int, float]] = []
        for m, c in terms:
            if m in parent.counts:
                composed += [(p, c * c0) for p, c0 in parent.counts[m]]
            elif id(parent.instructions[m]) in profiled:
                composed.append((profiled[id(parent.instructions[m])], c))
            else:
                break
        else:
            counts[n] = tuple(composed)
    body.traffic, body.counts = traffic, counts
    return body


_RATIO_OF = {"simd_issue": "issue", "vmem_path": "lines", "l2_bandwidth": "lines", "lds": "lds"}


def _hidden(heat: Heat) -> str | None:
    """The `ratios` key of the term that binds next, the parent estimate's second largest, when both it and
    the binding one are terms an edit can lower (not the HBM floor), else None. A proposal that leaves the
    predicted time alone but lowers that ratio relieves a resource the binding one hides, which a step after
    it can need."""
    terms = sorted(heat.estimate.terms.items(), key=lambda kv: -kv[1])
    if len(terms) < 2 or terms[0][0] == "hbm_bandwidth":
        return None
    return _RATIO_OF.get(terms[1][0])


def _order(entry: tuple[float, float, Proposal], baseline: float | None, config: SearchConfig,
           previous: str) -> tuple:
    """Sort key of a ranked proposal: predicted ones first, by predicted gain times the memory's
    prior for the operator (a constant without memory: the prediction's order), then the seeded tie."""
    predicted, tie, prop = entry
    if predicted == math.inf or baseline is None:
        return (1, predicted, tie)
    prior = config.memory.prior(prop.operator, previous, config.features) if config.memory else 0.5
    return (0, -(baseline - predicted) * prior, tie)


def hot_sites(body: Body, heat: Heat, limit: int, blocks: int = 3, loads: int = 16) -> list[int]:
    """The `limit` hottest executed instructions, then the memory instructions of the hottest
    blocks (their loads feed the hot waits even when the loads themselves are cheap), then every
    executed `s_nop` (each is a whole issue slot a filler can save), scalar load (a late one
    stalls a wait far from it), scalar or vector constant definition (copies elsewhere can go),
    accumulator copy (its loop's round trip can go), vector copy (its value can be written where it is copied
    from), range compare (the selects on its mask can take their true values behind one test), canonicalize (one
    VALU slot each; one of an already canonical value can go), constant move (a masked load's default can
    leave its loop), all-or-nothing scalar select (its AND can take it), branch through a select and
    a compare (it can branch on SCC), head of a ladder of row guards (`ops_ladder`: each guard is
    cheap), broadcast move its block can read through (`broadcast_reads`),
    64-bit multiply of sign-extended values (one `v_mad_i64_i32` can do its five instructions; several rows' can
    share one by deltas), EXEC save outside loops (the head of a run of masked regions one test can version,
    however cheap each region: an epilogue's) and global-memory access
    (the cache lines it touches are the bandwidth terms' business, not its own cycles)."""
    instrs, cfg = body.instructions, body.cfg
    cyc = lambda i: heat.cycles.get(id(instrs[i]), 0.0)  # 0 for an instruction an edit wrote
    order = sorted((i for i in range(len(instrs)) if cyc(i) > 0), key=lambda i: -cyc(i))[:limit]
    ranked = sorted(cfg.blocks, key=lambda b: -sum(cyc(i) for i in range(b.start, b.end)))
    extra = [i for b in ranked[:blocks] for i in range(b.start, b.end)
             if body.infos[i].family in ("smem", "flat", "mubuf", "ds") and cyc(i) > 0 and i not in order]
    sites = order + extra[:loads]
    cheap = [i for i in range(len(instrs)) if cyc(i) > 0 and i not in sites
             and (instrs[i].mnemonic == "s_nop" or body.infos[i].family in ("smem", "flat", "mubuf")
                  or instrs[i].mnemonic == "s_and_saveexec_b64" and loop_header(body, i) is None
                  or constant_key(body, i) or vector_constant_key(body, i) or accumulator_copy(body, i)
                  or vector_copy(body, i) is not None or range_compare(body, i)
                  or canonicalize(body, i)
                  or default_move(body, i) is not None or all_or_nothing(body, i) is not None
                  or scc_roundtrip(body, i) or vcc_mask_branch(body, i) or loop_latch(body, i)
                  or mostly_taken(body, heat, i) or ladder_head(body, i)
                  or broadcast_reads(body, i) is not None or signed_multiply(body, i) is not None
                  or body.infos[i].base == "v_mad_i64_i32")]
    return sites + cheap


def mostly_taken(body: Body, heat: Heat, i: int) -> bool:
    """Instruction i is a branch whose target run can follow it (`ops_layout.placeable`) and that more than half
    of its executions take: an `s_branch`, or a conditional one whose next instruction runs less than half as
    often (that count bounds the fall-through edge from above)."""
    instrs = body.instructions
    if not placeable(body, i):
        return False
    n = heat.counts.get(id(instrs[i]), 0.0)
    if instrs[i].mnemonic == "s_branch":
        return n > 0
    return n > 0 and i + 1 < len(instrs) and n - heat.counts.get(id(instrs[i + 1]), 0.0) > n / 2
