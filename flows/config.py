"""What a run does to every kernel (no Prefect import here: the CLI checks it before starting one)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from asmevo.agent.optimize import AGENTS
from asmevo.errors import AsmEvoError
from asmevo.target import DEFAULT_GPU, gpu

STAGES = ("recover", "rebuild", "profile", "verify", "time", "edit")


@dataclass(frozen=True)
class RunConfig:
    """What a run does to every kernel; together with the inputs it determines every cache key. On
    hardware, `hardware` is the GPU pool's identity (`asmevo.device.hardware_identity()`): it enters the
    keys of every stage whose result depends on the GPU, so a cache never crosses machines, and
    `protocol` is the timing protocol (`asmevo.device.hip_timing.Protocol` fields)."""

    agent: str = "none"
    budget: int = 0
    device: str = "emu"
    seed: int = 0
    trials: int = 3
    special: bool = True
    top: int = 8
    hardware: dict | None = None
    protocol: dict | None = None
    gpu: str = DEFAULT_GPU

    def __post_init__(self):
        if self.agent not in ("none", *AGENTS):
            raise AsmEvoError(f"unknown agent {self.agent!r} (valid: none, {', '.join(AGENTS)})")
        if (self.agent == "none") != (self.budget == 0):
            raise AsmEvoError("an agent needs a budget of at least 1 edit; agent none (baselines) takes budget 0")
        if (self.device == "emu") != (self.hardware is None):
            raise AsmEvoError("a hardware run needs the hardware identity, an emulator run none")
        gpu(self.gpu)  # an unknown GPU is a one-line error before anything runs

    def stage(self, name: str) -> dict:
        """The config a stage is called with (part of its cache key)."""
        hw = {} if self.hardware is None else {"hardware": self.hardware}
        timing = {"gpu": self.gpu} if self.hardware is None else {"protocol": self.protocol or {}}
        return {"recover": {}, "rebuild": {"shrink": False}, "profile": {"top": self.top, "gpu": self.gpu},
                "verify": {"device": self.device, "trials": self.trials, "special": self.special, **hw},
                "time": {"device": self.device, **timing, **hw},
                "edit": {"agent": self.agent, "budget": self.budget, "seed": self.seed, "device": self.device,
                         "gpu": self.gpu, "trials": self.trials, **self._llm(), **hw}}[name]

    def _llm(self) -> dict:
        """With the LLM agent, what determines its conversation (model, limits, temperature; from the
        ASMEVO_* environment, `LLMConfig.from_env`), so another model is another edit."""
        if self.agent != "llm":
            return {}
        from asmevo.agent.llm import LLMConfig

        identity = LLMConfig.from_env(max_steps=self.budget, seed=self.seed).identity()
        return {"llm": identity}

    def to_json(self) -> dict:
        return asdict(self)
