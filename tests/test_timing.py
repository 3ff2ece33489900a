"""Correctness-gated timing: units never mix, the paired-ratio decision, the verdict gate."""
import numpy as np
import pytest

from asmevo.errors import AsmEvoError
from asmevo.launches import launch_from_dict
from asmevo.timing import NotVerified, Timing, UnitMismatch, decide, median_interval, time_candidate
from asmevo.verify import Verdict, sha256

from fakes import RELU_SPEC, ScriptedDevice, variant

K0, K1 = variant(0), variant(4)
LAUNCH = launch_from_dict(RELU_SPEC, label="relu")


def verdict(kind="equivalent", k0=K0, k1=K1):
    return Verdict(kind, "test", k0_sha256=sha256(k0.data), k1_sha256=sha256(k1.data))


def test_units_never_mix():
    ms = Timing("ms", (1.0, 1.1))
    cyc = Timing("model_us", (1000.0,))
    for op in (lambda: ms < cyc, lambda: ms >= cyc, lambda: ms == cyc, lambda: cyc.speedup_over(ms),
               lambda: decide(ms, cyc)):
        with pytest.raises(UnitMismatch):
            op()
    with pytest.raises(UnitMismatch):
        Timing("us", (1.0,))
    assert Timing("ms", (2.0,)) > ms and Timing("model_us", (900.0,)) < cyc


def test_single_samples_decide_on_the_eps_floor():
    same = Timing("model_us", (1000.0,))
    d = decide(same, Timing("model_us", (995.0,)))
    assert not d.accepted and d.interval == (d.speedup, d.speedup) and d.threshold == 1.01  # below eps
    assert decide(same, Timing("model_us", (900.0,))).accepted
    assert decide(same, Timing("model_us", (995.0,)), eps=0.0).accepted


def drifting(n: int, speedup: float, noise: float, seed: int) -> tuple[Timing, Timing]:
    """Pairs measured while the clock drifts by +-20 %: each pair shares its drift factor."""
    rng = np.random.default_rng(seed)
    drift = 1 + 0.2 * np.sin(np.linspace(0, 6, n))
    t0 = drift * (1 + noise * rng.standard_normal(n))
    t1 = drift / speedup * (1 + noise * rng.standard_normal(n))
    return Timing("ms", tuple(t0)), Timing("ms", tuple(t1))


def test_pairing_cancels_drift():
    t0, t1 = drifting(30, 1.03, 0.005, seed=1)
    d = decide(t0, t1)
    assert d.accepted and d.speedup == pytest.approx(1.03, rel=0.01) and d.interval[0] > 1.0
    shuffled = Timing("ms", tuple(np.random.default_rng(2).permutation(t1.samples)))
    assert not decide(t0, shuffled).accepted  # the pairing broken, the 20 % drift swamps the 3 % gain


@pytest.mark.parametrize("speedup,noise,accepted", [(1.25, 0.01, True), (1.02, 0.05, False), (1.0, 0.002, False),
                                                    (1.005, 0.001, False)])
def test_decision(speedup, noise, accepted):
    t0, t1 = drifting(40, speedup, noise, seed=7)
    d = decide(t0, t1)
    assert d.accepted is accepted
    assert d.interval[0] <= d.speedup <= d.interval[1]


def test_bootstrap_interval_covers_the_median_as_promised():
    """Over 200 samples of 31 draws from a distribution with median 1, the 95 % interval holds 1 in
    roughly 95 % of them (the percentile bootstrap of a median runs a little under its nominal level)."""
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(200):
        values = np.exp(0.05 * rng.standard_normal(31))
        low, high = median_interval(values)
        hits += low <= 1.0 <= high
    assert 0.85 <= hits / 200 <= 0.99


def test_paired_timing_needs_equal_sample_counts():
    with pytest.raises(AsmEvoError, match="as many samples"):
        decide(Timing("ms", (1.0, 1.0, 1.0)), Timing("ms", (1.0, 1.0)))


def test_only_equivalent_candidates_are_timed():
    dev = ScriptedDevice()
    for kind in ("different", "invalid", "crashed"):
        with pytest.raises(NotVerified):
            time_candidate(verdict(kind), K0, K1, LAUNCH, dev)
    with pytest.raises(NotVerified):
        time_candidate(verdict(k1=variant(8)), K0, K1, LAUNCH, dev)
    assert dev.launches == 0
