"""Each verdict kind, on a scripted device (numpy behaviours standing in for kernels)."""
import copy
import json

import numpy as np
import pytest

from asmevo.abi import abi_differences
from asmevo.errors import AsmEvoError, EmulationError
from asmevo.input_sets import SPECIAL_SETS, input_sets
from asmevo.launches import launch_from_dict
from asmevo.static_checks import resource_findings
from asmevo.verify import Verdict, verify

from fakes import RELU_SPEC, ScriptedDevice, relu, variant

K0, K1 = variant(0), variant(4)


def run(k1_fn, *, k0_fn=relu, spec=RELU_SPEC, **kw):
    dev = ScriptedDevice()
    dev.script(K0, k0_fn)
    dev.script(K1, k1_fn)
    return verify(K0, K1, [launch_from_dict(spec, label="relu")], device=dev, **kw), dev


def test_equivalent_runs_every_trial_and_special_set():
    v, dev = run(relu, trials=3)
    assert v.kind == "equivalent" and v.equivalent
    assert v.trials == 3 + len(SPECIAL_SETS) and dev.launches == 2 * v.trials
    rec = json.loads(json.dumps(v.to_json()))
    assert rec["kind"] == "equivalent" and rec["seconds"] >= 0


def test_different_names_buffer_index_and_both_values():
    def wrong(b):
        relu(b)
        b["y"][77] += 1
    v, _ = run(wrong)
    assert v.kind == "different"
    d = v.evidence["difference"]
    assert d["buffer"] == "y" and tuple(d["index"]) == (77,)
    assert "y[77]" in v.reason and "expected" in v.reason


def test_input_clobbering_detected():
    def clobber(b):
        relu(b)
        b["x"][3] = 0
    v, _ = run(clobber)
    assert v.kind == "different" and v.evidence["difference"]["buffer"] == "x"


def test_nan_handling_difference_caught_by_special_values():
    def nan_to_zero(b):  # differs from relu only where x is NaN
        b["y"][:] = np.where(np.isnan(b["x"]), np.float32(0), np.maximum(b["x"], np.float32(0)))
    v, _ = run(nan_to_zero, trials=2)
    assert v.kind == "different" and "nan_inf" in v.evidence["inputs"]


def test_unwritten_output_caught_by_prefilled_outputs():
    def skip_first(b):
        keep = b["y"][0]
        relu(b)
        b["y"][0] = keep
    v, _ = run(skip_first, trials=1)
    assert v.kind == "different" and tuple(v.evidence["difference"]["index"]) == (0,)


def test_tolerance_from_the_launch_spec():
    def perturbed(b):
        relu(b)
        b["y"][:] = b["y"] * np.float32(1 + 2e-7)
    assert run(perturbed, trials=1, special=False)[0].kind == "different"
    spec = dict(RELU_SPEC, tolerance={"rtol": 1e-6})
    assert run(perturbed, spec=spec, trials=1, special=False)[0].kind == "equivalent"


def test_strictness_finding_in_k1_fails_even_when_outputs_match():
    def racy(b):
        relu(b)
        return [{"kind": "waitcnt", "pc": 0x1650, "wave": 0, "message": "read of v1 before vmcnt"}]
    v, _ = run(racy)
    assert v.kind == "different" and "waitcnt" in v.reason and "0x1650" in v.reason


def test_guard_band_write_is_a_failure():
    def guard(b):
        relu(b)
        return [{"kind": "guard", "pc": None, "wave": None, "message": "y: guard band after overwritten"}]
    v, _ = run(guard)
    assert v.kind == "different" and "guard band" in v.reason


def test_k0_findings_make_the_launch_invalid():
    def oob(b):
        relu(b)
        return [{"kind": "out_of_bounds", "pc": 0x1700, "wave": 3, "message": "load past x"}]
    v, _ = run(relu, k0_fn=oob)
    assert v.kind == "invalid"


def test_k1_crash():
    def crash(b):
        raise EmulationError("budget exhausted")
    v, _ = run(crash)
    assert v.kind == "crashed" and "budget" in v.reason


def test_static_abi_change_rejected_before_running():
    k1 = variant(4)
    k1.kernels[0].metadata[".kernarg_segment_size"] = 24
    assert any("kernarg_segment_size" in d for d in abi_differences(K0, k1))
    dev = ScriptedDevice()
    v = verify(K0, k1, [launch_from_dict(RELU_SPEC)], device=dev)
    assert v.kind == "different" and v.evidence["stage"] == "static" and dev.launches == 0
    k2 = variant(8)
    k2.kernels[0].descriptor.fields["granulated_workitem_vgpr_count"] += 1
    assert abi_differences(K0, k2) == []


def test_input_sets_special_values():
    spec = launch_from_dict(RELU_SPEC).spec
    sets = dict(input_sets(spec, 2))
    assert len(sets) == 2 + len(SPECIAL_SETS)
    t0, t1 = sets["trial 0 (seed 1)"], sets["trial 1 (seed 2)"]
    assert not np.array_equal(t0["x"], t1["x"])
    den = sets["special denormals"]["x"]
    assert np.all((den != 0) & (np.abs(den) < np.finfo(np.float32).tiny))
    nan = sets["special nan_inf"]["x"]
    assert np.isnan(nan).any() and np.isposinf(nan).any() and np.isneginf(nan).any()
    assert np.all(np.abs(sets["special large"]["x"]) > 1e30)
    assert np.all(sets["special negatives"]["x"] < 0)
    mag = sets["special magnitudes"]["x"].astype(np.float64)
    assert np.all(np.isfinite(mag)) and (mag > 0).any() and (mag < 0).any()
    assert (np.abs(mag) > 2.0 ** 100).any() and (np.abs(mag) < 2.0 ** -100).any()  # the whole fp32 range
    assert ((np.abs(mag) > 2) & (np.abs(mag) < 2.0 ** 12)).sum() > len(mag) // 8  # beyond random's [-1, 1]
    assert (np.abs(mag) == 1).any() and (np.abs(mag) == np.float32(1 + 2.0 ** -23)).any()  # 1 and an ulp off
    assert (np.abs(np.abs(mag) - 88.72) < 0.9).any()  # exp's overflow limit, ln(FLT_MAX)


def test_bad_arguments():
    with pytest.raises(AsmEvoError):
        verify(K0, K1, [], device=ScriptedDevice())
    with pytest.raises(AsmEvoError):
        verify(K0, K1, [launch_from_dict(RELU_SPEC)], trials=0, device=ScriptedDevice())
    with pytest.raises(AsmEvoError):
        launch_from_dict(dict(RELU_SPEC, tolerance={"bogus": 1}))


def with_descriptor(co, **fields):
    """A copy of `co` with descriptor bit fields changed in the ELF bytes."""
    from asmevo.codeobj import CodeObject
    k = co.kernels[0]
    desc = copy.deepcopy(k.descriptor)
    desc.fields.update(fields)
    off = co.address_to_offset(k.descriptor_address)
    data = bytearray(co.data)
    data[off:off + 64] = desc.encode()
    return CodeObject(bytes(data))


def test_static_resource_overrun_rejected():
    k1 = with_descriptor(K1, granulated_workitem_vgpr_count=0, granulated_wavefront_sgpr_count=0)
    probs = resource_findings(k1)
    assert any("SGPRs" in p for p in probs)
    dev = ScriptedDevice()
    v = verify(K0, k1, [launch_from_dict(RELU_SPEC)], device=dev)
    assert v.kind == "different" and "SGPRs" in v.reason and dev.launches == 0
    frozen = with_descriptor(K1, enable_sgpr_workgroup_id_y=1)
    assert any("enable_sgpr_workgroup_id_y" in d for d in abi_differences(K0, frozen))


def test_reference_cache_runs_k0_once_per_input_set():
    from asmevo.verify import ReferenceCache
    dev = ScriptedDevice()
    dev.script(K0, relu)
    dev.script(K1, relu)
    cache = ReferenceCache()
    launches = [launch_from_dict(RELU_SPEC)]
    first = verify(K0, K1, launches, device=dev, trials=1, special=False, reference=cache)
    second = verify(K0, K1, launches, device=dev, trials=1, special=False, reference=cache)
    assert first.equivalent and second.equivalent and dev.launches == 3


def test_known_findings_of_k0_are_tolerated_but_new_kinds_in_k1_are_not():
    from asmevo.launches import VerifyLaunch
    race = {"kind": "lds_race", "pc": 0x1700, "wave": 1, "message": "shipped race"}
    oob = {"kind": "out_of_bounds", "pc": 0x1704, "wave": 1, "message": "load past x"}

    def k0(b):
        relu(b)
        return [race]
    base = launch_from_dict(RELU_SPEC, label="relu")
    known = VerifyLaunch(base.spec, base.tolerance, base.label, frozenset({"lds_race"}))
    assert run(relu, k0_fn=k0)[0].kind == "invalid"
    for k1_fn, kind in ((k0, "equivalent"), (relu, "equivalent"), (lambda b: [race, oob] if relu(b) is None else [],
                                                                   "different")):
        dev = ScriptedDevice()
        dev.script(K0, k0)
        dev.script(K1, k1_fn)
        assert verify(K0, K1, [known], device=dev, trials=1, special=False).kind == kind


def test_verdict_kind_is_checked():
    with pytest.raises(AsmEvoError):
        Verdict("maybe", "?")
