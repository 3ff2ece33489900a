"""Verification, timing and profiling on the real emulator with rebuilt KernelBench candidates."""
import pytest

from asmevo.codeobj import CodeObject
from asmevo.device import get_device
from asmevo.profile import profile_launch
from asmevo.rebuild import rebuild_source
from asmevo.recover import recover
from asmevo.suites import load_suite
from asmevo.timing import NotVerified, time_candidate
from asmevo.launches import suite_launches
from asmevo.verify import ReferenceCache, verify

SUITE = load_suite("kernelbench")
RELU = SUITE.problem("19_ReLU")
K0 = CodeObject.from_path(RELU.code_object)
LAUNCHES = suite_launches(RELU)
REC = recover(RELU.code_object)


def edited(edit) -> CodeObject:
    lines = REC.source.splitlines()
    return CodeObject(rebuild_source("\n".join(edit(list(lines))) + "\n", REC.info).data)


def replace_at(address: int, old: str, new: str):
    def edit(lines):
        i = next(n for n, ln in enumerate(lines) if ln.rstrip().endswith(f"; 0x{address:x}"))
        assert old in lines[i]
        lines[i] = lines[i].replace(old, new)
        return lines
    return edit


def test_noop_rebuild_is_equivalent_on_every_shape_and_heldout():
    launches = suite_launches(RELU, heldout=True)
    v = verify(K0, edited(lambda ls: ls), launches, trials=2)
    shapes = [s for s in RELU.shapes if s.role in ("verify", "heldout")]
    assert len(launches) == len(shapes) >= 4
    assert v.kind == "equivalent" and v.launches == len(shapes) and v.trials == 2 + 7  # random + special sets


def test_store_to_the_input_buffer_is_caught_as_input_clobbering():
    k1 = edited(replace_at(0x176c, "s[6:7]", "s[4:5]"))
    v = verify(K0, k1, LAUNCHES, trials=1)
    assert v.kind == "different" and v.evidence["difference"]["buffer"] == "x"


def test_store_past_the_buffer_is_a_strictness_failure():
    k1 = edited(replace_at(0x1798, "global_store_dwordx4 v[4:5], v[0:3], off", "global_store_dwordx4 v[4:5], v[0:3], off offset:16"))
    v = verify(K0, k1, LAUNCHES, trials=1)
    assert v.kind == "different" and "out_of_bounds" in v.reason


def test_missing_wait_found_dynamically_when_static_checks_are_off():
    def drop(lines):
        i = next(n for n, ln in enumerate(lines) if "s_waitcnt vmcnt(0)" in ln and "0x1774" in ln)
        return lines[:i] + lines[i + 1:]
    v = verify(K0, edited(drop), LAUNCHES, trials=1, static=False)
    assert v.kind == "different" and "waitcnt" in v.reason


def suite_mutant(problem: str, address: int, old: str, new: str) -> tuple[CodeObject, CodeObject, list]:
    """(K0, K1, verify launches) of a suite problem whose instruction at `address` has `old`
    replaced by `new` (the instruction is deleted when `new` is empty and `old` all of it)."""
    prob = SUITE.problem(problem)
    rec = recover(prob.code_object)
    lines = replace_at(address, old, new)(rec.source.splitlines())
    k1 = CodeObject(rebuild_source("\n".join(lines) + "\n", rec.info).data)
    return CodeObject.from_path(prob.code_object), k1, suite_launches(prob)


def test_dropped_address_carry_is_caught_on_the_crossing_layout():
    # 33_BatchNorm offsets a per-channel pointer by 4 * channel: with `s_addc_u32` turned into
    # `s_add_u32` the carry into the high half is lost, which only a buffer across a 4 GiB
    # boundary shows.
    k0, k1, launches = suite_mutant("33_BatchNorm", 0x1824, "s_addc_u32 s15", "s_add_u32 s15")
    v = verify(k0, k1, launches, trials=3)
    assert v.kind == "different" and "crossing memory" in v.reason and "out_of_bounds" in v.reason


@pytest.mark.parametrize("problem,address,old,new,shape", [
    # Triton's grouped tile order: grid_m = cdiv(M, 128) rounded wrong only shows with
    # M % 128 in {0} or [104, 127] and more than one tile
    ("2_Standard_matrix_multiplication_", 0x1838, "s13, s13, 25", "s13, 25, s13", "v_120x16x130"),
    # the row max's -inf start matters only for threads past the row's end (cols < 256)
    ("23_Softmax", 0x1610, "v_mov_b32_e32 v1, 0xff800000", "", "v_5x100"),
    # the float4 kernel's scalar tail flag matters only when a single element is left (n % 4 == 1)
    ("19_ReLU", 0x1654, "s_mov_b64 s[10:11], -1", "", "v_3x99"),
])
def test_mutants_only_some_shapes_catch(problem, address, old, new, shape):
    k0, k1, launches = suite_mutant(problem, address, old, new)
    v = verify(k0, k1, launches, trials=3)
    assert v.kind == "different" and v.evidence["launch"] == f"{problem}:{shape}"


def test_deleted_newton_refinement_is_caught_with_faithful_transcendentals():
    # 21_Sigmoid's division: the reciprocal's refinement step written over the numerator instead.
    # With a correctly rounded v_rcp_f32 the step changes nothing (checked for every denominator
    # in [1, 2^126)); hardware's reciprocal is only faithfully rounded, and so is the emulator's in
    # every other pair of input sets.
    k0, k1, launches = suite_mutant("21_Sigmoid", 0x1a40, "v_fmac_f32_e32 v4, v6, v4", "v_fmac_f32_e32 v5, v6, v4")
    v = verify(k0, k1, launches, trials=3)
    assert v.kind == "different" and "faithful transcendentals" in v.reason


def test_k0_findings_make_a_launch_invalid():
    bad = edited(replace_at(0x1798, "global_store_dwordx4 v[4:5], v[0:3], off", "global_store_dwordx4 v[4:5], v[0:3], off offset:16"))
    assert verify(bad, bad, LAUNCHES, trials=1).kind == "invalid"


def test_emu_timing_is_gated_and_in_model_us():
    k1 = edited(lambda ls: ls)
    cache = ReferenceCache()
    v = verify(K0, k1, LAUNCHES, trials=1, special=False, reference=cache)
    d = time_candidate(v, K0, k1, LAUNCHES[2], get_device("emu"))
    assert d.unit == "model_us" and d.baseline.provenance["config"]["model"] == "asmevo.model"
    assert not d.accepted and d.speedup == pytest.approx(1.0)
    broken = edited(replace_at(0x176c, "s[6:7]", "s[4:5]"))
    with pytest.raises(NotVerified):
        time_candidate(verify(K0, broken, LAUNCHES, trials=1), K0, broken, LAUNCHES[2], get_device("emu"))


def test_profile_windows_on_a_real_kernel(tmp_path):
    REC.write(tmp_path)
    softmax = SUITE.problem("23_Softmax")
    prof = profile_launch(CodeObject.from_path(RELU.code_object), LAUNCHES[1].spec, recovery_dir=tmp_path)
    assert prof.windows and prof.windows[0].lines is not None
    assert sum(p.count for p in prof.estimate.per_pc.values()) > 0
    sm = profile_launch(CodeObject.from_path(softmax.code_object), suite_launches(softmax)[0].spec)
    top = sm.windows[0]
    assert top.share > 0.05 and top.reason and top.end > top.start
    assert "model_us" in sm.listing()


def test_candidate_stuck_in_a_loop_fails_fast_on_its_budget():
    def spin(lines):
        i = next(n for n, ln in enumerate(lines) if ln.rstrip().endswith("; 0x1600"))
        return lines[:i] + [".Lspin:", "\ts_branch .Lspin"] + lines[i:]
    v = verify(K0, edited(spin), LAUNCHES, trials=1)
    assert v.kind == "different" and "budget" in v.reason and v.seconds < 30


def test_verification_runs_the_emulator_checked():
    dev = get_device("emu").verifying()
    assert dev.checked and dev.verifying() is dev
def test_a_candidate_reading_a_never_written_register_is_different_though_its_outputs_agree():
    """Verification runs the emulator checked: K1 copies v7, which nothing writes, into v6, which nothing
    reads. Every buffer agrees with K0's, but the uninitialized read is a finding K0 does not have."""
    def insert(lines):
        i = next(n for n, ln in enumerate(lines) if ln.rstrip().endswith("; 0x1600"))
        return lines[:i] + ["\tv_mov_b32_e32 v6, v7"] + lines[i:]
    v = verify(K0, edited(insert), LAUNCHES, trials=1, special=False)
    assert v.kind == "different" and "uninitialized" in v.reason, v.reason
    assert any(f["kind"] == "uninitialized" and "v7" in f["message"] for f in v.evidence["findings"]), v.evidence
