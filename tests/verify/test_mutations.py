"""The mutation benchmark on one kernel (slow: it rebuilds and verifies ~10 candidates)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from asmevo.suites import load_suite

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "verification" / "mutations.py"


@pytest.mark.slow
def test_relu_mutants():
    spec = importlib.util.spec_from_file_location("mutations", SCRIPT)
    mutations = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mutations)
    outcomes, seconds = mutations.run_problem(load_suite("kernelbench").problem("19_ReLU"), 1,
                                              np.random.default_rng(1))
    preserving = [o for o in outcomes if not o.breaking]
    breaking = [o for o in outcomes if o.breaking]
    assert len(preserving) == 3 and all(o.correct for o in preserving)
    assert len(breaking) >= 5 and sum(o.correct for o in breaking) >= len(breaking) - 1
    assert seconds > 0
