"""The verify stage: differential verification of a candidate against K0 -> verdict record."""
from __future__ import annotations

import tempfile

from artifacts import default_store
from asmevo.codeobj import CodeObject
from asmevo.device import get_device
from asmevo.verify import launch_from_dict
from asmevo.verify import verify as verify_candidate

from .policy import Output, stage


@stage("verify", ("tasks.verify",))
def verify(k0: str, candidate: str, launches: list[str], config: dict) -> Output:
    """Verify `candidate` against `k0` on `launches` (launch artifacts: {label, spec}).
    config: device, trials, special."""
    store = default_store()
    with tempfile.TemporaryDirectory(prefix="asmevo-verify-") as base_dir:
        specs = [store.get_json(sha) for sha in launches]
        vls = [launch_from_dict(s["spec"], base_dir, s["label"]) for s in specs]
        verdict = verify_candidate(CodeObject(store.get(k0)), CodeObject(store.get(candidate)), vls,
                                   trials=config["trials"], special=config["special"],
                                   device=get_device(config["device"]))
    return Output("verdict", verdict.to_json())
