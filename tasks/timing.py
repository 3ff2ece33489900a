"""The time stage: a verified candidate against K0 on one launch -> speedup decision (two Timings)."""
from __future__ import annotations

import tempfile

from artifacts import default_store
from asmevo.device import get_device
from asmevo.device.gpus import require_identity
from asmevo.device.hip_timing import Protocol
from asmevo.target import DEFAULT_GPU
from asmevo.timing import time_candidate
from asmevo.verify import Verdict

from .inputs import code_object, verify_launch
from .policy import Output, stage


@stage("time", ("tasks.timing",))
def measure(verdict: str, k0: str, candidate: str, launch: str, config: dict) -> Output:
    """Time `candidate` against `k0` if `verdict` is equivalent (else a NotVerified error artifact).
    config: device, and gpu (the model's GPU) on the emulator; on hardware protocol (Protocol fields) and
    hardware (the identity, cache key only). A crash or hang on hardware is an error artifact; a GPU that
    cannot start fails the task."""
    if "hardware" in config:
        require_identity(config["hardware"])  # a worker on other hardware must not fill this cache key
    with tempfile.TemporaryDirectory(prefix="asmevo-time-") as tmp:
        decision = time_candidate(Verdict(**default_store().get_json(verdict)), code_object(k0),
                                  code_object(candidate), verify_launch(launch, tmp),
                                  get_device(config["device"]), protocol=Protocol(**config.get("protocol", {})),
                                  gpu_name=config.get("gpu", DEFAULT_GPU))
    return Output("timing", decision.to_json())
