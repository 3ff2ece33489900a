"""Derivation queries: the tree of records an artifact was derived from."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .records import Record
from .store import Store


@dataclass
class Derivation:
    """An artifact's record and, by input role, the derivation of each input (None: no record)."""

    record: Record
    inputs: dict[str, "Derivation | None"] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {**asdict(self.record),
                "inputs": {role: (node.to_dict() if node else None) for role, node in self.inputs.items()}}


def derivation(store: Store, sha: str) -> Derivation:
    """The derivation tree of `sha`; inputs without a record (external bytes) appear as None."""
    memo: dict[str, Derivation] = {}

    def build(key: str) -> Derivation:
        if key not in memo:
            record = store.record(key)
            memo[key] = Derivation(record, {role: (build(k) if store.has_record(k) else None)
                                         for role, k in record.inputs.items()})
        return memo[key]

    return build(sha)
