"""Probe launches: a few workgroups of a giant launch, verified on sparse memory."""
from __future__ import annotations

import json

import numpy as np
import pytest

from asmevo.codeobj import CodeObject
from asmevo.device.dtypes import get_dtype
from asmevo.device.launch import BufferArg, LaunchSpec, lazy_fill, make_inputs
from asmevo.device.probe import probe_workgroups
from asmevo.errors import LaunchSpecError
from asmevo.patch import patch
from asmevo.suites import load_suite
from asmevo.launches import launch_from_dict, suite_launches
from asmevo.verify import verify

PROBLEM = load_suite("kernelbench").problem("2_Standard_matrix_multiplication_")
PROBE = PROBLEM.shape("p_1152x32x1048576")
# The integer division pid // (GROUP_M * grid_n) corrects its reciprocal-based quotient with
# rem - d; `d - rem` is wrong only when the estimate is one short: first at pid 2^16 + 1 for
# d = 2^16 (N = 2^20), far beyond any launch the emulator can hold densely.
DIVISION_CORRECTION = 0x187C


def test_probe_workgroups_favour_edges_and_powers_of_two():
    picked = probe_workgroups(73728, 32, seed=0)
    assert len(picked) == len(set(picked)) == 32 and picked == sorted(picked)
    assert {0, 1, 73726, 73727, 65535, 65536, 65537, 2047, 2048, 2049} <= set(picked)
    assert picked == probe_workgroups(73728, 32, seed=0)
    assert picked != probe_workgroups(73728, 32, seed=1)  # the random quarter
    assert probe_workgroups(5, 32, seed=0) == [0, 1, 2, 3, 4]


def test_lazy_fill_pieces_are_reproducible_alone():
    buf = BufferArg("x", get_dtype("float32"), (1 << 30,), "random")
    fill = lazy_fill(buf, seed=3)
    whole = fill(0, 16384)
    assert np.array_equal(fill(4096, 8192), whole[4096:8192])
    assert np.array_equal(lazy_fill(buf, 3)(5000, 5004), whole[5000:5004])
    assert not np.array_equal(lazy_fill(buf, 4)(0, 16384), whole)
    values = whole.view(np.float32)
    assert values.min() >= -1 and values.max() < 1 and len(np.unique(values)) > 4000
    ramp = lazy_fill(BufferArg("i", get_dtype("int32"), (1 << 30,), "arange"), 0)
    assert ramp(4 * 123456789, 4 * 123456791).view(np.int32).tolist() == [123456789, 123456790]


def test_file_init_is_read_lazily(tmp_path):
    data = np.arange(5000, dtype=np.int16)
    np.save(tmp_path / "a.npy", data)
    buf = BufferArg("a", get_dtype("int16"), (5000,), str(tmp_path / "a.npy"))
    assert lazy_fill(buf, 0)(2000, 2008).view(np.int16).tolist() == [1000, 1001, 1002, 1003]


@pytest.mark.parametrize("probe,message", [
    (32, "mapping"), ({"workgroups": 0}, "positive"), ({"workgroups": 4, "x": 1}, "unknown key"),
    ({}, "missing workgroups")])
def test_bad_probe_keys_are_named(probe, message):
    spec = PROBLEM.launch(PROBE)
    with pytest.raises(LaunchSpecError, match=message):
        LaunchSpec.from_dict({**spec, "probe": probe})


def test_probe_shapes_reach_verification_only_when_asked():
    plain = [vl.label for vl in suite_launches(PROBLEM, heldout=True)]
    probing = [vl for vl in suite_launches(PROBLEM, probes=True) if vl.label.endswith(PROBE.name)]
    assert not any(label.endswith(PROBE.name) for label in plain)
    assert len(probing) == 1 and probing[0].spec.probe == 32


@pytest.fixture(scope="module")
def probe_launch():
    return [vl for vl in suite_launches(PROBLEM, probes=True) if vl.label.endswith(PROBE.name)]


def test_probe_catches_a_division_edit_that_only_breaks_at_giant_grids(probe_launch, tmp_path):
    k0 = CodeObject.from_path(PROBLEM.code_object)
    assert k0.read(DIVISION_CORRECTION, 4) == bytes.fromhex("0d0b9181")  # s_sub_i32 s17, s13, s11
    k1 = CodeObject(patch(PROBLEM.code_object, DIVISION_CORRECTION, DIVISION_CORRECTION + 4,
                          "s_sub_i32 s17, s11, s13"))
    small = suite_launches(PROBLEM, heldout=True)
    assert verify(k0, k1, small, trials=1, special=False).equivalent  # every emulator-sized shape agrees
    v = verify(k0, k1, probe_launch, trials=1)
    assert v.kind == "different" and "probe of 32 workgroups" in v.reason
    row, col = v.evidence["difference"]["index"]
    assert v.evidence["difference"]["buffer"] == "C" and row >= 1024  # pid 2^16 + 1's tile: rows 1024..1151
    assert verify(k0, k0, probe_launch, trials=1).equivalent


def test_a_probe_on_which_k0_wraps_its_int32_offsets_is_invalid():
    spec = PROBLEM.launch(PROBE)
    m = 4224  # M * N >= 2^31: Triton's int32 element offsets of C wrap
    spec["args"][0]["shape"][0] = spec["args"][2]["shape"][0] = spec["args"][3]["scalar"] = m
    spec["grid"] = [33 * 8192, 1, 1]
    k0 = CodeObject.from_path(PROBLEM.code_object)
    v = verify(k0, k0, [launch_from_dict(json.loads(json.dumps(spec)), PROBLEM.dir, "wrap")], trials=1)
    assert v.kind == "invalid" and "out_of_bounds" in v.reason


def test_probe_catches_byte_offsets_narrowed_to_32_bits():
    relu = load_suite("kernelbench").problem("19_ReLU")
    k0 = CodeObject.from_path(relu.code_object)
    shift = 0x1754  # v_lshlrev_b64 v[4:5], 2, v[0:1]: the float4 path's byte offset of element v0
    assert k0.read(shift, 8) == bytes.fromhex("04008fd282000200")
    k1 = CodeObject(patch(relu.code_object, shift, shift + 8, "v_lshlrev_b32_e32 v4, 2, v0\nv_mov_b32_e32 v5, 0"))
    assert verify(k0, k1, suite_launches(relu, heldout=True), trials=1, special=False).equivalent
    v = verify(k0, k1, suite_launches(relu, probes=True), trials=1, special=False)
    assert v.kind == "different" and v.evidence["launch"] == "19_ReLU:p_2097151x1024"
    assert v.evidence["difference"]["buffer"] == "y"  # elements past 2^30 are stored 4 GiB too low


def test_running_a_probe_outside_verification_says_why_not(monkeypatch):
    monkeypatch.setenv("ASMEVO_MAX_LAUNCH_BYTES", str(1 << 30))
    spec = LaunchSpec.load(PROBE.launch_path)
    with pytest.raises(LaunchSpecError, match="is a probe .* only the emulator.s verification runs it"):
        make_inputs(spec)
