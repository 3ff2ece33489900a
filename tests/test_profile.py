"""Hot windows from a traced launch and the timing model, on the real ReLU kernel's code."""
import json

import pytest

from asmevo.codeobj import CodeObject
from asmevo.isa.cfg import build_cfg
from asmevo.model import estimate
from asmevo.profile import Profile, ProfileError, hot_windows, load_line_map
from asmevo.target import gpu

from modeltools import traced

from fakes import RELU_CO

CO = CodeObject.from_path(RELU_CO)
INS = CO.kernel_instructions("relu_f32")


def tail_loop_path(iterations: int) -> list[int]:
    """A path from the entry block through the scalar tail loop, `iterations` times around it."""
    cfg = build_cfg(INS)
    loop = next(l for l in cfg.loops() if len(l.blocks) == 1)
    body = next(iter(loop.blocks))
    path, b = [0], 0
    while b != body:  # the first successor chain into the loop
        b = next(s for s in cfg.blocks[b].succs if s <= body or s in loop.blocks)
        path.append(b)
    path += [body] * (iterations - 1)
    after = next(s for s in cfg.blocks[body].succs if s != body)
    path.append(after)
    while cfg.blocks[path[-1]].succs:
        path.append(cfg.blocks[path[-1]].succs[0])
    return path


def test_loop_with_waitcnt_is_the_top_window_and_memory_latency_bound(tmp_path):
    e = estimate(INS, CO.kernels[0], traced(INS, [tail_loop_path(100)] * 8, (2, 1, 1)), gpu("mi300x"))
    windows = hot_windows(INS, e)
    top = windows[0]
    assert top.kind == "loop" and top.share > 0.5 and top.count == 800
    assert top.reason == "memory-latency bound (vmcnt waits)"
    assert all(w.share >= 0.01 for w in windows)
    assert [w.cycles for w in windows] == sorted((w.cycles for w in windows), reverse=True)
    rec = tmp_path / "rec"
    rec.mkdir()
    (rec / "recovery.json").write_text(json.dumps(
        {"instructions": [[i.address, 10 + n, i.size] for n, i in enumerate(INS)]}))
    line_of = load_line_map(rec)
    windows = hot_windows(INS, e, line_of)
    first, last = windows[0].lines
    assert first < last and line_of[windows[0].start] == first
    listing = Profile("relu_f32", e, INS, windows, line_of).listing()
    assert "model_us" in listing and "window #1" in listing and "0x000016a0" in listing


def test_missing_recovery_map(tmp_path):
    with pytest.raises(ProfileError):
        load_line_map(tmp_path)


def test_an_fp32_mfma_loop_is_profiled_with_its_valu_hold_as_a_reason():
    """86_Matmul_Divide_GELU's K loop issues FP32 MFMAs: the VALU work behind them stalls on the hold (a stall
    cause of its own), and the loop's breakdown names it."""
    import math

    from asmevo.launches import suite_launches
    from asmevo.profile import profile_launch
    from asmevo.suites import load_suite

    problem = load_suite("kernelbench").problem("86_Matmul_Divide_GELU")
    launch = min(suite_launches(problem), key=lambda vl: math.prod(vl.spec.grid))  # the smallest
    windows = profile_launch(CodeObject.from_path(problem.code_object), launch.spec, gpu_name="mi308x").windows
    assert windows[0].kind == "loop"
    assert windows[0].breakdown.get("MFMA bound (FP32/FP64 MFMAs hold the VALU)", 0) > 0
