"""Artifact records: small JSON documents saying what an artifact is and what made it."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone


@dataclass(frozen=True)
class Record:
    """`sha256` names the artifact; `inputs` maps each input role to its sha256; `code_version`
    is the sha256 of the code that produced it; `elapsed_s` is how long producing it took."""

    kind: str
    sha256: str
    stage: str
    inputs: dict[str, str] = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    code_version: str = ""
    elapsed_s: float = 0.0
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Record":
        return cls(**json.loads(text))
