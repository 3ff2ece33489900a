"""Content-addressed artifacts: the blob store, artifact records and derivation."""
from __future__ import annotations

import functools

from .home import Home, asmevo_home, configure_prefect
from .derivation import Derivation, derivation
from .records import Record
from .store import Store, StoreError, canonical_json, sha256


@functools.lru_cache(maxsize=None)
def _store_at(root: str) -> Store:
    return Store(root)


def default_store() -> Store:
    """The store under the current ASMEVO_HOME (one instance per process and home)."""
    return _store_at(str(asmevo_home().store))


__all__ = ["Home", "Derivation", "Record", "Store", "StoreError", "asmevo_home", "canonical_json", "configure_prefect",
           "default_store", "derivation", "sha256"]
