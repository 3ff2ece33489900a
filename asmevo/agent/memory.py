"""The search agent's memory: which operators (and operator sequences) won on which kernels, kept
per suite in a JSON file and used to order the next kernel's proposals.

A kernel is described by features of K0 at its timing launch: the timing model's bound term and
occupancy limiter, its loop structure, and whether it uses MFMA, LDS and narrow (dword) global
accesses (`features`). After a kernel's search, `record` stores, per operator and per pair
(previous operator in the lineage, operator), how many candidates the gates evaluated (`tries`:
candidates that reached verification, the search's budget) and how many were verified faster than
their parent (`wins`), plus the winning chain (the operators from K0 to the best candidate) and its
speedup. The same kernel and configuration recorded again replaces its earlier record.

`prior(operator, previous, features)` is the Laplace-smoothed win rate of the operator after
`previous` (or, without such records, of the operator alone) over the records, each weighted by the
fraction of features it shares with the kernel at hand: (wins + 1) / (tries + 2), 1/2 without data.
The search orders proposals by predicted gain times this prior, so with an empty memory the order
is the prediction's. Reading and writing are deterministic (records keep their insertion order; a
seeded search over the same memory makes the same choices); concurrent writers are serialised by a
lock file next to the memory.

File (`$ASMEVO_HOME/memory/<suite>.json` by default, `artifacts.home.Home.memory`):
{"version": 1, "records": [{"kernel", "k0_sha256", "config", "features", "chain", "speedup",
"operators": {op: [tries, wins]}, "pairs": {"prev>op": [tries, wins]}}]}
"""
from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import AsmEvoError
from ..isa.table import instr_info
from ..model import Estimate
from .body import Body
from .lineage import Lineage, operator_chain

VERSION = 1
START = "k0"  # the `previous` operator of a candidate made from K0


class SearchMemoryError(AsmEvoError):
    """The memory file cannot be read or written."""


def features(body: Body, estimate: Estimate) -> dict[str, str]:
    """K0's features: the model's bound term and occupancy limiter at the timing launch, its loops
    (none, one, several), and whether it issues MFMA, LDS or narrow (dword) global accesses."""
    infos = [instr_info(ins.mnemonic, body.processor) for ins in body.instructions]
    try:
        loops = len(body.cfg.loops())
    except AsmEvoError:
        loops = -1
    return {"bound": estimate.bound, "limiter": estimate.occupancy.limiter,
            "loops": "none" if loops == 0 else "one" if loops == 1 else "several" if loops > 1 else "unknown",
            "mfma": str(any(i.mfma is not None for i in infos)),
            "lds": str(any(i.family == "ds" for i in infos)),
            "narrow_global": str(any(i.vmem and i.segment == "global" and i.access_bytes == 4 for i in infos))}


@dataclass
class SearchMemory:
    """The records of one suite (see the module docstring)."""

    records: list[dict] = field(default_factory=list)

    @classmethod
    def load(cls, path: str | Path) -> "SearchMemory":
        """The memory at `path` (empty when the file does not exist yet)."""
        path = Path(path)
        if not path.exists():
            return cls()
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise SearchMemoryError(f"search memory {path} is unreadable: {exc}") from None
        if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("records"), list):
            raise SearchMemoryError(f"search memory {path} is not a version-{VERSION} memory file")
        return cls(data["records"])

    def prior(self, operator: str, previous: str, kernel: dict[str, str]) -> float:
        """Smoothed win rate of `operator` (after `previous`) on kernels like `kernel`."""
        pair = f"{previous}>{operator}"
        for key, table in ((pair, "pairs"), (operator, "operators")):
            tries = wins = 0.0
            for r in self.records:
                counts = r.get(table, {}).get(key)
                if counts:
                    w = _similarity(r.get("features", {}), kernel)
                    tries += w * counts[0]
                    wins += w * counts[1]
            if tries:
                return (wins + 1.0) / (tries + 2.0)
        return 0.5

    def record(self, lineage: Lineage, kernel: dict[str, str], config: dict) -> dict:
        """Add (or replace) the record of one finished search."""
        rec = {"kernel": lineage.kernel, "k0_sha256": lineage.k0_sha256, "config": config, "features": kernel,
               "chain": operator_chain([c.to_json() for c in lineage.candidates], lineage.best),
               "speedup": lineage.best_candidate.speedup or 1.0,
               "operators": {}, "pairs": {}}
        for c in lineage.candidates:
            if c.parent is None or c.verdict is None:
                continue
            parent = lineage.get(c.parent)
            win = int(c.verified and c.cycles is not None and parent.cycles is not None and c.cycles < parent.cycles)
            for table, key in (("operators", c.operator), ("pairs", f"{parent.operator if parent.parent is not None else START}>{c.operator}")):
                counts = rec[table].setdefault(key, [0, 0])
                counts[0] += 1
                counts[1] += win
        same = lambda r: (r["kernel"], r["k0_sha256"], r.get("config")) == (rec["kernel"], rec["k0_sha256"], config)
        self.records = [r for r in self.records if not same(r)] + [rec]
        return rec

    def to_json(self) -> dict:
        return {"version": VERSION, "records": self.records}


def _similarity(a: dict[str, str], b: dict[str, str]) -> float:
    keys = set(a) | set(b)
    return sum(a.get(k) == b.get(k) for k in keys) / len(keys) if keys else 1.0


@contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def update(path: str | Path, lineage: Lineage, kernel: dict[str, str], config: dict) -> SearchMemory:
    """Record a finished search in the memory file at `path` (read, add, write atomically, under a
    lock); returns the updated memory."""
    path = Path(path)
    try:
        with _locked(path):
            memory = SearchMemory.load(path)
            memory.record(lineage, kernel, config)
            tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(memory.to_json(), indent=1, sort_keys=True))
            os.replace(tmp, path)
    except OSError as exc:
        raise SearchMemoryError(f"cannot write search memory {path}: {exc.strerror}") from None
    return memory
