"""Run configuration on hardware: the hardware identity and the timing protocol enter the cache keys of
the stages whose results depend on the GPU; Dask workers are pinned one GPU each."""
from __future__ import annotations

import pytest

from asmevo.errors import AsmEvoError
from flows.config import RunConfig
from flows.gpu_worker import pinned_gpu

IDENTITY = {"gpu": "AMD Instinct MI300X", "target": "gfx942:sramecc+:xnack-", "hip_runtime": "7.2.53211",
            "driver": 70253211, "rocm": "7.2.2", "hip_python": "7.2.2.562.43"}


def test_hardware_identity_keys_the_hardware_stages():
    hip = RunConfig(device="hip", hardware=IDENTITY, protocol={"pairs": 50})
    for stage in ("verify", "time", "edit"):
        assert hip.stage(stage)["hardware"] == IDENTITY
    assert hip.stage("time")["protocol"] == {"pairs": 50}
    for stage in ("recover", "rebuild", "profile"):
        assert "hardware" not in hip.stage(stage)  # emulator- and toolchain-only stages share caches
    emu = RunConfig()
    assert emu.stage("time") == {"device": "emu", "gpu": "mi300x"} and "hardware" not in emu.stage("verify")


def test_hardware_and_device_must_agree():
    with pytest.raises(AsmEvoError, match="hardware run needs the hardware identity"):
        RunConfig(device="hip")
    with pytest.raises(AsmEvoError):
        RunConfig(device="emu", hardware=IDENTITY)


def test_dask_workers_are_pinned_one_gpu_each():
    assert [pinned_gpu(i, [0, 2]) for i in range(4)] == [0, 2, 0, 2]
    assert pinned_gpu("tcp://worker-a", [0, 1]) is None and pinned_gpu(0, []) is None


def test_local_dask_on_hip_preloads_the_pinning(prefect_api):
    from flows.runtime import task_runner  # imports Prefect: after the session's API server is up

    assert task_runner(2, "local", "hip").cluster_kwargs["preload"] == ["flows.gpu_worker"]
    assert "preload" not in task_runner(2, "local", "emu").cluster_kwargs


def test_the_llm_agents_model_and_limits_key_its_edit_stage(monkeypatch):
    monkeypatch.setenv("ASMEVO_MODEL", "openai/model-a")
    monkeypatch.setenv("ASMEVO_API_BASE", "http://127.0.0.1:1/v1")
    llm = RunConfig(agent="llm", budget=8, seed=3)
    edit = llm.stage("edit")["llm"]
    assert (edit["model"], edit["max_steps"], edit["seed"]) == ("openai/model-a", 8, 3)
    assert "api_base" not in edit and "api_key" not in edit  # how to reach the model is no part of the key
    monkeypatch.setenv("ASMEVO_MODEL", "openai/model-b")
    assert llm.stage("edit")["llm"]["model"] == "openai/model-b"
    assert "llm" not in RunConfig(agent="search", budget=8).stage("edit")
