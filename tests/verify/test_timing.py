"""Correctness-gated timing: units never mix, the noise gate, interleaving, the verdict gate."""
import numpy as np
import pytest

from asmevo.timing import (NotVerified, Timing, UnitMismatch, decide, interleaved, time_candidate)
from asmevo.launches import launch_from_dict
from asmevo.verify import Verdict, sha256

from .fakes import RELU_SPEC, TimedScriptedDevice, variant

K0, K1 = variant(0), variant(4)
LAUNCH = launch_from_dict(RELU_SPEC, label="relu")


def verdict(kind="equivalent", k0=K0, k1=K1):
    return Verdict(kind, "test", k0_sha256=sha256(k0.data), k1_sha256=sha256(k1.data))


def test_units_never_mix():
    ms = Timing("ms", (1.0, 1.1))
    cyc = Timing("model_cycles", (1000.0,))
    for op in (lambda: ms < cyc, lambda: ms >= cyc, lambda: ms == cyc, lambda: cyc.speedup_over(ms),
               lambda: decide(ms, cyc)):
        with pytest.raises(UnitMismatch):
            op()
    with pytest.raises(UnitMismatch):
        Timing("us", (1.0,))
    assert Timing("ms", (2.0,)) > ms and Timing("model_cycles", (900.0,)) < cyc


def test_median_cv_and_noise_gate():
    quiet_a = Timing("ms", (1.00, 1.01, 0.99, 1.00))
    quiet_b = Timing("ms", (0.90, 0.91, 0.89, 0.90))
    d = decide(quiet_a, quiet_b)
    assert d.accepted and d.speedup == pytest.approx(1.0 / 0.9)
    noisy_a = Timing("ms", (1.0, 1.2, 0.8, 1.1, 0.9))
    noisy_b = Timing("ms", (0.95, 1.15, 0.75, 1.05, 0.85))
    d = decide(noisy_a, noisy_b)
    assert d.speedup > 1 and not d.accepted and d.threshold > 1.2
    same = Timing("model_cycles", (1000.0,))
    assert not decide(same, Timing("model_cycles", (995.0,))).accepted  # below eps
    assert decide(same, Timing("model_cycles", (900.0,))).accepted


class FakeTimer:
    def __init__(self, means, noise, seed=0):
        self.rng = np.random.default_rng(seed)
        self.means, self.noise = means, noise
        self.log = []

    def flush(self):
        self.log.append("F")

    def run(self, which):
        self.log.append("AB"[which])
        return float(self.means[which] * (1 + self.noise * self.rng.standard_normal()))


def test_interleaved_order_warmup_and_flushes():
    t = FakeTimer((1.0, 0.8), 0.0)
    a, b = interleaved(t, warmup=2, repetitions=3)
    assert t.log == list("ABAB") + list("FAFB") * 3 and len(a) == len(b) == 3


@pytest.mark.parametrize("true_speedup,noise,expect", [(1.25, 0.01, True), (1.02, 0.05, False), (1.0, 0.002, False)])
def test_statistics_with_fake_timer(true_speedup, noise, expect):
    t = FakeTimer((1.0, 1.0 / true_speedup), noise, seed=7)
    a, b = interleaved(t, warmup=3, repetitions=40)
    d = decide(Timing("ms", tuple(a)), Timing("ms", tuple(b)))
    assert d.accepted is expect


def test_only_equivalent_candidates_are_timed():
    dev = TimedScriptedDevice()
    for kind in ("different", "invalid", "crashed"):
        with pytest.raises(NotVerified):
            time_candidate(verdict(kind), K0, K1, LAUNCH, dev)
    with pytest.raises(NotVerified):
        time_candidate(verdict(k1=variant(8)), K0, K1, LAUNCH, dev)
    assert dev.log == []


def test_hardware_path_interleaves_and_records_provenance():
    dev = TimedScriptedDevice()
    seq0, seq1 = iter(np.linspace(1.0, 1.01, 100)), iter(np.linspace(0.8, 0.81, 100))
    dev.time_as(K0, lambda: float(next(seq0)))
    dev.time_as(K1, lambda: float(next(seq1)))
    d = time_candidate(verdict(), K0, K1, LAUNCH, dev, warmup=1, repetitions=4, flush_bytes=1024)
    a, b = sha256(K0.data)[:8], sha256(K1.data)[:8]
    assert dev.log == [a, b] + ["flush", a, "flush", b] * 4
    assert d.accepted and d.unit == "ms" and d.speedup > 1.2
    prov = d.candidate.provenance
    assert prov["device"] == "scripted" and prov["launch"] == "relu" and prov["code_sha256"] == sha256(K1.data)
    assert prov["config"]["interleaved"] and d.to_json()["baseline"]["unit"] == "ms"
