"""The recover stage: code object -> recovered source bundle (`<name>.s` + recovery.json)."""
from __future__ import annotations

import tempfile
from pathlib import Path

from artifacts import default_store
from asmevo.recover import recover as recover_code_object

from .policy import Output, stage


@stage("recover", ("tasks.recover",))
def recover(k0: str, config: dict) -> Output:
    """Recover `k0`; the artifact is {name, files: {filename: text}, warnings}."""
    with tempfile.TemporaryDirectory(prefix="asmevo-recover-") as tmp:
        path = Path(tmp) / "k0.co"
        path.write_bytes(default_store().get(k0))
        recovered = recover_code_object(path)
        recovered.info["input"] = f"sha256:{k0}"  # not the temporary path: outputs depend on content only
        out = Path(tmp) / "out"
        recovered.write(out)
        files = {p.name: p.read_text() for p in sorted(out.iterdir())}
    return Output("recovered", {"name": recovered.name, "files": files, "warnings": recovered.warnings})
