"""Ingesting a suite problem: probe shapes go to verification only, never to timing or the agent."""
from __future__ import annotations

import json

import pytest

from artifacts import default_store
from asmevo.suites import load_suite


@pytest.fixture(scope="module")
def pipeline(prefect_api):
    """flows.pipeline imports Prefect, which must come after the session's API server is up."""
    from flows import pipeline

    return pipeline


def _label(sha: str) -> str:
    return json.loads(default_store().get(sha))["label"]


def test_probe_shapes_are_verification_only(pipeline):
    problem = load_suite("kernelbench").problem("2_Standard_matrix_multiplication_")
    job = pipeline.ingest_problem(problem, "emu")
    assert [_label(s) for s in job.probes] == [f"{problem.name}:p_1152x32x1048576"]
    assert not set(job.probes) & set(job.verify + job.heldout + (job.timing,))
    assert _label(job.timing) == f"{problem.name}:bench" and job.timing_shape == "bench (bench)"
    assert job.verify_timing in job.verify  # the verify-shape ratio comes from the largest verify shape
    assert [_label(s) for s in job.heldout] == [f"{problem.name}:h_72x100x48"]


def test_probe_spec_files_become_probe_launches(pipeline):
    problem = load_suite("kernelbench").problem("2_Standard_matrix_multiplication_")
    paths = [problem.shape(name).launch_path for name in ("v_33x17x65", "p_1152x32x1048576")]
    job = pipeline.ingest_files("k", problem.code_object, paths, "emu")
    assert [_label(s) for s in job.probes] == ["p_1152x32x1048576.json"]
    assert [_label(s) for s in job.verify] == ["v_33x17x65.json"] and job.timing == job.verify[0]
