"""Candidate-level tasks inside the edit stage: a second run of the stage body (what a resumed run does
after its edit task was killed) takes every candidate outcome and K0's baseline from the cache, shows
one named task run per candidate, and ends in the same lineage."""
from __future__ import annotations

from asmevo.suites import load_suite

P = load_suite("kernelbench").problem("20_LeakyReLU")


def content(lineage: dict) -> list[dict]:
    strip = lambda d: {k: v for k, v in d.items() if k not in ("seconds", "cached")}
    return [{**strip(c), "verdict": c["verdict"] and strip(c["verdict"])} for c in lineage["candidates"]]


def test_a_rerun_edit_stage_takes_its_candidates_from_the_cache(prefect_api):
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
    from prefect.runtime import flow_run

    from artifacts import default_store
    from flows.config import RunConfig
    from flows.pipeline import ingest_files
    from tasks.optimize import optimize

    job = ingest_files("leaky", P.code_object, [P.shape(s).launch_path for s in ("v_4x1024", "v_16x4096")], "emu")
    config = RunConfig(agent="search", budget=3, seed=2).stage("edit")

    @flow(persist_result=False)
    def edit_twice() -> tuple[str, str, str]:
        first = optimize.fn(job.k0, list(job.verify), [], job.timing, config)   # the stage body, uncached
        second = optimize.fn(job.k0, list(job.verify), [], job.timing, config)  # as a resumed run redoes it
        return first, second, str(flow_run.get_id())

    first, second, run_id = edit_twice()
    store = default_store()
    a, b = store.get_json(first), store.get_json(second)
    assert a["candidates"]["hits"] == 0 and a["candidates"]["calls"] >= 3
    assert b["candidates"] == {"calls": a["candidates"]["calls"], "hits": a["candidates"]["calls"]}
    assert content(b["lineage"]) == content(a["lineage"]) and b["best"] == a["best"] != job.k0
    assert all(c["cached"] for c in b["lineage"]["candidates"] if c["sha256"] and c["id"])
    for c in a["lineage"]["candidates"][1:]:
        if c["sha256"]:
            assert store.record(c["sha256"]).stage == "candidate"  # every rebuilt candidate is stored

    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run_id])))
    names = sorted(r.name for r in runs if r.name.startswith("leaky_relu_kernel #"))
    assert len(names) == 2 * a["candidates"]["calls"]
    assert {r.state_name for r in runs if r.name.startswith("baseline")} == {"Completed", "Cached"}
