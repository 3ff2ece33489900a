"""The content-addressed blob store: raw bytes keyed by their sha256, one record per artifact, and
named references to artifacts (e.g. `llm-reply/<request sha256>`: the reply to a request).

All three live in diskcache `Cache`s (SQLite index + files) that never evict. Values are stored as raw
bytes / JSON text, never pickled. Writes are add-if-absent: an artifact is immutable, so two
processes writing the same content agree, a reference keeps the first artifact it named, and a
writer killed mid-way leaves no partial entry.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from diskcache import Cache

from asmevo.errors import AsmEvoError

from .records import Record

SIZE_LIMIT = 2**50  # effectively unbounded; eviction is off anyway
TIMEOUT_S = 60.0


class StoreError(AsmEvoError):
    """An artifact is missing from the store or its bytes do not match its sha256."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_json(obj: Any) -> bytes:
    """The one byte encoding of a JSON value: sorted keys, no whitespace, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode()


def _open(directory: Path) -> Cache:
    return Cache(str(directory), eviction_policy="none", size_limit=SIZE_LIMIT, timeout=TIMEOUT_S,
                 statistics=False)


class Store:
    """Blobs under `root/blobs`, records under `root/records`, references under `root/refs`; safe
    across threads and processes."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.blobs = _open(self.root / "blobs")
        self.records = _open(self.root / "records")
        self.refs = _open(self.root / "refs")

    def put(self, data: bytes) -> str:
        """Store `data`; returns its sha256."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"the store holds bytes, got {type(data).__name__}")
        data = bytes(data)
        key = sha256(data)
        if key not in self.blobs:
            self.blobs.add(key, data, retry=True)
        return key

    def get(self, key: str) -> bytes:
        """The bytes stored under `key`, checked against it."""
        data = self.blobs.get(key, retry=True)
        if data is None:
            raise StoreError(f"artifact {key[:16]} is not in the store {self.root}")
        if sha256(data) != key:
            raise StoreError(f"artifact {key[:16]} in {self.root} is corrupt (sha256 mismatch)")
        return data

    def __contains__(self, key: str) -> bool:
        return key in self.blobs

    def put_json(self, obj: Any) -> str:
        return self.put(canonical_json(obj))

    def get_json(self, key: str) -> Any:
        return json.loads(self.get(key))

    def add_record(self, record: Record) -> Record:
        """Record how an artifact was made; the first record of an artifact stays (artifacts are
        immutable, so a later identical derivation adds nothing). Returns the kept record."""
        if record.sha256 not in self.blobs:
            raise StoreError(f"record for {record.sha256[:16]}, which is not in the store")
        self.records.add(record.sha256, record.to_json(), retry=True)
        return self.record(record.sha256)

    def record(self, key: str) -> Record:
        text = self.records.get(key, retry=True)
        if text is None:
            raise StoreError(f"artifact {key[:16]} has no record in {self.root}")
        return Record.from_json(text)

    def has_record(self, key: str) -> bool:
        return key in self.records

    def set_ref(self, name: str, key: str) -> str:
        """Name artifact `key` `name` unless the name is taken; returns the artifact the name keeps."""
        if key not in self.blobs:
            raise StoreError(f"reference {name} to {key[:16]}, which is not in the store")
        self.refs.add(name, key, retry=True)
        return self.refs.get(name, retry=True)

    def ref(self, name: str) -> str | None:
        """The artifact named `name`, or None."""
        return self.refs.get(name, retry=True)

    def check(self) -> list[str]:
        """Every problem found: blobs whose bytes don't match their key, records and references
        without a blob."""
        problems = []
        for key in self.blobs.iterkeys():
            data = self.blobs.get(key, retry=True)
            if data is None or sha256(data) != key:
                problems.append(f"blob {key[:16]}: sha256 mismatch")
        for key in self.records.iterkeys():
            if key not in self.blobs:
                problems.append(f"record {key[:16]}: no blob")
        for name in self.refs.iterkeys():
            if self.refs.get(name, retry=True) not in self.blobs:
                problems.append(f"reference {name}: no blob")
        return problems

    def close(self) -> None:
        self.blobs.close()
        self.records.close()
        self.refs.close()
