"""The profile stage: a code object on one launch -> modelled cost per instruction and hot windows."""
from __future__ import annotations

import tempfile
from pathlib import Path

from asmevo.profile import profile_launch

from .inputs import code_object, verify_launch, write_recovered
from .policy import Output, stage


@stage("profile", ("tasks.profile",))
def profile(code: str, recovered: str, launch: str, config: dict) -> Output:
    """Profile `code` on `launch`, lines mapped through its recovered bundle. config: top, gpu."""
    with tempfile.TemporaryDirectory(prefix="asmevo-profile-") as tmp:
        write_recovered(recovered, Path(tmp) / "src")
        vl = verify_launch(launch, tmp)
        result = profile_launch(code_object(code), vl.spec, gpu_name=config["gpu"], recovery_dir=Path(tmp) / "src",
                                top=config["top"], known_findings=vl.known_findings)
    return Output("profile", result.to_json())
