"""The search agent: deterministic for a seed, improves a kernel with waits on its stores (timed on its
largest verify shape here: no timing launch given), and the final best is re-verified with the
held-out shape."""
from __future__ import annotations

from asmevo.agent.optimize import optimize
from asmevo.suites import load_suite
from asmevo.launches import suite_launches


def _run(tmp_path, name: str, seed: int):
    p = load_suite("kernelbench").problem("20_LeakyReLU")
    launches = suite_launches(p)[:1]
    heldout = [vl for vl in suite_launches(p, heldout=True) if vl.label.endswith(":h_5x777")]
    return optimize(p.code_object, launches, heldout=heldout, outdir=tmp_path / name, budget=2, seed=seed)


def _trace(res):
    return [(c.parent, c.operator, c.diff, c.status, c.cycles) for c in res.lineage.candidates]


def test_deterministic_for_a_seed_and_improves(tmp_path):
    a, b = _run(tmp_path, "a", 3), _run(tmp_path, "b", 3)
    assert _trace(a) == _trace(b)
    assert a.improved and a.speedup > 1.05
    assert a.lineage.heldout["accepted"] == a.best.id
    assert a.lineage.heldout["attempts"][0]["kind"] == "equivalent"
    assert any(label.endswith(":h_5x777") for label in a.lineage.heldout["launches"])
    assert a.paths["code_object"].read_bytes() == a.best.data
    assert a.paths["diff"].read_text().startswith("--- a/kernel.s")
    assert sum(1 for c in a.lineage.candidates if c.verdict is not None) <= 2


def test_probe_launches_only_confirm_the_winner(tmp_path):
    p = load_suite("kernelbench").problem("20_LeakyReLU")
    verify_shape = suite_launches(p)[:1]
    probe = [vl for vl in suite_launches(p, probes=True) if vl.spec.probe]
    res = optimize(p.code_object, verify_shape + probe, outdir=tmp_path / "probe", budget=1, seed=3)
    assert res.lineage.config["launches"] == [verify_shape[0].label]  # never profiled or searched on
    assert res.lineage.heldout["launches"] == [verify_shape[0].label, probe[0].label]
    assert res.lineage.heldout["attempts"][0]["kind"] == "equivalent"
