"""Lineage queries: the tree of records an artifact was derived from."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .records import Record
from .store import Store


@dataclass
class Lineage:
    """An artifact's record and, by input role, the lineage of each input (None: no record)."""

    record: Record
    inputs: dict[str, "Lineage | None"] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {**asdict(self.record),
                "inputs": {role: (node.to_dict() if node else None) for role, node in self.inputs.items()}}


def lineage(store: Store, sha: str) -> Lineage:
    """The derivation tree of `sha`; inputs without a record (external bytes) appear as None."""
    memo: dict[str, Lineage] = {}

    def build(key: str) -> Lineage:
        if key not in memo:
            record = store.record(key)
            memo[key] = Lineage(record, {role: (build(k) if store.has_record(k) else None)
                                         for role, k in record.inputs.items()})
        return memo[key]

    return build(sha)
