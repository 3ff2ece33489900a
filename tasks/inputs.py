"""Turning stored artifacts back into the objects the `asmevo` stage functions take."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from artifacts import default_store
from asmevo.codeobj import CodeObject
from asmevo.launches import VerifyLaunch, launch_from_dict


def code_object(sha: str) -> CodeObject:
    """The code object `sha`, or the best one an optimization artifact `sha` found."""
    store = default_store()
    if store.has_record(sha) and store.record(sha).kind == "optimization":
        sha = store.get_json(sha)["best"]
    return CodeObject(store.get(sha), f"sha256:{sha[:16]}")


def verify_launch(sha: str, base_dir: str | Path) -> VerifyLaunch:
    """A launch artifact ({label, spec, known_findings}) as a VerifyLaunch; `file:` inputs resolve against base_dir."""
    launch = default_store().get_json(sha)
    vl = launch_from_dict(launch["spec"], base_dir, launch["label"])
    return dataclasses.replace(vl, known_findings=frozenset(launch.get("known_findings", ())))


def write_recovered(sha: str, directory: Path) -> tuple[Path, dict]:
    """Write a recovered bundle's files into `directory`; returns (source path, recovery info)."""
    bundle = default_store().get_json(sha)
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in bundle["files"].items():
        (directory / name).write_text(text)
    return directory / f"{bundle['name']}.s", json.loads(bundle["files"]["recovery.json"])
