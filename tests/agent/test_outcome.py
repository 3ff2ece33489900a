"""A candidate's outcome is a pure JSON function of its content: the Evaluator takes outcomes from the
Evaluations it is given, a search fed replayed outcomes takes the same path, K0's bench trace survives
JSON, and each gate stops where it should (environment errors are raised, not recorded)."""
from __future__ import annotations

import json

import pytest

from asmevo.agent import outcome
from asmevo.agent.edit import Edit, apply_edit
from asmevo.agent.gates import Evaluator
from asmevo.agent.outcome import K0Outcome, LocalEvaluations, Outcome, baseline, evaluate
from asmevo.agent.search import SearchConfig, search
from asmevo.device import DeviceError
from asmevo.launches import suite_launches
from asmevo.profile import profile_launch
from asmevo.suites import load_suite
from asmevo.timing import model_timing

P = load_suite("kernelbench").problem("20_LeakyReLU")


def text_round_trip(value):
    return json.loads(json.dumps(value, sort_keys=True))


class Recording(LocalEvaluations):
    """Local evaluations that keep every answer as JSON text would give it back."""

    def __init__(self, setup):
        super().__init__(setup)
        self.base_json, self.answers, self.asked = None, {}, []

    def baseline(self) -> dict:
        self.base_json = text_round_trip(super().baseline())
        return self.base_json

    def candidate(self, source: str, through: str, label: str = "") -> Outcome:
        out = super().candidate(source, through, label)
        self.asked.append((source, through))
        self.answers[source, through] = (text_round_trip(out.record), out.data)
        return out


class Replay:
    """Evaluations that only serve what a Recording kept, flagged as cached."""

    def __init__(self, rec: Recording):
        self.rec, self.asked = rec, []

    def baseline(self) -> dict:
        return self.rec.base_json

    def candidate(self, source: str, through: str, label: str = "") -> Outcome:
        self.asked.append((source, through))
        record, data = self.rec.answers[source, through]
        return Outcome(record, data, cached=True)


def trace(ev: Evaluator) -> list[tuple]:
    return [(c.parent, c.operator, c.diff, c.status, c.reason, c.detail, c.cycles, c.speedup, c.sha256)
            for c in ev.lineage.candidates]


def test_a_search_fed_replayed_outcomes_takes_the_same_path():
    launches = suite_launches(P)[:2]
    first = Evaluator(P.code_object, launches)
    recording = Recording(first.setup)
    first = Evaluator(P.code_object, launches, evaluations=recording)
    search(first, SearchConfig(budget=3, seed=1))
    replay = Replay(recording)
    second = Evaluator(P.code_object, launches, evaluations=replay)
    search(second, SearchConfig(budget=3, seed=1))
    assert trace(second) == trace(first)
    assert replay.asked == recording.asked and len(replay.asked) >= 3
    assert first.best.id > 0 and second.best.speedup == first.best.speedup > 1.0
    evaluated = [c for c in second.lineage.candidates[1:] if c.sha256]
    assert evaluated and all(c.cached for c in evaluated) and not any(c.cached for c in first.lineage.candidates)


@pytest.fixture(scope="module")
def setup():
    return outcome.make_setup(outcome.CodeObject.from_path(P.code_object), suite_launches(P)[:1])


MUL = "v_mul_f32_e32 v2, s7, v6"
SWAP = "v_cmp_le_f32_e32 vcc, 0, v6\n" + MUL  # v_cmp does not read v2: the two may swap


def edited(base: K0Outcome, new: str, lines: int = 1) -> str:
    """K0's source with `lines` lines from the first `MUL` replaced by `new`."""
    src = base.source.splitlines()
    n = next(i for i, ln in enumerate(src, 1) if ln.split(";")[0].strip() == MUL)
    return "\n".join(apply_edit(src, Edit(n, n + lines - 1, new))) + "\n"


def test_k0_bench_trace_survives_json_and_costs_candidates_alike(setup):
    s = setup
    base = K0Outcome.from_json(text_round_trip(baseline(s.k0, s.name, s.timing, s.device, s.gpu_name)))
    est = profile_launch(s.k0, s.timing.spec, gpu_name=s.gpu_name).estimate
    direct = K0Outcome(base.name, base.source, base.info, est, model_timing(s.k0, s.timing, est))
    for name in ("edges", "memory", "buffer_bytes", "grid", "block", "dynamic_lds", "classes"):
        assert getattr(base.estimate.traced, name) == getattr(est.traced, name), name
    for name in ("counts", "wave_workgroup", "weight"):
        a, b = getattr(base.estimate.traced, name), getattr(est.traced, name)
        assert a.dtype == b.dtype and (a == b).all(), name
    # the swap keeps K0's paths, so the candidate is costed on K0's trace
    from_json, in_memory = (measured_out(evaluate(s, b, edited(base, SWAP, 2), "timed").record) for b in (base, direct))
    assert from_json["status"] == "verified" and from_json["estimate"]["per_pc"]
    assert from_json == in_memory


def measured_out(record: dict) -> dict:
    """A record without its wall-clock seconds (the record's and its verdict's)."""
    return {**{k: v for k, v in record.items() if k != "seconds"},
            "verdict": {k: v for k, v in record["verdict"].items() if k != "seconds"}}


def test_each_depth_stops_where_it_should(setup, monkeypatch):
    s = setup
    base = K0Outcome.from_json(baseline(s.k0, s.name, s.timing, s.device, s.gpu_name))
    swapped = edited(base, SWAP, 2)
    built = evaluate(s, base, swapped, "built")
    assert built.record["status"] == "built" and built.record["verdict"] is None and list(built.record["seconds"]) == ["build"]
    assert built.data and built.record["sha256"]
    broken = evaluate(s, base, edited(base, "v_mul_f32_e32 v2, v6, s7"), "timed")  # VOP2 src1 must be a VGPR
    assert (broken.record["rejected_at"], broken.record["reason"], broken.data) == ("build", "assemble", b"")
    wrong = evaluate(s, base, edited(base, "v_add_f32_e32 v2, s7, v6"), "timed")
    assert (wrong.record["rejected_at"], wrong.record["reason"]) == ("verify", "different")
    assert wrong.record["timing"] is None and wrong.record["verdict"]["kind"] == "different"
    json.dumps(wrong.record, allow_nan=False)

    def no_device(*args, **kwargs):
        raise DeviceError("the device went away")

    monkeypatch.setattr(outcome, "verify", no_device)
    with pytest.raises(DeviceError):  # says nothing about the candidate: never a recorded rejection
        evaluate(s, base, swapped, "timed")


def test_a_defect_met_on_one_candidate_rejects_it_and_the_search_goes_on(setup, monkeypatch):
    """An unexpected exception while a candidate is verified (a defect in the emulator, say) rejects that candidate
    with what was raised, instead of ending the kernel's search and losing its verified best."""
    s = setup
    base = K0Outcome.from_json(baseline(s.k0, s.name, s.timing, s.device, s.gpu_name))

    def defect(*args, **kwargs):
        raise IndexError("index 39 is out of bounds for axis 0 with size 39")

    monkeypatch.setattr(outcome, "verify", defect)
    out = evaluate(s, base, edited(base, SWAP, 2), "timed")
    assert (out.record["status"], out.record["rejected_at"], out.record["reason"]) == ("rejected", "verify",
                                                                                      "internal error")
    assert out.record["detail"] == "IndexError: index 39 is out of bounds for axis 0 with size 39"
