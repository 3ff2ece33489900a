"""The tools the LLM agent calls, their JSON schemas, and a dispatcher that answers every call
(malformed ones included) with text instead of raising.

Besides free-form edits (`propose_edit`), the agent can call the search agent's rewrite operators:
`list_operators` ranks their proposals for the current candidate exactly as the search does
(`search.expand`: the cost model's prediction at the bench shape, times the search memory's prior
when the run has a memory) and `apply_operator` builds one as a candidate; `release_padding` builds the
candidate declaring only the VGPRs its code needs when the declaration caps its waves per SIMD."""
from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field
from typing import Callable

from ..errors import AsmEvoError
from .edit import Edit, Window
from .gates import Evaluator
from .memory import SearchMemory
from .search import Node, SearchConfig, expand

MAX_VIEW_LINES = 160
MAX_PROPOSALS = 12  # operator proposals list_operators shows (the best ranked)


def _fn(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


_CID = {"candidate": {"type": "integer", "description": "candidate id (default: the last one proposed)"}}
TOOLS = [
    _fn("list_windows", "Hot windows of the current candidate, ranked by modelled cycles.", {}, []),
    _fn("view_window", "Source lines of a window with per-line execution counts, cycle shares and stalls.",
        {"window": {"type": "integer", "description": "window number from list_windows"}}, ["window"]),
    _fn("propose_edit", "Replace lines start_line..end_line (inclusive, inside the window) of the current "
        "candidate with new_text (instructions and labels, one per line). Builds and statically checks it.",
        {"window": {"type": "integer"}, "start_line": {"type": "integer"}, "end_line": {"type": "integer"},
         "new_text": {"type": "string"}}, ["window", "start_line", "end_line", "new_text"]),
    _fn("list_operators", "Rewrite operators (each legal by construction) applicable to the current candidate, "
        "ranked by predicted gain at the bench shape; numbered proposals for apply_operator.", {}, []),
    _fn("apply_operator", "Build operator proposal N from list_operators as a candidate; call verify next.",
        {"proposal": {"type": "integer", "description": "proposal number from list_operators"}}, ["proposal"]),
    _fn("release_padding", "When the kernel declares more VGPRs than its code names, so that fewer waves fit "
        "per SIMD than its code allows, build the current candidate declaring only what it needs; call verify next.",
        {}, []),
    _fn("verify", "Differentially verify a built candidate against K0 on every verify launch; an "
        "equivalent candidate becomes the current one.", _CID, []),
    _fn("time", "Model-cycle timing of an equivalent candidate (speedup vs K0 and vs its parent).", _CID, []),
    _fn("profile", "Summary profile of a verified candidate: cycles, bound, occupancy, windows.", _CID, []),
    _fn("revert", "Make an earlier verified candidate (0 = K0) the current one.",
        {"candidate": {"type": "integer"}}, ["candidate"]),
    _fn("finish", "Stop optimising.", {"reason": {"type": "string"}}, []),
]


@dataclass
class HotWindow:
    """A window of the current candidate's source: lines lo..hi, its share and dominant reason."""

    lo: int
    hi: int
    share: float
    reason: str
    kind: str


@dataclass
class Workbench:
    """Tool state: the evaluator, the current candidate and cached windows per candidate."""

    ev: Evaluator
    search_memory: SearchMemory | None = None
    features: dict[str, str] = field(default_factory=dict)
    seed: int = 0
    step: int = 0
    current: int = 0
    last: int | None = None
    finished: str = ""
    _windows: dict[int, list[HotWindow]] = field(default_factory=dict)
    _lines: dict[int, dict[int, tuple[int, float, str]]] = field(default_factory=dict)
    _nodes: dict[int, Node] = field(default_factory=dict)

    def call(self, name: str, raw_args: str | dict | None) -> str:
        """Run one tool call; every problem becomes an `error: ...` answer."""
        handler: Callable | None = getattr(self, f"tool_{name}", None) if name in {t["function"]["name"] for t in TOOLS} else None
        if handler is None:
            return f"error: unknown tool {name!r}; tools are {', '.join(t['function']['name'] for t in TOOLS)}"
        try:
            args = json.loads(raw_args) if isinstance(raw_args, str) and raw_args.strip() else (raw_args or {})
        except json.JSONDecodeError as exc:
            return f"error: arguments of {name} are not valid JSON ({exc.msg} at position {exc.pos}); resend the call"
        if not isinstance(args, dict):
            return f"error: arguments of {name} must be a JSON object"
        try:
            return handler(**args)
        except TypeError as exc:
            return f"error: bad arguments for {name}: {exc}"
        except AsmEvoError as exc:
            return f"error: {exc}"

    def windows(self, cid: int) -> list[HotWindow]:
        if cid not in self._windows:
            self._analyse(cid)
        return self._windows[cid]

    def _analyse(self, cid: int) -> None:
        prof = self.ev.profile(cid)
        body = self.ev.body_of(cid)
        lines = [p + body.offset for p in body.pos]
        total = sum(pc.cycles for pc in prof.estimate.per_pc.values()) or 1.0
        if len(prof.instructions) != len(lines):
            raise AsmEvoError(f"candidate #{cid}: profile and source disagree; cannot map lines")
        per_line: dict[int, tuple[int, float, str]] = {}
        for ins, line in zip(prof.instructions, lines):
            pc = prof.estimate.per_pc[ins.address]
            per_line[line] = (round(pc.count), pc.cycles / total, pc.cause)
        line_of = {ins.address: line for ins, line in zip(prof.instructions, lines)}
        wins = []
        for w in prof.windows:
            found = [line_of[a] for a in line_of if w.start <= a < w.end]
            if found:
                wins.append(HotWindow(min(found), max(found), w.share, w.reason, w.kind))
        self._windows[cid], self._lines[cid] = wins, per_line

    def _window(self, window: int) -> HotWindow:
        wins = self.windows(self.current)
        if not isinstance(window, int) or not 1 <= window <= len(wins):
            raise AsmEvoError(f"window must be 1..{len(wins)} (see list_windows)")
        return wins[window - 1]

    def bottleneck(self, cid: int) -> str:
        """The cost model's report for candidate `cid` at the timing launch: time, bound, terms, occupancy."""
        e = self.ev.profile(cid).estimate
        return (f"candidate #{cid} on {self.ev.timing.label} ({e.gpu}): {e.predicted_us:.4g} {e.unit}, bound {e.bound} "
                f"(terms: " + ", ".join(f"{k} {v:.0f}" for k, v in e.terms.items()) + " cycles), occupancy "
                f"{e.occupancy.waves_per_simd:g} waves/SIMD ({e.occupancy.limiter}, {e.occupancy.vgprs} VGPRs)")

    def tool_list_windows(self) -> str:
        out = [f"current candidate #{self.current}; cost model: {self.bottleneck(self.current)}"]
        for n, w in enumerate(self.windows(self.current), 1):
            out.append(f"window {n}: {w.kind} lines {w.lo}-{w.hi}, {100 * w.share:.1f}% of cycles, {w.reason}")
        return "\n".join(out)

    def tool_view_window(self, window: int) -> str:
        w = self._window(window)
        src = self.ev.source_of(self.current)
        per_line = self._lines[self.current]
        hi = min(w.hi, w.lo + MAX_VIEW_LINES - 1)
        out = [f"window {window} of candidate #{self.current}: lines {w.lo}-{w.hi}, {100 * w.share:.1f}% of "
               f"cycles, {w.reason}", "line  count  share  source  [stall cause]"]
        for n in range(w.lo, hi + 1):
            count, share, cause = per_line.get(n, (0, 0.0, ""))
            text = src.line(n).expandtabs(4).rstrip()
            out.append(f"{n:5d} {count:6d} {100 * share:5.1f}%  {text}" + (f"  [{cause}]" if cause else ""))
        if hi < w.hi:
            out.append(f"... {w.hi - hi} more lines; edit within {w.lo}-{w.hi}")
        return "\n".join(out)

    def tool_propose_edit(self, window: int, start_line: int, end_line: int, new_text: str) -> str:
        w = self._window(window)
        if not all(isinstance(x, int) for x in (start_line, end_line)) or not isinstance(new_text, str):
            raise AsmEvoError("start_line and end_line must be integers and new_text a string")
        edit = Edit(start_line, end_line, new_text, "llm", f"window {window} lines {start_line}-{end_line}")
        cand = self.ev.build(self.current, edit, Window(w.lo, w.hi), agent="llm", step=self.step)
        self.last = cand.id
        if cand.status == "rejected":
            return f"candidate #{cand.id} rejected ({cand.reason}): {cand.detail}"
        return f"candidate #{cand.id} built and statically checked; call verify. Diff:\n{_short(cand.diff)}"

    def _node(self) -> Node:
        """The current candidate expanded as the search would (timed first if it is not yet)."""
        cid = self.current
        if cid not in self._nodes:
            if self.ev.lineage.get(cid).status == "equivalent":
                self.ev.time_candidate(cid)
            cand = self.ev.lineage.get(cid)
            if not cand.verified:
                raise AsmEvoError(f"candidate #{cid} is {cand.status} ({cand.reason}); revert to a verified one")
            config = SearchConfig(seed=self.seed, memory=self.search_memory, features=self.features)
            node = expand(self.ev, cid, config, random.Random(self.seed))
            node.queue = node.queue[:MAX_PROPOSALS]
            self._nodes[cid] = node
        return self._nodes[cid]

    def tool_list_operators(self) -> str:
        node = self._node()
        unit = self.ev.lineage.unit
        prior = (f"search memory of {len(self.search_memory.records)} kernel record(s)"
                 if self.search_memory is not None else "no search memory")
        out = [f"operator proposals for candidate #{node.cid} ({unit} predicted on {self.ev.timing.label}; "
               f"order: predicted gain x prior, {prior})"]
        if not node.queue:
            out.append("none predicted faster; edit by hand with propose_edit or finish")
        for n, (predicted, _, prop) in enumerate(node.queue, 1):
            gain = ("prediction unavailable" if predicted == math.inf or node.baseline is None else
                    f"predicted {predicted:.4g} ({100 * (predicted / node.baseline - 1):+.1f}%)")
            out.append(f"{n}. {prop.note}: {gain}")
        return "\n".join(out)

    def tool_apply_operator(self, proposal: int) -> str:
        node = self._node()
        if not isinstance(proposal, int) or not 1 <= proposal <= len(node.queue):
            raise AsmEvoError(f"proposal must be 1..{len(node.queue)} (see list_operators)" if node.queue else
                              "no operator proposals for the current candidate")
        _, _, prop = node.queue[proposal - 1]
        edit = prop.body.edit(node.body, prop.operator, prop.note)
        if edit is None:
            raise AsmEvoError(f"proposal {proposal} does not change the source")
        cand = self.ev.build(node.cid, edit, Window(*self.ev.source_of(node.cid).body), agent="llm", step=self.step)
        self.last = cand.id
        if cand.status == "rejected":
            return f"candidate #{cand.id} rejected ({cand.reason}): {cand.detail}"
        return f"candidate #{cand.id} ({prop.operator}) built and statically checked; call verify. Diff:\n{_short(cand.diff)}"

    def tool_release_padding(self) -> str:
        cand = self.ev.release_padding(self.current, agent="llm", step=self.step, through="built")
        if cand is None:
            return f"candidate #{self.current} declares no VGPRs beyond the waves per SIMD its code allows (or it was tried)"
        self.last = cand.id
        if cand.status == "rejected":
            return f"candidate #{cand.id} rejected ({cand.reason}): {cand.detail}"
        return f"candidate #{cand.id} ({cand.note}) built and statically checked; call verify."

    def _cid(self, candidate: int | None) -> int:
        cid = (self.current if self.last is None else self.last) if candidate is None else candidate
        if not isinstance(cid, int):
            raise AsmEvoError("candidate must be an integer id")
        self.ev.lineage.get(cid)
        return cid

    def tool_verify(self, candidate: int | None = None) -> str:
        cid = self._cid(candidate)
        cand = self.ev.verify_candidate(cid)
        if cand.status == "equivalent":
            self.current = cid
            return f"candidate #{cid} is equivalent to K0 on every verify launch; it is now current. Call time."
        return f"candidate #{cid} rejected ({cand.reason}): {cand.detail}"

    def tool_time(self, candidate: int | None = None) -> str:
        cid = self._cid(candidate)
        cand = self.ev.time_candidate(cid)
        parent = self.ev.lineage.get(cand.parent)
        if cand.status != "verified":
            return f"candidate #{cid} not timed ({cand.reason}): {cand.detail}"
        verdict = "accepted" if cand.accepted else "not faster by the gate's decision"
        return (f"candidate #{cid}: {cand.cycles:.4g} {self.ev.lineage.unit} on {self.ev.timing.label} "
                f"({cand.speedup:.3f}x vs K0, {verdict}; {parent.cycles / cand.cycles:.3f}x vs parent #{parent.id}); "
                f"best is #{self.ev.best.id}")

    def tool_profile(self, candidate: int | None = None) -> str:
        cid = self._cid(candidate)
        return self.tool_list_windows() if cid == self.current else self.bottleneck(cid)

    def tool_revert(self, candidate: int) -> str:
        cid = self._cid(candidate)
        cand = self.ev.lineage.get(cid)
        if cand.status not in ("baseline", "verified", "equivalent"):
            raise AsmEvoError(f"candidate #{cid} is {cand.status}; only verified candidates can become current")
        self.current = cid
        return f"current candidate is now #{cid}"

    def tool_finish(self, reason: str = "") -> str:
        self.finished = reason or "finished"
        return "finished"

    def settle(self) -> None:
        """Time every equivalent candidate left untimed (so it can count)."""
        for cand in self.ev.lineage.candidates:
            if cand.status == "equivalent":
                self.ev.time_candidate(cand.id)

    def memory(self, limit: int = 30) -> str:
        """One line per attempt (newest `limit`): id, parent, status/verdict, speedup, a diff excerpt."""
        lines = []
        for c in self.ev.lineage.candidates[1:][-limit:]:
            status = f"{c.speedup:.3f}x" if c.status == "verified" else c.status if c.status != "rejected" else \
                f"rejected {c.reason}: {c.detail[:120]}"
            lines.append(f"- #{c.id} from #{c.parent} ({c.note}): {status}; {_changed(c.diff)}")
        return "\n".join(lines) or "- no attempts yet"


def _short(diff: str, limit: int = 40) -> str:
    lines = diff.splitlines()
    return "\n".join(lines[:limit] + ([f"... ({len(lines) - limit} more diff lines)"] if len(lines) > limit else []))


def _changed(diff: str, limit: int = 3) -> str:
    changed = [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    text = " | ".join(" ".join(ln.split(";")[0].split()) for ln in changed[:limit])
    return text + (f" | ... ({len(changed) - limit} more)" if len(changed) > limit else "") if changed else "no diff"

