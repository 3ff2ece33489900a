"""Search expansions in the artifact store (`asmevo.agent.search.ExpansionCache`): the canonical request
(`search.expansion_request`, with the code version of the search and everything it imports) is an
artifact (kind `search_expansion_request`, its sha256 the key), the proposals another (kind
`search_expansion`, recorded with the request as its input), and the reference
`search-expansion/<request sha256>` names them. An edit of the search's code changes the version,
so a stored expansion is reused only by the code that made it."""
from __future__ import annotations

from .records import Record
from .store import Store, canonical_json, sha256

PREFIX = "search-expansion/"


class ExpansionStore:
    """An ExpansionCache over `store` for search code of version `code_version`; `calls` and `hits` count the
    expansions asked for and those found stored."""

    def __init__(self, store: Store, code_version: str):
        self.store = store
        self.code_version = code_version
        self.calls = 0
        self.hits = 0

    def _request(self, request: dict) -> dict:
        return {**request, "code_version": self.code_version}

    def get(self, request: dict) -> dict | None:
        sha = self.store.ref(PREFIX + sha256(canonical_json(self._request(request))))
        self.calls += 1
        self.hits += sha is not None
        return None if sha is None else self.store.get_json(sha)

    def put(self, request: dict, entry: dict) -> dict:
        req = self.store.put_json(self._request(request))
        self.store.add_record(Record(kind="search_expansion_request", sha256=req, stage="edit",
                                     code_version=self.code_version))
        sha = self.store.put_json(entry)
        self.store.add_record(Record(kind="search_expansion", sha256=sha, stage="edit", inputs={"request": req},
                                     code_version=self.code_version))
        return self.store.get_json(self.store.set_ref(PREFIX + req, sha))
