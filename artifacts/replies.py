"""Model replies in the artifact store (`asmevo.agent.llm.ReplyCache`): the canonical request is an
artifact (kind `llm_request`, its sha256 the cache key), the reply entry another (kind `llm_reply`,
recorded with the request as its input), and the reference `llm-reply/<request sha256>` names it.
Modes: `off` (never read or write), `read` (use stored replies, store none) and `readwrite`."""
from __future__ import annotations

from asmevo.agent.llm import CACHE_MODES
from asmevo.errors import AsmEvoError

from .records import Record
from .store import Store, canonical_json, sha256

PREFIX = "llm-reply/"


class ReplyStore:
    """A ReplyCache over `store` in `mode`."""

    def __init__(self, store: Store, mode: str = "readwrite"):
        if mode not in CACHE_MODES:
            raise AsmEvoError(f"unknown LLM cache mode {mode!r} (valid: {', '.join(CACHE_MODES)})")
        self.store = store
        self.mode = mode

    @staticmethod
    def key(request: dict) -> str:
        """The request's sha256 (of its canonical JSON)."""
        return sha256(canonical_json(request))

    def get(self, request: dict) -> dict | None:
        if self.mode == "off":
            return None
        sha = self.store.ref(PREFIX + self.key(request))
        return None if sha is None else self.store.get_json(sha)

    def put(self, request: dict, entry: dict) -> dict:
        if self.mode != "readwrite":
            return entry
        req = self.store.put_json(request)
        self.store.add_record(Record(kind="llm_request", sha256=req, stage="llm", config={"model": request["model"]}))
        sha = self.store.put_json(entry)
        self.store.add_record(Record(kind="llm_reply", sha256=sha, stage="llm", inputs={"request": req},
                                     config={"model": request["model"]}))
        return self.store.get_json(self.store.set_ref(PREFIX + req, sha))
