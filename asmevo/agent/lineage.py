"""Candidate records and the lineage of one optimisation run (every candidate, accepted or not)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path

from ..errors import AsmEvoError

# built: passed the static gates; equivalent: verified, not yet timed; verified: verified and timed.
STATUSES = ("baseline", "rejected", "built", "equivalent", "verified")


@dataclass
class Candidate:
    """One candidate: where it came from, the edit (as a unified diff against its parent), and what
    the gates said. `cycles` is its time on the timing launch in the lineage's `unit` (model_us or
    ms); `speedup` is the gate's (K0's time over this one's); `accepted` whether the gate's decision
    counts it faster than K0. `source` (the full edited text) and `profile` (the timing model's
    estimate, on the emulator) are kept in memory only."""

    id: int
    parent: int | None
    agent: str
    step: int
    operator: str
    note: str = ""
    edit: dict | None = None
    diff: str = ""
    status: str = "rejected"
    reason: str = ""
    detail: str = ""
    verdict: dict | None = None
    timing: dict | None = None
    cycles: float | None = None
    speedup: float | None = None
    sha256: str = ""
    seconds: float = 0.0
    cached: bool = False
    source: str = field(default="", repr=False)
    data: bytes = field(default=b"", repr=False)
    profile: object = field(default=None, repr=False)

    @property
    def accepted(self) -> bool:
        return bool(self.timing and self.timing.get("accepted"))

    @property
    def verified(self) -> bool:
        return self.status in ("baseline", "verified")

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("source", "data", "profile")}

    def summary(self) -> str:
        if self.verified:
            return f"#{self.id} {self.operator}: verified, {self.speedup:.3f}x vs K0"
        return f"#{self.id} {self.operator}: rejected ({self.reason}: {self.detail})"


def operator_chain(candidates: list[dict], cid: int) -> list[str]:
    """The operators from K0 to candidate `cid`, given the candidates' JSON records
    (`Lineage.to_json()["candidates"]`, ids in order)."""
    out = []
    c = candidates[cid]
    while c["parent"] is not None:
        out.append(c["operator"])
        c = candidates[c["parent"]]
    return out[::-1]


@dataclass
class Lineage:
    """All candidates of one run, in creation order; `best` is the id of the fastest verified one."""

    kernel: str
    k0_sha256: str
    unit: str
    candidates: list[Candidate] = field(default_factory=list)
    best: int = 0
    heldout: dict | None = None
    config: dict = field(default_factory=dict)

    def add(self, cand: Candidate) -> Candidate:
        self.candidates.append(cand)
        return cand

    def next_id(self) -> int:
        return len(self.candidates)

    def get(self, cid: int) -> Candidate:
        if not 0 <= cid < len(self.candidates):
            raise AsmEvoError(f"no candidate #{cid}")
        return self.candidates[cid]

    @property
    def best_candidate(self) -> Candidate:
        return self.candidates[self.best]

    def verified_count(self) -> int:
        return sum(1 for c in self.candidates if c.status == "verified")

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "k0_sha256": self.k0_sha256, "unit": self.unit, "best": self.best,
                "best_speedup": self.best_candidate.speedup, "heldout": self.heldout, "config": self.config,
                "candidates": [c.to_json() for c in self.candidates]}

    def write(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")
