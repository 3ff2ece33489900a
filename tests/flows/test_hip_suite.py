"""A suite run on the hip device, through real hip-python into the HIP runtime stub: verification is
confirmed on the GPU and the bench shape timed in ms; a candidate that faults on the GPU is a `crashed`
verdict for its kernel while the run finishes the others; cached hardware results are keyed by the
hardware identity, so another machine (here: another GPU target) recomputes them while the
emulator-only stages stay cached; with the search agent, only K0, its rebuild and candidates the
emulator verified are ever loaded on the GPU; with no usable GPU the CLI stops before Prefect starts,
with one error line."""
from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import yaml


REPO = Path(__file__).resolve().parents[2]
PROBLEMS = ("19_ReLU", "20_LeakyReLU")


def small_suite(out: Path) -> Path:
    """Two KernelBench problems with one verify shape each, and a bench shape small enough for the stub."""
    out.mkdir(parents=True)
    (out / "suite.yaml").write_text(yaml.safe_dump({"name": "hip-small", "description": "test", "problems": list(PROBLEMS)}))
    for name in PROBLEMS:
        src, dst = REPO / "benchmarks" / "kernelbench" / name, out / name
        shutil.copytree(src, dst)
        problem = yaml.safe_load((src / "problem.yaml").read_text())
        problem["shapes"] = [s for s in problem["shapes"] if s["name"] in ("v_3x99", "h_5x777", "bench")]
        (dst / "problem.yaml").write_text(yaml.safe_dump(problem))
        (dst / "launch" / "bench.json").write_text((src / "launch" / "v_7x333.json").read_text())
    return out


@pytest.fixture(scope="module")
def flows(prefect_api):
    from flows import suite

    return suite


def test_suite_on_hip(flows, stub_hip, tmp_path):
    suite = small_suite(tmp_path / "suite")
    stub = stub_hip(fault="relu_f32:2")  # K1 (the rebuilt ReLU) faults in every child that runs it
    run = flows.run_suite(str(suite), device="hip", progress=False)
    from flows.runs import load_run

    rows = {r["kernel"]: r for r in load_run(run["run_id"]).results()}
    relu, leaky = rows["19_ReLU"], rows["20_LeakyReLU"]
    assert relu["roundtrip"] == "crashed" and relu["status"] == "error"
    assert "K1 crashed on hardware: child killed by SIGSEGV" in relu["error"]
    assert leaky["status"] == "ok" and leaky["roundtrip"] == "equivalent" and leaky["unit"] == "ms"
    assert run["config"]["hardware"]["gpu"] == "AMD Instinct MI300X (stub)"
    launched = {line.split()[1] for line in stub.calls("hipModuleLaunchKernel")}
    assert launched == {"relu_f32", "leaky_relu_kernel"}

    stub_hip(arch="gfx942:sramecc-:xnack-")  # another machine
    other = flows.run_suite(str(suite), device="hip", progress=False)
    assert other["config"]["hardware"]["target"] == "gfx942:sramecc-:xnack-"
    # recover, rebuild and profile are cached; verify and time (hardware results) are recomputed
    assert other["cache"]["hits"] == 3 * len(PROBLEMS)


def test_cli_without_a_gpu_stops_before_prefect(stub_hip, tmp_path):
    stub_hip(gpus=0)
    suite = small_suite(tmp_path / "suite")
    done = subprocess.run([sys.executable, "-m", "asmevo.cli", "suite", "run", str(suite), "--device", "hip"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: hip device unavailable: no GPU is visible to HIP") and \
        done.stderr.count("\n") == 1


def fnv1a64(data: bytes) -> int:
    """The stub's fingerprint of a loaded image: FNV-1a (64 bits) of the ELF up to its section headers' end."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3a)
    h = 0xcbf29ce484222325
    for byte in data[:shoff + shnum * shentsize]:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def test_agent_on_hip_runs_only_verified_code_objects(flows, stub_hip, tmp_path):
    from artifacts import default_store
    from flows.runs import load_run

    suite = small_suite(tmp_path / "suite")
    stub = stub_hip(kernel_ns="1000,900")  # in each child, the second module loaded runs 10% faster than the first
    run = flows.run_suite(str(suite), device="hip", agent="search", budget=2, problems=["20_LeakyReLU"],
                          progress=False)
    row = load_run(run["run_id"]).results()[0]
    assert row["status"] == "ok" and row["unit"] == "ms" and row["candidates_tried"] >= 1
    store = default_store()
    edits = [store.get_json(key) for key in store.records if store.record(key).kind == "optimization"
             and store.record(key).config.get("device") == "hip"]
    assert len(edits) == 1
    edit = edits[0]
    cands = edit["lineage"]["candidates"]
    k0 = (REPO / "benchmarks/kernelbench/20_LeakyReLU/kernel.co").read_bytes()
    # on hardware only K0, its rebuild and candidates the emulator found equivalent are ever loaded
    rebuilt = [key for key in store.records if store.record(key).kind == "code_object"
               and store.record(key).stage == "rebuild"]
    allowed = {fnv1a64(k0)} | {fnv1a64(store.get(key)) for key in rebuilt} | \
        {fnv1a64(store.get(c["sha256"])) for c in cands[1:]
         if c["sha256"] and c["verdict"] and c["verdict"]["kind"] == "equivalent"}
    loaded = {int(line.split("fnv=")[1].split()[0], 16) for line in stub.calls("hipModuleLoadData")}
    assert fnv1a64(k0) in loaded and loaded <= allowed
    # candidates are timed against K0 in ms on the GPU, and the winner's speedup reaches the row
    assert edit["improved"] and row["candidates_accepted"] >= 1
    assert row["speedup"] == pytest.approx(1000 / 900, rel=1e-3)
    # the report names the operators that made the winner, from K0 on
    chain, cid = [], edit["lineage"]["best"]
    while cands[cid]["parent"] is not None:
        chain.insert(0, cands[cid]["operator"])
        cid = cands[cid]["parent"]
    assert chain and row["operators"] == " > ".join(chain)
