"""Sampling a launch's workgroups and extrapolating to the grid: the plan, the weights, agreement
with the whole grid, and the rooflines every suite kernel's bench shape respects."""
import math
from pathlib import Path

import pytest

from asmevo.codeobj import CodeObject
from asmevo.launches import launch_from_dict, timing_launch
from asmevo.model import model_spec
from asmevo.model.sample import choose, class_sizes, grid_class, weights
from asmevo.suites import load_suite
from asmevo.target import gpu

ROOT = Path(__file__).resolve().parents[2]
LEAKY = ROOT / "benchmarks" / "kernelbench" / "20_LeakyReLU"


@pytest.mark.parametrize("grid", [(1, 1, 1), (2, 1, 1), (7, 1, 1), (64, 32, 1), (5, 3, 9)])
def test_classes_cover_the_grid_and_weights_sum_to_it(grid):
    total = math.prod(grid)
    assert sum(class_sizes(grid).values()) == total
    assert {grid_class(grid, w) for w in range(total)} == set(class_sizes(grid))
    for count in (1, 8, 24, total):
        picked = choose(grid, count, seed=3)
        assert picked == choose(grid, count, seed=3) and len(set(picked)) == len(picked)
        assert {grid_class(grid, w) for w in picked} == set(class_sizes(grid))  # every class sampled
        assert sum(weights(grid, picked).values()) == pytest.approx(total)


def test_a_small_grid_runs_whole_and_a_pilot_takes_a_second_of_the_largest_class():
    assert choose((5, 1, 1), 24, seed=0) == [0, 1, 2, 3, 4]
    pilot = choose((100, 1, 1), 24, seed=0, pilot=True)
    assert len(pilot) == 4 and sum(grid_class((100, 1, 1), w) == (1, 0, 0) for w in pilot) == 2


def _leaky(workgroups: int, n: int):
    spec = {"kernel": "leaky_relu_kernel", "grid": [workgroups, 1, 1], "block": [256, 1, 1], "seed": 0,
            "args": [{"buffer": "x", "dtype": "float32", "shape": [n], "init": "random"},
                     {"buffer": "y", "dtype": "float32", "shape": [n], "init": "zeros"},
                     {"scalar": n, "dtype": "int32"}, {"scalar": 0.01, "dtype": "float32"},
                     {"buffer": "global_scratch", "dtype": "uint8", "shape": [0], "init": "zeros"},
                     {"buffer": "profile_scratch", "dtype": "uint8", "shape": [0], "init": "zeros"}]}
    return launch_from_dict(spec, label=f"leaky {workgroups}")


def test_sampled_model_equals_the_whole_grid_within_two_percent():
    """1200 workgroups (4 rounds on MI308X's 80 CUs), the last one a partial tile: modelled from all of
    them, and from a sample of 12."""
    co = CodeObject.from_path(LEAKY / "kernel.co")
    vl = _leaky(1200, 1200 * 1024 - 333)
    whole = model_spec(co, vl.spec, gpu("mi308x"), max_samples=1200)
    sampled = model_spec(co, vl.spec, gpu("mi308x"), max_samples=12)
    assert whole.sampled_workgroups == 1200 and sampled.sampled_workgroups <= 12
    assert sampled.predicted_us == pytest.approx(whole.predicted_us, rel=0.02)
    assert sampled.sampling_error < 0.02


def test_the_same_workgroups_reproduce_a_sample():
    co = CodeObject.from_path(LEAKY / "kernel.co")
    vl = _leaky(5000, 5000 * 1024)
    first = model_spec(co, vl.spec, gpu("mi300x"))
    again = model_spec(co, vl.spec, gpu("mi300x"), workgroups=first.sample)
    assert again.sample == first.sample and again.predicted_us == first.predicted_us


def _bench_k0s(suites: tuple[str, ...]):
    for name in suites:
        suite = load_suite(name)
        for problem in suite.problems:
            vl, role = timing_launch(problem)
            if role == "bench":
                yield pytest.param(problem, vl, id=f"{name}:{problem.name}")


FAST = ("19_ReLU", "23_Softmax", "89_cumsum")


@pytest.mark.parametrize("problem,vl", [p for p in _bench_k0s(("kernelbench",)) if p.values[0].name in FAST])
def test_bench_predictions_respect_the_rooflines(problem, vl):
    e = model_spec(CodeObject.from_path(problem.code_object), vl.spec, gpu("mi300x"), known_findings=vl.known_findings)
    assert e.predicted_us >= e.hbm_floor_us > 0 and e.predicted_us >= e.compute_floor_us
    assert e.workgroups == math.prod(vl.spec.grid) and e.sampled_workgroups <= e.workgroups


@pytest.mark.slow
@pytest.mark.parametrize("problem,vl", list(_bench_k0s(("kernelbench", "triton", "aiter"))))
def test_every_suite_bench_prediction_respects_the_rooflines(problem, vl):
    e = model_spec(CodeObject.from_path(problem.code_object), vl.spec, gpu("mi300x"), known_findings=vl.known_findings)
    assert e.predicted_us >= e.hbm_floor_us > 0 and e.predicted_us >= e.compute_floor_us


def test_gfx942_code_on_a_gfx950_gpu_is_refused_before_it_runs():
    """`--gpu mi355x` (CDNA4, gfx950) cannot time gfx942 code: a named error, no prediction."""
    from asmevo.target import UnsupportedTarget

    co = CodeObject.from_path(LEAKY / "kernel.co")
    with pytest.raises(UnsupportedTarget, match="^GPU mi355x runs gfx950 code; the code object targets gfx942$"):
        model_spec(co, _leaky(4, 4 * 1024).spec, gpu("mi355x"))


def test_a_kernel_reading_its_kernarg_with_a_vector_load_is_modelled():
    """AITer's one-stage MoE reads kernel arguments with global loads: the traced access lands in the
    dispatch's kernarg allocation, after the spec's buffers (this used to raise IndexError)."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "emu"))
    from emutools import asm

    co = asm("""
  v_mov_b32 v2, s0
  v_mov_b32 v3, s1
  global_load_dword v3, v[2:3], off
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v4, 2, v0
  s_waitcnt vmcnt(0) lgkmcnt(0)
  global_store_dword v4, v3, s[4:5]
  s_endpgm""", args=1)
    spec = launch_from_dict({"kernel": "k", "grid": [64, 1, 1], "block": [64, 1, 1], "seed": 0,
                             "args": [{"buffer": "out", "dtype": "uint32", "shape": [64], "init": "zeros"},
                                      {"scalar": 0, "dtype": "uint64"}]}).spec
    est = model_spec(co, spec, gpu("mi300x"))
    assert est.predicted_us > 0 and est.hbm_bytes > 0
