"""The search memory: what a finished search records, the prior it gives an operator on a similar
kernel, the order it puts proposals in, its file, and a search that reads and updates it."""
from __future__ import annotations

import json
import shutil

import pytest

from asmevo.agent.lineage import Candidate, Lineage
from asmevo.agent.memory import SearchMemory, SearchMemoryError, features, update
from asmevo.agent.operators import Proposal
from asmevo.agent.optimize import optimize
from asmevo.agent.search import SearchConfig, _order
from asmevo.launches import suite_launches
from asmevo.suites import load_suite
from agenttools import body_of, evaluator

KERNEL = {"bound": "vmem_path", "limiter": "waves", "loops": "none", "mfma": "False", "lds": "False",
          "narrow_global": "True"}


def lineage() -> Lineage:
    """K0 -> #1 widen_loads (faster) -> #2 widen_stores (faster); #3 fill_nop from K0 (slower);
    #4 hoist_load rejected by verification; #5 rejected before verification (not a try)."""
    lin = Lineage("k", "sha", "model_us")
    lin.add(Candidate(0, None, "k0", 0, "baseline", status="baseline", cycles=100.0, speedup=1.0))
    verdict = {"kind": "equivalent"}
    lin.add(Candidate(1, 0, "search", 1, "widen_loads", status="verified", verdict=verdict, cycles=80.0, speedup=1.25))
    lin.add(Candidate(2, 1, "search", 2, "widen_stores", status="verified", verdict=verdict, cycles=60.0, speedup=1.6))
    lin.add(Candidate(3, 0, "search", 3, "fill_nop", status="verified", verdict=verdict, cycles=101.0, speedup=0.99))
    lin.add(Candidate(4, 0, "search", 4, "hoist_load", status="rejected", verdict={"kind": "different"}))
    lin.add(Candidate(5, 0, "search", 5, "hoist_load", status="rejected"))
    lin.best = 2
    return lin


def test_a_record_counts_tries_and_wins_per_operator_and_pair_and_keeps_the_winning_chain():
    rec = SearchMemory().record(lineage(), KERNEL, {"seed": 0})
    assert rec["chain"] == ["widen_loads", "widen_stores"] and rec["speedup"] == 1.6
    assert rec["operators"] == {"widen_loads": [1, 1], "widen_stores": [1, 1], "fill_nop": [1, 0], "hoist_load": [1, 0]}
    assert rec["pairs"]["k0>widen_loads"] == [1, 1] and rec["pairs"]["widen_loads>widen_stores"] == [1, 1]


def test_the_prior_is_a_smoothed_win_rate_weighted_by_shared_features():
    mem = SearchMemory()
    mem.record(lineage(), KERNEL, {"seed": 0})
    assert mem.prior("widen_stores", "widen_loads", KERNEL) == pytest.approx(2 / 3)   # (1 + 1) / (1 + 2)
    assert mem.prior("fill_nop", "k0", KERNEL) == pytest.approx(1 / 3)
    assert mem.prior("widen_stores", "k0", KERNEL) == pytest.approx(2 / 3)          # no such pair: the operator's
    assert mem.prior("pipeline_loop", "k0", KERNEL) == 0.5                          # never tried
    other = dict(KERNEL, bound="latency", loops="one", narrow_global="False")       # shares half the features
    assert mem.prior("fill_nop", "k0", other) == pytest.approx(1 / 2.5)
    mem.record(lineage(), KERNEL, {"seed": 0})                                      # the same search again
    assert len(mem.records) == 1


def proposal(op: str) -> Proposal:
    return Proposal(body_of(["s_endpgm"]), op, 0, op)


def test_proposals_are_ordered_by_predicted_gain_times_the_prior():
    entries = [(90.0, 0.3, proposal("fill_nop")), (95.0, 0.1, proposal("widen_stores"))]
    plain = SearchConfig()
    assert [e[2].operator for e in sorted(entries, key=lambda e: _order(e, 100.0, plain, "k0"))] == \
        ["fill_nop", "widen_stores"]                                                 # prediction's order
    mem = SearchMemory()
    for _ in range(3):
        lin = lineage()
        lin.kernel = f"k{_}"
        mem.record(lin, KERNEL, {"seed": 0})
    informed = SearchConfig(memory=mem, features=KERNEL)                             # fill_nop: 1 win in 4
    assert [e[2].operator for e in sorted(entries, key=lambda e: _order(e, 100.0, informed, "widen_loads"))] == \
        ["widen_stores", "fill_nop"]


def test_the_memory_file_round_trips_and_bad_files_are_refused(tmp_path):
    path = tmp_path / "memory" / "suite.json"
    update(path, lineage(), KERNEL, {"seed": 0})
    update(path, lineage(), dict(KERNEL, bound="latency"), {"seed": 1})
    data = json.loads(path.read_text())
    assert data["version"] == 1 and [r["config"] for r in data["records"]] == [{"seed": 0}, {"seed": 1}]
    assert SearchMemory.load(path).records == data["records"]
    path.write_text('{"version": 7}')
    with pytest.raises(SearchMemoryError):
        SearchMemory.load(path)


def test_features_describe_the_kernel():
    ev = evaluator("20_LeakyReLU")
    f = features(ev.body_of(0), ev.baseline.profile.estimate)
    assert f["loops"] == "none" and f["mfma"] == "False" and f["narrow_global"] == "True"
    assert f["bound"] == ev.baseline.profile.estimate.bound


def test_a_search_records_its_outcome_and_is_deterministic_for_a_seed_and_a_memory(tmp_path):
    p = load_suite("kernelbench").problem("20_LeakyReLU")
    launches = suite_launches(p)[:1]
    first = tmp_path / "first.json"
    optimize(p.code_object, launches, outdir=tmp_path / "a", budget=2, seed=3, memory=first)
    [rec] = SearchMemory.load(first).records
    assert rec["kernel"] == "leaky_relu_kernel" and sum(t for t, _ in rec["operators"].values()) >= 2
    runs = []
    for name in ("b", "c"):  # the same memory and seed: the same search, and the record replaced, not added
        copy = tmp_path / f"{name}.json"
        shutil.copy(first, copy)
        runs.append(optimize(p.code_object, launches, outdir=tmp_path / name, budget=2, seed=3, memory=copy))
        assert len(SearchMemory.load(copy).records) == 1
    assert runs[0].lineage.config["memory"]["records"] == 1
    assert [(c.operator, c.note) for c in runs[0].lineage.candidates] == \
        [(c.operator, c.note) for c in runs[1].lineage.candidates]
