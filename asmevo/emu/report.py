"""Results of an emulated launch: findings and the run summary."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

KINDS = ("waitcnt", "lds_race", "out_of_bounds", "uninitialized", "lds_limit", "scratch_limit", "budget",
         "barrier", "hazard", "vgpr_index")


@dataclass
class Finding:
    """One strictness violation: what, where (instruction address), which wave (launch-global id;
    -1 for a static property of executed code, such as a wait-state hazard)."""

    kind: str
    pc: int
    wave: int
    message: str

    def __str__(self) -> str:
        return f"{self.kind} at pc 0x{self.pc:x} wave {self.wave}: {self.message}"


@dataclass
class RunReport:
    """Summary of one launch. `ok` is True when there are no findings."""

    instructions: int = 0
    lane_instructions: int = 0
    waves: int = 0
    findings: list[Finding] = field(default_factory=list)
    pc_counts: dict[int, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict:
        return {
            "ok": self.ok, "instructions": self.instructions, "lane_instructions": self.lane_instructions,
            "waves": self.waves, "findings": [asdict(f) for f in self.findings],
            "pc_counts": {f"0x{pc:x}": n for pc, n in sorted(self.pc_counts.items())},
        }
