"""benchmarks/kernelbench/pytorch_oracle.py: KernelBench's own PyTorch modules against our references.

The slow tests need the `oracle` extra (torch) and KernelBench's module files (downloaded into
benchmarks/.cache/kernelbench at the pinned commit, or already there); the committed record is
benchmarks/kernelbench/pytorch_oracle.txt."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from asmevo.suites import load_suite

ROOT = Path(__file__).resolve().parents[2]
SUITE = load_suite("kernelbench")


def _oracle():
    spec = importlib.util.spec_from_file_location("pytorch_oracle", ROOT / "benchmarks" / "kernelbench" /
                                                  "pytorch_oracle.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["pytorch_oracle"] = module
    spec.loader.exec_module(module)
    return module


oracle = _oracle()


def test_every_problem_has_a_mapping_and_a_pinned_module():
    names = {p.name for p in SUITE.problems}
    assert set(oracle.CASES) == names and set(oracle.SHA256) == names
    assert len(oracle.COMMIT) == 40 and all(len(h) == 64 for h in oracle.SHA256.values())


def test_the_script_imports_without_torch():
    src = (ROOT / "benchmarks" / "kernelbench" / "pytorch_oracle.py").read_text()
    top_level = [ln for ln in src.splitlines() if ln.startswith(("import ", "from "))]
    assert not [ln for ln in top_level if "torch" in ln]


@pytest.fixture(scope="module")
def modules():
    pytest.importorskip("torch", reason="the `oracle` extra (torch) is not installed")
    try:
        return {p.name: oracle.module_source(p.name, p.level, None) for p in SUITE.problems}
    except oracle.OracleError as exc:
        pytest.skip(str(exc))


CHECKED = [(p.name, s.name) for p in SUITE.problems for s in p.shapes if s.role in ("verify", "heldout")]


@pytest.mark.slow
@pytest.mark.parametrize("name,shape", CHECKED)
def test_reference_agrees_with_kernelbench(modules, name, shape):
    p = SUITE.problem(name)
    result = oracle.check_shape(p, p.shape(shape), modules[name])
    assert result.agree and result.share <= 1, result.message


@pytest.mark.slow
def test_the_oracle_tells_a_different_definition(modules, monkeypatch):
    """Training-mode BatchNorm (batch statistics), a LeakyReLU slope other than KernelBench's, and the tanh
    approximation of GELU are each told apart."""
    bn = SUITE.problem("33_BatchNorm")
    inference = oracle.CASES[bn.name]

    def training(b, s):
        case = inference(b, s)
        case.eval = False
        return case
    monkeypatch.setitem(oracle.CASES, bn.name, training)
    assert not oracle.check_shape(bn, bn.shapes_by_role("verify")[0], modules[bn.name]).agree

    leaky = SUITE.problem("20_LeakyReLU")
    monkeypatch.setitem(oracle.CASES, leaky.name,
                        lambda b, s: oracle._elementwise(b, s, scalars={"negative_slope": 0.02}))
    r = oracle.check_shape(leaky, leaky.shapes_by_role("verify")[0], modules[leaky.name])
    assert not r.agree and "negative_slope" in r.message

    gelu = SUITE.problem("26_GELU_")

    def tanh_gelu(inputs, scalars):
        x = inputs["x"].astype(np.float64)
        return {"y": (0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))).astype(np.float32)}
    monkeypatch.setattr(type(gelu), "reference_fn", lambda self: tanh_gelu)
    r = oracle.check_shape(gelu, gelu.shapes_by_role("verify")[0], modules[gelu.name])
    assert not r.agree and r.share > 1
