"""The verify stage: differential verification of a candidate against K0 -> verdict record."""
from __future__ import annotations

import tempfile

from asmevo.device import get_device
from asmevo.device.gpus import require_identity
from asmevo.verify import verify as verify_candidate

from .inputs import code_object, verify_launch
from .policy import Output, stage


@stage("verify", ("tasks.verify",))
def verify(k0: str, candidate: str, launches: list[str], config: dict) -> Output:
    """Verify `candidate` against `k0` on `launches`. config: device, trials, special; on hardware also
    hardware (the identity: part of the cache key, and checked
    against this machine's GPUs): the emulator decides, the GPU confirms in an isolated child."""
    if "hardware" in config:
        require_identity(config["hardware"])  # a worker on other hardware must not fill this cache key
    with tempfile.TemporaryDirectory(prefix="asmevo-verify-") as base_dir:
        verdict = verify_candidate(code_object(k0), code_object(candidate),
                                   [verify_launch(sha, base_dir) for sha in launches],
                                   trials=config["trials"], special=config["special"],
                                   device=get_device(config["device"]))
    return Output("verdict", verdict.to_json())
