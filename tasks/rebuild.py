"""The rebuild stage: recovered (or edited) source bundle -> code object, by full reassembly."""
from __future__ import annotations

import json

from artifacts import default_store
from asmevo.rebuild import rebuild_source

from .policy import Output, stage


@stage("rebuild", ("tasks.rebuild",))
def rebuild(source: str, config: dict) -> Output:
    """Reassemble the bundle `source` ({name, files}). config: shrink (drop unused registers)."""
    bundle = default_store().get_json(source)
    text = bundle["files"][f"{bundle['name']}.s"]
    info = json.loads(bundle["files"]["recovery.json"])
    built = rebuild_source(text, info, shrink=config.get("shrink", False), origin=f"{bundle['name']}.s")
    return Output("code_object", built.data)
