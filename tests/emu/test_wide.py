"""Wide launches (`run_kernel_wide`, `device.launch.run_launches`): several launches of one kernel run
as one batch must give each launch exactly what it gets alone — buffers, findings (kinds, PCs, waves,
messages), instruction counts and per-PC counts — across memory layouts, checked mode, faithful
rounding, launch-specific findings and budgets; kernels that read the instruction clock never run
together."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import asmevo.emu as emu
from asmevo.device import get_device
from asmevo.device.launch import run_launch, run_launches
from asmevo.emu import Memory, WideLaunch, run_kernel, run_kernel_wide
from asmevo.input_sets import input_sets
from asmevo.launches import suite_launches
from asmevo.suites import load_suite

from emutools import asm


@pytest.fixture
def together(monkeypatch):
    """Counts the batches that really held several launches."""
    calls = []
    original = emu._run_together

    def spy(launch, launches, *args):
        calls.append(len(launches))
        return original(launch, launches, *args)
    monkeypatch.setattr(emu, "_run_together", spy)
    return calls


def _same_report(a, b) -> None:
    assert (a.instructions, a.lane_instructions, a.waves) == (b.instructions, b.lane_instructions, b.waves)
    assert a.findings == b.findings
    assert dict(sorted(a.pc_counts.items())) == dict(sorted(b.pc_counts.items()))


def _same(wide, alone) -> None:
    for w, a in zip(wide, alone, strict=True):
        (out_w, res_w), (out_a, res_a) = w, a
        assert res_w.findings == res_a.findings and res_w.ok == res_a.ok
        _same_report(res_w.report, res_a.report)
        assert out_w.keys() == out_a.keys()
        for name in out_a:
            assert out_w[name].tobytes() == out_a[name].tobytes(), name


@pytest.mark.parametrize("name", ["19_ReLU", "23_Softmax", "67_conv_standard_1D", "76_Gemm_Add_ReLU"])
def test_input_sets_of_a_suite_launch_run_together_as_alone(name, together):
    # 67_conv's K0 reads never-written register lanes (checked-mode findings in every set)
    problem = load_suite("kernelbench").problem(name)
    data = problem.code_object.read_bytes()
    spec = suite_launches(problem)[0].spec
    sets = [inputs for _, inputs in input_sets(spec, 3, special=True)]
    base = get_device("emu").verifying()
    for faithful in (False, True):
        devices = [base.for_input_set(2 * faithful + n % 2)[0].copy() for n in range(len(sets))]  # both layouts
        wide = run_launches(devices, data, spec, [dict(s) for s in sets])
        alone = [run_launch(d.copy(), data, spec, dict(s)) for d, s in zip(devices, sets)]
        _same(wide, alone)
    assert together and max(together) == len(sets)


OOB = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[4:5]
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v2, 2, v2
  global_store_dword v2, v0, s[6:7]
  s_endpgm
"""


def _oob_launch(index: np.ndarray, budget: int = 50_000_000) -> WideLaunch:
    memory = Memory()
    a = memory.alloc(index.nbytes, "index")
    memory.write(a, index.tobytes())
    b = memory.alloc(64 * 4, "out")
    return WideLaunch(struct.pack("<QQQQQ", a, b, 0, 0, 0), memory, budget)


def _outcome(w: WideLaunch, report) -> tuple:
    return report, bytes(w.memory.heap[:w.memory.top]), w.memory.guard_violations()


def test_a_finding_of_one_launch_is_its_own(together):
    # y[x[i]] = i: the second launch's indices run past `out`, the others' do not
    co = asm(OOB)
    index = np.arange(64, dtype=np.int32)
    inputs = [index, index[::-1].copy(), index + 40, index]
    geometry = dict(grid=(1, 1, 1), block=(64, 1, 1), dynamic_lds=0, checked=True)
    wide = [_oob_launch(i) for i in inputs]
    reports = run_kernel_wide(co, "k", wide, **geometry)
    assert together == [4]
    for w, report, i in zip(wide, reports, inputs):
        alone = _oob_launch(i)
        expected = run_kernel(co, "k", memory=alone.memory, kernarg=alone.kernarg, **geometry)
        _same_report(report, expected)
        assert _outcome(w, report)[1:] == _outcome(alone, expected)[1:]
    assert [bool(r.findings) for r in reports] == [False, False, True, False]
    assert reports[2].findings[0].kind == "out_of_bounds"


def test_budgets_are_per_launch(together):
    co = asm(OOB)
    index = np.arange(64, dtype=np.int32)
    geometry = dict(grid=(1, 1, 1), block=(64, 1, 1), dynamic_lds=0)
    budgets = [100, 3, 100]
    reports = run_kernel_wide(co, "k", [_oob_launch(index, b) for b in budgets], **geometry)
    for report, budget in zip(reports, budgets):
        alone = _oob_launch(index, budget)
        _same_report(report, run_kernel(co, "k", memory=alone.memory, kernarg=alone.kernarg, budget=budget, **geometry))
    assert [f.kind for f in reports[1].findings] == ["budget"] and not reports[0].findings


def test_kernels_reading_the_clock_run_alone(together):
    co = asm("""
  s_load_dwordx2 s[4:5], s[0:1], 0x8
  s_memtime s[6:7]
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, s6
  v_lshlrev_b32 v2, 2, v0
  global_store_dword v2, v1, s[4:5]
  s_endpgm
""")
    geometry = dict(grid=(1, 1, 1), block=(64, 1, 1), dynamic_lds=0)
    wide = [_oob_launch(np.zeros(64, np.int32)) for _ in range(3)]
    reports = run_kernel_wide(co, "k", wide, **geometry)
    assert not together
    for w, report in zip(wide, reports):
        alone = _oob_launch(np.zeros(64, np.int32))
        expected = run_kernel(co, "k", memory=alone.memory, kernarg=alone.kernarg, **geometry)
        _same_report(report, expected)
        assert _outcome(w, report)[1:] == _outcome(alone, expected)[1:]


JUMP = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_load_dword s6, s[4:5], 0x0
  s_getpc_b64 s[8:9]
  s_waitcnt lgkmcnt(0)
  s_add_u32 s8, s8, s6
  s_addc_u32 s9, s9, 0
  s_setpc_b64 s[8:9]
  s_endpgm
"""


def test_an_error_comes_back_in_its_launchs_place(together):
    # each launch jumps by its own offset: 16 lands on s_endpgm, 2 inside an instruction
    co = asm(JUMP)
    geometry = dict(grid=(1, 1, 1), block=(64, 1, 1), dynamic_lds=0)
    offsets = [16, 2, 16]
    results = run_kernel_wide(co, "k", [_oob_launch(np.array([o], np.int32)) for o in offsets], **geometry)
    assert together == [3]
    assert isinstance(results[1], emu.EmulationError) and "holds no instruction" in str(results[1])
    for offset, result in zip(offsets, results):
        alone = _oob_launch(np.array([offset], np.int32))
        if offset == 2:
            with pytest.raises(emu.EmulationError, match=str(results[1])):
                run_kernel(co, "k", memory=alone.memory, kernarg=alone.kernarg, **geometry)
        else:
            _same_report(result, run_kernel(co, "k", memory=alone.memory, kernarg=alone.kernarg, **geometry))


def test_waves_in_vskip_mode_run_together_as_alone(together):
    """Waves that pass over vector instructions in VSKIP mode (AITer's one-stage MoE kernels) split their
    group; in a wide run the split groups still count each launch's waves (they did not: a TypeError)."""
    co = asm("""
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_load_dword s6, s[0:1], 0x8
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  s_setvskip s6, 0
  v_mov_b32 v2, 0x77
  global_store_dword v10, v2, s[4:5]
  s_setvskip 0, 0
  s_waitcnt vmcnt(0)
  s_endpgm
""")
    geometry = dict(grid=(1, 1, 1), block=(64, 1, 1), dynamic_lds=0, checked=True)

    def launch(skip: int) -> tuple[WideLaunch, int]:
        memory = Memory()
        out = memory.alloc(64 * 4, "out")
        memory.write(out, bytes(256))
        return WideLaunch(struct.pack("<QIIQQQ", out, skip, 0, 0, 0, 0), memory, 50_000_000), out

    wide = [launch(s) for s in (0, 1, 0)]
    reports = run_kernel_wide(co, "k", [w for w, _ in wide], **geometry)
    assert together == [3]
    for (w, out), report, skip in zip(wide, reports, (0, 1, 0)):
        alone, _ = launch(skip)
        _same_report(report, run_kernel(co, "k", memory=alone.memory, kernarg=alone.kernarg, **geometry))
        stored = np.frombuffer(w.memory.read(out, 256), np.uint32)
        assert (stored == (0 if skip else 0x77)).all()
