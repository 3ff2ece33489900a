"""The mutation benchmark on one kernel (slow: it rebuilds and verifies ~10 candidates)."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from asmevo.suites import load_suite

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "verification" / "mutations.py"


@pytest.mark.slow
def test_relu_mutants():
    spec = importlib.util.spec_from_file_location("mutations", SCRIPT)
    mutations = importlib.util.module_from_spec(spec)
    sys.modules["mutations"] = mutations
    spec.loader.exec_module(mutations)
    outcomes, seconds = mutations.run_problem(load_suite("kernelbench").problem("19_ReLU"), 1,
                                              np.random.default_rng(1))
    preserving = [o for o in outcomes if not o.breaking]
    breaking = [o for o in outcomes if o.breaking]
    assert len(preserving) == 3 and all(o.correct for o in preserving)
    # Seed 1 picks two equivalent mutants on ReLU's tail path (the swapped `s_andn2_b64 exec` of a
    # loop that runs once, and an `s_xor_b64` else-mask that the later `s_andn2_saveexec` makes
    # redundant); every other breaking edit must be rejected.
    assert len(breaking) >= 6 and sum(o.correct for o in breaking) >= len(breaking) - 2
    assert seconds > 0
